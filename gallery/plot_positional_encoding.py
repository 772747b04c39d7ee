"""
Sinusoidal positional encoding
==============================

Draw the positional-encoding table of the original Transformer as a heatmap,
then plot how the dot product between the encodings of two positions depends
on nothing but the distance between them.
"""

# %%
# Set-up
# ------
# One line picks the device: the GPU when there is one, the CPU otherwise.
# The encoding has no randomness; the seed is fixed anyway, out of habit.

import matplotlib.pyplot as plt
import numpy as np
import torch

from lessons_code.plots import heatmap
from lessons_code.positional import positional_encoding

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

fig, ax = plt.subplots(figsize=(7, 5))
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
# Similarity depends on the offset only
# -------------------------------------
# For a shift of ``k`` positions, each sine/cosine pair turns by a fixed angle,
# so ``PE[p] . PE[p + k]`` is the same for every starting position ``p``.
# We compute the full matrix of dot products and read it along its diagonals.

long_pe = positional_encoding(200, d_model).to(device)  # (T, D)
dots = (long_pe @ long_pe.T).cpu().numpy()  # (T, T): dots[p, q] = PE[p] . PE[q]
print("dot-product matrix shape (T, T):", dots.shape)

offsets = np.arange(0, 100)
fig, ax = plt.subplots(figsize=(7, 4))
for start in (0, 40, 90):
    ax.plot(offsets, dots[start, start + offsets], label=f"from position {start}")
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

spread = max(np.ptp([dots[p, p + k] for p in range(0, 100)]) for k in offsets)
print(f"largest spread over starting positions, for any offset: {spread:.1e}")
