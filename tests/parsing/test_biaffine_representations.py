"""Bring your own representations (issue #33): pretrained word vectors from a ``.vec`` file and a
local encoder directory for the biaffine member, on small files the tests write themselves."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parsing.biaffine.vectors import lookup, read_vectors, vectors_vocabulary
from parsing.conllu_io import load_sentences
from parsing.plan import TrainingPlan
from parsing.types import Sentence
from tests.parsing.conftest import UD_ROOT

AFRIKAANS = UD_ROOT / "UD_Afrikaans-AfriBooms" / "af_afribooms-ud-train.conllu"
TINY = {"word_dim": 8, "char_dim": 6, "char_hidden": 8, "hidden": 16, "layers": 1, "arc_dim": 16,
        "label_dim": 8, "batch_size": 8, "max_epochs": 2, "patience": 2}
HAS_TRANSFORMERS = importlib.util.find_spec("transformers") is not None


def write_vec(path: Path, rows: dict[str, list[float]], *, header: bool = True) -> Path:
    """A ``.vec`` file of ``rows`` (fastText text format)."""
    dim = len(next(iter(rows.values())))
    lines = [f"{len(rows)} {dim}"] if header else []
    lines += [" ".join([word, *(f"{v:.4f}" for v in vector)]) for word, vector in rows.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the .vec reader


def test_reads_the_header_the_first_words_and_the_wanted_ones_anywhere(tmp_path: Path) -> None:
    rows = {"the": [1, 0, 0], "of": [0, 1, 0], "Paris": [0, 0, 1], "walked": [1, 1, 0], "rare": [2, 2, 2]}
    path = write_vec(tmp_path / "v.vec", rows)
    vectors = read_vectors(path, {"walked", "paris"}, limit=2)
    assert vectors.words == ["the", "of", "Paris", "walked"] and vectors.dim == 3  # "rare": neither
    assert vectors.matrix.dtype == np.float32 and vectors.matrix.shape == (4, 3)
    np.testing.assert_array_equal(vectors.matrix[2], [0, 0, 1])
    table = vectors.table()
    assert table.shape == (6, 3) and not table[:2].any()  # padding and unknown rows are zeros
    vocabulary = vectors.vocabulary()
    assert lookup(vocabulary, ["the", "THE", "paris", "Paris", "London"]) == [2, 2, 4, 4, 1]


def test_reads_a_file_without_header_and_keeps_a_words_first_vector(tmp_path: Path) -> None:
    path = tmp_path / "v.vec"
    path.write_text("a 1 2\nb 3 4\na 5 6\n", encoding="utf-8")
    vectors = read_vectors(path, limit=10)
    assert vectors.words == ["a", "b"]
    np.testing.assert_array_equal(vectors.matrix, [[1, 2], [3, 4]])


@pytest.mark.parametrize(("text", "message"), [
    ("2 3\na 1 2 3\nb 1 2\n", r"v\.vec line 3: the word 'b' has 2 numbers, but the vectors have dimension 3 "
                              r"\(from the header\)"),
    ("a 1 2 3\nb 1 2 3 4\n",
     r"v\.vec line 2: .* 4 numbers, but the vectors have dimension 3 \(from the vector on line 1\)"),
    ("2 2\na 1 x\n", r"v\.vec line 2: the vector of 'a' holds something that is not a number"),
    ("2 2\na 1 nan\n", r"v\.vec line 2: .*infinite or NaN"),
    ("2 2\n 1 2\n", r"v\.vec line 2: a line starts with a space"),
    ("2 0\n", r"v\.vec line 1: the header gives dimension 0"),
    ("a\n", r"v\.vec line 1: the word 'a' has no numbers"),
    ("\n\n", r"v\.vec: no word vectors"),
])
def test_a_bad_file_is_refused_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "v.vec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_vectors(path, limit=10)


def test_a_missing_file_and_a_negative_limit_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no word vectors file"):
        read_vectors(tmp_path / "none.vec")
    with pytest.raises(ValueError, match="limit must be 0 or more"):
        read_vectors(tmp_path / "none.vec", limit=-1)


def test_lower_cased_aliases_never_shadow_a_word_of_their_own() -> None:
    vocabulary = vectors_vocabulary(["Apple", "apple", "BANK"])
    assert lookup(vocabulary, ["Apple", "apple", "APPLE", "bank", "Bank"]) == [2, 3, 3, 4, 4]


# --------------------------------------------------------------------------- the plan and the CLI


def test_the_plan_takes_vectors_as_a_member_setting_and_checks_the_file(tmp_path: Path) -> None:
    path = write_vec(tmp_path / "v.vec", {"a": [1.0, 2.0]})
    plan = TrainingPlan(members=("biaffine",), tags="predicted",
                        settings={"biaffine": {"vectors": str(path), "vectors_limit": 100}})
    assert plan.missing_files() == [] and plan.member_params("biaffine")["vectors"] == str(path)
    missing = TrainingPlan(members=("biaffine",), settings={"biaffine": {"vectors": str(tmp_path / "x.vec")}})
    assert missing.missing_files() == [("biaffine", "vectors", str(tmp_path / "x.vec"))]
    assert TrainingPlan.from_json(plan.to_json()) == plan


def test_the_train_command_passes_vectors_and_refuses_a_missing_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from parsing.cli import build_parser, main
    from parsing.commands.parsers import train_plan_of

    path = write_vec(tmp_path / "v.vec", {"a": [1.0, 2.0]})
    args = build_parser().parse_args(["train", "--train", "t", "--out", "m", "--parsers", "biaffine",
                                      "--set", f"biaffine.vectors={path}", "--ensemble", "none"])
    assert train_plan_of(args).settings == {"biaffine": {"vectors": str(path)}}
    if not AFRIKAANS.is_file():
        pytest.skip("UD_Afrikaans-AfriBooms not found")
    status = main(["train", "--train", str(AFRIKAANS), "--out", str(tmp_path / "m"), "--parsers", "biaffine",
                   "--tags", "gold", "--ensemble", "none",
                   "--set", f"biaffine.vectors={tmp_path / 'none.vec'}"])
    assert status == 2 and "biaffine.vectors" in capsys.readouterr().err
    assert not (tmp_path / "m" / "parsers" / "biaffine.model").exists()


# --------------------------------------------------------------------------- the member with vectors


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    if not AFRIKAANS.is_file():
        pytest.skip(f"UD_Afrikaans-AfriBooms not found under {UD_ROOT}")
    return [s for s in load_sentences(AFRIKAANS)[:800] if len(s) <= 9][:40]


def test_the_member_reads_vectors_keeps_them_frozen_and_saves_them_without_pickle(
        sentences: list[Sentence], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.batching import encode
    from parsing.biaffine.member import BiaffineParser

    train, dev = sentences[:30], sentences[30:]
    words = sorted({form for s in train for form in s.forms[1:]})
    rng = np.random.default_rng(0)
    rows = {"zzunseen": [0.5] * 5, **{word.lower(): rng.normal(size=5).round(3).tolist() for word in words}}
    path = write_vec(tmp_path / "af.vec", rows)
    parser = BiaffineParser(**TINY, vectors=str(path), vectors_limit=1, random_state=1).fit(train, dev)
    network, vocabularies = parser._network()
    kept = vocabularies["pretrained"]
    assert kept.items[2] == "zzunseen"  # the file's first word, never seen in training
    assert network.config.pretrained == len(kept) and network.config.pretrained_dim == 5
    table = network.pretrained.weight.detach().numpy()
    for word in words[:20]:  # looked up lower-cased; the rows did not move in training (frozen)
        np.testing.assert_allclose(table[lookup(kept, [word])[0]], np.float32(rows[word.lower()]), atol=1e-6)
    unseen = Sentence.from_words(["zzunseen", words[0]])
    batch = encode([unseen], vocabularies)
    assert batch.pretrained is not None and batch.pretrained[0, 1].item() == 2
    assert vocabularies["words"].ids(["zzunseen"]) == [1]  # unknown to the learned embeddings
    model = tmp_path / "biaffine.model"
    parser.save(model)
    path.unlink()  # parsing does not need the .vec file
    with zipfile.ZipFile(model) as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())
    with np.load(model, allow_pickle=False) as data:
        assert json.loads(bytes(data["header"]).decode())["class"] == "BiaffineParser"
    loaded = BiaffineParser.load(model)
    before, after = parser.predict(dev), loaded.predict(dev)
    for first, second in zip(before, after, strict=True):
        assert first.heads.tolist() == second.heads.tolist() and first.extras == second.extras
    without = BiaffineParser(**TINY, random_state=1).fit(train, dev)
    assert "pretrained.weight" not in without.weights_ and "pretrained.weight" in parser.weights_


def test_a_bad_vectors_file_fails_the_fit_naming_the_line(sentences: list[Sentence], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.member import BiaffineParser

    path = tmp_path / "bad.vec"
    path.write_text("2 3\nalpha 1 2 3\nbeta 1 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.vec line 3: .* 2 numbers, but the vectors have dimension 3"):
        BiaffineParser(**TINY, vectors=str(path)).fit(sentences[:10])


# --------------------------------------------------------------------------- a local encoder


@pytest.mark.skipif(HAS_TRANSFORMERS, reason="transformers is installed here: the refusal cannot happen")
def test_without_transformers_the_encoder_setting_says_what_to_install(
        sentences: list[Sentence], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.member import BiaffineParser
    from parsing.pipeline import train_plan

    with pytest.raises(ImportError, match="pip install transformers"):
        BiaffineParser(encoder=str(tmp_path))
    plan = TrainingPlan(members=("biaffine",), settings={"biaffine": {"encoder": str(tmp_path)}})
    (problem,) = plan.missing_requirements()
    assert problem == ("biaffine.encoder needs transformers, which is not installed here: "
                       "pip install transformers")
    with pytest.raises(ImportError, match="pip install transformers"):
        train_plan(plan, sentences[:5], None, tmp_path / "m")
    assert not (tmp_path / "m" / "parsers" / "biaffine.model").exists()


class _Tokenizer:
    """A WordPiece-like stand-in: a word is cut into pieces of two characters."""

    cls_token_id, sep_token_id, pad_token_id, unk_token_id = 1, 2, 0, 3
    bos_token_id = eos_token_id = None
    model_max_length = 16

    def tokenize(self, word: str) -> list[str]:
        return [word[i:i + 2] for i in range(0, len(word), 2)]

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        return [piece_id(token) for token in tokens]


def piece_id(token: str) -> int:
    """The stand-in tokenizer's id of a piece (fixed, as a real vocabulary's)."""
    return 4 + sum(map(ord, token)) % 97


class _Model:
    """A stand-in encoder: the hidden state of a piece is ``[id, position, 1]``."""

    config = types.SimpleNamespace(hidden_size=3)

    def eval(self) -> None:
        pass

    def __call__(self, *, input_ids: Any, attention_mask: Any) -> Any:
        import torch

        positions = torch.arange(input_ids.shape[1]).expand_as(input_ids)
        hidden = torch.stack([input_ids.float(), positions.float(), attention_mask.float()], dim=-1)
        return types.SimpleNamespace(last_hidden_state=hidden)


@pytest.fixture
def stub_transformers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """A ``transformers`` module whose Auto classes record how they were asked to load."""
    calls: list[tuple[str, dict[str, Any]]] = []
    module = types.ModuleType("transformers")
    module.__spec__ = importlib.machinery.ModuleSpec("transformers", None)

    def loader(kind: str, made: Any) -> Any:
        def from_pretrained(directory: str, **kwargs: Any) -> Any:
            calls.append((f"{kind}:{directory}", kwargs))
            return made()
        return types.SimpleNamespace(from_pretrained=from_pretrained)

    module.AutoTokenizer = loader("tokenizer", _Tokenizer)  # type: ignore[attr-defined]
    module.AutoModel = loader("model", _Model)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformers", module)
    return calls


def test_an_encoders_word_vector_is_its_pieces_average_of_the_last_layer(
        stub_transformers: list[tuple[str, dict[str, Any]]], tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.contextual import load_encoder

    embedder = load_encoder(tmp_path)
    assert stub_transformers == [(f"tokenizer:{tmp_path}", {"local_files_only": True}),
                                 (f"model:{tmp_path}", {"local_files_only": True})]
    long = Sentence.from_words(["abcd", "e", "fghijk", "lmnopqrs", "tu", "vwxyzab"])  # 15 pieces > 16 - 2
    vectors = embedder([Sentence.from_words(["abcd", "e"]), long])
    assert tuple(vectors.shape) == (2, 7, 3)
    ids = {piece: piece_id(piece) for piece in ("ab", "cd", "e", "vw", "xy", "za", "b")}
    first = vectors[0]
    assert first[0].tolist() == [0, 0, 0]  # ROOT
    assert first[1].tolist() == [(ids["ab"] + ids["cd"]) / 2, 1.5, 1]  # pieces 1 and 2, after [CLS]
    assert first[2].tolist() == [ids["e"], 3, 1]
    assert not vectors[0, 3:].any()  # padding
    assert vectors[1, 6, 0].item() == pytest.approx((ids["vw"] + ids["xy"] + ids["za"] + ids["b"]) / 4)
    assert vectors[1, 6, 1].item() == pytest.approx(2.5)  # a second window: the long sentence was cut


def test_the_member_reads_an_encoder_and_loads_it_again_to_parse(
        stub_transformers: list[tuple[str, dict[str, Any]]], sentences: list[Sentence],
        tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from parsing.biaffine.member import BiaffineParser

    folder = tmp_path / "encoder"
    folder.mkdir()
    parser = BiaffineParser(**TINY, encoder=str(folder), random_state=2).fit(sentences[:20], sentences[20:30])
    assert parser.config_["encoder_dim"] == 3
    assert not any(key.startswith("transformer") for key in parser.weights_)  # the encoder is not saved
    model = tmp_path / "biaffine.model"
    parser.save(model)
    loaded = BiaffineParser.load(model)
    calls = len(stub_transformers)
    before, after = parser.predict(sentences[30:]), loaded.predict(sentences[30:])
    assert len(stub_transformers) == calls + 2  # loaded from its directory again
    for first, second in zip(before, after, strict=True):
        assert first.heads.tolist() == second.heads.tolist()
    with pytest.raises(FileNotFoundError, match="no encoder directory"):
        BiaffineParser(**TINY, encoder=str(tmp_path / "none")).fit(sentences[:10])


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="transformers is not installed (pip install transformers)")
def test_a_real_tiny_bert_directory_is_read_without_the_network(sentences: list[Sentence],
                                                                tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from parsing.biaffine.member import BiaffineParser

    words = sorted({c for s in sentences[:20] for f in s.forms[1:] for c in f.lower()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *(f"##{c}" for c in words)]
    folder = tmp_path / "tiny-bert"
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizer(str(folder / "vocab.txt"))
    tokenizer.save_pretrained(str(folder))
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=16, max_position_embeddings=64)
    transformers.BertModel(config).save_pretrained(str(folder))
    parser = BiaffineParser(**TINY, encoder=str(folder)).fit(sentences[:20], sentences[20:30])
    assert parser.config_["encoder_dim"] == 8
    assert len(parser.predict(sentences[30:])) == len(sentences[30:])
