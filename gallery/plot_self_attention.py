"""
Self-attention weights and the causal mask
==========================================

Run single-head self-attention in NumPy on five random tokens and look at its
5 x 5 weight matrix, printed and drawn as a heatmap; check that every row sums
to one and that permuting the tokens only permutes the output. Then add the
causal mask of a decoder and see the upper triangle of the weights drop to zero.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# The worked example is NumPy on the CPU; the last cell repeats it with the
# PyTorch function on the device picked here. Every random draw comes from
# one seeded generator.

import matplotlib.pyplot as plt
import numpy as np
import torch

from lessons_code.attention import (
    causal_mask,
    scaled_dot_product_attention,
    self_attention,
)
from lessons_code.plots import weights_heatmap

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
rng = np.random.default_rng(0)
print("device:", device)

# %%
# Five tokens, three projections
# ------------------------------
# Queries, keys and values are three projections of the *same* sequence
# :math:`X`: :math:`Q = X W_q`, :math:`K = X W_k` and :math:`V = X W_v`. The
# projection weights are standard normal draws scaled by 0.3.

T, D = 5, 6
x = rng.standard_normal((T, D))  # (T, D): one token per row
# Three (D, D) projections:
w_q, w_k, w_v = (0.3 * rng.standard_normal((D, D)) for _ in range(3))
print("tokens X (T, D):     ", x.shape)
print("W_q, W_k, W_v (D, D):", w_q.shape, w_k.shape, w_v.shape)

# %%
# The weight matrix
# -----------------
# :func:`~lessons_code.attention.self_attention` computes
# :math:`\mathrm{softmax}(Q K^\top / \sqrt{d_k})\, V` with a softmax that
# subtracts each row's maximum first. Row :math:`i` of the weights says how
# much token :math:`i` takes from every token.

out, weights = self_attention(x, w_q, w_k, w_v)
print("output (T, D): ", out.shape)
print("weights (T, T):", weights.shape)
print(np.array2string(weights, precision=3, suppress_small=True))

row_sums = weights.sum(axis=1)
print("row sums:", np.array2string(row_sums, precision=6))
print("every row sums to 1:", np.allclose(row_sums, 1.0))

# %%
# The same matrix as a heatmap; a darker cell is a smaller weight.

fig, ax = plt.subplots(figsize=(5, 4.3))
weights_heatmap(
    ax,
    weights,
    title="Self-attention weights, 5 tokens, D = 6",
    xlabel="key position j (attended to)",
    ylabel="query position i (attending)",
    annotate=True,
    fmt="{:.3f}",
)
fig.tight_layout()
plt.show()

# %%
# Blind to order
# --------------
# Reorder the tokens and attention reorders its output the same way, nothing
# more: "dog bites man" and "man bites dog" hold the same tokens, and
# self-attention alone cannot tell them apart. This is why the positional
# encoding exists.

perm = rng.permutation(T)
out_perm, _ = self_attention(x[perm], w_q, w_k, w_v)
print("permutation:", perm)
gap = np.abs(out_perm - out[perm]).max()
print(f"max |attn(X[perm]) - attn(X)[perm]| = {gap:.2e}")

# %%
# The causal mask
# ---------------
# A decoder predicts token :math:`t` from the tokens before it, so position
# :math:`t` may attend only to positions :math:`\le t`.
# :func:`~lessons_code.attention.causal_mask` is ``True`` where attending is
# allowed; the forbidden scores become :math:`-\infty` and their weights zero.

mask = causal_mask(T).numpy()  # (T, T) bool, True on and below the diagonal
print(mask.astype(int))
_, masked_weights = self_attention(x, w_q, w_k, w_v, mask=mask)
print(np.array2string(masked_weights, precision=3, suppress_small=True))

above_diagonal = np.triu(masked_weights, k=1)  # the future of every row
print("upper triangle exactly zero:", np.all(above_diagonal == 0.0))
row_sums = masked_weights.sum(axis=1)
print("every row still sums to 1:", np.allclose(row_sums, 1.0))

fig, ax = plt.subplots(figsize=(5, 4.3))
weights_heatmap(
    ax,
    masked_weights,
    title="Causally masked self-attention weights",
    xlabel="key position j (attended to)",
    ylabel="query position i (attending)",
    annotate=True,
    fmt="{:.3f}",
)
fig.tight_layout()
plt.show()

# %%
# The same weights in PyTorch
# ---------------------------
# :func:`~lessons_code.attention.scaled_dot_product_attention` is the PyTorch
# version used by the rest of the book. Given the same projections and mask,
# on the device chosen above and in float64, it returns the same weights.

x_t = torch.from_numpy(x).to(device)  # (T, D)
# Three (T, D) projections:
q, k, v = (x_t @ torch.from_numpy(w).to(device) for w in (w_q, w_k, w_v))
mask_t = causal_mask(T, device=device)  # (T, T)
_, torch_weights = scaled_dot_product_attention(q, k, v, mask=mask_t)
difference = np.abs(torch_weights.cpu().numpy() - masked_weights).max()
print("PyTorch weights (T, T):", tuple(torch_weights.shape))
print(f"max |PyTorch - NumPy| = {difference:.2e}")
