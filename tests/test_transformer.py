"""Tests for :mod:`lessons_code.transformer` and the decoder stack of :mod:`lessons_code.blocks`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from lessons_code.attention import causal_mask
from lessons_code.blocks import Decoder, DecoderBlock
from lessons_code.positional import positional_encoding, positional_encoding_numpy
from lessons_code.transformer import (
    TokenEmbedding,
    Transformer,
    greedy_decode,
    padding_mask,
)

FAST = settings(max_examples=20, deadline=None)
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}
Randomize = Callable[..., nn.Module]


def torch_transformer(
    d_model: int,
    num_heads: int,
    num_encoder_layers: int,
    num_decoder_layers: int,
    d_ff: int,
    *,
    norm_first: bool,
    dtype: torch.dtype,
    seed: int,
) -> nn.Transformer:
    """A PyTorch Transformer whose every parameter is a distinct random number."""
    with warnings.catch_warnings():  # "enable_nested_tensor is True, but ... norm_first"
        warnings.simplefilter("ignore", UserWarning)
        model = nn.Transformer(
            d_model,
            num_heads,
            num_encoder_layers,
            num_decoder_layers,
            d_ff,
            dropout=0.0,
            batch_first=True,
            norm_first=norm_first,
        )
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64) + 0.1)
    return model.to(dtype).eval()


def reference_logits(
    model: nn.Transformer,
    src_embedding: nn.Embedding,
    tgt_embedding: nn.Embedding,
    output: nn.Linear,
    src: torch.Tensor,
    tgt: torch.Tensor,
    *,
    pad_id: int | None,
    causal: bool,
) -> torch.Tensor:
    """PyTorch's logits, with PyTorch's masks (True = masked out).

    The encoding is the NumPy float64 table (the exp-log form, written
    independently of the package's torch version), rounded once to the
    model's dtype: a float64 model is compared with the float64 formula.
    """
    d_model = model.d_model
    S, T = src.shape[1], tgt.shape[1]
    dtype = output.weight.dtype
    pe = torch.from_numpy(positional_encoding_numpy(max(S, T), d_model)).to(dtype)
    x_src = src_embedding(src) * math.sqrt(d_model) + pe[:S]
    x_tgt = tgt_embedding(tgt) * math.sqrt(d_model) + pe[:T]
    masks: dict[str, torch.Tensor] = {}
    if causal:
        masks["tgt_mask"] = ~causal_mask(T)
    if pad_id is not None:
        masks["src_key_padding_mask"] = src == pad_id
        masks["memory_key_padding_mask"] = src == pad_id
        masks["tgt_key_padding_mask"] = tgt == pad_id
    return output(model(x_src, x_tgt, **masks))


def random_tokens(
    batch: int, length: int, vocab: int, lengths: list[int], gen: torch.Generator
) -> torch.Tensor:
    """Token ids in [1, vocab), row i padded with 0 after lengths[i] tokens."""
    tokens = torch.randint(1, vocab, (batch, length), generator=gen)
    for i, n in enumerate(lengths):
        tokens[i, n:] = 0
    return tokens


# -- the whole model against torch.nn.Transformer ------------------------------


@FAST
@given(
    batch=st.integers(1, 3),
    S=st.integers(1, 7),
    T=st.integers(1, 6),
    num_heads=st.sampled_from([1, 2, 4]),
    d_head=st.integers(1, 4),
    layers=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    norm_first=st.booleans(),
    padded=st.booleans(),
    causal=st.booleans(),
    double=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_transformer_matches_pytorch(
    batch: int,
    S: int,
    T: int,
    num_heads: int,
    d_head: int,
    layers: tuple[int, int],
    norm_first: bool,
    padded: bool,
    causal: bool,
    double: bool,
    seed: int,
) -> None:
    dtype = torch.float64 if double else torch.float32
    d_model = num_heads * d_head
    reference = torch_transformer(
        d_model, num_heads, *layers, 2 * d_model, norm_first=norm_first, dtype=dtype, seed=seed
    )
    gen = torch.Generator().manual_seed(seed)
    src_embedding = nn.Embedding(9, d_model).to(dtype)
    tgt_embedding = nn.Embedding(7, d_model).to(dtype)
    output = nn.Linear(d_model, 7).to(dtype)
    for module in (src_embedding, tgt_embedding, output):
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype))
    pad_id = 0 if padded else None
    # every sequence keeps at least its first token; the first row is full
    src_lengths = [S] + [int(n) for n in torch.randint(1, S + 1, (batch - 1,), generator=gen)]
    tgt_lengths = [T] + [int(n) for n in torch.randint(1, T + 1, (batch - 1,), generator=gen)]
    if not padded:
        src_lengths, tgt_lengths = [S] * batch, [T] * batch
    src = random_tokens(batch, S, 9, src_lengths, gen)
    tgt = random_tokens(batch, T, 7, tgt_lengths, gen)

    ours = Transformer.from_torch(
        reference, src_embedding, tgt_embedding, output, pad_id=pad_id, max_len=8
    )
    expected = reference_logits(
        reference, src_embedding, tgt_embedding, output, src, tgt, pad_id=pad_id, causal=causal
    )
    got = ours(src, tgt, causal=causal)
    assert got.shape == (batch, T, 7)
    assert got.dtype == dtype
    difference = float((got - expected).detach().abs().max())
    assert difference <= TOLERANCE[dtype], difference


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("padded", [False, True], ids=["unpadded", "padded"])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "not-causal"])
def test_transformer_matches_pytorch_fixed_shapes(
    norm_first: bool, padded: bool, causal: bool, dtype: torch.dtype
) -> None:
    D, H = 16, 4
    reference = torch_transformer(D, H, 2, 3, 32, norm_first=norm_first, dtype=dtype, seed=5)
    gen = torch.Generator().manual_seed(1)
    src_embedding, tgt_embedding = nn.Embedding(11, D).to(dtype), nn.Embedding(9, D).to(dtype)
    output = nn.Linear(D, 9, bias=False).to(dtype)  # no bias: a zero bias is used
    src = random_tokens(3, 7, 11, [7, 4, 6], gen)
    tgt = random_tokens(3, 5, 9, [5, 5, 3], gen)
    pad_id = 0 if padded else None
    ours = Transformer.from_torch(reference, src_embedding, tgt_embedding, output, pad_id=pad_id)
    assert ours.pad_id == pad_id
    assert len(ours.encoder.layers) == 2
    assert len(ours.decoder.layers) == 3
    expected = reference_logits(
        reference, src_embedding, tgt_embedding, output, src, tgt, pad_id=pad_id, causal=causal
    )
    got = ours(src, tgt, causal=causal)
    assert float((got - expected).detach().abs().max()) <= TOLERANCE[dtype]


def test_from_torch_keeps_the_positional_switch_and_max_len() -> None:
    reference = torch_transformer(8, 2, 1, 1, 16, norm_first=False, dtype=torch.float32, seed=0)
    embeddings = nn.Embedding(5, 8), nn.Embedding(5, 8)
    model = Transformer.from_torch(
        reference, *embeddings, nn.Linear(8, 5), max_len=4, positional=False
    )
    assert model.src_embed.max_len == 4
    assert not model.tgt_embed.positional
    src = torch.tensor([[1, 2, 3]])
    tgt = torch.tensor([[1, 2]])
    x_src = embeddings[0](src) * math.sqrt(8)
    x_tgt = embeddings[1](tgt) * math.sqrt(8)
    expected = model.output(reference(x_src, x_tgt, tgt_mask=~causal_mask(2)))
    torch.testing.assert_close(model(src, tgt), expected)


# -- padding ----------------------------------------------------------------------


def test_padding_changes_nothing_at_the_real_positions() -> None:
    torch.manual_seed(0)
    model = Transformer(10, 8, d_model=16, num_heads=4, d_ff=32, pad_id=0).double().eval()
    gen = torch.Generator().manual_seed(3)
    sources = [torch.randint(1, 10, (n,), generator=gen) for n in (6, 3, 5)]
    targets = [torch.randint(1, 8, (n,), generator=gen) for n in (4, 2, 4)]
    src = nn.utils.rnn.pad_sequence(sources, batch_first=True)  # pads with 0
    tgt = nn.utils.rnn.pad_sequence(targets, batch_first=True)
    batched = model(src, tgt)
    maps = model.attention_weights(src, tgt)
    for i, (s, t) in enumerate(zip(sources, targets, strict=True)):
        alone = model(s[None], t[None])[0]  # the same pair, no padding at all
        torch.testing.assert_close(batched[i, : len(t)], alone, rtol=0, atol=1e-12)
        # and no query ever puts weight on a padding key
        assert not maps["encoder"][:, i, :, :, len(s) :].any()
        assert not maps["cross"][:, i, :, :, len(s) :].any()
        assert not maps["decoder"][:, i, :, :, len(t) :].any()
    # without a pad_id the padding tokens are attended to, and the outputs change
    model.pad_id = None
    assert not torch.allclose(model(src, tgt)[1, :2], batched[1, :2])


def test_padding_mask() -> None:
    tokens = torch.tensor([[4, 5, 0], [0, 6, 7]])
    mask = padding_mask(tokens, pad_id=0)
    assert mask.shape == (2, 1, 1, 3)
    assert mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [[True, True, False], [False, True, True]]
    assert padding_mask(tokens, pad_id=4)[0, 0, 0].tolist() == [False, True, True]


def test_decoder_block_masks_combine_with_the_causal_mask() -> None:
    torch.manual_seed(0)
    block = DecoderBlock(8, 2, 16).double()
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    memory = torch.randn(2, 5, 8, dtype=torch.float64)
    keys = torch.tensor([[True, True, True, False], [True, True, True, True]])
    mask = keys[:, None, None, :]  # (B, 1, 1, T)
    both = causal_mask(4) & mask  # (B, 1, T, T)
    torch.testing.assert_close(block(x, memory, mask=mask), block(x, memory, False, mask=both))
    memory_mask = torch.ones(2, 1, 1, 5, dtype=torch.bool)
    torch.testing.assert_close(block(x, memory, memory_mask=memory_mask), block(x, memory))
    memory_mask[:, :, :, -1] = False
    out = block(x, memory, memory_mask=memory_mask)
    changed = memory.clone()
    changed[:, -1] += 5.0  # a masked memory position is not read
    torch.testing.assert_close(block(x, changed, memory_mask=memory_mask), out)


# -- the decoder stack --------------------------------------------------------------


@pytest.mark.parametrize(
    ("norm_first", "final_norm"), [(False, False), (False, True), (True, True)]
)
def test_decoder_matches_pytorch(
    norm_first: bool, final_norm: bool, dtype: torch.dtype, randomize: Randomize
) -> None:
    D, H, FF = 16, 4, 32
    layer = nn.TransformerDecoderLayer(
        D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first
    )
    norm = nn.LayerNorm(D, eps=1e-4) if final_norm else None
    reference = randomize(nn.TransformerDecoder(layer, 3, norm=norm).to(dtype), seed=4).eval()
    decoder = Decoder.from_torch(reference)
    assert len(decoder.layers) == 3
    assert (decoder.final_norm is not None) is final_norm
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, D, generator=gen, dtype=dtype)
    memory = torch.randn(2, 6, D, generator=gen, dtype=dtype)
    torch.testing.assert_close(decoder(x, memory, causal=False), reference(x, memory))
    real = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])
    expected = reference(x, memory, tgt_mask=~causal_mask(5), memory_key_padding_mask=~real)
    got = decoder(x, memory, memory_mask=real[:, None, None, :])
    torch.testing.assert_close(got, expected)


def test_decoder_constructor_and_errors() -> None:
    decoder = Decoder(3, 8, 2, 16, norm_first=True, final_norm=True)
    assert len(decoder.layers) == 3
    assert all(b.norm_first for b in decoder.layers)
    with pytest.raises(ValueError, match="num_layers must be an integer >= 1"):
        Decoder(0, 8, 2, 16)
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        Decoder(1, 9, 2, 16)
    with pytest.raises(TypeError, match="final_norm must be a bool"):
        Decoder(1, 8, 2, 16, final_norm=1)  # type: ignore[arg-type]
    x, memory = torch.randn(2, 4, 8), torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="memory_mask must broadcast"):
        decoder(x, memory, memory_mask=torch.ones(2, 1, 1, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="memory_mask must be a boolean"):
        decoder(x, memory, memory_mask=torch.ones(2, 1, 1, 5))
    with pytest.raises(ValueError, match="mask must broadcast"):
        decoder(x, memory, mask=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask must be a boolean"):
        decoder(x, memory, mask=torch.ones(4, 4, dtype=torch.int64))
    with pytest.raises(ValueError, match="mask must have 2, 3 or 4 dimensions"):
        decoder(x, memory, mask=torch.ones(4, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"decoder must be a torch\.nn\.TransformerDecoder"):
        Decoder.from_torch(nn.TransformerDecoderLayer(8, 2, 16, batch_first=True))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_first=True"):
        Decoder.from_torch(nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 1))
    odd = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, batch_first=True), 1)
    odd.norm = nn.Identity()  # type: ignore[assignment]
    with pytest.raises(TypeError, match=r"decoder\.norm must be None or a torch\.nn\.LayerNorm"):
        Decoder.from_torch(odd)


# -- embeddings, attention maps, decoding -------------------------------------------------


def test_token_embedding_is_scaled_and_positioned() -> None:
    torch.manual_seed(0)
    embed = TokenEmbedding(12, 16, max_len=10).double()
    tokens = torch.tensor([[3, 3, 5]])
    expected = embed.embedding(tokens) * 4.0 + positional_encoding(3, 16, dtype=torch.float64)
    torch.testing.assert_close(embed(tokens), expected, rtol=0.0, atol=0.0)
    # the float64 table is the formula's float64 value, not a widened float32 one
    widened = embed.embedding(tokens) * 4.0 + positional_encoding(3, 16).double()
    assert float((embed(tokens) - widened).detach().abs().max()) > 1e-9
    assert "pe" not in embed.state_dict()  # a fixed function, not a weight
    # the scaled table has entries of about unit size, like the encoding
    assert 0.8 < float((embed.embedding.weight.detach() * 4.0).std()) < 1.2
    plain = TokenEmbedding(12, 16, positional=False)
    torch.testing.assert_close(plain(tokens)[0, 0], plain(tokens)[0, 1])
    with pytest.raises(ValueError, match="tokens must have at most max_len = 10 positions"):
        embed(torch.zeros(1, 11, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tokens must hold token ids in \[0, 12\)"):
        embed(torch.tensor([[12]]))
    with pytest.raises(TypeError, match="tokens must have an integer dtype"):
        embed(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="dropout must be a probability"):
        TokenEmbedding(12, 16, dropout=1.5)
    with pytest.raises(ValueError, match="vocab_size must be an integer >= 1"):
        TokenEmbedding(0, 16)
    with pytest.raises(TypeError, match="positional must be a bool"):
        TokenEmbedding(12, 16, positional="yes")  # type: ignore[arg-type]


def test_attention_weights_are_the_modules_own() -> None:
    torch.manual_seed(0)
    model = Transformer(10, 8, d_model=16, num_heads=4, d_ff=32, num_encoder_layers=3, pad_id=0)
    model.train()
    src = torch.tensor([[3, 4, 5, 6, 0], [7, 8, 9, 0, 0]])
    tgt = torch.tensor([[1, 2, 3], [1, 4, 0]])
    maps = model.attention_weights(src, tgt)
    assert model.training  # the mode is restored
    assert maps["encoder"].shape == (3, 2, 4, 5, 5)
    assert maps["decoder"].shape == (2, 2, 4, 3, 3)
    assert maps["cross"].shape == (2, 2, 4, 3, 5)
    for w in maps.values():
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    # the causal triangle: no weight on a later target position
    assert float(maps["decoder"].triu(diagonal=1).abs().max()) == 0.0
    not_causal = model.attention_weights(src, tgt, causal=False)["decoder"]
    assert float(not_causal[:, 0].triu(diagonal=1).abs().max()) > 0.0
    # the first encoder block's map, recomputed from its own input
    model.eval()
    x = model.src_embed(src)
    _, expected = model.encoder.layers[0].self_attn(
        x, x, x, mask=padding_mask(src, 0), return_weights=True
    )
    torch.testing.assert_close(maps["encoder"][0], expected)
    # no hook is left behind
    assert all(not m._forward_hooks for m in model.modules())


def test_greedy_decode_follows_the_argmax() -> None:
    torch.manual_seed(1)
    model = Transformer(10, 8, d_model=16, num_heads=4, d_ff=32, pad_id=0).eval()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    out = greedy_decode(model, src, start_id=1, end_id=2, max_len=5)
    assert out.shape == (2, 5)  # an untrained model rarely ends early
    prefix = torch.ones(2, 1, dtype=torch.long)
    for step in range(out.shape[1]):
        nxt = model(src, prefix)[:, -1].argmax(-1)
        finished = (prefix[:, 1:] == 2).any(dim=1)
        expected = torch.where(finished, torch.zeros_like(nxt), nxt)
        assert torch.equal(out[:, step], expected)
        prefix = torch.cat([prefix, out[:, step : step + 1]], dim=1)


def test_greedy_decode_stops_and_pads_after_the_end_token() -> None:
    torch.manual_seed(0)
    model = Transformer(6, 5, d_model=8, num_heads=2, d_ff=16, pad_id=0)
    with torch.no_grad():  # always predict token 4, except after <s> (1): predict end (2)
        model.output.weight.zero_()
        model.output.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0]))
    out = greedy_decode(model, torch.tensor([[3, 4]]), start_id=1, end_id=4, max_len=6)
    assert out.tolist() == [[4]]  # stopped at once
    model.pad_id = None
    out = greedy_decode(model, torch.tensor([[3, 4], [5, 3]]), start_id=1, end_id=3, max_len=3)
    assert out.tolist() == [[4, 4, 4], [4, 4, 4]]  # never ends: max_len tokens


def test_greedy_decode_without_the_causal_mask() -> None:
    torch.manual_seed(2)
    model = Transformer(10, 8, d_model=16, num_heads=4, d_ff=32, pad_id=0).eval()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 0]])
    out = greedy_decode(model, src, start_id=1, end_id=2, max_len=5, causal=False)
    prefix = torch.ones(2, 1, dtype=torch.long)
    for step in range(out.shape[1]):  # the decoder runs unmasked at every step
        nxt = model(src, prefix, causal=False)[:, -1].argmax(-1)
        finished = (prefix[:, 1:] == 2).any(dim=1)
        assert torch.equal(out[:, step], torch.where(finished, torch.zeros_like(nxt), nxt))
        prefix = torch.cat([prefix, out[:, step : step + 1]], dim=1)
    masked = greedy_decode(model, src, start_id=1, end_id=2, max_len=5)
    assert not torch.equal(out, masked)  # from the second step on, the mask matters
    with pytest.raises(TypeError, match="causal must be a bool"):
        greedy_decode(model, src, start_id=1, end_id=2, max_len=5, causal=0)  # type: ignore[arg-type]


def test_greedy_decode_runs_the_decoder_over_every_prefix() -> None:
    torch.manual_seed(0)
    model = Transformer(10, 8, d_model=16, num_heads=4, d_ff=32, pad_id=0)
    lengths: list[int] = []
    hook = model.decoder.register_forward_pre_hook(
        lambda module, args: lengths.append(args[0].shape[1])
    )
    out = greedy_decode(model, torch.tensor([[3, 4, 5]]), start_id=1, end_id=2, max_len=7)
    hook.remove()
    L = out.shape[1]
    assert lengths == list(range(1, L + 1))  # 1 + 2 + ... + L positions
    assert sum(lengths) == L * (L + 1) // 2


# -- errors ----------------------------------------------------------------------


def test_transformer_errors() -> None:
    with pytest.raises(ValueError, match="pad_id must be a token id of both vocabularies"):
        Transformer(10, 5, d_model=8, num_heads=2, pad_id=5)
    with pytest.raises(ValueError, match="src_vocab_size must be an integer >= 1"):
        Transformer(0, 5)
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        Transformer(10, 5, d_model=10, num_heads=4)
    with pytest.raises(ValueError, match="num_layers must be an integer >= 1"):
        Transformer(10, 5, d_model=8, num_heads=2, num_encoder_layers=0)
    model = Transformer(10, 5, d_model=8, num_heads=2, d_ff=16, pad_id=0)
    src, tgt = torch.tensor([[3, 4]]), torch.tensor([[1, 2]])
    with pytest.raises(ValueError, match="tgt must have the batch size 1 of src"):
        model(src, torch.ones(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tgt must hold token ids in \[0, 5\)"):
        model(src, torch.tensor([[1, 7]]))
    with pytest.raises(ValueError, match=r"src must have shape \(B, T\)"):
        model(torch.tensor([3, 4]), tgt)
    with pytest.raises(TypeError, match=r"src must be a torch\.Tensor of token ids"):
        model([[3, 4]], tgt)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tgt must have an integer dtype"):
        model(src, torch.ones(1, 2, dtype=torch.bool))
    with pytest.raises(TypeError, match="causal must be a bool"):
        model(src, tgt, causal=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pad_id must be an integer"):
        padding_mask(src, pad_id=0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tokens must have shape"):
        padding_mask(torch.zeros(2, 0, dtype=torch.long), pad_id=0)
    with pytest.raises(TypeError, match=r"model must be a lessons_code\.transformer\.Transformer"):
        greedy_decode(nn.Linear(2, 2), src, start_id=1, end_id=2, max_len=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="end_id must be a target token id below 5"):
        greedy_decode(model, src, start_id=1, end_id=5, max_len=3)
    with pytest.raises(ValueError, match="max_len must be an integer >= 1"):
        greedy_decode(model, src, start_id=1, end_id=2, max_len=0)


def test_from_torch_errors() -> None:
    reference = torch_transformer(8, 2, 1, 1, 16, norm_first=False, dtype=torch.float32, seed=0)
    emb, out = nn.Embedding(5, 8), nn.Linear(8, 5)
    with pytest.raises(TypeError, match=r"transformer must be a torch\.nn\.Transformer"):
        Transformer.from_torch(nn.Linear(8, 8), emb, emb, out)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"tgt_embedding must be a torch\.nn\.Embedding"):
        Transformer.from_torch(reference, emb, nn.Linear(5, 8), out)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="src_embedding must have embedding_dim = d_model = 8"):
        Transformer.from_torch(reference, nn.Embedding(5, 4), emb, out)
    with pytest.raises(TypeError, match=r"output must be a torch\.nn\.Linear"):
        Transformer.from_torch(reference, emb, emb, nn.Identity())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="output must map d_model = 8 to the 5 target tokens"):
        Transformer.from_torch(reference, emb, emb, nn.Linear(8, 6))
    with pytest.raises(ValueError, match="pad_id must be a token id"):
        Transformer.from_torch(reference, emb, emb, out, pad_id=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        seq_first = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(ValueError, match="batch_first=True"):
        Transformer.from_torch(seq_first, emb, emb, out)


def test_outputs_are_finite_for_a_lone_real_token() -> None:
    model = Transformer(6, 6, d_model=8, num_heads=2, d_ff=16, pad_id=0)
    logits = model(torch.tensor([[3, 0, 0, 0]]), torch.tensor([[1]]))
    assert np.isfinite(logits.detach().numpy()).all()
