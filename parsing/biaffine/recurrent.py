"""A bidirectional ``nn.LSTM`` run over padded sequences of different lengths, without packing.

PyTorch's CPU LSTM over a ``PackedSequence`` steps through time with one slice of the packed
input per step, and the backward pass of each slice allocates and zero-fills a gradient as large
as the whole packed input: a quarter of a training epoch of ``biaffine`` went to ``fill_``
(Wolof, one thread). Here each direction runs as a one-layer LSTM over the padded batch (one
fused kernel, ``torch.lstm``): the forward direction reads each sequence from its start, so the
padding after its end cannot reach its valid positions; the backward direction reads each
sequence reversed within its own length (:func:`reverse_within`), so it starts at the last real
element, never at the padding. The valid positions' outputs and the final states equal the
packed module's up to float rounding, with the module's own weights (same parameter names, so
model files are unchanged); dropout between layers is the module's ``dropout``. A training
epoch of either neural member is 1.4-1.6 times as fast (``bench/lstm_speed.py``). Without a
gradient to record (parsing, dev scoring) the packed module runs as before: there packing costs
nothing and skips the padding, which the unpacked kernels compute (parsing was 4-20% slower
unpacked: a batch's words vary in length, so its characters are mostly padding).

Shapes: ``B`` sequences, ``T`` positions (padded), ``D`` input size, ``H`` the LSTM's hidden size.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

__all__ = ["packed_bilstm", "reverse_within", "run_bilstm"]

_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def reverse_within(inputs: Tensor, lengths: Tensor) -> Tensor:
    """Each sequence's first ``lengths[b]`` positions reversed, the padding left in place:
    ``(B, T, D)`` → ``(B, T, D)``; its own inverse.

    Examples:
        >>> reverse_within(torch.arange(8.0).reshape(2, 4, 1), torch.tensor([3, 4]))[..., 0].tolist()
        [[2.0, 1.0, 0.0, 3.0], [7.0, 6.0, 5.0, 4.0]]
    """
    positions = torch.arange(inputs.shape[1], device=inputs.device)[None, :]
    size = lengths.to(inputs.device)[:, None]
    index = torch.where(positions < size, size - 1 - positions, positions)
    return torch.gather(inputs, 1, index[..., None].expand(-1, -1, inputs.shape[-1]))


def _direction(lstm: nn.LSTM, inputs: Tensor, layer: int, suffix: str) -> Tensor:
    """One direction of one layer of ``lstm`` over ``inputs`` ``(B, T, D)`` → ``(B, T, H)``."""
    weights = [getattr(lstm, f"{name}_l{layer}{suffix}") for name in _WEIGHTS]
    zeros = inputs.new_zeros(1, inputs.shape[0], lstm.hidden_size)
    outputs: Tensor = torch.lstm(inputs, (zeros, zeros), weights, True, 1, 0.0, lstm.training, False, True)[0]
    return outputs


def packed_bilstm(lstm: nn.LSTM, inputs: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`run_bilstm`'s results through a ``PackedSequence`` (the module's own path; slow to
    train through, module docstring)."""
    packed = pack_padded_sequence(inputs, lengths.cpu(), batch_first=True, enforce_sorted=False)
    states, (final, _) = lstm(packed)
    padded, _ = pad_packed_sequence(states, batch_first=True, total_length=inputs.shape[1])
    return padded, torch.cat([final[-2], final[-1]], dim=-1)


def run_bilstm(lstm: nn.LSTM, inputs: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
    """``lstm`` (bidirectional, ``batch_first``, with biases) over padded ``inputs``.

    Args:
        lstm: the module whose weights are used (any number of layers).
        inputs: ``(B, T, D)``; positions at or past ``lengths[b]`` are padding.
        lengths: ``(B,)``, each at least 1.

    Without gradients recorded (``torch.no_grad``, ``torch.inference_mode``) the batch is packed
    and run through the module itself (module docstring); the results are the same.

    Returns:
        The last layer's outputs ``(B, T, 2H)`` (forward then backward, zeros at the padding,
        as ``pad_packed_sequence`` gives them) and its final states ``(B, 2H)``: the forward direction's at
        each sequence's last position, the backward direction's at its first, as
        ``nn.LSTM``'s ``h_n`` over a packed batch gives them.

    Raises:
        ValueError: a unidirectional module, one without biases or not ``batch_first``, or a
            projection size.
    """
    if not (lstm.bidirectional and lstm.bias and lstm.batch_first) or lstm.proj_size:
        raise ValueError("run_bilstm needs a bidirectional, batch_first LSTM with biases and no "
                         "projection")
    if not torch.is_grad_enabled():
        return packed_bilstm(lstm, inputs, lengths)
    states = inputs
    last = (lengths.to(inputs.device) - 1)[:, None, None].expand(-1, 1, lstm.hidden_size)
    forward = backward = inputs
    for layer in range(lstm.num_layers):
        if layer:
            states = nn.functional.dropout(states, lstm.dropout, lstm.training)
        forward = _direction(lstm, states, layer, "")
        reversed_run = _direction(lstm, reverse_within(states, lengths), layer, "_reverse")
        backward = reverse_within(reversed_run, lengths)
        states = torch.cat([forward, backward], dim=-1)
    finals = torch.cat([torch.gather(forward, 1, last)[:, 0], backward[:, 0]], dim=-1)
    positions = torch.arange(inputs.shape[1], device=inputs.device)[None, :]
    padding = positions >= lengths.to(inputs.device)[:, None]
    return states.masked_fill(padding[..., None], 0.0), finals
