"""The BiLSTM run without packing (``parsing.biaffine.recurrent``): the same outputs, final
states and gradients as ``nn.LSTM`` over a packed batch, with the module's own weights."""

from __future__ import annotations

import doctest

import pytest

torch = pytest.importorskip("torch")

from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

from parsing.biaffine import recurrent  # noqa: E402
from parsing.biaffine.recurrent import reverse_within, run_bilstm  # noqa: E402

LENGTHS = torch.tensor([5, 1, 7, 3])


def packed_run(lstm: torch.nn.LSTM, inputs: torch.Tensor,
               lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the networks computed before: a packed batch through ``lstm``."""
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    out, (final, _) = lstm(packed)
    padded, _ = pad_packed_sequence(out, batch_first=True, total_length=inputs.shape[1])
    return padded, torch.cat([final[-2], final[-1]], dim=-1)


@pytest.mark.parametrize("layers", [1, 2])
def test_outputs_finals_and_gradients_equal_the_packed_lstm(layers: int) -> None:
    torch.manual_seed(3)
    lstm = torch.nn.LSTM(6, 4, num_layers=layers, batch_first=True, bidirectional=True).eval()
    inputs = torch.randn(4, 7, 6)
    inputs[0, 5:] = 100.0  # padding that would dominate any state it reached
    first = inputs.clone().requires_grad_(True)
    second = inputs.clone().requires_grad_(True)
    expected, expected_finals = packed_run(lstm, first, LENGTHS)
    states, finals = run_bilstm(lstm, second, LENGTHS)
    torch.testing.assert_close(states, expected)
    torch.testing.assert_close(finals, expected_finals)
    weights = torch.randn(4, 7, 8)
    (expected * weights).sum().backward()
    expected_grads = [p.grad.clone() for p in lstm.parameters()]
    lstm.zero_grad()
    (states * weights).sum().backward()
    for got, want in zip((p.grad for p in lstm.parameters()), expected_grads, strict=True):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(second.grad, first.grad)
    assert float(second.grad[0, 5:].abs().sum()) == 0.0  # the padding is never read


def test_padding_comes_out_as_zeros_and_each_sequence_ignores_the_others() -> None:
    torch.manual_seed(4)
    lstm = torch.nn.LSTM(3, 2, batch_first=True, bidirectional=True).eval()
    batch = torch.randn(4, 7, 3)
    with torch.no_grad():
        states, finals = run_bilstm(lstm, batch, LENGTHS)
        alone, alone_finals = run_bilstm(lstm, batch[2:3, :7], LENGTHS[2:3])
    assert float(states[1, 1:].abs().sum()) == 0.0
    torch.testing.assert_close(states[2], alone[0])
    torch.testing.assert_close(finals[2], alone_finals[0])


def test_without_gradients_the_packed_module_gives_the_same_results() -> None:
    torch.manual_seed(6)
    lstm = torch.nn.LSTM(5, 3, num_layers=2, batch_first=True, bidirectional=True).eval()
    inputs = torch.randn(4, 7, 5)
    states, finals = run_bilstm(lstm, inputs, LENGTHS)
    assert states.requires_grad
    with torch.inference_mode():
        quick_states, quick_finals = run_bilstm(lstm, inputs, LENGTHS)
    torch.testing.assert_close(quick_states, states.detach())
    torch.testing.assert_close(quick_finals, finals.detach())


def test_dropout_between_layers_applies_only_in_training() -> None:
    torch.manual_seed(5)
    lstm = torch.nn.LSTM(3, 2, num_layers=2, dropout=0.5, batch_first=True, bidirectional=True)
    inputs = torch.randn(2, 4, 3)
    lengths = torch.tensor([4, 2])
    lstm.eval()
    torch.testing.assert_close(run_bilstm(lstm, inputs, lengths)[0], run_bilstm(lstm, inputs, lengths)[0])
    lstm.train()
    torch.manual_seed(0)
    first = run_bilstm(lstm, inputs, lengths)[0]
    second = run_bilstm(lstm, inputs, lengths)[0]
    assert not torch.equal(first, second)


def test_reverse_within_is_its_own_inverse() -> None:
    values = torch.randn(4, 7, 2)
    torch.testing.assert_close(reverse_within(reverse_within(values, LENGTHS), LENGTHS), values)
    assert torch.equal(reverse_within(values, LENGTHS)[1], values[1])  # one element: nothing moves


def test_a_module_it_cannot_run_is_refused() -> None:
    with pytest.raises(ValueError, match="bidirectional"):
        run_bilstm(torch.nn.LSTM(3, 2, batch_first=True), torch.zeros(1, 2, 3), torch.tensor([2]))


def test_doctests() -> None:
    assert doctest.testmod(recurrent).failed == 0
