"""
Post-norm versus pre-norm at depth 10
=====================================

Stack ten encoder blocks with the LayerNorm after each residual sum
(post-norm, as in the 2017 paper) or before each sub-layer (pre-norm), and
train them on the same task from five seeds each: post-norm at Adam's rate
0.01, post-norm with a linear warm-up to that rate, post-norm at the smaller
rate 0.001, and pre-norm at 0.01. You will see the loss curves, the final
loss and test accuracy of every run, and the gradient norm of every block at
initialisation and during training, condensed into one ratio per step:
block 1's gradient norm over block 10's.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device. The package seeds each model itself (torch
# seeds 0 to 4) and draws the data from NumPy's ``default_rng(3)``.

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from lessons_code.depth import (
    DEPTH_CONFIGS,
    DeepOrderClassifier,
    run_depth_grid,
)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.set_num_threads(
    1
)  # the models are tiny: one thread per run, runs side by side
print("device:", device)

# %%
# A ten-block model
# -----------------
# Positional encoding, ten encoder blocks (:math:`D = 16`, :math:`H = 4`,
# :math:`FF = 32`), a mean over positions and one linear layer. The task is
# the order-detection task: is ``A`` before ``B``? Post-norm and pre-norm
# differ only in where the LayerNorms sit (and the pre-norm stack ends with a
# final LayerNorm, as pre-norm stacks do):
#
# - post-norm: :math:`x \leftarrow \mathrm{LN}(x + F(x))`;
# - pre-norm: :math:`x \leftarrow x + F(\mathrm{LN}(x))`, so the residual
#   stream runs untouched from block 1 to the output.

for norm_first in (False, True):
    model = DeepOrderClassifier(num_layers=10, norm_first=norm_first)
    logits = model(torch.randn(3, 8, 16))  # (B, T, D) -> (B,)
    n_params = sum(p.numel() for p in model.parameters())
    kind = "pre-norm " if norm_first else "post-norm"
    print(
        f"{kind}: {len(model.encoder.layers)} blocks, {n_params} parameters",
        end=", ",
    )
    print("logits", tuple(logits.shape))

# %%
# Four configurations, five seeds
# -------------------------------
# Full-batch Adam without gradient clipping; the gradient norm of every block
# is recorded before every update (step 0 is the initialisation).

settings = inspect.signature(run_depth_grid).parameters
for name in ("steps", "n_train"):
    print(f"{name:8s} = {settings[name].default}")
print(pd.DataFrame(DEPTH_CONFIGS).to_string(index=False))

grid = run_depth_grid(DEPTH_CONFIGS, seeds=range(5), device=device)

# %%
# Final loss and test accuracy
# ----------------------------
# One row per run, then the mean and the sample standard deviation over the
# five seeds. A loss of ln 2 = 0.693 is what always answering 50 % costs.

per_seed = pd.DataFrame(
    [
        {
            "configuration": label,
            "seed": run.seed,
            "final loss": run.losses[-1],
            "test accuracy (%)": 100 * run.test_accuracy,
        }
        for label, runs in grid.items()
        for run in runs
    ]
)
print(per_seed.round(3).to_string(index=False))
summary = per_seed.groupby("configuration", sort=False)[
    ["final loss", "test accuracy (%)"]
]
summary.agg(["mean", "std"]).round(3)

# %%
# Loss curves
# -----------
# One panel per configuration, one line per seed, the same y axis for all.

fig, axes = plt.subplots(
    2, 2, figsize=(7, 6.5), sharex=True, sharey=True, layout="constrained"
)
for ax, (label, runs) in zip(axes.flat, grid.items(), strict=True):
    for run in runs:
        ax.plot(run.losses, linewidth=1, label=f"seed {run.seed}")
    ax.axhline(np.log(2), color="black", linestyle="--", linewidth=1)
    warmup = runs[0].warmup_steps
    if warmup:
        ax.axvline(
            warmup, color="grey", linestyle=":", label="end of warm-up"
        )
    ax.set_title(label)
    ax.set_xlabel("training step")
    ax.set_ylabel("binary cross-entropy")
handles, labels = axes.flat[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle("Training loss of 10-block stacks (dashed: ln 2)")
plt.show()

# %%
# Gradient norm per block
# -----------------------
# Block 1 is next to the input, block 10 next to the loss. Each line is the
# geometric mean over the five seeds at one step: the initialisation and two
# steps of training. All panels share one logarithmic scale.

steps_shown = (0, 10, settings["steps"].default - 1)
fig, axes = plt.subplots(
    2, 2, figsize=(7, 6.5), sharex=True, sharey=True, layout="constrained"
)
blocks = np.arange(1, 11)
for ax, (label, runs) in zip(axes.flat, grid.items(), strict=True):
    for step in steps_shown:
        norms = np.array(
            [run.grad_norms[step] for run in runs]
        )  # (seeds, blocks)
        ax.plot(
            blocks,
            np.exp(np.log(norms).mean(axis=0)),
            "o-",
            label=f"step {step}",
        )
    ax.set_yscale("log")
    ax.set_title(label)
    ax.set_xlabel("block (1 = next to the input)")
    ax.set_ylabel("gradient norm")
    ax.set_xticks(blocks)
handles, labels = axes.flat[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle("Gradient norm of each block's parameters")
plt.show()

# %%
# The first/last ratio
# --------------------
# Block 1's gradient norm divided by block 10's, at every step: 1 means the
# input end of the stack gets as much gradient as the output end; far below 1
# means the gradient has vanished on its way down.

fig, axes = plt.subplots(
    2, 2, figsize=(7, 6.5), sharex=True, sharey=True, layout="constrained"
)
for ax, (label, runs) in zip(axes.flat, grid.items(), strict=True):
    for run in runs:
        ax.plot(
            run.grad_norm_steps,
            run.first_last_ratios,
            linewidth=1,
            label=f"seed {run.seed}",
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_title(label)
    ax.set_xlabel("training step")
    ax.set_ylabel("block 1 / block 10 gradient norm")
handles, labels = axes.flat[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle("First/last gradient-norm ratio during training")
plt.show()

# %%
# The ratio at initialisation and its median over the training steps
# (step 1 onwards), per run: compare the two columns of each configuration.

ratios = pd.DataFrame(
    [
        {
            "configuration": label,
            "seed": run.seed,
            "at step 0": run.first_last_ratios[0],
            "median in training": np.median(run.first_last_ratios[1:]),
        }
        for label, runs in grid.items()
        for run in runs
    ]
)
ratios.set_index(["configuration", "seed"]).map(
    lambda value: f"{value:.2g}"
)
