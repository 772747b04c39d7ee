"""Tests for :mod:`lessons_code.multihead`."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lessons_code.attention import causal_mask, scaled_dot_product_attention
from lessons_code.multihead import (
    MultiHeadAttention,
    attention_flops,
    merge_heads,
    multihead_attention,
    multihead_attention_steps,
    split_heads,
)

FAST = settings(max_examples=25, deadline=None)
D, H, B, T = 16, 4, 2, 5


@pytest.fixture
def torch_mha(randomize: Callable[..., nn.Module]) -> Callable[..., nn.MultiheadAttention]:
    """Build a batch_first nn.MultiheadAttention with random weights, in eval mode."""

    def build(
        num_heads: int = H, *, bias: bool = True, dtype: torch.dtype = torch.float32
    ) -> nn.MultiheadAttention:
        mha = nn.MultiheadAttention(D, num_heads, bias=bias, batch_first=True)
        return randomize(mha.to(dtype), seed=num_heads).eval()

    return build


def inputs(*shape: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# -- heads ------------------------------------------------------------------


def test_split_heads_gives_each_head_its_chunk_of_features() -> None:
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).reshape(2, 3, 8)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    for h in range(4):
        torch.testing.assert_close(heads[:, h], x[..., 2 * h : 2 * h + 2])
    torch.testing.assert_close(merge_heads(heads), x)


def test_split_heads_errors() -> None:
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        split_heads(torch.zeros(2, 3, 8), 3)
    with pytest.raises(ValueError, match="num_heads must be an integer >= 1"):
        split_heads(torch.zeros(2, 3, 8), 0)
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        split_heads(torch.zeros(3, 8), 2)
    with pytest.raises(ValueError, match="x must have 4 dimensions"):
        merge_heads(torch.zeros(3, 8))


# -- the functional version, reading nn.MultiheadAttention's weights -----------


@pytest.mark.parametrize("num_heads", [1, 4, 16])
@pytest.mark.parametrize("bias", [True, False])
def test_functional_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], num_heads: int, bias: bool, dtype: torch.dtype
) -> None:
    mha = torch_mha(num_heads=num_heads, bias=bias, dtype=dtype)
    x = inputs(B, T, D, dtype=dtype)
    expected = mha(x, x, x, need_weights=False)[0]
    torch.testing.assert_close(multihead_attention(x, mha), expected)


def test_functional_on_default_initialisation_lesson_settings() -> None:
    # The multi-head attention lesson's sizes: D = 16, H = 4, batch 2, length 5, seed 0.
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(2, 5, 16)
    expected = mha(x, x, x, need_weights=False)[0]
    torch.testing.assert_close(multihead_attention(x, mha), expected, rtol=0, atol=1e-6)


def test_steps_shapes_and_per_head_weights(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    mha = torch_mha(dtype=dtype)
    x = inputs(B, T, D, dtype=dtype)
    steps = multihead_attention_steps(x, mha)
    d_head = D // H
    expected_shapes = {
        "q": (B, T, D),
        "k": (B, T, D),
        "v": (B, T, D),
        "q_heads": (B, H, T, d_head),
        "k_heads": (B, H, T, d_head),
        "v_heads": (B, H, T, d_head),
        "weights": (B, H, T, T),
        "heads": (B, H, T, d_head),
        "concat": (B, T, D),
        "output": (B, T, D),
    }
    assert {name: tuple(t.shape) for name, t in steps.items()} == expected_shapes
    _, torch_weights = mha(x, x, x, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(steps["weights"], torch_weights)


def test_one_head_is_single_head_attention_then_output_projection(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    # Exercise 1: with H = 1 nothing is split; scores are divided by sqrt(D).
    mha = torch_mha(num_heads=1, dtype=dtype)
    x = inputs(B, T, D, dtype=dtype)
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)
    single, _ = scaled_dot_product_attention(x @ w_q.T + b_q, x @ w_k.T + b_k, x @ w_v.T + b_v)
    expected = single @ mha.out_proj.weight.T + mha.out_proj.bias
    torch.testing.assert_close(multihead_attention(x, mha), expected)


def test_functional_errors(torch_mha: Callable[..., nn.MultiheadAttention]) -> None:
    mha = torch_mha()
    x = torch.randn(B, T, D)
    with pytest.raises(TypeError, match=r"mha must be a torch\.nn\.MultiheadAttention"):
        multihead_attention(x, MultiHeadAttention(D, H))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_first=True"):
        multihead_attention(x, nn.MultiheadAttention(D, H))
    with pytest.raises(ValueError, match="kdim"):
        multihead_attention(x, nn.MultiheadAttention(D, H, kdim=8, vdim=8, batch_first=True))
    with pytest.raises(ValueError, match="add_bias_kv"):
        multihead_attention(x, nn.MultiheadAttention(D, H, add_bias_kv=True, batch_first=True))
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        multihead_attention(x[0], mha)
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        multihead_attention(torch.randn(B, T, 8), mha)
    with pytest.raises(TypeError, match="x must have the dtype of mha's weights"):
        multihead_attention(x.double(), mha)


# -- the module ---------------------------------------------------------------


@pytest.mark.parametrize("num_heads", [1, 4, 16])
@pytest.mark.parametrize("bias", [True, False])
def test_module_self_attention_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], num_heads: int, bias: bool, dtype: torch.dtype
) -> None:
    mha = torch_mha(num_heads=num_heads, bias=bias, dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x = inputs(B, T, D, dtype=dtype)
    torch.testing.assert_close(ours(x, x, x), mha(x, x, x, need_weights=False)[0])


@pytest.mark.parametrize("num_heads", [1, 4, 16])
@pytest.mark.parametrize("bias", [True, False])
def test_module_cross_attention_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], num_heads: int, bias: bool, dtype: torch.dtype
) -> None:
    mha = torch_mha(num_heads=num_heads, bias=bias, dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x, memory = inputs(B, T, D, dtype=dtype), inputs(B, 7, D, dtype=dtype, seed=1)
    value = inputs(B, 7, D, dtype=dtype, seed=2)
    out, weights = ours(x, memory, value, return_weights=True)
    expected, expected_weights = mha(x, memory, value, average_attn_weights=False)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, expected_weights)
    assert weights.shape == (B, num_heads, T, 7)


def test_module_causal_mask_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    mha = torch_mha(dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x = inputs(B, T, D, dtype=dtype)
    mask = causal_mask(T)  # True = may attend; PyTorch's boolean mask means the opposite
    expected = mha(x, x, x, attn_mask=~mask, need_weights=False)[0]
    torch.testing.assert_close(ours(x, x, x, mask=mask), expected)
    also_expected = mha(x, x, x, attn_mask=~mask, is_causal=True, need_weights=False)[0]
    torch.testing.assert_close(ours(x, x, x, mask=mask), also_expected)
    # The mask matters: without it the output differs.
    assert not torch.allclose(ours(x, x, x), expected)


def random_mask(*shape: int, seed: int = 3) -> torch.Tensor:
    mask = torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) > 0.5
    mask[..., 0] = True  # every query keeps at least one key
    return mask


def test_module_per_batch_mask_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    mha = torch_mha(dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x, memory = inputs(B, T, D, dtype=dtype), inputs(B, 7, D, dtype=dtype, seed=1)
    mask = random_mask(B, T, 7)  # (B, T_q, T_k)
    torch_mask = (~mask).repeat_interleave(H, dim=0)  # (B * H, T_q, T_k), True = masked out
    expected = mha(x, memory, memory, attn_mask=torch_mask, need_weights=False)[0]
    torch.testing.assert_close(ours(x, memory, memory, mask=mask), expected)


def test_module_per_head_mask_matches_pytorch(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    mha = torch_mha(dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x = inputs(B, T, D, dtype=dtype)
    mask = random_mask(B, H, T, T)  # (B, H, T_q, T_k)
    torch_mask = (~mask).reshape(B * H, T, T)
    expected = mha(x, x, x, attn_mask=torch_mask, need_weights=False)[0]
    torch.testing.assert_close(ours(x, x, x, mask=mask), expected)


def test_module_padding_mask_matches_key_padding_mask(
    torch_mha: Callable[..., nn.MultiheadAttention], dtype: torch.dtype
) -> None:
    mha = torch_mha(dtype=dtype)
    ours = MultiHeadAttention.from_torch(mha)
    x = inputs(B, T, D, dtype=dtype)
    keep = torch.tensor([[True] * T, [True, True, True, False, False]])  # (B, T_k)
    expected = mha(x, x, x, key_padding_mask=~keep, need_weights=False)[0]
    out = ours(x, x, x, mask=keep[:, None, None, :])  # (B, 1, 1, T_k)
    torch.testing.assert_close(out, expected)


def test_module_has_pytorchs_parameter_count() -> None:
    for bias in (True, False):
        ours = sum(p.numel() for p in MultiHeadAttention(D, H, bias=bias).parameters())
        theirs = sum(p.numel() for p in nn.MultiheadAttention(D, H, bias=bias).parameters())
        assert ours == theirs == 4 * D * D + (4 * D if bias else 0)


@torch.no_grad()
def test_module_initialisation_like_pytorch() -> None:
    attn = MultiHeadAttention(64, 8)
    bound = math.sqrt(6 / (64 + 64))  # Xavier-uniform for a 64 x 64 matrix
    for proj in (attn.q_proj, attn.k_proj, attn.v_proj):
        assert float(proj.weight.abs().max()) <= bound
        assert float(proj.weight.std()) > bound / 3
        assert (proj.bias == 0).all()
    assert (attn.out_proj.bias == 0).all()


def test_from_torch_keeps_dtype_and_copies(torch_mha: Callable[..., nn.MultiheadAttention]) -> None:
    mha = torch_mha(dtype=torch.float64)
    ours = MultiHeadAttention.from_torch(mha)
    assert ours.q_proj.weight.dtype == torch.float64
    with torch.no_grad():
        mha.in_proj_weight.zero_()
        assert float(ours.q_proj.weight.abs().sum()) > 0  # a copy, not a view


@FAST
@given(
    batch=st.integers(1, 3),
    T=st.integers(1, 6),
    num_heads=st.sampled_from([1, 2, 4]),
    d_head=st.integers(1, 4),
    seed=st.integers(0, 2**31 - 1),
    data=st.data(),
)
def test_module_self_attention_is_permutation_equivariant(
    batch: int, T: int, num_heads: int, d_head: int, seed: int, data: st.DataObject
) -> None:
    perm = torch.tensor(data.draw(st.permutations(range(T))), dtype=torch.long)
    torch.manual_seed(seed)
    attn = MultiHeadAttention(num_heads * d_head, num_heads).double()
    x = torch.randn(batch, T, num_heads * d_head, dtype=torch.float64)
    out = attn(x, x, x)
    x_perm = x[:, perm]
    assert out.shape == x.shape
    torch.testing.assert_close(attn(x_perm, x_perm, x_perm), out[:, perm])


def test_module_errors() -> None:
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        MultiHeadAttention(10, 4)
    with pytest.raises(ValueError, match="num_heads must be an integer >= 1"):
        MultiHeadAttention(16, 0)
    with pytest.raises(TypeError, match="d_model"):
        MultiHeadAttention(16.0, 4)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bias must be a bool"):
        MultiHeadAttention(16, 4, bias=1)  # type: ignore[arg-type]

    attn = MultiHeadAttention(D, H)
    x, memory = torch.randn(B, T, D), torch.randn(B, 7, D)
    with pytest.raises(ValueError, match="query must have 3 dimensions"):
        attn(x[0], x[0], x[0])
    with pytest.raises(ValueError, match="query must have last dimension 16"):
        attn(torch.randn(B, T, 8), memory, memory)
    with pytest.raises(ValueError, match="key must have last dimension 16"):
        attn(x, torch.randn(B, 7, 8), memory)
    with pytest.raises(ValueError, match="value must have the shape of key"):
        attn(x, memory, torch.randn(B, 6, D))
    with pytest.raises(ValueError, match="key must have the batch size 2 of query"):
        attn(x, torch.randn(3, 7, D), torch.randn(3, 7, D))
    with pytest.raises(TypeError, match="query must have the dtype of the module's parameters"):
        attn(x.double(), memory.double(), memory.double())
    with pytest.raises(TypeError, match="key must have the dtype of query"):
        attn(x, memory.double(), memory)
    with pytest.raises(TypeError, match="mask must be a boolean"):
        attn(x, memory, memory, mask=torch.ones(T, 7))
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 4, 5, 7\)"):
        attn(x, memory, memory, mask=torch.ones(T, T, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask must broadcast to shape \(2, 5, 7\)"):
        attn(x, memory, memory, mask=torch.ones(3, T, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask must have 2, 3 or 4 dimensions"):
        attn(x, memory, memory, mask=torch.ones(7, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask leaves at least one query with no key"):
        attn(x, memory, memory, mask=torch.zeros(T, 7, dtype=torch.bool))

    with pytest.raises(TypeError, match=r"mha must be a torch\.nn\.MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(D, D))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_first=True"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(D, H))


# -- cost -------------------------------------------------------------------


def test_attention_flops_terms() -> None:
    flops = attention_flops(seq_len=10, d_model=16, num_heads=4)
    assert flops == {
        "projections": 3 * 10 * 16 * 16,
        "scores": 10 * 10 * 16,
        "weighted_sum": 10 * 10 * 16,
        "output_projection": 10 * 16 * 16,
        "total": 4 * 10 * 16 * 16 + 2 * 10 * 10 * 16,
    }


@pytest.mark.parametrize("T", [1, 7, 64])
def test_attention_flops_do_not_depend_on_the_number_of_heads(T: int) -> None:
    d_model = 48
    counts = [attention_flops(T, d_model, h) for h in range(1, d_model + 1) if d_model % h == 0]
    assert len(counts) == 10
    assert all(c == counts[0] for c in counts)


def test_attention_flops_errors() -> None:
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        attention_flops(5, 16, 3)
    with pytest.raises(ValueError, match="seq_len must be an integer >= 1"):
        attention_flops(0, 16, 4)
    with pytest.raises(TypeError, match="num_heads"):
        attention_flops(5, 16, "4")  # type: ignore[arg-type]
