"""Where and how the ``biaffine`` member's torch code runs: its device (a worker's GPU when it has
one, else the CPU), its thread count, seeded, deterministic training, and its optimizer."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@contextmanager
def threads_set(count: int | None) -> Iterator[None]:
    """Torch's intra-op thread count set to ``count`` (None: unchanged), restored after."""
    import torch

    before = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def resolve_device(name: str) -> torch.device:
    """The torch device a member trains and parses on: ``"auto"`` is the first CUDA GPU when
    PyTorch sees one (a worker with a GPU and a CUDA build of PyTorch), else the CPU; ``"cpu"``,
    ``"cuda"`` and ``"cuda:N"`` as named.

    Raises:
        ValueError: another name, or a CUDA device on a machine where PyTorch sees none.
    """
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise ValueError(f"device is 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}") from error
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device is 'auto', 'cpu', 'cuda' or 'cuda:N', got {name!r}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {name!r}: PyTorch {torch.__version__} sees no CUDA GPU on this machine; "
                         "use 'auto' (the CPU here) or 'cpu'")
    return device


@contextmanager
def seeded(seed: int, threads: int | None, device: torch.device) -> Iterator[None]:
    """Torch's random state seeded with ``seed``, deterministic algorithms on and ``threads``
    threads, all restored after. On the CPU every run of the same seed gives the same weights;
    on a GPU the operations without a deterministic CUDA kernel only warn (runs of one seed
    then differ slightly)."""
    import torch

    deterministic = torch.are_deterministic_algorithms_enabled()
    on_gpu = device.type == "cuda"
    if on_gpu:  # cuBLAS reproducibility asks for a fixed workspace (read when its handle is made)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    gpus = [device.index if device.index is not None else torch.cuda.current_device()] if on_gpu else []
    with torch.random.fork_rng(devices=gpus), threads_set(threads):
        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=on_gpu)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(deterministic)


def adam(parameters: Iterable[torch.nn.Parameter], rate: float) -> torch.optim.Adam:
    """The optimizer both neural members train with: Adam with Dozat & Manning's ``betas=(0.9,
    0.9)``, its fused kernel (one pass over all weights per step, on the CPU as on a GPU:
    about 1 s of a 10 s training epoch saved against the per-tensor loop, Wolof, one thread)."""
    import torch

    return torch.optim.Adam(parameters, lr=rate, betas=(0.9, 0.9), fused=True)
