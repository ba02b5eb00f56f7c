"""End-to-end tests of ``python -m parsing evaluate`` and ``compare``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from parsing.cli import main

GOLD = """\
# sent_id = 1
1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_
1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_
2\tel\tel\tDET\t_\t_\t3\tdet\t_\t_
3\tperro\tperro\tNOUN\t_\t_\t4\tnmod:poss\t_\t_
4\tladra\tladrar\tVERB\t_\t_\t0\troot\t_\t_
5\t.\t.\tPUNCT\t_\t_\t4\tpunct\t_\t_

# sent_id = 2
1\tHola\thola\tINTJ\t_\t_\t0\troot\t_\t_
2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""

# sentence 1: "perro" nmod (subtype dropped: still right), "." attached to 3 (wrong head),
# "el" tagged PRON (wrong UPOS); sentence 2 perfect.
SYSTEM = """\
# sent_id = 1
1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_
1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_
2\tel\tel\tPRON\t_\t_\t3\tdet\t_\t_
3\tperro\tperro\tNOUN\t_\t_\t4\tnmod\t_\t_
4\tladra\tladrar\tVERB\t_\t_\t0\troot\t_\t_
5\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = 2
1\tHola\thola\tINTJ\t_\t_\t0\troot\t_\t_
2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_

"""

# SYSTEM with one more wrong head: "de" attached to "ladra"
WORSE = SYSTEM.replace("1\tde\tde\tADP\t_\t_\t3\tcase", "1\tde\tde\tADP\t_\t_\t4\tcase")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {}
    for name, text in (("gold", GOLD), ("system", SYSTEM), ("worse", WORSE)):
        path = tmp_path / f"{name}.conllu"
        path.write_text(text, encoding="utf-8")
        paths[name] = str(path)
    return paths


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(list(argv)) == 0
    output = capsys.readouterr().out
    assert output.count("\n") == 1  # one JSON object on one line
    result: dict[str, object] = json.loads(output)
    return result


def test_evaluate_json_has_the_scores(files: dict[str, str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "evaluate", files["gold"], files["system"], "--json")
    assert result["UAS"] == pytest.approx(100 * 6 / 7, abs=1e-3)
    assert result["LAS"] == pytest.approx(100 * 6 / 7, abs=1e-3)
    assert result["CLAS"] == 100.0  # perro, ladra, Hola: all right; "." is not content
    assert result["UPOS"] == pytest.approx(100 * 6 / 7, abs=1e-3)
    assert (result["words"], result["sentences"]) == (7, 2)
    assert result["exact_match"] == {"sentences": 2, "unlabelled": 50.0, "labelled": 50.0}
    for key in ("by_upos", "by_deprel", "by_arc_length", "by_sentence_length"):
        assert key in result
    by_upos = result["by_upos"]
    assert isinstance(by_upos, dict)
    assert by_upos["PUNCT"] == {"words": 2, "UAS": 50.0, "LAS": 50.0}


def test_evaluate_no_punct(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "evaluate", files["gold"], files["system"], "--json", "--no-punct")
    assert (result["UAS"], result["LAS"], result["words"]) == (100.0, 100.0, 5)
    assert result["exclude_punct"] is True


def test_evaluate_by_selects_breakdowns(files: dict[str, str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "evaluate", files["gold"], files["system"], "--json",
                      "--by", "deprel", "--by", "length")
    assert {"by_deprel", "by_arc_length", "by_sentence_length"} <= set(result)
    assert "by_upos" not in result
    by_deprel = result["by_deprel"]
    assert isinstance(by_deprel, dict) and "nmod" in by_deprel and "nmod:poss" not in by_deprel


def test_evaluate_table(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", files["gold"], files["system"], "--by", "upos"]) == 0
    output = capsys.readouterr().out
    assert "UAS    |        6 |        7 |        7 |  85.71" in output
    assert "CLAS   |        3 |        3 |        3 | 100.00" in output
    assert "Exact match: unlabelled 50.00%" in output
    assert "PUNCT        |        2 |  50.00 |  50.00" in output
    assert "Relation" not in output


def test_evaluate_mismatched_words_exit_2(files: dict[str, str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.conllu"
    other.write_text(SYSTEM.replace("ladra\tladrar", "come\tcomer"), encoding="utf-8")
    assert main(["evaluate", files["gold"], str(other)]) == 2
    error = capsys.readouterr().err
    assert "sentence 1 (sent_id 1), word 4" in error and "'ladra'" in error


def test_evaluate_missing_file_exit_2(files: dict[str, str], tmp_path: Path) -> None:
    assert main(["evaluate", files["gold"], str(tmp_path / "missing.conllu")]) == 2


def test_compare_json(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    result = run_json(capsys, "compare", files["gold"], files["system"], files["worse"],
                      "--json", "--resamples", "200", "--seed", "1")
    uas = result["UAS"]
    assert isinstance(uas, dict)
    assert uas["delta"] == pytest.approx(100 / 7)
    assert uas["mcnemar"] == {"b": 1, "c": 0, "statistic": None, "p": 1.0, "method": "exact"}
    assert 0 < uas["bootstrap"]["p"] <= 1 and 0 < uas["randomization"]["p"] <= 1
    assert (result["resamples"], result["seed"], result["sentences"]) == (200, 1, 2)
    again = run_json(capsys, "compare", files["gold"], files["system"], files["worse"],
                     "--json", "--resamples", "200", "--seed", "1")
    assert again == result


def test_compare_table(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", files["gold"], files["system"], files["system"],
                 "--resamples", "50"]) == 0
    output = capsys.readouterr().out
    assert output.splitlines()[2].startswith("UAS    |  85.71 |  85.71 |  +0.00 | 1.0000")
    assert "0/0, 1 (exact)" in output


def test_python_dash_m_parsing_evaluate(files: dict[str, str]) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "parsing", "evaluate", files["gold"], files["gold"], "--json"],
        capture_output=True, text=True, check=True,
    )
    result = json.loads(completed.stdout)
    assert {k: result[k] for k in ("UAS", "LAS", "CLAS", "UPOS")} == {
        "UAS": 100.0, "LAS": 100.0, "CLAS": 100.0, "UPOS": 100.0
    }
