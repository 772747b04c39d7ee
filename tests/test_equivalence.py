"""Tests for :mod:`lessons_code.equivalence`."""

from __future__ import annotations

import pytest
import torch

from lessons_code.equivalence import compare_with_pytorch

EXPECTED_NAMES = [
    "multihead_attention (functional)",
    "MultiHeadAttention, self-attention",
    "MultiHeadAttention, cross-attention",
    "MultiHeadAttention, causal mask",
    "MultiHeadAttention, one head (H = 1)",
    "EncoderBlock, post-norm",
    "EncoderBlock, pre-norm",
    "Encoder (3 layers), post-norm, no final norm",
    "Encoder (3 layers), pre-norm, final LayerNorm",
    "DecoderBlock, post-norm, causal",
    "DecoderBlock, pre-norm, causal",
]
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}


@pytest.mark.parametrize("autograd", [False, True], ids=["inference", "autograd"])
def test_every_module_matches_pytorch(dtype: torch.dtype, autograd: bool) -> None:
    rows = compare_with_pytorch(dtype, autograd=autograd)
    assert [row.name for row in rows] == EXPECTED_NAMES
    for row in rows:
        assert 0.0 <= row.max_abs_diff < TOLERANCE[dtype], row
    assert rows[0].shape == (2, 5, 16)
    assert rows[-1].shape == (2, 6, 16)


def test_other_seeds() -> None:
    rows = compare_with_pytorch(torch.float64, seed=5)
    assert all(row.max_abs_diff < 1e-12 for row in rows)


def test_errors() -> None:
    with pytest.raises(TypeError, match=r"dtype must be torch\.float32 or torch\.float64"):
        compare_with_pytorch(torch.float16)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        compare_with_pytorch(seed=-1)
    with pytest.raises(TypeError, match="autograd must be a bool"):
        compare_with_pytorch(autograd=None)  # type: ignore[arg-type]
