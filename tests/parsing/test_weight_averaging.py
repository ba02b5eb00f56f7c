"""Weight averaging of the neural members (``average``): the running average's arithmetic, the
trained weights restored after scoring with the average, and a fit that keeps the averaged
weights it scored on dev while a fit without it trains exactly as before.

Short real sentences (UD_Afrikaans), tiny networks."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import parsing.biaffine.averaging as averaging  # noqa: E402
from parsing.biaffine.averaging import WeightAverage, averaging_decay  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.training import greedy_las  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import TINY, short_sentences  # noqa: E402


@pytest.fixture(scope="module")
def data() -> dict[str, list[Sentence]]:
    """``train`` (40 short sentences) and ``dev`` (15 others)."""
    sentences = short_sentences("af", 1500, 55)
    return {"train": sentences[:40], "dev": sentences[40:]}


def test_doctests() -> None:
    assert doctest.testmod(averaging).failed == 0


def test_decay_spans_the_given_number_of_epochs() -> None:
    assert averaging_decay(2.0, 50) == pytest.approx(0.99)
    assert averaging_decay(1.0, 1) == 0.0
    with pytest.raises(ValueError, match="decay is in"):
        WeightAverage([], 1.0)


def test_the_average_follows_each_update_by_its_share() -> None:
    weight = torch.nn.Parameter(torch.zeros(3))
    average = WeightAverage([weight], decay=0.75)
    with torch.no_grad():
        weight.fill_(4.0)
    average.update()                                     # 0 + 0.25 * (4 - 0)
    assert average.average[0].tolist() == [1.0, 1.0, 1.0]
    average.update()                                     # 1 + 0.25 * (4 - 1)
    assert average.average[0].tolist() == [1.75, 1.75, 1.75]
    average.restart()
    assert average.average[0].tolist() == [4.0, 4.0, 4.0]


def test_applied_swaps_the_average_in_and_the_trained_weights_back() -> None:
    weight = torch.nn.Parameter(torch.tensor([2.0, -2.0]))
    average = WeightAverage([weight], decay=0.5)
    with torch.no_grad():
        weight.copy_(torch.tensor([4.0, 0.0]))
    average.update()
    with average.applied():
        assert weight.tolist() == [3.0, -1.0]
    assert weight.tolist() == [4.0, 0.0]
    with pytest.raises(RuntimeError), average.applied():
        raise RuntimeError("scoring failed")
    assert weight.tolist() == [4.0, 0.0]                 # restored on an error too


def _fit(data: dict[str, list[Sentence]], **params: object) -> BiaffineParser:
    parser = BiaffineParser(**TINY, max_epochs=5, patience=5, random_state=3, **params)
    return parser.fit(data["train"], data["dev"])


def _weights(parser: BiaffineParser) -> dict[str, np.ndarray]:
    return parser.__dict__["weights_"]


def test_a_fit_keeps_the_averaged_weights_it_scored_on_dev(data: dict[str, list[Sentence]]) -> None:
    plain, averaged = _fit(data, average=0.0), _fit(data, average=1.0)
    history = averaged.history_
    kept = greedy_las(averaged.network_cache, data["dev"], averaged.vocabularies_cache)
    assert kept == pytest.approx(history["dev_las"][history["best_epoch"] - 1])
    assert kept == pytest.approx(max(history["dev_las"]))
    differs = [name for name, array in _weights(plain).items()
               if not np.array_equal(array, _weights(averaged)[name])]
    assert len(differs) > len(_weights(plain)) // 2     # most tensors are averages, not the last step's


def test_the_member_averages_by_default_and_older_files_did_not() -> None:
    assert BiaffineParser().average == 4.0
    assert BiaffineParser.average == 0.0        # what a model file without the setting was trained with


def test_a_negative_average_is_refused_by_name(data: dict[str, list[Sentence]]) -> None:
    with pytest.raises(ValueError, match="average is a number of epochs"):
        _fit(data, average=-1.0)


def test_lstm_hybrid_keeps_the_averaged_weights_it_scored_on_dev(data: dict[str, list[Sentence]]) -> None:
    from parsing.lstm_transition.member import LSTMTransitionParser
    from parsing.scorer.metrics import evaluate
    from tests.parsing.test_lstm_transition import TINY as TINY_LSTM

    def fit(**params: object) -> LSTMTransitionParser:
        parser = LSTMTransitionParser(**TINY_LSTM, max_epochs=4, patience=4, random_state=2, **params)
        return parser.fit(data["train"], data["dev"])

    plain, averaged = fit(), fit(average=1.0)
    history = averaged.history_
    kept = 100 * evaluate(data["dev"], averaged.predict_greedy(data["dev"])).las.f1
    assert kept == pytest.approx(history["dev_las"][history["best_epoch"] - 1])
    assert any(not np.array_equal(array, averaged.weights_[name]) for name, array in plain.weights_.items())
    with pytest.raises(ValueError, match="average is a number of epochs"):
        fit(average=-0.5)
