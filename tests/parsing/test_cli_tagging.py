"""End-to-end tests of ``python -m parsing tag-train`` and ``tag``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from parsing.cli import main
from parsing.conllu_io import FEATS, HEAD, ID, UPOS, read_conllu


def blank(text: str, columns: tuple[int, ...]) -> str:
    """``text`` with the given columns of every token line set to ``_``."""
    lines = []
    for line in text.split("\n"):
        fields = line.split("\t")
        if len(fields) == 10:
            for column in columns:
                fields[column] = "_"
        lines.append("\t".join(fields))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def model_dir(ud_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = ud_root / "UD_Telugu-MTG"
    out = tmp_path_factory.mktemp("tagger")
    status = main(["tag-train", "--train", str(folder / "te_mtg-ud-train.conllu"),
                   "--dev", str(folder / "te_mtg-ud-dev.conllu"), "--out", str(out),
                   "--feats", "--max-iter", "5"])
    assert status == 0
    return out


def test_tag_train_prints_dev_accuracy(ud_root: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = ud_root / "UD_Telugu-MTG"
    status = main(["tag-train", "--train", str(folder / "te_mtg-ud-train.conllu"),
                   "--dev", str(folder / "te_mtg-ud-dev.conllu"), "--out", str(tmp_path / "m"),
                   "--max-iter", "2"])
    assert status == 0
    assert "dev upos accuracy: " in capsys.readouterr().out
    assert (tmp_path / "m" / "tagger.npz").is_file()


def test_tag_raw_input_keeps_every_line_but_the_predicted_columns(
    model_dir: Path, ud_root: Path, tmp_path: Path
) -> None:
    gold_path = ud_root / "UD_Tamil-TTB" / "ta_ttb-ud-test.conllu"  # has multiword tokens
    raw = tmp_path / "raw.conllu"
    raw.write_text(blank(gold_path.read_text(encoding="utf-8"), (UPOS, FEATS, HEAD, 7)),
                   encoding="utf-8")
    output = tmp_path / "tagged.conllu"
    done = subprocess.run([sys.executable, "-m", "parsing", "tag", "--model", str(model_dir),
                           "--input", str(raw), "--output", str(output)],
                          capture_output=True, text=True, check=True)
    assert "tagged" in done.stdout
    before, after = read_conllu(raw), read_conllu(output)
    assert [s.comments for s in before] == [s.comments for s in after]
    for old, new in zip(before, after, strict=True):
        for old_row, new_row in zip(old.rows, new.rows, strict=True):
            changed = {i for i, (a, b) in enumerate(zip(old_row, new_row, strict=True)) if a != b}
            assert changed <= {UPOS, FEATS}
            if old_row[ID].isdigit():
                assert new_row[UPOS] != "_"
            else:
                assert new_row == old_row  # multiword-token ranges untouched


def test_tag_with_a_missing_model_exits_2(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.conllu").write_text("1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n", encoding="utf-8")
    status = main(["tag", "--model", str(tmp_path / "none"), "--input",
                   str(tmp_path / "in.conllu"), "--output", str(tmp_path / "out.conllu")])
    assert status == 2
    assert "error:" in capsys.readouterr().err
