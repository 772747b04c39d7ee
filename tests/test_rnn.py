"""Tests for :mod:`lessons_code.rnn`."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lessons_code.rnn import TimingRecord, rnn_loop, time_rnn_vs_attention


def test_rnn_loop_matches_pytorch_rnn(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(0)
    B, T, D, N = 3, 9, 4, 6
    x = torch.randn(B, T, D, generator=g, dtype=dtype)
    w_xh = torch.randn(D, N, generator=g, dtype=dtype) * 0.5
    w_hh = torch.randn(N, N, generator=g, dtype=dtype) * 0.5
    b = torch.randn(N, generator=g, dtype=dtype)
    rnn = nn.RNN(D, N, nonlinearity="tanh", batch_first=True).to(dtype)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(w_xh.T)  # PyTorch stores (out, in)
        rnn.weight_hh_l0.copy_(w_hh.T)
        rnn.bias_ih_l0.copy_(b)
        rnn.bias_hh_l0.zero_()
        expected, last = rnn(x)
    h = rnn_loop(x, w_xh, w_hh, b)
    assert h.shape == (B, T, N)
    torch.testing.assert_close(h, expected)
    torch.testing.assert_close(h[:, -1], last[0])


def test_rnn_state_depends_on_the_past() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1, 5, 3, generator=g)
    w_xh, w_hh, b = torch.randn(3, 4, generator=g), torch.randn(4, 4, generator=g), torch.zeros(4)
    changed = x.clone()
    changed[:, 0] += 1.0
    h, h_changed = rnn_loop(x, w_xh, w_hh, b), rnn_loop(changed, w_xh, w_hh, b)
    assert not torch.allclose(h[:, -1], h_changed[:, -1])  # step 4 remembers step 0


def test_rnn_loop_errors() -> None:
    x, w_xh, w_hh, b = torch.randn(2, 5, 3), torch.randn(3, 4), torch.randn(4, 4), torch.zeros(4)
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        rnn_loop(x[0], w_xh, w_hh, b)
    with pytest.raises(ValueError, match="w_xh must have 3 rows"):
        rnn_loop(x, torch.randn(2, 4), w_hh, b)
    with pytest.raises(ValueError, match=r"w_hh must have shape \(4, 4\)"):
        rnn_loop(x, w_xh, torch.randn(4, 3), b)
    with pytest.raises(ValueError, match=r"b must have shape \(4,\)"):
        rnn_loop(x, w_xh, w_hh, torch.zeros(3))
    with pytest.raises(TypeError, match="w_hh must have the dtype of x"):
        rnn_loop(x, w_xh, w_hh.double(), b)


def test_timing_records() -> None:
    records = time_rnn_vs_attention([3, 10], d_model=8, repeats=2, batch_size=2)
    assert [r.seq_len for r in records] == [3, 10]
    assert all(isinstance(r, TimingRecord) for r in records)
    assert [(r.rnn_steps, r.attention_steps) for r in records] == [(3, 1), (10, 1)]
    assert all(r.rnn_seconds > 0 and r.attention_seconds > 0 for r in records)


def test_timing_errors() -> None:
    with pytest.raises(ValueError, match="seq_lens must not be empty"):
        time_rnn_vs_attention([])
    with pytest.raises(ValueError, match=r"seq_lens\[1\] must be an integer >= 1"):
        time_rnn_vs_attention([4, 0])
    with pytest.raises(ValueError, match="repeats must be an integer >= 1"):
        time_rnn_vs_attention([4], repeats=0)
    with pytest.raises(TypeError, match="seq_lens must be an iterable"):
        time_rnn_vs_attention(16)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="d_model"):
        time_rnn_vs_attention([4], d_model=8.0)  # type: ignore[arg-type]
