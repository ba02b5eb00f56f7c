"""Where the ``biaffine`` member trains and parses (issue #33: on a worker's GPU when it has one,
on the CPU otherwise): device names, batches moved whole, the CPU path unchanged by ``auto``,
and, on a machine with a CUDA GPU, a model trained there that parses on the CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from parsing.biaffine.batching import build_vocabularies, encode  # noqa: E402
from parsing.biaffine.member import BiaffineParser  # noqa: E402
from parsing.biaffine.runtime import resolve_device  # noqa: E402
from parsing.constraints import Constraints  # noqa: E402
from parsing.types import Sentence  # noqa: E402
from tests.parsing.biaffine_data import TINY, short_sentences  # noqa: E402

GPU = torch.cuda.is_available()


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    """30 short training sentences of UD_Afrikaans-AfriBooms (at most 9 words)."""
    return short_sentences("af", read=800, count=30)


def test_device_names() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if GPU else "cpu")
    for wrong in ("gpu", "meta", "tpu:0"):
        with pytest.raises(ValueError, match="'auto', 'cpu', 'cuda' or 'cuda:N'"):
            resolve_device(wrong)


@pytest.mark.skipif(GPU, reason="this machine has a CUDA GPU")
def test_asking_for_a_gpu_where_there_is_none_says_so(sentences: list[Sentence]) -> None:
    with pytest.raises(ValueError, match="sees no CUDA GPU on this machine"):
        BiaffineParser(**TINY, max_epochs=1, device="cuda").fit(sentences[:4], sentences[:4])


def test_a_batch_moves_every_tensor(sentences: list[Sentence]) -> None:
    group = sentences[:3]
    given = [Constraints({1: int(group[0].heads[1])}, {}), None, None]
    batch = encode(group, build_vocabularies(sentences), given=given)
    moved = batch.to(torch.device("meta"))
    tensors = []
    for name in type(batch).__slots__:
        value = getattr(moved, name)
        values = value.values() if isinstance(value, dict) else [value]
        tensors += [tensor for tensor in values if isinstance(tensor, torch.Tensor)]
    assert len(tensors) >= 12  # words ... given_positions, the tag and target columns
    assert all(tensor.device.type == "meta" for tensor in tensors)
    assert batch.to(torch.device("cpu")) is batch
    assert batch.words.device.type == "cpu"  # the original is untouched


@pytest.mark.skipif(GPU, reason="on a GPU machine 'auto' is the GPU")
def test_auto_on_a_cpu_machine_trains_exactly_as_cpu(sentences: list[Sentence]) -> None:
    runs = [BiaffineParser(**TINY, max_epochs=3, patience=3, random_state=5, device=device)
            .fit(sentences, sentences[:10]) for device in ("auto", "cpu")]
    assert runs[0].history_["device"] == runs[1].history_["device"] == "cpu"
    assert runs[0].history_["dev_las"] == runs[1].history_["dev_las"]
    for key, value in runs[0].weights_.items():
        np.testing.assert_array_equal(value, runs[1].weights_[key])


@pytest.mark.skipif(not GPU, reason="needs a CUDA GPU (PyTorch sees none here)")
@pytest.mark.filterwarnings("ignore::UserWarning")  # CUDA kernels without a deterministic version warn
def test_trained_on_the_gpu_it_parses_on_the_cpu(sentences: list[Sentence], tmp_path: Path) -> None:
    gpu = BiaffineParser(**TINY, max_epochs=30, patience=30, random_state=3, device="cuda")
    gpu.fit(sentences, sentences)
    assert gpu.history_["device"] == "cuda"
    assert gpu._network()[0].device.type == "cuda"
    assert all(isinstance(value, np.ndarray) for value in gpu.weights_.values())
    on_gpu = gpu.predict(sentences)
    gpu.save(tmp_path / "gpu.model")
    cpu = BiaffineParser.load(tmp_path / "gpu.model")
    cpu.device = "cpu"
    on_cpu = cpu.predict(sentences)
    assert cpu._network()[0].device.type == "cpu"
    words = sum(len(s) for s in sentences)
    same = sum(int((a.heads[1:] == b.heads[1:]).sum()) for a, b in zip(on_gpu, on_cpu, strict=True))
    assert same / words >= 0.98  # the same weights; only float rounding differs
    right = sum(int((p.heads[1:] == s.heads[1:]).sum()) for p, s in zip(on_gpu, sentences, strict=True))
    assert right / words > 0.9  # it learned its training sentences on the GPU
    forced = [Constraints({1: int(s.heads[1])}, {1: s.deprels[1]}) for s in sentences]
    for parse, constraint in zip(gpu.predict_constrained(sentences, forced), forced, strict=True):
        assert parse.heads[1] == constraint.heads[1]
