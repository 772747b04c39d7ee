"""Tests for :mod:`lessons_code.attention`."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_code.attention import (
    causal_mask,
    scaled_dot_product_attention,
    self_attention,
    softmax,
)

FAST = settings(max_examples=25, deadline=None)


def attention_by_loops(
    x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, mask: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention written with scalar loops, independently of the package."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    T, d_k = q.shape
    weights = np.zeros((T, T))
    for i in range(T):
        allowed = [j for j in range(T) if mask is None or mask[i, j]]
        exps = {j: math.exp(float(q[i] @ k[j]) / math.sqrt(d_k)) for j in allowed}
        total = sum(exps.values())
        for j, e in exps.items():
            weights[i, j] = e / total
    return weights @ v, weights


def worked_example(seed: int = 0, T: int = 5, D: int = 6) -> tuple[np.ndarray, ...]:
    """The self-attention lesson's inputs: 5 tokens, width 6, seed 0, weights N(0, 1) * 0.3."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D))
    w_q, w_k, w_v = (0.3 * rng.standard_normal((D, D)) for _ in range(3))
    return x, w_q, w_k, w_v


# -- softmax ----------------------------------------------------------------


def test_softmax_matches_definition() -> None:
    z = np.random.default_rng(1).standard_normal((4, 7))
    expected = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax(z), expected, rtol=1e-12)
    np.testing.assert_allclose(softmax(z, axis=0), np.exp(z) / np.exp(z).sum(0), rtol=1e-12)


def test_softmax_is_stable_for_large_scores() -> None:
    p = softmax(np.array([[1000.0, 1000.0, 990.0], [-1000.0, -1000.0, -1000.0]]))
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[1], 1 / 3)


def test_softmax_gives_zero_to_minus_infinity() -> None:
    p = softmax(np.array([0.0, -np.inf, 0.0]))
    np.testing.assert_array_equal(p, [0.5, 0.0, 0.5])


def test_softmax_errors() -> None:
    with pytest.raises(TypeError, match="z"):
        softmax([1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="z must have at least 1 dimension"):
        softmax(np.array(1.0))
    with pytest.raises(ValueError, match="axis"):
        softmax(np.zeros((2, 3)), axis=2)
    with pytest.raises(TypeError, match="axis"):
        softmax(np.zeros((2, 3)), axis=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="-inf"):
        softmax(np.array([-np.inf, -np.inf]))


# -- NumPy self-attention ----------------------------------------------------


def test_self_attention_matches_loops_on_worked_example() -> None:
    x, w_q, w_k, w_v = worked_example()
    out, weights = self_attention(x, w_q, w_k, w_v)
    expected_out, expected_weights = attention_by_loops(x, w_q, w_k, w_v, None)
    assert out.shape == (5, 6)
    assert weights.shape == (5, 5)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)


def test_self_attention_with_value_width_and_key_width() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    w_q, w_k, w_v = (
        rng.standard_normal((6, 3)),
        rng.standard_normal((6, 3)),
        rng.standard_normal((6, 5)),
    )
    out, weights = self_attention(x, w_q, w_k, w_v)
    expected_out, expected_weights = attention_by_loops(x, w_q, w_k, w_v, None)
    assert out.shape == (4, 5)
    np.testing.assert_allclose(out, expected_out, rtol=1e-10)
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-10)


def test_self_attention_causal_mask() -> None:
    x, w_q, w_k, w_v = worked_example()
    mask = causal_mask(5).numpy()
    out, weights = self_attention(x, w_q, w_k, w_v, mask=mask)
    expected_out, expected_weights = attention_by_loops(x, w_q, w_k, w_v, mask)
    assert (np.triu(weights, k=1) == 0).all()
    assert weights[0, 0] == 1.0  # the first token can only see itself
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-12)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)


@FAST
@given(
    T=st.integers(1, 7),
    D=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_self_attention_is_permutation_equivariant(
    T: int, D: int, seed: int, data: st.DataObject
) -> None:
    perm = np.array(data.draw(st.permutations(range(T))))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D))
    w_q, w_k, w_v = (rng.standard_normal((D, D)) for _ in range(3))
    out, weights = self_attention(x, w_q, w_k, w_v)
    out_perm, weights_perm = self_attention(x[perm], w_q, w_k, w_v)
    np.testing.assert_allclose(out_perm, out[perm], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weights_perm, weights[perm][:, perm], rtol=1e-9, atol=1e-12)


def test_permutation_changes_output_order() -> None:
    # The converse of equivariance: the output is not invariant (it moves with the rows).
    x, w_q, w_k, w_v = worked_example()
    out, _ = self_attention(x, w_q, w_k, w_v)
    out_rev, _ = self_attention(x[::-1].copy(), w_q, w_k, w_v)
    assert not np.allclose(out_rev, out)
    np.testing.assert_allclose(out_rev, out[::-1], rtol=1e-12)


def test_self_attention_errors() -> None:
    x, w_q, w_k, w_v = worked_example()
    with pytest.raises(ValueError, match="x must have 2 dimensions"):
        self_attention(x[0], w_q, w_k, w_v)
    with pytest.raises(TypeError, match=r"x must be a numpy\.ndarray"):
        self_attention(torch.zeros(5, 6), w_q, w_k, w_v)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="w_q must have 6 rows"):
        self_attention(x, w_q[:4], w_k, w_v)
    with pytest.raises(ValueError, match="w_k must have the width d_k = 6"):
        self_attention(x, w_q, w_k[:, :3], w_v)
    with pytest.raises(ValueError, match="w_v must have 6 rows"):
        self_attention(x, w_q, w_k, w_v[:2])
    with pytest.raises(TypeError, match="mask must be a boolean"):
        self_attention(x, w_q, w_k, w_v, mask=np.ones((5, 5)))
    with pytest.raises(ValueError, match=r"mask must have shape \(5, 5\)"):
        self_attention(x, w_q, w_k, w_v, mask=np.ones((4, 5), dtype=bool))
    mask = np.ones((5, 5), dtype=bool)
    mask[2] = False
    with pytest.raises(ValueError, match=r"mask lets rows \[2\] attend to no token"):
        self_attention(x, w_q, w_k, w_v, mask=mask)


# -- PyTorch scaled dot-product attention -------------------------------------


@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
def test_sdpa_matches_pytorch(batch: tuple[int, ...], dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(0)
    q = torch.randn(*batch, 5, 8, generator=g, dtype=dtype)
    k = torch.randn(*batch, 7, 8, generator=g, dtype=dtype)
    v = torch.randn(*batch, 7, 3, generator=g, dtype=dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    expected_weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(weights, expected_weights)
    assert out.shape == (*batch, 5, 3)
    assert weights.shape == (*batch, 5, 7)


def test_sdpa_mask_matches_pytorch_convention(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 4, 6, 8, generator=g, dtype=dtype) for _ in range(3))
    mask = torch.rand(2, 1, 6, 6, generator=g) > 0.4
    mask[..., 0] = True  # every query may attend to at least one key
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected)
    assert (weights[~mask.expand_as(weights)] == 0).all()


def test_sdpa_causal_matches_pytorch(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(3, 6, 4, generator=g, dtype=dtype) for _ in range(3))
    out, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(6))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert (weights.triu(diagonal=1) == 0).all()


@FAST
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    T_q=st.integers(1, 6),
    T_k=st.integers(1, 6),
    d_k=st.integers(1, 5),
    seed=st.integers(0, 2**31 - 1),
)
def test_sdpa_weights_rows_sum_to_one(
    batch: list[int], T_q: int, T_k: int, d_k: int, seed: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    q = 3 * torch.randn(*batch, T_q, d_k, generator=g, dtype=torch.float64)
    k = 3 * torch.randn(*batch, T_k, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(*batch, T_k, 2, generator=g, dtype=torch.float64)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert weights.shape == (*batch, T_q, T_k)
    assert (weights >= 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(*batch, T_q, dtype=torch.float64))
    assert out.shape == (*batch, T_q, 2)


def test_sdpa_errors() -> None:
    q, k, v = torch.randn(2, 5, 4), torch.randn(2, 7, 4), torch.randn(2, 7, 3)
    with pytest.raises(TypeError, match=r"q must be a torch\.Tensor"):
        scaled_dot_product_attention(q.numpy(), k, v)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="k must have a floating-point dtype"):
        scaled_dot_product_attention(q, k.long(), v)
    with pytest.raises(ValueError, match="v must have at least 2 dimensions"):
        scaled_dot_product_attention(q, k, v[0, 0])
    with pytest.raises(ValueError, match="k must have the width d_k = 4 of q"):
        scaled_dot_product_attention(q, torch.randn(2, 7, 5), v)
    with pytest.raises(ValueError, match=r"v must have one row per key \(T_k = 7\)"):
        scaled_dot_product_attention(q, k, torch.randn(2, 6, 3))
    with pytest.raises(TypeError, match="k must have the dtype of q"):
        scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(ValueError, match=r"leading .* dimensions of q, k and v must broadcast"):
        scaled_dot_product_attention(q, torch.randn(3, 7, 4), torch.randn(3, 7, 3))
    with pytest.raises(TypeError, match="mask must be a boolean"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(5, 7))
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 5, 7\)"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask must broadcast"):
        scaled_dot_product_attention(q, k, v, mask=torch.ones(4, 2, 5, 7, dtype=torch.bool))
    mask = torch.ones(5, 7, dtype=torch.bool)
    mask[3] = False
    with pytest.raises(ValueError, match="mask leaves at least one query with no key"):
        scaled_dot_product_attention(q, k, v, mask=mask)


# -- causal mask ------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 5, 12])
def test_causal_mask_is_lower_triangle(T: int) -> None:
    mask = causal_mask(T)
    assert mask.dtype == torch.bool
    assert mask.shape == (T, T)
    for i in range(T):
        for j in range(T):
            assert bool(mask[i, j]) == (j <= i)


def test_causal_mask_is_the_inverse_of_pytorchs() -> None:
    # PyTorch's float causal mask is -inf where attention is *forbidden*.
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(6)
    torch.testing.assert_close(causal_mask(6), theirs == 0)


def test_causal_mask_device() -> None:
    assert causal_mask(3, device="cpu").device == torch.device("cpu")
    assert causal_mask(3, device=torch.device("meta")).device.type == "meta"


def test_causal_mask_errors() -> None:
    with pytest.raises(ValueError, match="seq_len must be an integer >= 1"):
        causal_mask(0)
    with pytest.raises(TypeError, match="seq_len"):
        causal_mask(2.0)  # type: ignore[arg-type]
