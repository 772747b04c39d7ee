"""
Encoder and decoder blocks, checked against PyTorch
===================================================

Build a transformer block in NumPy and watch the shapes stay ``(T, D)``; then
copy the weights of PyTorch's ``TransformerEncoderLayer`` into the package's
own block. You will see the shapes through a block, an encoder stack and a
decoder block, then a table and a chart of the largest absolute
difference between each of the package's blocks and PyTorch's (post-norm and
pre-norm encoder layers, encoder stacks, decoder layers), in float32 and
float64.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device; NumPy and PyTorch draw from seeded generators.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from torch import nn

from lessons_code.attention import self_attention
from lessons_code.blocks import (
    DecoderBlock,
    Encoder,
    EncoderBlock,
    encoder_block_numpy,
)
from lessons_code.equivalence import compare_with_pytorch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
rng = np.random.default_rng(0)
print("device:", device)

# %%
# A block in NumPy
# ----------------
# Single-head self-attention, then a feed-forward network
# ``Linear(D, FF) -> ReLU -> Linear(FF, D)``, each added back to its input and
# normalised (post-norm). Five tokens, :math:`D = 8`, :math:`\mathrm{FF} = 16`, weights
# scaled by 0.2, zero biases. The output has the shape of the input, which is
# what lets blocks stack.

T, D, FF = 5, 8, 16
x = rng.standard_normal((T, D))  # (T, D)
# Three (D, D) attention projections, then the feed-forward weights:
w_q, w_k, w_v = (0.2 * rng.standard_normal((D, D)) for _ in range(3))
w1 = 0.2 * rng.standard_normal((D, FF))  # (D, FF)
w2 = 0.2 * rng.standard_normal((FF, D))  # (FF, D)
b1, b2 = np.zeros(FF), np.zeros(D)

attended, _ = self_attention(x, w_q, w_k, w_v)
out = encoder_block_numpy(x, w_q, w_k, w_v, w1, b1, w2, b2)
print("input (T, D):          ", x.shape)
print("after attention (T, D):", attended.shape)
print("block output (T, D):   ", out.shape)
largest_mean = np.abs(out.mean(axis=1)).max()  # LayerNorm: mean 0 ...
print(f"largest |mean| of an output token: {largest_mean:.1e}")
print("std of each output token:", out.std(axis=1).round(3))  # ... std 1

# %%
# PyTorch's layer, and ours with its weights
# ------------------------------------------
# :math:`D = 16`, :math:`H = 4`, :math:`\mathrm{FF} = 32`, dropout 0, evaluation mode,
# input ``(2, 6, 16)``. :meth:`EncoderBlock.from_torch
# <lessons_code.blocks.EncoderBlock.from_torch>` copies every weight, bias and
# LayerNorm parameter of a ``torch.nn.TransformerEncoderLayer``; three of
# those blocks make an :class:`~lessons_code.blocks.Encoder`, and a
# :class:`~lessons_code.blocks.DecoderBlock` adds causal self-attention and
# cross-attention over the encoder's output (the memory).

B, T, D, H, FF = 2, 6, 16, 4, 32
x = torch.randn(B, T, D, device=device)  # (B, T, D)
S = 7  # length of the encoder's output
memory = torch.randn(B, S, D, device=device)  # (B, S, D)
layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
layer = layer.to(device).eval()
block = EncoderBlock.from_torch(layer)
stack = Encoder(num_layers=3, d_model=D, num_heads=H, d_ff=FF)
stack = stack.to(device).eval()
decoder = DecoderBlock(d_model=D, num_heads=H, d_ff=FF).to(device).eval()

y = block(x)
print("input x (B, T, D):                ", tuple(x.shape))
print("post-norm block output (B, T, D): ", tuple(y.shape))
print("3-block encoder output (B, T, D): ", tuple(stack(x).shape))
print("memory (B, S, D):                 ", tuple(memory.shape))
print("decoder block output (B, T, D):   ", tuple(decoder(x, memory).shape))
gap = (y - layer(x)).abs().max()
print(f"post-norm block: max |ours - PyTorch| = {gap:.2e}")

# %%
# The equivalence table
# ---------------------
# :func:`~lessons_code.equivalence.compare_with_pytorch` runs every check of
# the book on the CPU: it redraws all parameters of each PyTorch module
# (LayerNorms and every layer of a stack included), copies them into the
# package's module with ``from_torch``, runs both on the same input and
# reports the largest absolute difference between the two outputs, entry by
# entry. Here are its block rows, in
# float32 and float64, and in float32 once more with autograd on: without
# autograd PyTorch's encoder layers take a fused inference "fast path", with
# it the general path, so only the reference's rounding changes. The causal
# mask reaches PyTorch as a float mask of :math:`-\infty` above the diagonal.

pd.set_option("display.max_colwidth", None)  # show whole references
runs = {
    "float32": compare_with_pytorch(torch.float32),
    "float32, autograd on": compare_with_pytorch(
        torch.float32, autograd=True
    ),
    "float64": compare_with_pytorch(torch.float64),
}
references = {row.name: row.reference for row in runs["float32"]}
differences = {
    setting: {row.name: row.max_abs_diff for row in rows}
    for setting, rows in runs.items()
}
table = pd.DataFrame({"compared with": references, **differences})
table = table[table.index.str.startswith(("Encoder", "DecoderBlock"))]
shown = table.copy()
shown[list(runs)] = table[list(runs)].map(lambda value: f"{value:.2e}")
shown.rename_axis("the package's")

# %%
# Differences in units of the type's precision
# --------------------------------------------
# Dividing each difference by the machine epsilon of its type (the gap
# between 1 and the next representable number, about :math:`1.2 \times
# 10^{-7}` in float32 and :math:`2.2 \times 10^{-16}` in float64) puts the
# three settings on one scale. The outputs are of order one, and every
# marker sits at zero or at a small multiple of epsilon: the rounding left by doing the same
# arithmetic in a different order. The package's blocks compute what
# PyTorch's compute, and a stack is simply those blocks one after the other.

epsilon = {
    "float32": torch.finfo(torch.float32).eps,
    "float32, autograd on": torch.finfo(torch.float32).eps,
    "float64": torch.finfo(torch.float64).eps,
}
units = table[list(runs)] / pd.Series(epsilon)  # (rows, settings)
print(f"largest difference: {units.max().max():.1f} units of epsilon")

fig, ax = plt.subplots(figsize=(5, 5.4), layout="constrained")
rows = np.arange(len(units))
for shift, marker, setting in zip(
    (-0.2, 0.0, 0.2), "osD", units, strict=True
):
    # one marker per module, a difference of zero included
    ax.plot(units[setting], rows + shift, marker, label=setting)
# each name on two lines, so that the plot keeps most of the width
ax.set_yticks(rows, [name.replace(", ", ",\n", 1) for name in units.index])
ax.invert_yaxis()  # first row of the table at the top
ax.set_xlim(left=-0.5)
ax.grid(axis="x", alpha=0.4)
ax.set_title("Package vs PyTorch, per block")
ax.set_xlabel("max |ours - PyTorch| in units of epsilon")
fig.legend(loc="outside lower center", ncols=2)
plt.show()
