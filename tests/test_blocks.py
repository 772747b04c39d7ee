"""Tests for :mod:`lessons_code.blocks`."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lessons_code.attention import causal_mask
from lessons_code.blocks import (
    DecoderBlock,
    Encoder,
    EncoderBlock,
    FeedForward,
    encoder_block_numpy,
    layer_norm,
)

FAST = settings(max_examples=25, deadline=None)
D, H, FF, B, T, S = 16, 4, 32, 2, 6, 7
Randomize = Callable[..., nn.Module]


def inputs(*shape: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def torch_encoder_layer(
    randomize: Randomize, dtype: torch.dtype, *, norm_first: bool, **kwargs: object
) -> nn.TransformerEncoderLayer:
    layer = nn.TransformerEncoderLayer(
        D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first, **kwargs
    )
    return randomize(layer.to(dtype), seed=1).eval()


# -- NumPy ------------------------------------------------------------------


def test_layer_norm_matches_pytorch() -> None:
    x = np.random.default_rng(0).standard_normal((3, 5, 8)) * 4 + 2
    expected = F.layer_norm(torch.from_numpy(x), (8,), eps=1e-6).numpy()
    np.testing.assert_allclose(layer_norm(x), expected, rtol=1e-10, atol=1e-12)
    y = layer_norm(x, eps=1e-3)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 1e-3), rtol=1e-10)


def test_layer_norm_errors() -> None:
    with pytest.raises(ValueError, match="eps must be a finite real number > 0"):
        layer_norm(np.ones((2, 3)), eps=0.0)
    with pytest.raises(TypeError, match="eps"):
        layer_norm(np.ones((2, 3)), eps="small")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="x must be a numpy"):
        layer_norm([1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="x must have at least 1 dimension"):
        layer_norm(np.array(1.0))


def numpy_block_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    """The encoder-block lesson's NumPy block.

    5 tokens, D = 8, FF = 16, weights N(0, 1) * 0.2, zero biases.
    """
    rng = np.random.default_rng(seed)
    T_, D_, FF_ = 5, 8, 16
    return {
        "x": rng.standard_normal((T_, D_)),
        "w_q": 0.2 * rng.standard_normal((D_, D_)),
        "w_k": 0.2 * rng.standard_normal((D_, D_)),
        "w_v": 0.2 * rng.standard_normal((D_, D_)),
        "w1": 0.2 * rng.standard_normal((D_, FF_)),
        "b1": np.zeros(FF_),
        "w2": 0.2 * rng.standard_normal((FF_, D_)),
        "b2": np.zeros(D_),
    }


def test_encoder_block_numpy_matches_formula_written_in_torch() -> None:
    p = numpy_block_inputs()
    p["b1"] = np.linspace(-0.5, 0.5, 16)  # non-zero biases must be used too
    p["b2"] = np.linspace(0.3, -0.3, 8)
    t = {k: torch.from_numpy(v) for k, v in p.items()}
    x = t["x"]
    scores = (x @ t["w_q"]) @ (x @ t["w_k"]).T / math.sqrt(8)
    attn = torch.softmax(scores, dim=-1) @ (x @ t["w_v"])
    h = F.layer_norm(x + attn, (8,), eps=1e-6)
    ff = torch.relu(h @ t["w1"] + t["b1"]) @ t["w2"] + t["b2"]
    expected = F.layer_norm(h + ff, (8,), eps=1e-6)
    out = encoder_block_numpy(**p)
    assert out.shape == (5, 8)
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-10, atol=1e-12)


def test_encoder_block_numpy_errors() -> None:
    p = numpy_block_inputs()
    with pytest.raises(ValueError, match=r"w_v must have shape \(8, 8\)"):
        encoder_block_numpy(**{**p, "w_v": p["w_v"][:, :4]})
    with pytest.raises(ValueError, match="w1 must have 8 rows"):
        encoder_block_numpy(**{**p, "w1": p["w1"][:4]})
    with pytest.raises(ValueError, match=r"b1 must have shape \(16,\)"):
        encoder_block_numpy(**{**p, "b1": np.zeros(8)})
    with pytest.raises(ValueError, match=r"w2 must have shape \(16, 8\)"):
        encoder_block_numpy(**{**p, "w2": p["w2"][:8]})
    with pytest.raises(ValueError, match=r"b2 must have 1 dimensions"):
        encoder_block_numpy(**{**p, "b2": np.zeros((1, 8))})
    with pytest.raises(ValueError, match="x must have 2 dimensions"):
        encoder_block_numpy(**{**p, "x": p["x"][None]})
    with pytest.raises(ValueError, match="w_q must have 8 rows"):
        encoder_block_numpy(**{**p, "w_q": p["w_q"][:3]})


# -- feed-forward -------------------------------------------------------------


def test_feed_forward_is_position_wise() -> None:
    ff = FeedForward(D, FF).double()
    x = torch.randn(B, T, D, dtype=torch.float64)
    out = ff(x)
    for t in range(T):
        torch.testing.assert_close(out[:, t], ff(x[:, t]))
    expected = ff.linear2(torch.relu(ff.linear1(x)))
    torch.testing.assert_close(out, expected)


# -- encoder block ------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_block_matches_pytorch(
    norm_first: bool, dtype: torch.dtype, randomize: Randomize
) -> None:
    layer = torch_encoder_layer(randomize, dtype, norm_first=norm_first)
    block = EncoderBlock.from_torch(layer)
    assert block.norm_first is norm_first
    x = inputs(B, T, D, dtype=dtype)
    torch.testing.assert_close(block(x), layer(x))
    with torch.no_grad():  # PyTorch now takes its fused inference fast path
        torch.testing.assert_close(block(x), layer(x))


def test_encoder_block_lesson_settings_default_initialisation() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True).eval()
    block = EncoderBlock.from_torch(layer)
    x = torch.randn(2, 6, 16)
    out = block(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out, layer(x))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_block_with_mask_matches_pytorch(
    norm_first: bool, dtype: torch.dtype, randomize: Randomize
) -> None:
    layer = torch_encoder_layer(randomize, dtype, norm_first=norm_first)
    block = EncoderBlock.from_torch(layer)
    x = inputs(B, T, D, dtype=dtype)
    mask = causal_mask(T)  # True = may attend; PyTorch wants True = masked out
    torch.testing.assert_close(block(x, mask=mask), layer(x, src_mask=~mask))
    assert not torch.allclose(block(x, mask=mask), block(x))


def test_encoder_block_copies_layer_norm_eps(randomize: Randomize) -> None:
    layer = torch_encoder_layer(randomize, torch.float64, norm_first=False, layer_norm_eps=0.5)
    block = EncoderBlock.from_torch(layer)
    assert block.norm1.eps == block.norm2.eps == 0.5
    x = inputs(B, T, D, dtype=torch.float64)
    torch.testing.assert_close(block(x), layer(x))


def test_encoder_block_copies_dropout_and_matches_in_eval_mode(randomize: Randomize) -> None:
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.2, batch_first=True)
    layer = randomize(layer).eval()
    block = EncoderBlock.from_torch(layer).eval()
    assert block.dropout1.p == block.feed_forward.dropout.p == 0.2
    x = inputs(B, T, D, dtype=torch.float32)
    torch.testing.assert_close(block(x), layer(x))
    block.train()
    assert not torch.allclose(block(x), layer(x))  # dropout is active in training


def test_pre_and_post_norm_differ() -> None:
    torch.manual_seed(0)
    post = EncoderBlock(D, H, FF, norm_first=False)
    pre = EncoderBlock(D, H, FF, norm_first=True)
    pre.load_state_dict(post.state_dict())
    x = torch.randn(B, T, D)
    out_post, out_pre = post(x), pre(x)
    assert not torch.allclose(out_post, out_pre)
    # Post-norm ends with a LayerNorm (unit-affine at initialisation): every token is normalised.
    torch.testing.assert_close(out_post.mean(-1), torch.zeros(B, T), atol=1e-5, rtol=0)
    assert not torch.allclose(out_pre.mean(-1), torch.zeros(B, T), atol=1e-3)


# -- encoder stack ------------------------------------------------------------


@pytest.mark.parametrize(
    ("norm_first", "final_norm"),
    [(False, False), (False, True), (True, False), (True, True)],
)
def test_encoder_matches_pytorch(
    norm_first: bool, final_norm: bool, dtype: torch.dtype, randomize: Randomize
) -> None:
    layer = nn.TransformerEncoderLayer(
        D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    norm = nn.LayerNorm(D, eps=1e-4) if final_norm else None
    reference = nn.TransformerEncoder(layer, 3, norm=norm, enable_nested_tensor=False)
    reference = randomize(reference.to(dtype), seed=2).eval()  # every layer differs
    encoder = Encoder.from_torch(reference)
    assert len(encoder.layers) == 3
    assert (encoder.final_norm is not None) is final_norm
    x = inputs(B, T, D, dtype=dtype)
    torch.testing.assert_close(encoder(x), reference(x))
    mask = causal_mask(T)
    torch.testing.assert_close(encoder(x, mask=mask), reference(x, mask=~mask))
    with torch.no_grad():
        torch.testing.assert_close(encoder(x), reference(x))


def test_encoder_runs_layers_in_order(randomize: Randomize) -> None:
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
    reference = randomize(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)).eval()
    encoder = Encoder.from_torch(reference)
    encoder.layers = nn.ModuleList(reversed(list(encoder.layers)))
    x = inputs(B, T, D, dtype=torch.float32)
    assert not torch.allclose(encoder(x), reference(x))  # so the order is really tested above


def test_encoder_constructor() -> None:
    encoder = Encoder(4, D, H, FF, norm_first=True, final_norm=True)
    assert len(encoder.layers) == 4
    assert all(block.norm_first for block in encoder.layers)
    assert isinstance(encoder.final_norm, nn.LayerNorm)
    assert Encoder(1, D, H, FF).final_norm is None


# -- decoder block ------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "not-causal"])
def test_decoder_block_matches_pytorch(
    norm_first: bool, causal: bool, dtype: torch.dtype, randomize: Randomize
) -> None:
    layer = nn.TransformerDecoderLayer(
        D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    layer = randomize(layer.to(dtype), seed=3).eval()
    block = DecoderBlock.from_torch(layer)
    x, memory = inputs(B, T, D, dtype=dtype), inputs(B, S, D, dtype=dtype, seed=1)
    if causal:
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=dtype)
        expected = layer(x, memory, tgt_mask=tgt_mask, tgt_is_causal=True)
        also_expected = layer(x, memory, tgt_mask=~causal_mask(T))  # boolean form
        torch.testing.assert_close(expected, also_expected)
    else:
        expected = layer(x, memory)
    out = block(x, memory, causal=causal)
    assert out.shape == x.shape
    torch.testing.assert_close(out, expected)


def test_decoder_block_causality() -> None:
    torch.manual_seed(0)
    block = DecoderBlock(D, H, FF).double()
    x, memory = torch.randn(B, T, D, dtype=torch.float64), torch.randn(B, S, D, dtype=torch.float64)
    changed = x.clone()
    changed[:, -1] += 1.0  # change only the last position
    out, out_changed = block(x, memory), block(changed, memory)
    torch.testing.assert_close(out[:, :-1], out_changed[:, :-1])  # the past does not see it
    assert not torch.allclose(out[:, -1], out_changed[:, -1])
    out_free = block(changed, memory, causal=False)
    assert not torch.allclose(out_free[:, :-1], out[:, :-1])


# -- shapes (property) ----------------------------------------------------------


@FAST
@given(
    batch=st.integers(1, 3),
    T_=st.integers(1, 6),
    S_=st.integers(1, 6),
    num_heads=st.sampled_from([1, 2, 4]),
    d_head=st.integers(1, 4),
    d_ff=st.integers(1, 8),
    norm_first=st.booleans(),
)
def test_every_block_keeps_the_shape(
    batch: int, T_: int, S_: int, num_heads: int, d_head: int, d_ff: int, norm_first: bool
) -> None:
    d_model = num_heads * d_head
    x = torch.randn(batch, T_, d_model)
    memory = torch.randn(batch, S_, d_model)
    assert EncoderBlock(d_model, num_heads, d_ff, norm_first)(x).shape == x.shape
    assert Encoder(2, d_model, num_heads, d_ff, norm_first)(x).shape == x.shape
    assert DecoderBlock(d_model, num_heads, d_ff, norm_first)(x, memory).shape == x.shape
    assert FeedForward(d_model, d_ff)(x).shape == x.shape


@pytest.mark.parametrize("cls", [FeedForward, EncoderBlock, Encoder, DecoderBlock])
def test_dropout_is_keyword_only_and_named_as_in_pytorch(cls: type[nn.Module]) -> None:
    # torch.nn.TransformerEncoderLayer / DecoderLayer call it ``dropout``; our
    # fourth positional argument is ``norm_first`` (theirs is ``dropout``), so
    # the probability is passed by name everywhere, never by position.
    parameter = inspect.signature(cls).parameters["dropout"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default == 0.0
    for torch_layer in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer):
        assert "dropout" in inspect.signature(torch_layer).parameters


# -- errors -----------------------------------------------------------------


def test_constructor_errors() -> None:
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        EncoderBlock(10, 4, 8)
    with pytest.raises(ValueError, match="num_heads must be an integer >= 1"):
        EncoderBlock(16, 0, 8)
    with pytest.raises(ValueError, match="d_ff must be an integer >= 1"):
        EncoderBlock(16, 4, 0)
    with pytest.raises(ValueError, match="dropout must be a probability"):
        EncoderBlock(16, 4, 8, dropout=1.0)
    with pytest.raises(ValueError, match="dropout must be a finite real number >= 0"):
        DecoderBlock(16, 4, 8, dropout=-0.1)
    with pytest.raises(TypeError, match="norm_first must be a bool"):
        EncoderBlock(16, 4, 8, norm_first="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="layer_norm_eps"):
        EncoderBlock(16, 4, 8, layer_norm_eps=0.0)
    with pytest.raises(ValueError, match="num_layers must be an integer >= 1"):
        Encoder(0, 16, 4, 8)
    with pytest.raises(TypeError, match="final_norm must be a bool"):
        Encoder(2, 16, 4, 8, final_norm=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="d_model"):
        DecoderBlock(16.0, 4, 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="d_ff"):
        FeedForward(16, -1)


def test_forward_errors() -> None:
    block = EncoderBlock(D, H, FF)
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        block(torch.randn(T, D))
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        block(torch.randn(B, T, 8))
    with pytest.raises(TypeError, match="x must have the dtype of the module's parameters"):
        block(torch.randn(B, T, D, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"x must be a torch\.Tensor"):
        block(np.zeros((B, T, D)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mask must broadcast"):
        block(torch.randn(B, T, D), mask=causal_mask(T + 1))
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        Encoder(2, D, H, FF)(torch.randn(B, T, 4))

    decoder = DecoderBlock(D, H, FF)
    x = torch.randn(B, T, D)
    with pytest.raises(ValueError, match="memory must have last dimension 16"):
        decoder(x, torch.randn(B, S, 8))
    with pytest.raises(ValueError, match="memory must have the batch size 2 of x"):
        decoder(x, torch.randn(3, S, D))
    with pytest.raises(ValueError, match="memory must have 3 dimensions"):
        decoder(x, torch.randn(S, D))
    with pytest.raises(TypeError, match="memory must have the dtype of x"):
        decoder(x, torch.randn(B, S, D, dtype=torch.float64))
    with pytest.raises(TypeError, match="causal must be a bool"):
        decoder(x, torch.randn(B, S, D), causal=1)  # type: ignore[arg-type]


def test_from_torch_errors() -> None:
    encoder_layer = nn.TransformerEncoderLayer(D, H, FF, batch_first=True)
    decoder_layer = nn.TransformerDecoderLayer(D, H, FF, batch_first=True)
    with pytest.raises(TypeError, match=r"layer must be a torch\.nn\.TransformerEncoderLayer"):
        EncoderBlock.from_torch(decoder_layer)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"layer must be a torch\.nn\.TransformerDecoderLayer"):
        DecoderBlock.from_torch(encoder_layer)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_first=True"):
        EncoderBlock.from_torch(nn.TransformerEncoderLayer(D, H, FF))
    with pytest.raises(ValueError, match="batch_first=True"):
        DecoderBlock.from_torch(nn.TransformerDecoderLayer(D, H, FF))
    with pytest.raises(ValueError, match="ReLU activation"):
        EncoderBlock.from_torch(
            nn.TransformerEncoderLayer(D, H, FF, activation="gelu", batch_first=True)
        )
    with pytest.raises(ValueError, match="bias=True"):
        EncoderBlock.from_torch(nn.TransformerEncoderLayer(D, H, FF, bias=False, batch_first=True))
    with pytest.raises(TypeError, match=r"encoder must be a torch\.nn\.TransformerEncoder"):
        Encoder.from_torch(encoder_layer)  # type: ignore[arg-type]
    stack = nn.TransformerEncoder(encoder_layer, 2, norm=nn.Identity(), enable_nested_tensor=False)
    with pytest.raises(TypeError, match=r"encoder\.norm must be None or a torch\.nn\.LayerNorm"):
        Encoder.from_torch(stack)
    stack = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(D, H, FF), 2, enable_nested_tensor=False
    )
    with pytest.raises(ValueError, match="batch_first=True"):
        Encoder.from_torch(stack)
