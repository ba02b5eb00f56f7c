"""``python -m parsing train / parse / list-parsers`` end to end on a real treebank slice."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest

import parsing.commands.parsers as parsers_command
from parsing.cli import main
from parsing.conllu_io import format_conllu, load_sentences, parse_conllu, read_conllu
from parsing.ensemble.registry import DEFAULT_METHOD, METHODS, default_method, method_spec
from parsing.pipeline import load_models
from parsing.scorer.metrics import evaluate

QUICK = ["--set", "graph1.max_iter=2", "--set", "eager.epochs=2"]


@pytest.fixture(scope="module")
def slices(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Telugu train (first 300 sentences), dev (60) and a raw copy of dev without trees."""
    folder = tmp_path_factory.mktemp("telugu")
    source = ud_root / "UD_Telugu-MTG"
    train = read_conllu(source / "te_mtg-ud-train.conllu")[:300]
    dev = read_conllu(source / "te_mtg-ud-dev.conllu")[:60]
    paths = {"train": folder / "train.conllu", "dev": folder / "dev.conllu", "raw": folder / "raw.conllu"}
    paths["train"].write_text(format_conllu(train), encoding="utf-8")
    paths["dev"].write_text(format_conllu(dev), encoding="utf-8")
    raw_text = "".join(
        line if line.startswith("#") or not line.strip() else "\t".join(
            [*line.split("\t")[:6], "_", "_", *line.split("\t")[8:]])
        for line in format_conllu(dev).splitlines(keepends=True)
    )
    paths["raw"].write_text(raw_text, encoding="utf-8")
    return paths


@pytest.fixture(scope="module")
def model_dir(slices: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("model")
    status = main(["train", "--train", str(slices["train"]), "--dev", str(slices["dev"]), "--out", str(out),
                   "--parsers", "graph1,eager", "--tags", "gold", *QUICK])
    assert status == 0
    return out


def test_train_writes_a_model_directory(model_dir: Path) -> None:
    manifest = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["parsers"] == ["graph1", "eager"] and manifest["tags"] == "gold"
    assert {p.name for p in (model_dir / "parsers").iterdir()} == {"graph1.model", "eager.model"}
    method = default_method("gold")  # dev given: the gold-tag default, tuned on it
    assert method != DEFAULT_METHOD  # the tuned vote, not the fallback without dev
    assert manifest["ensemble"] == {"method": method,
                                    "members": method_spec(method).uses(["graph1", "eager"])}
    assert (model_dir / "ensemble.model").is_file()


def test_parse_keeps_the_input_and_writes_each_member(model_dir: Path, slices: dict[str, Path],
                                                      tmp_path: Path) -> None:
    output, per_parser = tmp_path / "out.conllu", tmp_path / "members"
    status = main(["parse", "--model", str(model_dir), "--input", str(slices["raw"]),
                   "--output", str(output), "--per-parser-dir", str(per_parser)])
    assert status == 0
    assert sorted(p.name for p in per_parser.iterdir()) == ["eager.conllu", "graph1.conllu"]
    raw_lines = slices["raw"].read_text(encoding="utf-8").splitlines()
    out_lines = output.read_text(encoding="utf-8").splitlines()
    assert len(raw_lines) == len(out_lines)
    for raw, out in zip(raw_lines, out_lines, strict=True):
        raw_cols, out_cols = raw.split("\t"), out.split("\t")
        if len(raw_cols) == 10 and raw_cols[0].isdigit():  # only HEAD and DEPREL change
            assert raw_cols[:6] + raw_cols[8:] == out_cols[:6] + out_cols[8:]
        else:
            assert raw == out
    gold = load_sentences(slices["dev"])
    ensemble = load_sentences(output)  # trees checked on reading: one root, no cycle
    assert evaluate(gold, ensemble).uas.f1 > 0.6  # trained parsers, not a chain of neighbours
    bundle = load_models(model_dir)
    _, expected = bundle.parse_with_ensemble(load_sentences(slices["raw"], check_trees=False))
    assert [p.heads[1:].tolist() for p in expected] == [s.heads[1:].tolist() for s in ensemble]


def test_parse_with_another_ensemble_or_none(model_dir: Path, slices: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    members, none = tmp_path / "members", tmp_path / "none.conllu"
    argv = ["parse", "--model", str(model_dir), "--input", str(slices["raw"])]
    assert main([*argv, "--output", str(none), "--ensemble", "none", "--per-parser-dir", str(members)]) == 0
    assert none.read_text(encoding="utf-8") == (members / "graph1.conllu").read_text(encoding="utf-8")
    voted = tmp_path / "voted.conllu"
    assert main([*argv, "--output", str(voted), "--ensemble", "mbr"]) == 0  # learns nothing: any model
    assert len(load_sentences(voted)) == 60
    assert main([*argv, "--output", str(voted), "--ensemble", "vote-accuracy"]) == 2
    assert "train with --ensemble vote-accuracy" in capsys.readouterr().err


def test_parallel_members_give_the_same_files(model_dir: Path, slices: dict[str, Path],
                                              tmp_path: Path) -> None:
    argv = ["parse", "--model", str(model_dir), "--input", str(slices["raw"])]
    one, two = tmp_path / "one", tmp_path / "two"
    assert main([*argv, "--output", str(tmp_path / "one.conllu"), "--per-parser-dir", str(one)]) == 0
    assert main([*argv, "--output", str(tmp_path / "two.conllu"), "--per-parser-dir", str(two),
                 "--jobs", "2"]) == 0
    assert (tmp_path / "one.conllu").read_bytes() == (tmp_path / "two.conllu").read_bytes()
    for name in ("graph1.conllu", "eager.conllu"):
        assert (one / name).read_bytes() == (two / name).read_bytes()


def test_parse_a_subset_and_unknown_names(model_dir: Path, slices: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "eager.conllu"
    assert main(["parse", "--model", str(model_dir), "--input", str(slices["raw"]), "--output", str(output),
                 "--parsers", "eager"]) == 0
    assert len(parse_conllu(output.read_text(encoding="utf-8"))) == 60
    assert main(["parse", "--model", str(model_dir), "--input", str(slices["raw"]), "--output", str(output),
                 "--parsers", "swap"]) == 2
    assert "model has no parser swap" in capsys.readouterr().err
    assert main(["parse", "--model", str(model_dir), "--input", str(slices["raw"]), "--output", str(output),
                 "--tags", "predicted"]) == 2
    assert "no tagger" in capsys.readouterr().err


def test_list_parsers_names_every_member(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-parsers"]) == 0
    members, methods = capsys.readouterr().out.split("ensemble methods")
    listed = [line.split()[0] for line in members.splitlines() if line.strip()]
    assert listed == ["graph1", "graph2", "eager", "eager-rtl", "swap", "swap-rtl", "hybrid", "hybrid-rtl",
                      "neural"]
    assert [line.split()[0] for line in methods.splitlines()[1:]] == list(METHODS)
    default = next(line for line in methods.splitlines() if line.startswith(default_method("gold") + " "))
    assert "[default, gold tags]" in default and "[default, predicted tags]" in default


def test_bad_overrides_and_malformed_input_exit_2(slices: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--train", str(slices["train"]), "--out", str(tmp_path), "--set", "eager"]) == 2
    assert "MEMBER.PARAM=VALUE" in capsys.readouterr().err
    assert main(["train", "--train", str(slices["train"]), "--out", str(tmp_path / "e"),
                 "--parsers", "graph1", "--tags", "gold", "--ensemble", "vote-uniform",
                 "--set", "graph1.max_iter=1", "--set", "ensemble.nope=1"]) == 2
    assert "Invalid parameter 'nope'" in capsys.readouterr().err
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tw\t_\n\n", encoding="utf-8")
    assert main(["train", "--train", str(bad), "--out", str(tmp_path / "m")]) == 2
    assert "line 1: expected 10 tab-separated columns" in capsys.readouterr().err


def test_docstring_examples() -> None:
    import parsing.forked

    assert doctest.testmod(parsers_command).failed == 0
    assert doctest.testmod(parsing.forked).attempted and doctest.testmod(parsing.forked).failed == 0


def test_train_and_parse_with_stacking(slices: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "stacked"
    assert main(["train", "--train", str(slices["train"]), "--dev", str(slices["dev"]), "--out", str(out),
                 "--parsers", "graph1,eager", "--tags", "gold", "--ensemble", "stack", *QUICK,
                 "--set", "ensemble.max_iter=2"]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["ensemble"] == {"method": "stack", "members": ["eager"]}
    output = tmp_path / "stacked.conllu"
    assert main(["parse", "--model", str(out), "--input", str(slices["raw"]), "--output", str(output)]) == 0
    assert evaluate(load_sentences(slices["dev"]), load_sentences(output)).uas.f1 > 0.6


def test_a_parser_pool_parses_like_the_members_here_call_after_call(model_dir: Path,
                                                                    slices: dict[str, Path]) -> None:
    """The forked processes of a ParserPool keep the members between calls and give the
    parses this process gives; unknown names and a one-process pool are refused."""
    from parsing.conllu_io import load_sentences
    from parsing.forked import ParserPool
    from parsing.pipeline import load_models

    bundle = load_models(model_dir)
    sentences = load_sentences(slices["dev"])
    here = bundle.parse_with_ensemble(sentences)
    with ParserPool(bundle.parsers, 2) as pool:
        for start, end in ((0, 7), (7, len(sentences))):
            by_name, combined = bundle.parse_with_ensemble(sentences[start:end], pool=pool)
            for name, parses in by_name.items():
                assert [(p.heads.tolist(), p.deprels) for p in parses] == \
                    [(p.heads.tolist(), p.deprels) for p in here[0][name][start:end]], name
            assert [p.heads.tolist() for p in combined] == [p.heads.tolist() for p in here[1][start:end]]
        with pytest.raises(ValueError, match="no parser"):
            pool.parse(sentences[:1], ["nonexistent"])
    with pytest.raises(ValueError, match="at least 2"):
        ParserPool(bundle.parsers, 1)


def _report_fork_rights(answers: Any) -> None:
    from parsing.forked import ParserPool, may_have_children

    try:
        ParserPool({}, 2)
        refused = ""
    except ValueError as error:
        refused = str(error)
    answers.put((may_have_children(), refused))


def test_a_daemonic_process_such_as_a_queue_worker_may_not_fork_a_pool() -> None:
    """A job queue's process workers are daemonic: multiprocessing refuses them children, so
    the pool says so (the round then parses in the worker itself) instead of failing mid-job."""
    import multiprocessing

    from parsing.forked import may_have_children

    assert may_have_children()
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_report_fork_rights, args=(answers,), daemon=True)
    child.start()
    allowed, refused = answers.get(timeout=30)
    child.join(timeout=30)
    assert allowed is False and "daemonic" in refused
