"""Tests for :mod:`lessons_code.modern`: each modern part against its reference.

References: ``torch.nn.RMSNorm``, ``torch.nn.functional.scaled_dot_product_attention``
with ``enable_gqa=True``, the rotation of :func:`lessons_code.positional.shift_rotation`,
and a decoder layer of Hugging Face ``transformers``' Llama built from a tiny config
with random weights (nothing is downloaded).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import lessons_code.modern as modern
from lessons_code.attention import scaled_dot_product_attention
from lessons_code.modern import (
    DecoderOnlyLM,
    GroupedQueryAttention,
    KVCache,
    ModernBlock,
    RMSNorm,
    SwiGLU,
    apply_rope,
    attention_scores_per_step,
    generate,
    grouped_query_attention,
    interleave_rope_rows,
    kv_cache_size,
    next_token_distribution,
    repeat_kv_heads,
    rope_tables,
    sample,
)
from lessons_code.multihead import merge_heads, split_heads
from lessons_code.positional import shift_rotation

# The largest difference each comparison allows, by dtype.
TOL = {torch.float32: 1e-6, torch.float64: 1e-12}


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=gen(seed), dtype=dtype)


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).detach().abs().max())


def tiny_model(
    *,
    vocab: int = 11,
    d_model: int = 16,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    d_ff: int = 24,
    max_len: int = 32,
    positions: str = "rope",
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    randomize: Callable[..., nn.Module] | None = None,
) -> DecoderOnlyLM:
    torch.manual_seed(seed)
    model = DecoderOnlyLM(
        vocab, d_model, layers, heads, kv_heads, d_ff, max_len, positions=positions
    ).to(dtype)
    if randomize is not None:
        randomize(model, seed)
    return model.eval()


# -- RMSNorm and SwiGLU ---------------------------------------------------------------


@pytest.mark.parametrize("eps", [1e-6, None])
def test_rms_norm_equals_torch(
    dtype: torch.dtype, eps: float | None, randomize: Callable[..., nn.Module]
) -> None:
    theirs = randomize(nn.RMSNorm(24, eps=eps).to(dtype))
    ours = RMSNorm.from_torch(theirs)
    x = 3.0 * randn(4, 7, 24, dtype=dtype)
    diff = max_diff(ours(x), theirs(x))
    assert diff <= TOL[dtype], (
        f"RMSNorm vs torch.nn.RMSNorm ({dtype}): largest difference {diff:.3g}"
    )
    assert ours.eps == (torch.finfo(dtype).eps if eps is None else eps)


def test_rms_norm_gives_unit_root_mean_square() -> None:
    y = RMSNorm(32)(5.0 * randn(3, 32))
    rms = y.pow(2).mean(dim=-1).sqrt()
    torch.testing.assert_close(rms, torch.ones(3), atol=1e-5, rtol=0)


def test_swiglu_is_down_of_silu_gate_times_up(randomize: Callable[..., nn.Module]) -> None:
    ff = randomize(SwiGLU(8, 12).double())
    x = randn(2, 3, 8, dtype=torch.float64)
    w_g, w_u, w_d = ff.gate_proj.weight, ff.up_proj.weight, ff.down_proj.weight
    gate = x @ w_g.T
    expected = ((gate * torch.sigmoid(gate)) * (x @ w_u.T)) @ w_d.T
    assert max_diff(ff(x), expected) <= 1e-12
    assert all(m.bias is None for m in (ff.gate_proj, ff.up_proj, ff.down_proj))


# -- rotary position embeddings ------------------------------------------------------


def rope_scores(dtype: torch.dtype, T: int = 64, d: int = 16) -> torch.Tensor:
    """Scores q_m . k_n of one query and one key placed at every position m, n < T."""
    q = randn(d, dtype=dtype, seed=1) / d**0.25
    k = randn(d, dtype=dtype, seed=2) / d**0.25
    cos, sin = rope_tables(T, d, dtype=dtype)
    q_at = apply_rope(q.expand(T, d), cos, sin)  # (T, d): q at every position
    k_at = apply_rope(k.expand(T, d), cos, sin)
    return q_at @ k_at.T  # (T, T)


def test_rope_score_depends_only_on_the_offset(dtype: torch.dtype) -> None:
    scores = rope_scores(dtype)
    T = scores.shape[0]
    worst = 0.0
    for offset in range(-(T - 1), T):
        diagonal = torch.diagonal(scores, offset=offset)  # all (m, n) with n - m = offset
        worst = max(worst, float(diagonal.max() - diagonal.min()))
    bound = {torch.float32: 1e-6, torch.float64: 1e-13}[dtype]
    assert worst <= bound, f"q_m . k_n spread along a diagonal ({dtype}): {worst:.3g}"


def test_rope_keeps_norms(dtype: torch.dtype) -> None:
    x = randn(2, 3, 40, 8, dtype=dtype)
    cos, sin = rope_tables(40, 8, dtype=dtype)
    diff = max_diff(apply_rope(x, cos, sin).norm(dim=-1), x.norm(dim=-1))
    assert diff <= 10 * TOL[dtype], f"norm change ({dtype}): {diff:.3g}"


def test_rope_is_the_rotation_of_the_positional_page() -> None:
    """Position p turns a vector by shift_rotation(p, d), applied to it as a column."""
    T, d = 20, 8
    x = randn(T, d, dtype=torch.float64)
    cos, sin = rope_tables(T, d, dtype=torch.float64)
    turned = apply_rope(x, cos, sin).numpy()
    for p in range(T):
        expected = shift_rotation(p, d) @ x[p].numpy()
        np.testing.assert_allclose(turned[p], expected, rtol=0, atol=1e-12)


def test_rope_tables_are_rounded_once_and_start_anywhere() -> None:
    cos64, sin64 = rope_tables(50, 16, dtype=torch.float64)
    cos32, sin32 = rope_tables(50, 16)
    assert torch.equal(cos32, cos64.float())
    assert torch.equal(sin32, sin64.float())
    later_cos, later_sin = rope_tables(10, 16, start=40)
    assert torch.equal(later_cos, cos32[40:])
    assert torch.equal(later_sin, sin32[40:])
    positions = torch.arange(50, dtype=torch.float64)[:, None]
    angles = positions * 10000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    assert max_diff(cos64, torch.cos(angles)) <= 1e-15


def test_interleave_rope_rows_matches_rotate_half() -> None:
    """Llama's layout with permuted rows is this package's layout."""
    d, H, D, T = 8, 3, 5, 7
    w = randn(H * d, D, dtype=torch.float64)
    x = randn(T, D, dtype=torch.float64, seed=1)
    cos, sin = rope_tables(T, d, dtype=torch.float64)
    # rotate half: feature i turns with i + d/2, tables repeated over both halves
    heads = (x @ w.T).reshape(T, H, d).transpose(0, 1)  # (H, T, d)
    first, second = heads[..., : d // 2], heads[..., d // 2 :]
    llama = torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)
    ours = (x @ interleave_rope_rows(w, H).T).reshape(T, H, d).transpose(0, 1)
    ours = apply_rope(ours, cos, sin)
    order = torch.stack((torch.arange(d // 2), torch.arange(d // 2) + d // 2), dim=1).flatten()
    assert max_diff(ours, llama[..., order]) <= 1e-12


# -- grouped-query attention -------------------------------------------------------


@pytest.mark.parametrize(("H", "H_kv"), [(4, 4), (4, 2), (4, 1), (6, 3), (6, 2), (8, 1)])
def test_grouped_query_attention_equals_sdpa(dtype: torch.dtype, H: int, H_kv: int) -> None:
    B, T, d = 2, 9, 8
    q = randn(B, H, T, d, dtype=dtype, seed=1)
    k = randn(B, H_kv, T, d, dtype=dtype, seed=2)
    v = randn(B, H_kv, T, d, dtype=dtype, seed=3)
    ours, weights = grouped_query_attention(q, k, v)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    diff = max_diff(ours, theirs)
    assert diff <= TOL[dtype], f"GQA vs SDPA (H={H}, H_kv={H_kv}, {dtype}): {diff:.3g}"
    assert weights.shape == (B, H, T, T)
    assert bool(weights.triu(diagonal=1).eq(0).all())


def test_grouped_query_attention_without_mask_equals_sdpa() -> None:
    q, k, v = randn(1, 4, 5, 8, seed=1), randn(1, 2, 5, 8, seed=2), randn(1, 2, 5, 8, seed=3)
    ours, _ = grouped_query_attention(q, k, v, causal=False)
    theirs = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert max_diff(ours, theirs) <= 1e-6


def test_grouped_query_attention_takes_the_last_queries() -> None:
    """With fewer queries than keys, the queries are the last positions (a cached step)."""
    q = randn(2, 4, 7, 8, dtype=torch.float64, seed=1)
    k = randn(2, 2, 7, 8, dtype=torch.float64, seed=2)
    v = randn(2, 2, 7, 8, dtype=torch.float64, seed=3)
    full, _ = grouped_query_attention(q, k, v)
    for last in (1, 3):
        tail, _ = grouped_query_attention(q[:, :, -last:], k, v)
        assert max_diff(tail, full[:, :, -last:]) <= 1e-12


def test_repeat_kv_heads_serves_consecutive_query_heads() -> None:
    k = randn(1, 2, 3, 4)
    repeated = repeat_kv_heads(k, 3)
    for h in range(6):
        assert torch.equal(repeated[:, h], k[:, h // 3])


def test_gqa_module_equals_sdpa_with_rope(
    dtype: torch.dtype, randomize: Callable[..., nn.Module]
) -> None:
    attn = randomize(GroupedQueryAttention(24, 6, 2).to(dtype))
    x = randn(2, 10, 24, dtype=dtype, seed=4)
    q = split_heads(attn.q_proj(x), 6)
    k = split_heads(attn.k_proj(x), 2)
    v = split_heads(attn.v_proj(x), 2)
    cos, sin = rope_tables(10, 4, dtype=dtype)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    expected = attn.o_proj(merge_heads(heads))
    diff = max_diff(attn(x), expected)
    assert diff <= 10 * TOL[dtype], f"GroupedQueryAttention vs SDPA ({dtype}): {diff:.3g}"


def test_gqa_with_as_many_kv_heads_has_the_parameters_of_multihead() -> None:
    sizes = {
        kv: sum(p.numel() for p in GroupedQueryAttention(32, 8, kv).parameters())
        for kv in (8, 2, 1)
    }
    d_head = 4
    assert sizes[8] == 4 * 32 * 32
    assert sizes[2] == 2 * 32 * 32 + 2 * 32 * 2 * d_head
    assert sizes[1] == 2 * 32 * 32 + 2 * 32 * 1 * d_head


def test_kv_cache_size_counts_keys_and_values() -> None:
    sizes = {
        kv: kv_cache_size(num_layers=3, batch_size=2, seq_len=100, num_kv_heads=kv, d_head=16)
        for kv in (8, 2, 1)
    }
    assert sizes[8]["numbers"] == 2 * 3 * 2 * 100 * 8 * 16
    assert sizes[8]["numbers"] == 4 * sizes[2]["numbers"] == 8 * sizes[1]["numbers"]
    assert sizes[1]["bytes"] == 4 * sizes[1]["numbers"]
    half = kv_cache_size(3, 2, 100, 1, 16, dtype=torch.bfloat16)
    assert half["bytes"] == 2 * half["numbers"]
    cache = KVCache(3, 2, 2, 100, 16)
    stored = sum(t.numel() for t in cache.keys + cache.values)
    assert stored == sizes[2]["numbers"]


# -- the Llama decoder layer --------------------------------------------------------


#: The bounds of the Llama comparisons; the lesson page states them (checked below).
LLAMA_BOUND = 1e-5  # the whole layer: float32 rounding
EXACT_BOUND = 1e-12  # each part against its exact reference, float64


def test_lesson_states_the_llama_bounds() -> None:
    """The page describes these tests without running them: its bounds must be theirs."""
    page = (Path(__file__).parents[1] / "docs" / "modern_architecture.md").read_text()
    paragraph = page[page.index("This is the block people run.") :].split("\n\n")[0]
    stated = re.findall(r"(?:more than|the same|tolerance of) (1e-\d+)", paragraph)
    as_written = {f"{bound:.0e}".replace("e-0", "e-") for bound in (LLAMA_BOUND, EXACT_BOUND)}
    assert set(stated) == as_written, stated


@pytest.fixture(scope="module")
def transformers() -> ModuleType:
    """Hugging Face transformers, offline: nothing is downloaded, the config is built here."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    if os.environ.get("CI") == "true":  # in CI the reference must be there
        import transformers

        return transformers
    return pytest.importorskip(
        "transformers", reason="transformers (the test extra) is not installed"
    )


def llama_layer(transformers: ModuleType, heads: int, kv_heads: int) -> tuple[nn.Module, nn.Module]:
    """A Llama decoder layer with random weights, and its rotary embedding."""
    from transformers.models.llama.modeling_llama import (
        LlamaDecoderLayer,
        LlamaRotaryEmbedding,
    )

    config = transformers.LlamaConfig(
        vocab_size=16,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=1,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        attn_implementation="sdpa",
    )
    layer = LlamaDecoderLayer(config, layer_idx=0)
    g = gen(heads + kv_heads)
    with torch.no_grad():
        for p in layer.parameters():  # every weight distinct, gains far from 1
            p.copy_(0.3 * torch.randn(p.shape, generator=g) + 0.1)
    return layer.eval(), LlamaRotaryEmbedding(config)


def run_llama(layer: nn.Module, rotary: nn.Module, x: torch.Tensor) -> torch.Tensor:
    positions = torch.arange(x.shape[1])[None]  # (1, T)
    cos, sin = rotary(x, positions)
    out = layer(x, position_embeddings=(cos, sin))  # causal: no mask, SDPA's is_causal
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 4), (4, 2), (4, 1)])
def test_block_equals_llama_decoder_layer_float32(
    transformers: ModuleType, heads: int, kv_heads: int
) -> None:
    layer, rotary = llama_layer(transformers, heads, kv_heads)
    block = ModernBlock.from_llama(
        layer.state_dict(), num_heads=heads, num_kv_heads=kv_heads, eps=1e-6
    )
    x = randn(2, 12, 32, seed=5)
    with torch.no_grad():
        diff = max_diff(block(x), run_llama(layer, rotary, x))
    assert diff <= LLAMA_BOUND, f"ModernBlock vs LlamaDecoderLayer (float32): {diff:.3g}"


def test_block_equals_llama_decoder_layer_float64(transformers: ModuleType) -> None:
    """In float64 each part meets its exact reference; the layer, Llama's float32 parts.

    Llama's RMSNorm and rotary tables compute in float32 whatever the model's dtype, so
    the whole layer agrees only to float32 precision (the bound below); the parts are
    checked to 1e-12 against torch.nn.RMSNorm and SDPA, and the layer against a float64
    recomputation from Llama's own sub-modules with exact norms and tables.
    """
    layer, rotary = llama_layer(transformers, 4, 2)
    layer, rotary = layer.double(), rotary.double()
    block = ModernBlock.from_llama(layer.state_dict(), num_heads=4, num_kv_heads=2, eps=1e-6)
    assert block.norm1.weight.dtype == torch.float64
    x = randn(2, 12, 32, dtype=torch.float64, seed=5)
    with torch.no_grad():
        # the parts: RMSNorm vs torch.nn.RMSNorm
        torch_norm = nn.RMSNorm(32, eps=1e-6).double()
        torch_norm.weight.copy_(layer.input_layernorm.weight)
        norm_diff = max_diff(block.norm1(x), torch_norm(x))
        # the attention core vs SDPA (on the block's own rotated q, k, v)
        attn = block.self_attn
        h = block.norm1(x)
        q, k, v = (
            split_heads(attn.q_proj(h), 4),
            split_heads(attn.k_proj(h), 2),
            split_heads(attn.v_proj(h), 2),
        )
        cos, sin = rope_tables(12, 8, dtype=torch.float64)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        core_diff = max_diff(
            grouped_query_attention(q, k, v)[0],
            F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        )
        # the whole layer against Llama's own code, float32-limited
        layer_diff = max_diff(block(x), run_llama(layer, rotary, x))
        # and against Llama's sub-modules given exact (float64) norms and rotary tables
        exact = exact_llama_layer(layer, x, heads=4)
        exact_diff = max_diff(block(x), exact)
    message = (
        f"float64: RMSNorm {norm_diff:.3g}, attention core {core_diff:.3g}, "
        f"layer vs Llama {layer_diff:.3g} (float32-limited), "
        f"layer vs Llama's parts in float64 {exact_diff:.3g}"
    )
    assert norm_diff <= EXACT_BOUND, message
    assert core_diff <= EXACT_BOUND, message
    assert exact_diff <= EXACT_BOUND, message
    assert layer_diff <= LLAMA_BOUND, message  # Llama's float32 norms and tables


def exact_llama_layer(layer: nn.Module, x: torch.Tensor, heads: int) -> torch.Tensor:
    """Llama's decoder layer with its linear maps, but RMSNorm and RoPE tables in float64."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    def norm(module: nn.Module, h: torch.Tensor) -> torch.Tensor:
        return module.weight * h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)

    attn = layer.self_attn
    B, T, D = x.shape
    d = D // heads
    h = norm(layer.input_layernorm, x)
    q = attn.q_proj(h).view(B, T, -1, d).transpose(1, 2)
    k = attn.k_proj(h).view(B, T, -1, d).transpose(1, 2)
    v = attn.v_proj(h).view(B, T, -1, d).transpose(1, 2)
    cos, sin = rope_tables(T, d, dtype=torch.float64)
    cos, sin = torch.cat((cos, cos), dim=-1)[None], torch.cat((sin, sin), dim=-1)[None]
    q, k = apply_rotary_pos_emb(q, k, cos, sin)
    heads_out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    x = x + attn.o_proj(heads_out.transpose(1, 2).reshape(B, T, D))
    return x + layer.mlp(norm(layer.post_attention_layernorm, x))


def test_from_llama_errors(transformers: ModuleType) -> None:
    layer, _ = llama_layer(transformers, 4, 2)
    state = layer.state_dict()
    with pytest.raises(TypeError, match="state_dict must be a mapping"):
        ModernBlock.from_llama([1, 2], num_heads=4, num_kv_heads=2)  # type: ignore[arg-type]
    missing = {k: v for k, v in state.items() if not k.startswith("mlp.up_proj")}
    with pytest.raises(ValueError, match=r"missing \['mlp.up_proj.weight'\]"):
        ModernBlock.from_llama(missing, num_heads=4, num_kv_heads=2)
    with pytest.raises(ValueError, match="without biases"):
        ModernBlock.from_llama(
            {**state, "self_attn.q_proj.bias": torch.zeros(32)}, num_heads=4, num_kv_heads=2
        )
    with pytest.raises(
        ValueError, match=r"state_dict\['self_attn.k_proj.weight'\] must have shape"
    ):
        ModernBlock.from_llama(state, num_heads=4, num_kv_heads=1)


# -- the model and the KV cache ------------------------------------------------------


def test_model_shapes_tying_and_positions() -> None:
    for positions in ("rope", "sinusoidal", "none"):
        model = tiny_model(positions=positions)
        logits = model(torch.tensor([[1, 2, 3, 4]]))
        assert logits.shape == (1, 4, 11)
        assert model.blocks[0].self_attn.rope == (positions == "rope")
    tied = DecoderOnlyLM(11, 16, 1, 4, 2, 24, 8, tie_weights=True)
    assert tied.output.weight is tied.embedding.weight
    untied = DecoderOnlyLM(11, 16, 1, 4, 2, 24, 8)
    assert untied.output.weight is not untied.embedding.weight


def test_model_is_causal(randomize: Callable[..., nn.Module]) -> None:
    """Changing a later token changes no earlier logit."""
    model = tiny_model(randomize=randomize, dtype=torch.float64)
    a = torch.tensor([[1, 2, 3, 4, 5, 6]])
    b = a.clone()
    b[0, 4] = 9
    la, lb = model(a), model(b)
    assert max_diff(la[:, :4], lb[:, :4]) == 0.0
    assert max_diff(la[:, 4:], lb[:, 4:]) > 1e-3


def test_forward_with_a_cache_equals_forward_without(randomize: Callable[..., nn.Module]) -> None:
    model = tiny_model(randomize=randomize, dtype=torch.float64)
    tokens = torch.tensor([[1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1]])
    full = model(tokens)
    cache = model.make_cache(2)
    pieces = [model(tokens[:, :3], cache=cache), model(tokens[:, 3:4], cache=cache)]
    pieces.append(model(tokens[:, 4:], cache=cache, start=4))
    assert cache.length == 7
    assert max_diff(torch.cat(pieces, dim=1), full) <= 1e-12


@st.composite
def generation_cases(draw: st.DrawFn) -> dict[str, object]:
    kv_heads = draw(st.sampled_from([1, 2]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 3]))
    d_head = draw(st.sampled_from([2, 4]))
    prompt_len = draw(st.integers(1, 6))
    new_tokens = draw(st.integers(1, 7))
    sampler = draw(
        st.sampled_from(
            [
                {"temperature": 0.0},
                {"temperature": 1.0},
                {"temperature": 0.7, "top_k": 3},
                {"temperature": 1.3, "top_p": 0.8},
                {"top_k": 4, "top_p": 0.9},
            ]
        )
    )
    return {
        "vocab": draw(st.integers(2, 12)),
        "d_model": heads * d_head,
        "layers": draw(st.integers(1, 3)),
        "heads": heads,
        "kv_heads": kv_heads,
        "d_ff": draw(st.integers(1, 12)),
        "positions": draw(st.sampled_from(["rope", "rope", "sinusoidal", "none"])),
        "batch": draw(st.integers(1, 3)),
        "prompt_len": prompt_len,
        "new_tokens": new_tokens,
        "max_len": prompt_len + new_tokens - 1 + draw(st.integers(0, 3)),
        "sampler": sampler,
        "seed": draw(st.integers(0, 2**16)),
    }


@settings(max_examples=100, deadline=None)
@given(case=generation_cases())
def test_cached_generation_equals_uncached(case: dict[str, object]) -> None:
    """The same tokens, and the same logits within 1e-6, on 100 random models and prompts."""
    seed = case["seed"]
    assert isinstance(seed, int)
    model = tiny_model(
        vocab=case["vocab"],
        d_model=case["d_model"],
        layers=case["layers"],
        heads=case["heads"],
        kv_heads=case["kv_heads"],
        d_ff=case["d_ff"],
        max_len=case["max_len"],
        positions=case["positions"],
        seed=seed,
    )
    prompt = torch.randint(
        0, case["vocab"], (case["batch"], case["prompt_len"]), generator=gen(seed)
    )
    runs = {
        use_cache: generate(
            model,
            prompt,
            case["new_tokens"],
            use_cache=use_cache,
            generator=gen(seed),
            return_logits=True,
            **case["sampler"],
        )
        for use_cache in (True, False)
    }
    (tokens_c, logits_c), (tokens_u, logits_u) = runs[True], runs[False]
    assert torch.equal(tokens_c, tokens_u)
    assert tokens_c.shape == (case["batch"], case["new_tokens"])
    diff = max_diff(logits_c, logits_u)
    assert diff <= 1e-6, f"cached vs uncached logits: {diff:.3g}"


def test_cached_generation_equals_uncached_over_long_outputs(
    randomize: Callable[..., nn.Module],
) -> None:
    """A larger float32 model and a long greedy continuation."""
    model = tiny_model(
        d_model=32, heads=8, kv_heads=2, layers=3, d_ff=64, max_len=80, randomize=randomize
    )
    prompt = torch.randint(0, 11, (2, 8), generator=gen(3))
    cached, logits_c = generate(model, prompt, 64, temperature=0.0, return_logits=True)
    uncached, logits_u = generate(
        model, prompt, 64, temperature=0.0, use_cache=False, return_logits=True
    )
    assert torch.equal(cached, uncached)
    diff = max_diff(logits_c, logits_u)
    assert diff <= 1e-5 * float(logits_u.abs().max()), f"float32 logits differ by {diff:.3g}"


@pytest.mark.parametrize("use_cache", [True, False])
def test_attention_score_counts_are_what_the_code_computes(
    monkeypatch: pytest.MonkeyPatch, use_cache: bool
) -> None:
    computed: list[int] = []

    def counting(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        computed.append(q.shape[-2] * k.shape[-2])  # scores per batch element and head
        return scaled_dot_product_attention(q, k, v, mask)

    monkeypatch.setattr(modern, "scaled_dot_product_attention", counting)
    model = tiny_model(layers=3)
    P, N = 5, 6
    generate(model, torch.ones(2, P, dtype=torch.long), N, use_cache=use_cache)
    per_step = [computed[3 * s] for s in range(N)]
    assert all(computed[3 * s : 3 * s + 3] == [per_step[s]] * 3 for s in range(N))
    assert len(computed) == 3 * N
    assert per_step == attention_scores_per_step(P, N, use_cache=use_cache)


def test_attention_score_totals() -> None:
    P, N = 10, 100
    without = sum(attention_scores_per_step(P, N, use_cache=False))
    with_cache = sum(attention_scores_per_step(P, N, use_cache=True))
    assert without == sum((P + s) ** 2 for s in range(N))
    assert with_cache == P * P + sum(P + s for s in range(1, N))
    assert without > 50 * with_cache


# -- samplers ----------------------------------------------------------------------


def random_logits(rows: int = 200, V: int = 10, seed: int = 0) -> torch.Tensor:
    return 2.0 * randn(rows, V, dtype=torch.float64, seed=seed)


def nucleus(probs: np.ndarray, p: float) -> set[int]:
    """The smallest set of most likely tokens whose mass is at least p (no ties here)."""
    order = np.argsort(-probs)
    cumulative = np.cumsum(probs[order])
    size = int(np.searchsorted(cumulative, p - 1e-12)) + 1
    return set(order[:size].tolist())


def test_distributions_sum_to_one() -> None:
    logits = random_logits()
    for settings_ in (
        {},
        {"temperature": 0.5},
        {"temperature": 3.0},
        {"top_k": 1},
        {"top_k": 4},
        {"top_k": 99},
        {"top_p": 0.3},
        {"top_p": 1.0},
        {"top_k": 5, "top_p": 0.7},
        {"temperature": 0.0},
    ):
        probs = next_token_distribution(logits, **settings_)
        assert float((probs.sum(-1) - 1).abs().max()) <= 1e-12, settings_
        assert bool((probs >= 0).all()), settings_


def test_top_k_never_leaves_the_k_most_likely() -> None:
    logits = random_logits()
    rows, k, draws = logits.shape[0], 3, 100
    top = logits.topk(k, dim=-1).indices  # (rows, k)
    tokens = sample(logits.repeat_interleave(draws, dim=0), top_k=k, generator=gen(1))
    tokens = tokens.reshape(rows, draws)
    inside = (tokens[:, :, None] == top[:, None, :]).any(dim=-1)
    assert bool(inside.all())
    probs = next_token_distribution(logits, top_k=k)
    assert bool(((probs > 0).sum(-1) == k).all())


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9, 0.99])
def test_top_p_keeps_exactly_the_nucleus(p: float) -> None:
    logits = random_logits(seed=2)
    probs = torch.softmax(logits, dim=-1).numpy()
    filtered = next_token_distribution(logits, top_p=p)
    tokens = sample(logits.repeat_interleave(100, dim=0), top_p=p, generator=gen(2)).reshape(
        -1, 100
    )
    for row in range(logits.shape[0]):
        kept = nucleus(probs[row], p)
        assert set(torch.nonzero(filtered[row]).flatten().tolist()) == kept
        assert set(tokens[row].tolist()) <= kept
        # the kept tokens keep their ratios
        scale = probs[row][list(kept)].sum()
        np.testing.assert_allclose(
            filtered[row][list(kept)].numpy(), probs[row][list(kept)] / scale, rtol=1e-12
        )


def test_temperature_to_zero_is_greedy() -> None:
    logits = random_logits()
    best = logits.argmax(dim=-1)
    assert torch.equal(sample(logits, temperature=0.0), best)
    greedy = next_token_distribution(logits, temperature=0.0)
    assert torch.equal(greedy, F.one_hot(best, logits.shape[-1]).double())
    # gaps between the two largest logits are > 1e-3 here, so 1e-5 is cold enough
    top2 = logits.topk(2, dim=-1).values
    assert float((top2[:, 0] - top2[:, 1]).min()) > 1e-3
    cold = next_token_distribution(logits, temperature=1e-5)
    assert max_diff(cold, greedy) <= 1e-12
    hot = next_token_distribution(logits, temperature=100.0)
    assert max_diff(hot, torch.full_like(hot, 0.1)) < 0.02


def test_sampling_draws_from_the_distribution() -> None:
    logits = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=torch.float64)
    probs = next_token_distribution(logits, temperature=0.8, top_k=3)
    draws = sample(logits.expand(20000, 4), temperature=0.8, top_k=3, generator=gen(4))
    frequencies = torch.bincount(draws, minlength=4).double() / 20000
    assert max_diff(frequencies, probs) < 0.015
    assert int(frequencies[2]) == 0


def test_seeded_generator_repeats_its_draws() -> None:
    logits = random_logits(rows=50)
    first = sample(logits, top_p=0.9, generator=gen(7))
    again = sample(logits, top_p=0.9, generator=gen(7))
    other = sample(logits, top_p=0.9, generator=gen(8))
    assert torch.equal(first, again)
    assert not torch.equal(first, other)
    model = tiny_model()
    prompt = torch.tensor([[1, 2, 3]])
    a = generate(model, prompt, 10, generator=gen(9))
    b = generate(model, prompt, 10, generator=gen(9))
    assert torch.equal(a, b)


# -- errors ------------------------------------------------------------------------


def test_head_count_errors() -> None:
    with pytest.raises(ValueError, match="num_heads must divide d_model"):
        GroupedQueryAttention(30, 4, 2)
    with pytest.raises(ValueError, match="num_kv_heads must divide num_heads"):
        GroupedQueryAttention(24, 6, 4)
    with pytest.raises(ValueError, match="must be even with rope=True"):
        GroupedQueryAttention(12, 4, 2)
    GroupedQueryAttention(12, 4, 2, rope=False)  # odd heads are fine without RoPE
    with pytest.raises(ValueError, match="num_kv_heads must divide num_heads"):
        DecoderOnlyLM(10, 24, 1, 6, 4, 8, 16)
    with pytest.raises(ValueError, match="num_kv_heads must be an integer >= 1"):
        GroupedQueryAttention(24, 6, 0)
    with pytest.raises(TypeError, match="rope must be a bool"):
        GroupedQueryAttention(24, 6, 2, rope=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key/value heads must divide the query heads"):
        grouped_query_attention(randn(1, 4, 3, 2), randn(1, 3, 3, 2), randn(1, 3, 3, 2))
    with pytest.raises(ValueError, match="at least as many keys as queries"):
        grouped_query_attention(randn(1, 4, 3, 2), randn(1, 2, 2, 2), randn(1, 2, 2, 2))
    with pytest.raises(ValueError, match="v must have the shape of k"):
        grouped_query_attention(randn(1, 4, 3, 2), randn(1, 2, 3, 2), randn(1, 2, 4, 2))


def test_module_and_rope_errors() -> None:
    with pytest.raises(ValueError, match="eps must be a finite real number > 0"):
        RMSNorm(4, eps=0.0)
    with pytest.raises(TypeError, match="must have the dtype of the module's parameters"):
        RMSNorm(4)(randn(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="x must have last dimension 4"):
        RMSNorm(4)(randn(2, 5))
    with pytest.raises(TypeError, match=r"norm must be a torch\.nn\.RMSNorm"):
        RMSNorm.from_torch(nn.LayerNorm(4))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="d_ff must be an integer >= 1"):
        SwiGLU(4, 0)
    with pytest.raises(ValueError, match="d_head must be even"):
        rope_tables(4, 5)
    with pytest.raises(ValueError, match="start must be an integer >= 0"):
        rope_tables(4, 4, start=-1)
    with pytest.raises(TypeError, match=r"dtype must be a floating-point torch\.dtype"):
        rope_tables(4, 4, dtype=torch.int64)
    cos, sin = rope_tables(4, 8)
    with pytest.raises(ValueError, match=r"cos must have shape \(5, 4\)"):
        apply_rope(randn(1, 5, 8), cos, sin)
    with pytest.raises(TypeError, match="sin must have the dtype of x"):
        apply_rope(randn(1, 4, 8), cos, sin.double())
    with pytest.raises(ValueError, match="even last dimension"):
        apply_rope(randn(1, 4, 7), cos, sin)
    with pytest.raises(ValueError, match="heads of even width"):
        interleave_rope_rows(randn(12, 3), num_heads=4)
    with pytest.raises(TypeError, match="d_model must be an integer >= 1"):
        DecoderOnlyLM(10, 8.0, 1, 2, 1, 8, 16)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_heads must divide d_model"):
        DecoderOnlyLM(10, 10, 1, 4, 1, 8, 16)
    with pytest.raises(ValueError, match="positions must be one of"):
        DecoderOnlyLM(10, 8, 1, 2, 1, 8, 16, positions="alibi")


def test_cache_errors() -> None:
    cache = KVCache(num_layers=2, batch_size=1, num_kv_heads=2, max_len=4, d_head=4)
    with pytest.raises(
        ValueError, match=r"k must have shape \(B, H_kv, T, d_head\) = \(1, 2, T, 4\)"
    ):
        cache.update(0, randn(1, 3, 2, 4), randn(1, 3, 2, 4))
    with pytest.raises(ValueError, match="v must have the shape of k"):
        cache.update(0, randn(1, 2, 2, 4), randn(1, 2, 3, 4))
    with pytest.raises(TypeError, match="k must have the dtype of the cache"):
        cache.update(0, randn(1, 2, 2, 4, dtype=torch.float64), randn(1, 2, 2, 4))
    with pytest.raises(ValueError, match="layer must be below the cache's num_layers=2"):
        cache.update(2, randn(1, 2, 2, 4), randn(1, 2, 2, 4))
    with pytest.raises(ValueError, match="holds max_len=4 positions and 0 are filled: 5 more"):
        cache.update(0, randn(1, 2, 5, 4), randn(1, 2, 5, 4))
    cache.update(0, randn(1, 2, 3, 4), randn(1, 2, 3, 4))
    cache.advance(3)
    with pytest.raises(ValueError, match="3 are filled: 2 more overflow"):
        cache.advance(2)

    model = tiny_model(layers=2, heads=4, kv_heads=2, d_model=16)  # d_head 4
    tokens = torch.tensor([[1, 2]])
    with pytest.raises(ValueError, match=r"cache must have the model's \(num_layers"):
        model(tokens, cache=KVCache(2, 1, 1, 8, 4))
    with pytest.raises(ValueError, match=r"got \(2, 2, 2, 4\)"):
        model(tokens, cache=KVCache(2, 2, 2, 8, 4))  # batch size 2 for 1 sequence
    with pytest.raises(TypeError, match="cache must have the dtype of the model's parameters"):
        model(tokens, cache=KVCache(2, 1, 2, 8, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"cache must be a lessons_code\.modern\.KVCache"):
        model(tokens, cache="cache")  # type: ignore[arg-type]
    fresh = model.make_cache(1)
    with pytest.raises(ValueError, match="start must be the cache's length 0"):
        model(tokens, cache=fresh, start=3)
    with pytest.raises(ValueError, match="overflow"):
        model(torch.ones(1, 3, dtype=torch.long), cache=model.make_cache(1, max_len=2))
    with pytest.raises(ValueError, match="must not exceed max_len = 32"):
        model(torch.ones(1, 3, dtype=torch.long), start=30)


def test_sampler_and_generate_errors() -> None:
    logits = randn(2, 5)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        next_token_distribution(logits, top_p=1.5)
    with pytest.raises(ValueError, match="top_p must be a finite real number > 0"):
        next_token_distribution(logits, top_p=0.0)
    with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
        next_token_distribution(logits, top_k=0)
    with pytest.raises(ValueError, match="temperature must be a finite real number >= 0"):
        next_token_distribution(logits, temperature=-1.0)
    with pytest.raises(TypeError, match="logits must have a floating-point dtype"):
        next_token_distribution(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"generator must be a torch\.Generator"):
        sample(logits, generator=0)  # type: ignore[arg-type]
    model = tiny_model(max_len=8)
    prompt = torch.tensor([[1, 2, 3]])
    with pytest.raises(TypeError, match=r"model must be a lessons_code\.modern\.DecoderOnlyLM"):
        generate(nn.Linear(2, 2), prompt, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="need 9 positions, more than the model's max_len = 8"):
        generate(model, prompt, 7)
    with pytest.raises(ValueError, match=r"prompt must hold token ids in \[0, 11\)"):
        generate(model, torch.tensor([[11]]), 2)
    with pytest.raises(ValueError, match="max_new_tokens must be an integer >= 1"):
        generate(model, prompt, 0)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
        generate(model, prompt, 2, top_p=2.0)
    with pytest.raises(ValueError, match="prompt_len must be an integer >= 1"):
        attention_scores_per_step(0, 3, use_cache=True)
    with pytest.raises(ValueError, match="num_kv_heads must be an integer >= 1"):
        kv_cache_size(1, 1, 1, 0, 4)


def test_generate_restores_the_mode() -> None:
    model = tiny_model().train()
    generate(model, torch.tensor([[1, 2]]), 3)
    assert model.training


def test_rope_tables_base_sets_the_frequencies() -> None:
    default, _ = rope_tables(3, 8)
    same, _ = rope_tables(3, 8, base=10000.0)
    torch.testing.assert_close(default, same, rtol=0, atol=0)
    cos, sin = rope_tables(3, 8, base=500_000.0)  # position 1: cos(w_i), w_i = base^(-2i/8)
    expected = torch.tensor([500_000.0 ** (-i / 4) for i in range(4)], dtype=torch.float64)
    torch.testing.assert_close(cos[1], torch.cos(expected).float())
    torch.testing.assert_close(sin[2], torch.sin(2 * expected).float())
    assert cos[1, 0] == default[1, 0]  # the first pair turns at 1 whatever the base
    with pytest.raises(ValueError, match="base"):
        rope_tables(3, 8, base=0.5)
    with pytest.raises(TypeError, match="base"):
        rope_tables(3, 8, base="big")  # type: ignore[arg-type]
