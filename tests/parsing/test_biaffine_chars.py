"""The ``biaffine`` member's character encoders (issue #33, diversity: a character CNN against
the character LSTM): shapes, padding never read, the CNN member learns and survives its file,
and a model file from before the setting reads as the LSTM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.network import CharCNN, CharEncoder, JointNetwork, NetworkConfig  # noqa: E402
from parsing.persist import load_model  # noqa: E402
from parsing.scorer.metrics import evaluate  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import TINY, short_sentences  # noqa: E402


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """50 short training sentences of UD_Afrikaans-AfriBooms (at most 9 words)."""
    return short_sentences("af", read=1200, count=50)


@pytest.mark.parametrize("encoder", [CharCNN, CharEncoder])
def test_a_word_vector_never_reads_the_padding(encoder: type[torch.nn.Module]) -> None:
    torch.manual_seed(0)
    module = encoder(20, 8, 6).eval()
    short = torch.tensor([[3, 4, 0, 0, 0, 0]])
    long = torch.tensor([[3, 4, 0, 0, 0, 0], [5, 6, 7, 8, 9, 10]])
    alone = module(short[:, :2], torch.tensor([2]))
    batched = module(long, torch.tensor([2, 6]))
    assert alone.shape == (1, 12) and batched.shape == (2, 12)
    torch.testing.assert_close(alone[0], batched[0])
    single = module(torch.tensor([[7]]), torch.tensor([1]))  # one character: every width still sees it
    assert torch.isfinite(single).all()


def test_cnn_pooling_leaves_out_the_windows_past_the_word() -> None:
    module = CharCNN(20, 8, 6).eval()
    with torch.no_grad():  # every character lowers every filter: an all-padding window would win the max
        module.embed.weight[1:].fill_(1.0)
        for convolution in module.convolutions:
            convolution.weight.fill_(-0.1)
    padded = module(torch.tensor([[3, 4, 0, 0, 0, 0]]), torch.tensor([2]))
    alone = module(torch.tensor([[3, 4]]), torch.tensor([2]))
    torch.testing.assert_close(padded, alone)


def test_the_network_builds_the_encoder_its_config_names() -> None:
    sizes = {"words": 10, "chars": 10, "upos": 5, "xpos": 5, "feats": 5, "lemmas": 5, "deprels": 5}
    assert isinstance(JointNetwork(NetworkConfig(**sizes)).chars, CharEncoder)  # the default, as before
    assert isinstance(JointNetwork(NetworkConfig(**sizes, char_encoder="cnn")).chars, CharCNN)
    with pytest.raises(ValueError, match="char_encoder is one of \\['cnn', 'lstm'\\], got 'gru'"):
        JointNetwork(NetworkConfig(**sizes, char_encoder="gru"))


def test_the_cnn_member_learns_and_round_trips(sentences: list[Sentence], tmp_path: Path) -> None:
    parser = BiaffineParser(**TINY, char_encoder="cnn", max_epochs=40, patience=40, random_state=3)
    parser.fit(sentences[:40], sentences[:40])
    assert parser.config_["char_encoder"] == "cnn"
    train = parser.predict(sentences[:40])
    assert evaluate(sentences[:40], train).las.f1 > 0.9
    parser.save(tmp_path / "cnn.model")
    loaded = BiaffineParser.load(tmp_path / "cnn.model")
    assert isinstance(loaded._network()[0].chars, CharCNN)
    for first, second in zip(parser.predict(sentences[40:]), loaded.predict(sentences[40:]), strict=True):
        assert first.heads.tolist() == second.heads.tolist() and first.extras == second.extras


def test_a_model_file_from_before_the_setting_reads_as_the_lstm(sentences: list[Sentence],
                                                                tmp_path: Path) -> None:
    parser = BiaffineParser(**TINY, max_epochs=1, random_state=3).fit(sentences[:10], sentences[:10])
    del parser.config_["char_encoder"]  # what a file written before the setting holds
    del parser.__dict__["network_cache"]
    parser.save(tmp_path / "old.model")
    loaded = load_model(tmp_path / "old.model", BiaffineParser)
    assert isinstance(loaded._network()[0].chars, CharEncoder)
    parses = loaded.predict(sentences[:5])
    assert [len(p.heads) for p in parses] == [len(s) + 1 for s in sentences[:5]]
    assert np.isfinite(loaded.predict(sentences[:1])[0].arc_scores[1:]).all()
