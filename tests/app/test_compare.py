"""Comparing parsers on a whole treebank: the scoreboard (service and CLI contract), external
parses (matching and refusal of uploads) and the plugin runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask.testing import FlaskCliRunner
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import Document, Sentence, Treebank, TreeVersion, User
from app.parser_models import ExternalParser, TrainingRound
from app.services.external import UploadError, add_parse, check_label
from app.services.imports import import_conllu
from app.services.scoreboard import breakdowns, scoreboard
from app.services.sources import load_trees
from app.services.trees import add_version
from parsing.conllu_io import format_conllu, parse_conllu, read_conllu

GOLD = """\
# sent_id = s1
# text = the dog barks
1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tbarks\tbark\tVERB\t_\t_\t0\troot\t_\t_

# sent_id = s2
# text = run !
1\trun\trun\tVERB\t_\t_\t0\troot\t_\t_
2\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_

# sent_id = s3
# text = cats sleep
1\tcats\tcat\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tsleep\tsleep\tVERB\t_\t_\t0\troot\t_\t_

"""

# member trees per sent_id: (heads, deprels)
GRAPH1 = {
    "s1": ([3, 3, 0], ["det", "nsubj", "root"]),  # "the" head wrong
    "s2": ([0, 1], ["root", "punct"]),
    "s3": ([2, 0], ["nsubj", "root"]),
}
EAGER = {
    "s1": ([2, 3, 0], ["det", "obj", "root"]),  # "dog" label wrong
    "s2": ([0, 0], ["root", "root"]),  # "!" head wrong
    "s3": ([2, 0], ["nsubj", "root"]),
}


def ids_by_sent_id(session: Session, treebank: Treebank) -> dict[str, int]:
    rows = session.execute(
        select(Sentence.sent_id, Sentence.id).join(Document).where(Document.treebank_id == treebank.id)
    )
    return {str(sent_id): sentence_id for sent_id, sentence_id in rows}


@pytest.fixture
def treebank(session: Session, user: User) -> Treebank:
    """The three GOLD sentences as a test split, parsed by graph1 and eager (the ensemble = graph1)."""
    result = import_conllu(
        session, data=GOLD.encode(), filename="test.conllu", treebank_name="tb", split="test", user=user
    )
    ids = ids_by_sent_id(session, result.treebank)
    for name, trees in (("graph1", GRAPH1), ("eager", EAGER), ("ensemble", GRAPH1)):
        for sent_id, (heads, deprels) in trees.items():
            add_version(
                session, sentence_id=ids[sent_id], source=name, heads=heads, deprels=deprels, user=user
            )
    session.commit()
    return result.treebank


def test_scoreboard_scores_members_ensemble_and_oracle(session: Session, treebank: Treebank) -> None:
    board = scoreboard(session, treebank, against="gold")
    by_name = {s.name: s for s in board.sources}
    assert [s.name for s in board.sources] == ["ensemble", "oracle", "eager", "graph1"]
    assert board.reference_sentences == 3 and board.common_sentences == 3
    assert by_name["graph1"].evaluation.uas.correct == 6 and by_name["graph1"].evaluation.words == 7
    assert by_name["eager"].evaluation.uas.correct == 6 and by_name["eager"].evaluation.las.correct == 5
    assert by_name["oracle"].evaluation.uas.correct == 7 and by_name["oracle"].evaluation.las.correct == 7
    assert by_name["graph1"].kind == "member" and by_name["oracle"].kind == "oracle"
    # label accuracy ignores heads: eager has "dog" obj and "!" root wrong
    assert board.label_percent("eager") == pytest.approx(100 * 5 / 7)
    # agreement: same head on dog, barks, run, cats, sleep (5 of 7)
    assert board.agreement[("graph1", "eager")].same_head == 5
    # graph1 alone has "!" (head and arc) and "dog"'s arc; eager alone has "the"
    assert board.unique == {"eager": (1, 1), "graph1": (1, 2)}
    # intervals over 3 sentences: around the score, 100 only for the oracle (right everywhere)
    for source in board.sources:
        low, high = source.intervals["LAS"]
        assert low <= source.percent("LAS") <= high
    assert by_name["oracle"].intervals["LAS"] == (100.0, 100.0)
    assert by_name["graph1"].intervals["LAS"][0] < by_name["graph1"].intervals["LAS"][1]
    json_out = board.to_json()
    assert json_out["against"] == "gold"
    assert json_out["sources"]["graph1"] == {
        "UAS": pytest.approx(100 * 6 / 7, abs=1e-3),
        "LAS": pytest.approx(100 * 6 / 7, abs=1e-3),
        "CLAS": 100.0,
        "words": 7,
    }  # "the" is det: not content


def test_breakdown_by_upos_counts_and_best_marks(session: Session, treebank: Treebank) -> None:
    upos, relation, direction = breakdowns(scoreboard(session, treebank), "LAS")
    assert upos.rows == ["DET", "NOUN", "PUNCT", "VERB"]
    assert upos.words["NOUN"]["graph1"] == 2 and upos.values["NOUN"]["eager"] == 50.0
    assert upos.values["DET"] == {"ensemble": 0.0, "oracle": 100.0, "eager": 100.0, "graph1": 0.0}
    # DET has 1 word: below MIN_WORDS_FOR_BEST, nobody is marked; the oracle never is
    assert upos.best["DET"] == set()
    assert "nsubj" in relation.rows and relation.values["nsubj"]["eager"] == pytest.approx(100 * 2 / 3)
    assert direction.words["root"]["graph1"] == 3 and direction.words["right 1"]["graph1"] == 3


def test_scoreboard_against_reviewed_uses_corrections(
    session: Session, treebank: Treebank, user: User
) -> None:
    ids = ids_by_sent_id(session, treebank)
    # an annotator decides "!" attaches to ROOT after all: eager is right there now
    add_version(
        session, sentence_id=ids["s2"], source="annotation", heads=[0, 0], deprels=["root", "root"], user=user
    )
    session.commit()
    board = scoreboard(session, treebank, against="reviewed")
    by_name = {s.name: s for s in board.sources}
    assert by_name["eager"].evaluation.uas.correct == 7
    assert by_name["gold"].kind == "reference" and by_name["gold"].evaluation.uas.correct == 6
    with pytest.raises(ValueError, match="against"):
        scoreboard(session, treebank, against="silver")


def test_rounds_are_inferred_from_when_trees_were_saved(
    session: Session, treebank: Treebank, user: User
) -> None:
    ids = ids_by_sent_id(session, treebank)
    start = datetime.now(UTC) - timedelta(hours=2)
    for number in (1, 2):
        session.add(
            TrainingRound(
                treebank_id=treebank.id,
                number=number,
                parsers=["graph1"],
                tags="gold",
                model_dir="x",
                user_id=user.id,
                started_at=start + timedelta(hours=number - 1),
            )
        )
    for tree in session.scalars(select(TreeVersion).where(TreeVersion.kind == "ensemble")):
        tree.created_at = start + timedelta(minutes=10)  # made by round 1
    later = add_version(
        session,
        sentence_id=ids["s1"],
        source="ensemble",
        heads=[2, 3, 0],
        deprels=["det", "nsubj", "root"],
        user=user,
    )  # now: round 2
    session.commit()
    all_ids = list(ids.values())
    assert set(load_trees(session, treebank, all_ids, "ensemble@1").trees) == set(all_ids)
    second = load_trees(session, treebank, all_ids, "ensemble@2")
    assert list(second.trees) == [ids["s1"]] and second.trees[ids["s1"]].id == later.id
    assert load_trees(session, treebank, all_ids, "ensemble").round_numbers == [1, 2]
    add_parse(
        session, treebank, data=upload_text(GRAPH1).encode(), filename="u.conllu", label="ext", user=user
    )
    board = {s.name: s for s in scoreboard(session, treebank).sources}
    assert board["ensemble"].rounds == [1, 2] and board["ensemble"].evaluation.uas.correct == 7
    assert board["ext"].rounds == [] and board["graph1"].rounds == [2]  # saved after round 2 started


# -- uploads ---------------------------------------------------------------------------------------


def upload_text(trees: dict[str, tuple[list[int], list[str]]], *, sent_ids: bool = True) -> str:
    """GOLD with the given trees (only those sentences), with or without sent_id comments."""
    out = []
    for raw in parse_conllu(GOLD):
        if raw.sent_id not in trees:
            continue
        heads, deprels = trees[raw.sent_id]
        for row, head, deprel in zip(raw.words, heads, deprels, strict=True):
            row[6], row[7] = str(head), deprel
        if not sent_ids:
            raw.comments = [line for line in raw.comments if not line.startswith("# sent_id")]
        out.append(raw)
    return format_conllu(out)


def test_upload_matches_by_sent_id_or_text_and_scores_as_external(
    session: Session, treebank: Treebank, user: User
) -> None:
    text = upload_text({"s1": GRAPH1["s1"]}) + upload_text(
        {"s2": EAGER["s2"], "s3": GRAPH1["s3"]}, sent_ids=False
    )
    result = add_parse(
        session, treebank, data=text.encode(), filename="udpipe.conllu", label="udpipe", user=user
    )
    session.commit()
    assert result.sentences == 3 and result.parser.filename == "udpipe.conllu"
    board = {s.name: s for s in scoreboard(session, treebank).sources}
    assert board["udpipe"].kind == "external" and board["udpipe"].evaluation.uas.correct == 5
    # a second upload adds versions; the scoreboard reads the newest
    add_parse(
        session, treebank, data=upload_text(GRAPH1).encode(), filename="v2.conllu", label="udpipe", user=user
    )
    session.commit()
    board = {s.name: s for s in scoreboard(session, treebank).sources}
    assert board["udpipe"].evaluation.uas.correct == 6
    assert session.scalar(select(func.count()).select_from(ExternalParser)) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t.replace("cats\tcat", "kats\tcat"),
            r"sentence 3 \(sent_id s3\).*word 1 is 'kats' instead of 'cats'",
        ),
        (
            lambda t: t.replace(
                "# sent_id = s2\n# text = run !\n", "# sent_id = zz\n# text = walk !\n"
            ).replace("1\trun\t", "1\twalk\t"),
            r"sentence 2 \(sent_id zz\) matches no sentence",
        ),
        (
            lambda t: t.replace("# sent_id = s3", "# sent_id = s1"),
            r"sentence 3 .*same stored sentence as sentence 1",
        ),
        (
            lambda t: (
                t.replace("\t3\tdet", "\t_\tdet")
                .replace("\t3\tnsubj", "\t_\tnsubj")
                .replace("\t0\troot\t_\t_\n\n# sent_id = s2", "\t_\troot\t_\t_\n\n# sent_id = s2")
            ),
            r"sentence 1 .*no head",
        ),
    ],
)
def test_upload_is_refused_naming_the_first_bad_sentence(
    session: Session, treebank: Treebank, user: User, change: Callable[[str], str], message: str
) -> None:
    before = session.scalar(select(func.count()).select_from(TreeVersion))
    with pytest.raises(UploadError, match=message):
        add_parse(
            session,
            treebank,
            data=change(upload_text(GRAPH1)).encode(),
            filename="x.conllu",
            label="ext",
            user=user,
        )
    session.rollback()
    assert session.scalar(select(func.count()).select_from(TreeVersion)) == before
    assert session.scalar(select(func.count()).select_from(ExternalParser)) == 0


@pytest.mark.parametrize("label", ["", "graph1", "gold", "oracle", "a b", "x" * 41, "-x"])
def test_labels_of_members_and_sources_are_refused(label: str) -> None:
    with pytest.raises(UploadError, match="parser label"):
        check_label(label)


# -- the command line contract -------------------------------------------------------------------


def test_cli_add_parse_and_scoreboard_json(
    runner: FlaskCliRunner,
    session: Session,
    treebank: Treebank,
    tmp_path: Path,
    make_user: Callable[..., int],
) -> None:
    make_user("admin", admin=True)
    path = tmp_path / "ext.conllu"
    path.write_text(upload_text(EAGER), encoding="utf-8")
    added = runner.invoke(args=["treebank", "add-parse", "tb", str(path), "--parser", "stanza"])
    assert added.exit_code == 0, added.output
    result = runner.invoke(args=["treebank", "scoreboard", "tb", "--split", "test", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["against"] == "gold"
    assert set(data["sources"]) == {"ensemble", "oracle", "eager", "graph1", "stanza"}
    assert data["sources"]["stanza"] == data["sources"]["eager"]
    bad = runner.invoke(args=["treebank", "add-parse", "tb", str(path), "--parser", "eager"])
    assert bad.exit_code != 0 and "parser label" in bad.output
    assert runner.invoke(args=["treebank", "scoreboard", "nope"]).exit_code != 0
    table = runner.invoke(args=["treebank", "scoreboard", "tb", "--against", "reviewed"])
    assert table.exit_code == 0 and "stanza\texternal" in table.output


def test_external_score_equals_the_official_conll18_scorer(
    runner: FlaskCliRunner, session: Session, user: User, tmp_path: Path, make_user: Callable[..., int]
) -> None:
    udeval = pytest.importorskip("udtools.udeval", reason="udtools (test dependency) missing")
    from tests.parsing.conftest import UD_ROOT
    from tests.parsing.test_metrics import perturbed

    wolof = UD_ROOT / "UD_Wolof-WTB" / "wo_wtb-ud-dev.conllu"
    if not wolof.is_file():
        pytest.skip(f"UD treebank file not found: {wolof} (set ARCVOTE_UD_ROOT)")
    make_user("admin", admin=True)
    gold_raws = read_conllu(wolof)[:120]
    gold_path, system_path = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold_path.write_text(format_conllu(gold_raws), encoding="utf-8")
    system_path.write_text(format_conllu(perturbed(gold_raws, seed=11, rate=0.15)), encoding="utf-8")
    assert (
        runner.invoke(
            args=["treebank", "import", str(gold_path), "--name", "wo", "--split", "test"]
        ).exit_code
        == 0
    )
    added = runner.invoke(args=["treebank", "add-parse", "wo", str(system_path), "--parser", "perturbed"])
    assert added.exit_code == 0, added.output
    result = runner.invoke(args=["treebank", "scoreboard", "wo", "--json"])
    ours = json.loads(result.output)["sources"]["perturbed"]
    official = udeval.evaluate(
        udeval.load_conllu_file(str(gold_path)), udeval.load_conllu_file(str(system_path))
    )
    assert 60 < ours["LAS"] < 95
    for name in ("UAS", "LAS", "CLAS"):
        assert ours[name] == pytest.approx(100 * official[name].f1, abs=1e-3), name
    assert ours["words"] == official["UAS"].gold_total
