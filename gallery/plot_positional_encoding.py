"""
Sinusoidal positional encoding
==============================

Draw the positional-encoding table of the original Transformer as heatmaps
(50 positions x 32 dimensions, and a smaller 20 x 16 one), check that the
PyTorch and NumPy implementations agree, then plot how the dot product between
the encodings of two positions depends on nothing but the distance between
them.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device: the GPU when there is one, the CPU otherwise.
# The encoding has no randomness; the seed is fixed anyway, out of habit.

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.ticker import MaxNLocator

from lessons_code.plots import heatmap
from lessons_code.positional import (
    positional_encoding,
    positional_encoding_numpy,
)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
print("device:", device)

# %%
# The table
# ---------
# Row ``pos`` is the vector added to the token at position ``pos``; columns
# come in sine/cosine pairs whose frequency falls from left to right.

num_positions, d_model = 50, 32
pe = positional_encoding(num_positions, d_model).to(device)  # (T, D)
print("encoding shape (T, D):", tuple(pe.shape))

fig, ax = plt.subplots(figsize=(5, 4))
heatmap(
    ax,
    pe,
    title="Positional encoding, T = 50, D = 32",
    xlabel="encoding dimension j",
    ylabel="position pos",
    cmap="RdBu",
    symmetric=True,
    colorbar_label="PE(pos, j)",
)
fig.tight_layout()
plt.show()

# %%
# A smaller table, and the same table in NumPy
# --------------------------------------------
# With 20 positions and 16 dimensions the sine/cosine pairs are easier to
# follow column by column. The NumPy version computes the frequencies in the
# exp-log form :math:`\exp(-\ln(10000) \cdot 2i / D)` instead of the power
# form :math:`1 / 10000^{2i/D}`; the two tables agree to float32 precision.
# Every value lies in :math:`[-1, 1]`, and no two positions share a vector.

small = positional_encoding(20, 16)  # (T, D), float32
small_numpy = positional_encoding_numpy(20, 16)  # (T, D), float64
print("PyTorch table (T, D):", tuple(small.shape), small.dtype)
print("NumPy table (T, D):  ", small_numpy.shape, small_numpy.dtype)
gap = np.abs(small.numpy() - small_numpy).max()
print(f"max |PyTorch - NumPy| = {gap:.2e}")
print(f"values from {small_numpy.min():.3f} to {small_numpy.max():.3f}")
distances = torch.cdist(small, small)  # (T, T): distance between positions
distances.fill_diagonal_(float("inf"))  # ignore each position's own vector
print(f"smallest distance between two positions: {distances.min():.3f}")

fig, ax = plt.subplots(figsize=(5, 4))
heatmap(
    ax,
    small_numpy,
    title="Positional encoding, T = 20, D = 16",
    xlabel="encoding dimension j",
    ylabel="position pos",
    cmap="RdBu",
    symmetric=True,
    colorbar_label="PE(pos, j)",
)
ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole positions
fig.tight_layout()
plt.show()

# %%
# Similarity depends on the offset only
# -------------------------------------
# For a shift of ``k`` positions, each sine/cosine pair turns by a fixed angle,
# so ``PE[p] . PE[p + k]`` is the same for every starting position ``p``.
# We compute the full matrix of dot products and read it along its diagonals.

long_pe = positional_encoding(200, d_model).to(device)  # (T, D)
# dots[p, q] = PE[p] . PE[q], shape (T, T):
dots = (long_pe @ long_pe.T).cpu().numpy()
print("dot-product matrix shape (T, T):", dots.shape)

offsets = np.arange(0, 100)
fig, ax = plt.subplots(figsize=(5, 3.6))
for start in (0, 40, 90):
    similarity = dots[start, start + offsets]  # (100,)
    ax.plot(offsets, similarity, label=f"from position {start}")
ax.set_title("Dot product of positional encodings vs offset (D = 32)")
ax.set_xlabel("offset k between the two positions")
ax.set_ylabel("PE[p] . PE[p + k]")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# The three curves lie on top of each other: the similarity is a function of
# the offset alone, largest at ``k = 0`` (where it equals ``D / 2 = 16``) and
# falling, with ripples, as the positions move apart.

# For each offset k, how much the dot product varies over starting points p:
spread = max(np.ptp([dots[p, p + k] for p in range(100)]) for k in offsets)
print(f"largest spread over starting positions, any offset: {spread:.1e}")
