"""Every module of the package side by side with PyTorch's, given the same weights.

:func:`compare_with_pytorch` builds each PyTorch reference module, copies its
weights into the package's module with ``from_torch`` (or reads them directly,
for :func:`~lessons_code.multihead.multihead_attention`), runs both on the
same input and reports the largest absolute difference of the outputs. The
book prints the result as its equivalence table; the tests check it.

Sizes, those of the multi-head attention and encoder-block lessons:
``D = 16``, ``H = 4``, ``FF = 32``, batch 2, length 5 for the attention
checks and 6 for the blocks, encoder memory of length 7, stacks of 3 layers.
All modules are in ``eval()`` mode with dropout 0. To make the check
demanding, every parameter of the reference modules -- biases and LayerNorm
parameters included, and each layer of a stack separately -- is redrawn from
a normal distribution (standard deviation 0.3 around PyTorch's own initial
mean: 1 for LayerNorm weights, 0 otherwise).

Masks: the package's boolean masks mean "may attend"; PyTorch's boolean
``attn_mask`` means "masked out", so the reference receives ``~mask``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import nn

from lessons_code._checks import check_bool, check_int
from lessons_code.attention import causal_mask
from lessons_code.blocks import DecoderBlock, Encoder, EncoderBlock
from lessons_code.multihead import MultiHeadAttention, multihead_attention

__all__ = ["Comparison", "compare_with_pytorch"]

D, H, FF = 16, 4, 32
BATCH, ATTN_LEN, BLOCK_LEN, MEMORY_LEN, NUM_LAYERS = 2, 5, 6, 7, 3
ModuleT = TypeVar("ModuleT", bound=nn.Module)


@dataclass(frozen=True)
class Comparison:
    """One row of the equivalence table.

    Attributes
    ----------
    name
        What of the package was checked.
    reference
        The PyTorch module it was compared with, and how it was called.
    shape
        Shape of the compared outputs.
    max_abs_diff
        Largest absolute difference between the two outputs.
    """

    name: str
    reference: str
    shape: tuple[int, ...]
    max_abs_diff: float


def _randomize(module: ModuleT, generator: torch.Generator) -> ModuleT:
    """Redraw every parameter: N(1, 0.3^2) for LayerNorm weights, N(0, 0.3^2) otherwise."""
    with torch.no_grad():
        for sub in module.modules():
            for name, p in sub.named_parameters(recurse=False):
                mean = (
                    1.0
                    if isinstance(sub, nn.LayerNorm) and name == "weight"
                    else 0.0
                )
                noise = torch.randn(
                    p.shape, generator=generator, dtype=p.dtype
                )
                p.copy_(mean + 0.3 * noise)
    return module.eval()


def compare_with_pytorch(
    dtype: torch.dtype = torch.float32,
    *,
    seed: int = 0,
    autograd: bool = False,
) -> list[Comparison]:
    """Compare every module of the package with its PyTorch counterpart.

    Parameters
    ----------
    dtype
        ``torch.float32`` or ``torch.float64``.
    seed
        Seed of the local generator that draws the weights and inputs.
    autograd
        Run with autograd enabled, as during training. When it is off (the
        default, as in inference) PyTorch's encoder layers and attention take
        their fused inference "fast path"; when it is on they use the general
        path with its fused attention kernel. Either way the package runs the
        same code; only the reference changes, and with it the last bits of
        rounding.

    Returns
    -------
    list of Comparison
        One row per check: functional and module multi-head attention
        (self-attention, cross-attention, causal mask, one head), the
        post-norm and pre-norm encoder blocks, encoder stacks without and with
        a final LayerNorm, and the post-norm and pre-norm decoder blocks.

    Shape
    -----
    Attention checks use inputs ``(2, 5, 16)`` (memory ``(2, 7, 16)``), block
    checks ``(2, 6, 16)``: ``(B, T, D)`` with batch ``B``, length ``T`` and
    width ``D``.

    Raises
    ------
    TypeError
        If ``dtype`` is not ``torch.float32`` or ``torch.float64``, or ``seed``
        is not an integer.
    ValueError
        If ``seed`` is negative.

    Examples
    --------
    >>> rows = compare_with_pytorch(torch.float64)
    >>> all(row.max_abs_diff < 1e-12 for row in rows)
    True
    >>> rows[0].name
    'multihead_attention (functional)'
    """
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(
            f"dtype must be torch.float32 or torch.float64, got {dtype!r}"
        )
    seed = check_int(seed, "seed", minimum=0)
    autograd = check_bool(autograd, "autograd")
    gen = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=dtype)

    def reference(module: ModuleT) -> ModuleT:
        return _randomize(module.to(dtype), gen)

    rows: list[Comparison] = []

    def compare(
        name: str, ref: str, a: torch.Tensor, b: torch.Tensor
    ) -> None:
        diff = float((a - b).abs().max().detach())
        rows.append(Comparison(name, ref, tuple(a.shape), diff))

    # Every output below is computed with autograd on or off, as asked.
    with torch.set_grad_enabled(autograd):
        # Multi-head attention, as in the multi-head attention lesson.
        mha = reference(nn.MultiheadAttention(D, H, batch_first=True))
        attn = MultiHeadAttention.from_torch(mha)
        x, memory = randn(BATCH, ATTN_LEN, D), randn(BATCH, MEMORY_LEN, D)
        mask = causal_mask(ATTN_LEN)  # True = may attend
        mha_call = "torch.nn.MultiheadAttention"
        compare(
            "multihead_attention (functional)",
            f"{mha_call}: mha(x, x, x)",
            multihead_attention(x, mha),
            mha(x, x, x, need_weights=False)[0],
        )
        compare(
            "MultiHeadAttention, self-attention",
            f"{mha_call}: mha(x, x, x)",
            attn(x, x, x),
            mha(x, x, x, need_weights=False)[0],
        )
        compare(
            "MultiHeadAttention, cross-attention",
            f"{mha_call}: mha(x, memory, memory)",
            attn(x, memory, memory),
            mha(x, memory, memory, need_weights=False)[0],
        )
        compare(
            "MultiHeadAttention, causal mask",
            f"{mha_call}: mha(x, x, x, attn_mask=~mask)",
            attn(x, x, x, mask=mask),
            mha(x, x, x, attn_mask=~mask, need_weights=False)[0],
        )
        one_head = reference(
            nn.MultiheadAttention(D, 1, batch_first=True)
        )
        compare(
            "MultiHeadAttention, one head (H = 1)",
            f"{mha_call}(num_heads=1): mha(x, x, x)",
            MultiHeadAttention.from_torch(one_head)(x, x, x),
            one_head(x, x, x, need_weights=False)[0],
        )

        # Encoder blocks and stacks, as in the encoder-block lesson.
        x = randn(BATCH, BLOCK_LEN, D)
        memory = randn(BATCH, MEMORY_LEN, D)
        for norm_first, label in (
            (False, "post-norm"),
            (True, "pre-norm"),
        ):
            layer = reference(
                nn.TransformerEncoderLayer(
                    D,
                    H,
                    FF,
                    dropout=0.0,
                    batch_first=True,
                    norm_first=norm_first,
                )
            )
            compare(
                f"EncoderBlock, {label}",
                f"torch.nn.TransformerEncoderLayer(norm_first={norm_first})",
                EncoderBlock.from_torch(layer)(x),
                layer(x),
            )
        for norm_first, final_norm in ((False, False), (True, True)):
            layer = nn.TransformerEncoderLayer(
                D,
                H,
                FF,
                dropout=0.0,
                batch_first=True,
                norm_first=norm_first,
            )
            norm = nn.LayerNorm(D) if final_norm else None
            stack = reference(
                nn.TransformerEncoder(
                    layer,
                    NUM_LAYERS,
                    norm=norm,
                    enable_nested_tensor=False,
                )
            )
            label = (
                "pre-norm, final LayerNorm"
                if final_norm
                else "post-norm, no final norm"
            )
            norm_name = "LayerNorm" if final_norm else "None"
            compare(
                f"Encoder ({NUM_LAYERS} layers), {label}",
                f"torch.nn.TransformerEncoder(num_layers={NUM_LAYERS}, norm={norm_name})",
                Encoder.from_torch(stack)(x),
                stack(x),
            )
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(
            BLOCK_LEN, dtype=dtype
        )
        for norm_first, label in (
            (False, "post-norm"),
            (True, "pre-norm"),
        ):
            decoder_layer = reference(
                nn.TransformerDecoderLayer(
                    D,
                    H,
                    FF,
                    dropout=0.0,
                    batch_first=True,
                    norm_first=norm_first,
                )
            )
            compare(
                f"DecoderBlock, {label}, causal",
                f"torch.nn.TransformerDecoderLayer(norm_first={norm_first}), causal tgt_mask",
                DecoderBlock.from_torch(decoder_layer)(
                    x, memory, causal=True
                ),
                decoder_layer(
                    x, memory, tgt_mask=tgt_mask, tgt_is_causal=True
                ),
            )
    return rows
