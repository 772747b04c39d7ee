"""
Multi-head attention, checked against PyTorch
=============================================

Recompute ``torch.nn.MultiheadAttention`` from its own weights, one step at a
time, and print the shape of every intermediate tensor; then copy the weights
into the package's own module and run it with a causal mask. A table gives the
largest difference from PyTorch's output, in float32 and float64, for every
multi-head check of the book; one heatmap per head, all on one colour scale,
shows that each head attends in its own way; a last pair of tables shows that
four heads cost the same matrix products as one, but four times the memory
for their attention weights.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device; the seed fixes PyTorch's initial weights and the
# input.

import matplotlib.pyplot as plt
import pandas as pd
import torch
from torch import nn

from lessons_code.attention import causal_mask
from lessons_code.equivalence import compare_with_pytorch
from lessons_code.multihead import (
    MultiHeadAttention,
    attention_flops,
    multihead_attention,
    multihead_attention_steps,
)
from lessons_code.plots import weights_heatmap

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
print("device:", device)

# %%
# PyTorch's module and an input
# -----------------------------
# Model width :math:`D = 16` split into :math:`H = 4` heads of
# :math:`d_\text{head} = D / H = 4`; a batch of 2 sequences of length 5.
# ``in_proj_weight`` stacks :math:`W_q`, :math:`W_k` and :math:`W_v` into one
# :math:`3D \times D` matrix.

B, T, D, H = 2, 5, 16, 4
mha = nn.MultiheadAttention(D, H, batch_first=True).to(device).eval()
x = torch.randn(B, T, D, device=device)  # (B, T, D)
print("input x (B, T, D):           ", tuple(x.shape))
print("in_proj_weight (3D, D):      ", tuple(mha.in_proj_weight.shape))
print("in_proj_bias (3D,):          ", tuple(mha.in_proj_bias.shape))
print("out_proj.weight (D, D):      ", tuple(mha.out_proj.weight.shape))

# %%
# Step by step
# ------------
# :func:`~lessons_code.multihead.multihead_attention_steps` projects the
# input, splits the width into heads, lets every head attend with scores
# divided by :math:`\sqrt{d_\text{head}}`, concatenates the heads and applies the
# output projection. It returns every intermediate tensor.

with torch.no_grad():
    steps = multihead_attention_steps(x, mha)
for name, tensor in steps.items():
    print(f"{name:8s} {tuple(tensor.shape)}")

# %%
# The last step's output is PyTorch's output, up to float32 rounding, and so
# is the short form :func:`~lessons_code.multihead.multihead_attention`:

with torch.no_grad():
    theirs = mha(x, x, x, need_weights=False)[0]  # (B, T, D)
    short = multihead_attention(x, mha)  # (B, T, D)
for name, result in (("steps", steps["output"]), ("short form", short)):
    gap = (result - theirs).abs().max()
    print(f"{name:10s}: max |ours - PyTorch| = {gap:.2e}")

# %%
# A module of the package's own
# -----------------------------
# :class:`~lessons_code.multihead.MultiHeadAttention` keeps four separate
# :math:`D \times D` projections instead of one packed matrix, and takes an
# optional boolean mask that is ``True`` where attending is allowed.
# ``from_torch`` copies PyTorch's weights into it. With the causal mask of a
# decoder, PyTorch needs the inverted mask, since its boolean masks mean
# "masked out".

ours = MultiHeadAttention.from_torch(mha)
print(ours)
ours_count = sum(p.numel() for p in ours.parameters())
torch_count = sum(p.numel() for p in mha.parameters())
print(f"parameters: {ours_count} (PyTorch's module: {torch_count})")

mask = causal_mask(T, device=device)  # (T, T), True = may attend
with torch.no_grad():
    out, causal_weights = ours(x, x, x, mask=mask, return_weights=True)
    theirs = mha(x, x, x, attn_mask=~mask, need_weights=False)[0]
print("output (B, T, D):      ", tuple(out.shape))
print("weights (B, H, T, T):  ", tuple(causal_weights.shape))
print(f"causal: max |ours - PyTorch| = {(out - theirs).abs().max():.2e}")

# %%
# How close to PyTorch, in every case?
# ------------------------------------
# :func:`~lessons_code.equivalence.compare_with_pytorch` runs the book's
# equivalence checks on the CPU: it redraws every weight and bias of a
# PyTorch module, copies them into the package's
# :class:`~lessons_code.multihead.MultiHeadAttention` with ``from_torch`` (or
# reads them directly, for
# :func:`~lessons_code.multihead.multihead_attention`) and compares the
# outputs on one input of shape (2, 5, 16). Here are its multi-head attention
# rows, in float32 and in float64. Every difference is zero or rounding, a
# few units in the last place of the type.

pd.set_option("display.max_colwidth", None)  # show whole references
comparisons = {
    str(dtype).removeprefix("torch."): compare_with_pytorch(dtype, seed=0)
    for dtype in (torch.float32, torch.float64)
}
references = {row.name: row.reference for row in comparisons["float32"]}
differences = {
    dtype: {row.name: f"{row.max_abs_diff:.2e}" for row in rows}
    for dtype, rows in comparisons.items()
}
table = pd.DataFrame({"compared with": references, **differences})
attention_rows = table.index.str.startswith(("multihead", "MultiHead"))
table[attention_rows].rename_axis("the package's")

# %%
# One heatmap per head
# --------------------
# The per-head weights of the first sequence, from the step-by-step run
# above, heads numbered 1 to 4. All four panels share one colour scale, from
# 0 to 1, so that one colour is one weight everywhere. Even with random
# weights the four heads spread their attention differently, because each one
# compares queries and keys in its own 4-dimensional subspace; training makes
# them specialise (the positional-encoding lesson shows the heads of a trained
# model).

# (H, T, T), the first sequence of the batch
weights = steps["weights"][0].cpu()
print("per-head weights of sequence 0 (H, T, T):", tuple(weights.shape))

fig, axes = plt.subplots(2, 2, figsize=(5, 5.2), layout="constrained")
for head, ax in enumerate(axes.flat):
    image = weights_heatmap(
        ax,
        weights[head],
        title=f"head {head + 1}",
        xlabel="key position",
        ylabel="query position",
        annotate=True,
        fmt="{:.1f}",  # one decimal: two would run into each other
        colorbar=False,
    )
fig.colorbar(image, ax=axes, label="attention weight")
fig.suptitle("Attention weights of the 4 heads (D = 16, d_head = 4)")
plt.show()

# %%
# The cost of more heads
# ----------------------
# :func:`~lessons_code.multihead.attention_flops` counts the multiply-adds of
# the matrix products. :math:`H` heads of width :math:`D / H` do the same
# matrix work as one head of width :math:`D`: every term has
# :math:`H \cdot d_\text{head} = D` in it.

flops = pd.DataFrame(
    {
        f"H = {h}": attention_flops(seq_len=T, d_model=D, num_heads=h)
        for h in (1, 2, 4, 8, 16)
    }
)
flops.rename_axis("multiply-adds (T = 5, D = 16)")

# %%
# What does grow with the heads is the attention weights: every head has its
# own :math:`T \times T` matrix, so the layer fills a :math:`(B, H, T, T)`
# tensor, takes one exponential per entry in the softmax and keeps the tensor
# for the backward pass. Its size has no :math:`d_\text{head}` in it to cancel
# :math:`H`. Measured on the package's module, for one sequence of 1024
# tokens:

x_long = torch.randn(1, 1024, D, device=device)  # (1, T, D)
sizes = {}
for h in (1, 2, 4, 8, 16):
    layer = MultiHeadAttention(D, h).to(device)
    with torch.no_grad():
        _, w = layer(x_long, x_long, x_long, return_weights=True)
    sizes[f"H = {h}"] = {
        "weights shape": tuple(w.shape),  # (1, H, T, T)
        "MiB in float32": w.numel() * w.element_size() / 2**20,
    }
pd.DataFrame(sizes).rename_axis("attention weights (T = 1024)")
