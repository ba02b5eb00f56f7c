"""The scoreboard of a shared UD treebank with one external parser, UDPipe 1 (issue #16's closing note).

In a temporary app instance (its own SQLite file and models folder): import the treebank's
train, dev and test files, pre-annotate (``--score-split test``: the members and the ensemble
parse the test split), upload UDPipe 1's parses of dev and test as the external parser
``udpipe1`` (``treebank add-parse``), print ``treebank scoreboard NAME --split test --json``,
and check that the scoreboard's UDPipe row equals the official CoNLL 2018 scorer (``udeval`` of
``udtools`` in the peer's environment) on the same files. Then a second round lets ``udpipe1``
vote in the ensemble (``--external udpipe1``) and the scoreboard is printed again.

UDPipe 1 is trained through ``../shared/bench/peer_udpipe.py`` (gold tags, as the members) unless
``--udpipe-dir`` already holds its model and test parse; its dev parse comes from that model
(the dev UAS that weighs its vote with ``--voter-ensemble vote-accuracy``).

    nice -n 5 .venv/bin/python bench/external_scoreboard.py ../shared/ud/UD_Telugu-MTG \\
        --work /tmp/arcvote-external --udpipe-dir /tmp/arcvote-external/udpipe

Measured (2026-11-24, members graph1, eager, hybrid, gold tags, vote-uniform): the scoreboard's
udpipe1 row equals udeval's on Telugu (LAS 79.89) and Wolof (82.10); with udpipe1 voting, the
Wolof test ensemble went from 83.25 to 84.38 LAS (paired bootstrap p < 0.001, 10,403 words),
Telugu's stayed at 82.25 (721 words).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PEERS = [REPO.parent / "peer", REPO.parents[1] / "peer", REPO.parents[1].parent / "peer"]
SHARED = [REPO.parent / "shared", REPO.parents[1] / "shared", REPO.parents[1].parent / "shared"]
NAME = "external-bench"

PARSE_DEV = """
import sys
from ufal.udpipe import Model, Pipeline, ProcessingError
model = Model.load(sys.argv[1])
pipe = Pipeline(model, "conllu", Pipeline.NONE, Pipeline.DEFAULT, "conllu")
open(sys.argv[3], "w", encoding="utf-8").write(pipe.process(open(sys.argv[2], encoding="utf-8").read(),
                                                            ProcessingError()))
"""


def first(paths: list[Path]) -> Path:
    return next((p for p in paths if p.exists()), paths[0])


def split_files(treebank: Path) -> dict[str, Path]:
    """``{split: file}`` of a UD treebank folder (train, dev, test)."""
    return {split: next(treebank.glob(f"*-ud-{split}.conllu")) for split in ("train", "dev", "test")}


def udpipe(treebank: Path, out: Path, peer: Path, files: dict[str, Path]) -> dict[str, Path]:
    """UDPipe 1's parses of dev and test (trained by the peer script unless already in ``out``)."""
    test, dev = out / "test.gold.conllu", out / "dev.gold.conllu"
    if not test.exists():
        script = first(SHARED) / "bench" / "peer_udpipe.py"
        subprocess.run([str(peer / "bin" / "python"), str(script), str(treebank), str(out), "gold"],
                       check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if not dev.exists():
        subprocess.run([str(peer / "bin" / "python"), "-c", PARSE_DEV, str(out / "model.gold.udpipe"),
                        str(files["dev"]), str(dev)], check=True)
    return {"dev": dev, "test": test}


def official(peer: Path, gold: Path, system: Path) -> dict[str, float]:
    """UAS, LAS, CLAS (F1, %) of the CoNLL 2018 scorer (``udeval -v``)."""
    done = subprocess.run([str(peer / "bin" / "udeval"), "-v", str(gold), str(system)], capture_output=True,
                          text=True, check=True)
    scores = {}
    for line in done.stdout.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) >= 4 and cells[0] in ("UAS", "LAS", "CLAS"):
            scores[cells[0]] = float(cells[3])
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("treebank", type=Path)
    parser.add_argument("--work", type=Path, required=True, help="Folder of the temporary instance.")
    parser.add_argument("--udpipe-dir", type=Path, default=None, help="UDPipe 1's model and parses.")
    parser.add_argument("--parsers", default="graph1,eager,hybrid",
                        help="The members (default: the demo's fast three).")
    parser.add_argument("--voter-ensemble", default="vote-uniform",
                        help="The method of the second round, where udpipe1 votes (a vote-* method).")
    args = parser.parse_args()
    peer = first(PEERS)
    files = split_files(args.treebank)
    args.work.mkdir(parents=True, exist_ok=True)
    parses = udpipe(args.treebank, args.udpipe_dir or args.work / "udpipe", peer, files)
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{args.work / 'app.sqlite'}", "JOB_QUEUE": "inline",
           "FLASK_MODELS_DIR": json.dumps(str(args.work / "models")),
           "FLASK_SECRET_KEY": json.dumps(secrets.token_hex(32)),
           "ARCVOTE_ADMIN_PASSWORD": "bench-password-123", "OMP_NUM_THREADS": "1"}

    def flask(*words: str) -> str:
        command = [sys.executable, "-m", "flask", "--app", "app", *words]
        print("$ flask --app app " + " ".join(words), file=sys.stderr)
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(done.stdout + done.stderr)
        return done.stdout

    flask("db", "upgrade")
    flask("user", "ensure-admin")
    for split, path in files.items():
        flask("treebank", "import", str(path), "--name", NAME, "--split", split)
    flask("treebank", "preannotate", NAME, "--parsers", args.parsers, "--score-split", "test")
    for split in ("dev", "test"):
        flask("treebank", "add-parse", NAME, str(parses[split]), "--parser", "udpipe1")
    board = json.loads(flask("treebank", "scoreboard", NAME, "--split", "test", "--json"))
    print(json.dumps({"round": 1, "scoreboard": board}, sort_keys=True))
    scorer = official(peer, files["test"], parses["test"])
    ours = board["sources"]["udpipe1"]
    print(json.dumps({"udpipe1_official_conll18": scorer,
                      "equal": all(abs(ours[key] - scorer[key]) < 0.005 for key in ("UAS", "LAS", "CLAS"))}))
    flask("treebank", "preannotate", NAME, "--parsers", args.parsers, "--score-split", "test",
          "--external", "udpipe1", "--ensemble", args.voter_ensemble)
    board = json.loads(flask("treebank", "scoreboard", NAME, "--split", "test", "--json"))
    with sqlite3.connect(args.work / "app.sqlite") as database:
        newest = "SELECT external_voters FROM training_rounds ORDER BY number DESC"
        (voters,) = database.execute(newest).fetchone()
    print(json.dumps({"round": 2, "ensemble": args.voter_ensemble, "external_voters": json.loads(voters),
                      "scoreboard": board}, sort_keys=True))


if __name__ == "__main__":
    main()
