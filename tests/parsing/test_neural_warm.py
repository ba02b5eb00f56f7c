"""Warm fits of the neural members ``biaffine`` and ``lstm-hybrid`` (a warm round continues
their networks on more trees): vocabularies and labels grown with every known entry at its
index, the weights kept (the leading block; ``lstm-hybrid``'s action rows moved with their
labels), at most ``warm_epochs`` epochs with the starting weights competing on dev, a cold fit
when the layers changed, and a warm round through ``fit_member`` and a model file.

Short real sentences (UD_Afrikaans), tiny networks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.base import BaseParser  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.vocab import Vocabulary  # noqa: E402
from parsing.biaffine.warm import grown_actions, grown_state, grown_vocabularies, same_layers  # noqa: E402
from parsing.lstm_transition.member import LSTMTransitionParser  # noqa: E402
from parsing.member_fit import MemberJob, fit_member  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import TINY, short_sentences  # noqa: E402
from tests.parsing.test_lstm_transition import TINY as TINY_LSTM  # noqa: E402

MEMBERS: dict[str, tuple[type[Any], dict[str, Any]]] = {
    "biaffine": (BiaffineParser, TINY), "lstm-hybrid": (LSTMTransitionParser, TINY_LSTM)}

NEW_WORD = "zzwarmword"
NEW_LABEL = "dep:warmtest"


@pytest.fixture(scope="module")
def data() -> dict[str, list[Sentence]]:
    """``base`` (30 short training sentences), ``more`` (20 others), ``dev`` (15)."""
    sentences = short_sentences("af", 1500, 65)
    return {"base": sentences[:30], "more": sentences[30:50], "dev": sentences[50:]}


@pytest.fixture(scope="module", params=list(MEMBERS))
def fitted(request: pytest.FixtureRequest, data: dict[str, list[Sentence]]) -> BaseParser:
    parser_class, tiny = MEMBERS[request.param]
    return parser_class(**tiny, max_epochs=6, patience=6, random_state=1).fit(data["base"], data["dev"])


def _continued(parser: BaseParser, **params: object) -> BaseParser:
    """A copy of the fitted ``parser`` set to continue (what a warm round loads from its file)."""
    copy = type(parser)(**{**parser.get_params(), "warm_start": True, **params})
    copy.__dict__.update({key: value for key, value in vars(parser).items() if key.endswith("_")})
    return copy


def _with_new_word(sentence: Sentence, label: str | None = None) -> Sentence:
    forms = list(sentence.forms)
    forms[1] = NEW_WORD
    deprels = list(sentence.deprels)
    if label is not None:
        deprels[next(d for d in range(1, len(sentence) + 1) if sentence.heads[d] != 0)] = label
    return replace(sentence, forms=forms, deprels=deprels)


def test_vocabularies_grow_at_the_end_and_known_entries_keep_their_index() -> None:
    previous = {"words": ["<pad>", "<unk>", "a", "b"], "deprels": ["<pad>", "<unk>", "nsubj"]}
    current = {"words": Vocabulary.build(["c", "a", "c", "d"]), "deprels": Vocabulary.build(["obj", "nsubj"])}
    grown = grown_vocabularies(previous, current)
    assert grown is not None
    assert grown["words"].items == ["<pad>", "<unk>", "a", "b", "c", "d"]
    assert grown["deprels"].items == ["<pad>", "<unk>", "nsubj", "obj"]
    assert grown_vocabularies(previous, {"words": current["words"]}) is None


def test_a_grown_state_keeps_the_old_block_and_the_fresh_rest() -> None:
    old = {"embed": np.arange(6, dtype=np.float32).reshape(2, 3), "bias": np.ones(2, dtype=np.float32)}
    fresh = {"embed": torch.full((4, 3), -1.0), "bias": torch.full((3,), 7.0)}
    state = grown_state(old, fresh)
    assert state is not None
    np.testing.assert_array_equal(state["embed"][:2].numpy(), old["embed"])
    assert (state["embed"][2:] == -1).all() and state["bias"].tolist() == [1.0, 1.0, 7.0]
    assert grown_state(old, {"embed": torch.zeros(4, 3)}) is None                      # a name missing
    assert grown_state(old, {"embed": torch.zeros(1, 3), "bias": torch.zeros(2)}) is None  # shrinks
    assert grown_state(old, {"embed": torch.zeros(4, 3, 1), "bias": torch.zeros(2)}) is None  # rank
    assert same_layers({"words": 3, "hidden": 8}, {"words": 30, "hidden": 8})
    assert not same_layers({"words": 3, "hidden": 8}, {"words": 3, "hidden": 16})


def test_a_warm_fit_at_rate_zero_keeps_every_known_weight_and_parse(fitted: BaseParser,
                                                                    data: dict[str, list[Sentence]]) -> None:
    new = [_with_new_word(s) for s in data["base"][:10]]  # one new word, no other new entry that parses read
    warm = _continued(fitted, learning_rate=0.0, warm_epochs=1).fit([*data["base"], *new], data["dev"])
    assert warm.history_["warm"] is True and len(warm.history_["dev_las"]) == 1
    assert warm.history_["best_epoch"] == 0  # the epoch at rate 0 is no better than the start
    for name, items in fitted.vocabularies_.items():
        assert warm.vocabularies_[name][: len(items)] == items
    assert NEW_WORD in warm.vocabularies_["words"] and NEW_WORD not in fitted.vocabularies_["words"]
    for key, old in fitted.weights_.items():
        block = tuple(slice(0, size) for size in old.shape)
        np.testing.assert_array_equal(warm.weights_[key][block], old, err_msg=key)
    assert warm.weights_["words.weight"].shape[0] > fitted.weights_["words.weight"].shape[0]
    table = warm.weights_["words.weight"]
    np.testing.assert_array_equal(table[warm.vocabularies_["words"].index(NEW_WORD)], table[1])  # as unknown
    for sentences in (data["base"], new):  # the new word is read as the unknown word was
        for a, b in zip(fitted.predict(sentences), warm.predict(sentences), strict=True):
            assert np.array_equal(a.heads, b.heads) and a.deprels == b.deprels


def test_a_warm_fit_trains_at_most_warm_epochs_and_learns_a_new_label(
        fitted: BaseParser, data: dict[str, list[Sentence]]) -> None:
    new = [_with_new_word(s, NEW_LABEL) for s in data["more"]]
    warm = _continued(fitted, warm_epochs=3, patience=10).fit([*data["base"], *new], data["dev"])
    assert warm.history_["warm"] is True and len(warm.history_["dev_las"]) == 3
    if isinstance(warm, BiaffineParser):
        labels = warm.vocabularies_["deprels"]
        assert labels.index(NEW_LABEL) == len(fitted.vocabularies_["deprels"])  # appended
        assert warm.weights_["label_weight"].shape[0] == len(labels)
    else:
        known = len(fitted.labels_)
        assert warm.labels_[:known] == fitted.labels_ and NEW_LABEL in warm.labels_[known:]
        assert warm.weights_["mlp.3.weight"].shape[0] == 2 * len(warm.labels_) + 1
    parses = warm.predict(new)
    assert [len(p.heads) for p in parses] == [len(s) + 1 for s in new]


def test_without_warm_start_or_with_other_layers_a_fit_starts_afresh(
        fitted: BaseParser, data: dict[str, list[Sentence]]) -> None:
    train = [*data["base"], *data["more"]]
    parser_class, tiny = MEMBERS[fitted.name]
    cold = parser_class(**tiny, max_epochs=2, patience=6, random_state=1).fit(train, data["dev"])
    refit = _continued(fitted, warm_start=False, max_epochs=2).fit(train, data["dev"])
    assert refit.history_["warm"] is False
    assert all(np.array_equal(refit.weights_[k], cold.weights_[k]) for k in cold.weights_)
    other = _continued(fitted, hidden=tiny["hidden"] + 8, max_epochs=2).fit(train, data["dev"])
    assert other.history_["warm"] is False
    assert other.vocabularies_["words"][2:] != fitted.vocabularies_["words"][2:]  # built afresh


def test_a_warm_round_continues_the_saved_member(fitted: BaseParser, data: dict[str, list[Sentence]],
                                                 tmp_path: Path) -> None:
    fitted.save(tmp_path / "round1.model")
    job = MemberJob(fitted.name, [*data["base"], *data["more"]], data["dev"], tmp_path / "round2.model",
                    params={**MEMBERS[fitted.name][1], "max_epochs": 6}, warm=tmp_path / "round1.model")
    name, _, continued = fit_member(job)
    assert (name, continued) == (fitted.name, True)
    model = BaseParser.load(tmp_path / "round2.model")
    assert model.history_["warm"] is True  # the saved member's settings: 5 warm epochs, patience 6
    assert len(model.history_["dev_las"]) == model.warm_epochs == 5


@pytest.mark.parametrize("name", list(MEMBERS))
@pytest.mark.parametrize("setting", [{"warm_epochs": 0}, {"warm_rate": 0.0}])
def test_warm_settings_out_of_range_are_refused(name: str, setting: dict[str, float],
                                                data: dict[str, list[Sentence]]) -> None:
    parser_class, tiny = MEMBERS[name]
    with pytest.raises(ValueError, match=next(iter(setting))):
        parser_class(**tiny, **setting).fit(data["base"][:3])


def test_known_actions_keep_their_rows_when_labels_are_added(data: dict[str, list[Sentence]]) -> None:
    fitted = LSTMTransitionParser(**TINY_LSTM, max_epochs=2, random_state=1).fit(data["base"], data["dev"])
    new = [_with_new_word(s, NEW_LABEL) for s in data["more"]]
    warm = _continued(fitted, learning_rate=0.0, warm_epochs=1).fit([*data["base"], *new], data["dev"])
    known, wide = len(fitted.labels_), len(warm.labels_)
    for key in ("mlp.3.weight", "mlp.3.bias"):
        old, grown = fitted.weights_[key], warm.weights_[key]
        np.testing.assert_array_equal(grown[: 1 + known], old[: 1 + known])             # SHIFT, LEFT
        np.testing.assert_array_equal(grown[1 + wide: 1 + wide + known], old[1 + known:])  # RIGHT
    with pytest.raises(ValueError, match="action rows"):
        grown_actions(np.zeros(4), torch.zeros(7), 2)


def test_warm_epochs_run_at_warm_rate_times_the_learning_rate(
        fitted: BaseParser, data: dict[str, list[Sentence]], monkeypatch: pytest.MonkeyPatch) -> None:
    import parsing.biaffine.runtime as runtime
    import parsing.biaffine.training as training

    rates: list[float] = []
    real = runtime.adam

    def recording(parameters: object, rate: float) -> object:
        rates.append(rate)
        return real(parameters, rate)  # type: ignore[arg-type]

    monkeypatch.setattr(runtime, "adam", recording)
    monkeypatch.setattr(training, "adam", recording)
    _continued(fitted, warm_epochs=1, warm_rate=0.25).fit([*data["base"], *data["more"]], data["dev"])
    assert rates == [pytest.approx(0.25 * fitted.learning_rate)]
