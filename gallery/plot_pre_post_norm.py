"""
Post-norm versus pre-norm at depth 10
=====================================

Stack ten encoder blocks twice, once with the LayerNorm after each residual sum
(post-norm, as in the 2017 paper) and once before each sub-layer (pre-norm),
and train both on the same task from the same seed. You will see the two loss
curves and the gradient norm of every block, at initialisation and during
training, which show how far the gradient travels down each stack.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device. The package's helper seeds each model itself
# (``seed=0`` for both) and draws the data from NumPy's ``default_rng(3)``.

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from lessons_code.depth import DeepOrderClassifier, train_deep_stack

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
print("device:", device)

# %%
# Two ten-block models
# --------------------
# Positional encoding, ten encoder blocks (:math:`D = 16`, :math:`H = 4`,
# :math:`FF = 32`), a mean over positions and one linear layer. The task is
# the order-detection task: is ``A`` before ``B``? The two models differ only
# in where the LayerNorms sit (and the pre-norm stack ends with a final
# LayerNorm, as pre-norm stacks do).
#
# - post-norm: :math:`x \leftarrow \mathrm{LN}(x + F(x))`, so every residual
#   sum, and the gradient flowing back through it, passes a LayerNorm;
# - pre-norm: :math:`x \leftarrow x + F(\mathrm{LN}(x))`, so the residual
#   stream runs untouched from the loss to the first block.

for norm_first in (False, True):
    model = DeepOrderClassifier(num_layers=10, norm_first=norm_first)
    logits = model(torch.randn(3, 8, 16))  # (B, T, D) -> (B,)
    n_params = sum(p.numel() for p in model.parameters())
    kind = "pre-norm " if norm_first else "post-norm"
    blocks = len(model.encoder.layers)
    print(f"{kind}: {blocks} blocks, {n_params} parameters", end=", ")
    print("logits", tuple(logits.shape))

# %%
# Training both
# -------------
# Both stacks use the helper's defaults: full-batch Adam with a constant
# learning rate, no warm-up and no gradient clipping. The gradient norm of
# each block is recorded at step 0 (the initialisation) and at regular steps
# during training.

settings = inspect.signature(train_deep_stack).parameters
for name in ("steps", "lr", "record_every", "n_train", "seq_len"):
    print(f"{name:12s} = {settings[name].default}")

runs = {
    name: train_deep_stack(norm_first, num_layers=10, seed=0, device=device)
    for name, norm_first in (("post-norm", False), ("pre-norm", True))
}
print("gradient norms recorded at steps", runs["post-norm"].grad_norm_steps)
summary = pd.DataFrame(
    {
        name: {
            "first loss": run.losses[0],
            "last loss": run.losses[-1],
            "train accuracy (%)": 100 * run.train_accuracy,
            "test accuracy (%)": 100 * run.test_accuracy,
            "training time (s)": run.seconds,
        }
        for name, run in runs.items()
    }
)
summary.round(3)

# %%
# Loss curves
# -----------
# Same data, same seed, same optimiser: the only difference is the placement
# of the LayerNorms.

fig, ax = plt.subplots(figsize=(7, 4))
for name, run in runs.items():
    ax.plot(run.losses, label=name)
ax.axhline(np.log(2), color="black", linestyle="--", label="ln 2 (chance)")
ax.set_title("Training loss of two 10-block stacks")
ax.set_xlabel("training step")
ax.set_ylabel("binary cross-entropy")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# Gradient norm per block
# -----------------------
# Block 0 is nearest the input, block 9 nearest the loss. In the post-norm
# stack the gradient that reaches block 0 has passed through every later
# LayerNorm, each of which can shrink it; in the pre-norm stack the residual
# path hands every block the gradient directly, as the skip connections of a
# ResNet do. Read each curve from right to left. The left panel is the
# initialisation, the right panel the last recorded step of training.

steps = runs["post-norm"].grad_norm_steps
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, index in zip(axes, (0, -1), strict=True):
    for name, run in runs.items():
        blocks = range(run.num_layers)
        ax.plot(blocks, run.grad_norms[index], "o-", label=name)
    ax.set_yscale("log")
    ax.set_title(f"Gradient norm per block at step {steps[index]}")
    ax.set_xlabel("block (0 = nearest the input)")
    ax.set_ylabel("gradient norm of the block's parameters")
    ax.legend()
fig.tight_layout()
plt.show()

# %%
# The same gradient norms as numbers, with the ratio between the block
# nearest the loss and the block nearest the input: the larger it is, the
# more the gradient shrinks on its way down the stack.

norms = pd.DataFrame(
    {
        (name, f"step {step}"): run.grad_norms[i]
        for name, run in runs.items()
        for i, step in enumerate(run.grad_norm_steps)
    }
)
norms.index.name = "block"
ratios = (norms.iloc[-1] / norms.iloc[0]).rename("last / first")
pd.concat([norms, ratios.to_frame().T]).map(lambda value: f"{value:.3g}")
