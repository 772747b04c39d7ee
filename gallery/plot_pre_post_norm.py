"""
Post-norm versus pre-norm at depth 10
=====================================

Stack ten encoder blocks with the LayerNorm after each residual sum
(post-norm, as in the 2017 paper) or before each sub-layer (pre-norm), and
train both kinds at exactly the same settings from five seeds each: Adam at
the rates 0.001 and 0.01, and at 0.01 after a linear warm-up. You will see
the loss curves with every *relapse* marked (a run whose loss had fallen
below half of ln 2 climbs back to ln 2 or above), the final loss and test
accuracy of every run, and the gradient norm of every block, condensed into
one ratio per recorded step: block 1's gradient norm over block 10's.

The model and the data are smaller than the order task's elsewhere in the
book (the sizes are printed below), so that the grid's 30 runs of 300
updates each fit the book's build; ``run_depth_grid`` trains the 15 runs of
each kind of stack together, as one batched computation
(``batched=False`` trains them one at a time). At the large rate a run is
chaotic: on your processor, or on a GPU, the seeds that relapse can differ
from the book's page, which says what held under every arithmetic it tried.

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
    first_relapse,
    run_depth_grid,
)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# The models are tiny: the runs of each kind of stack train together as one
# batched computation, one thread per kind.
torch.set_num_threads(1)
print("device:", device)

# %%
# A ten-block model
# -----------------
# Positional encoding, ten encoder blocks, a mean over positions and one
# linear layer. The task is the order-detection task: is ``A`` before ``B``?
# Post-norm and pre-norm differ only in where the LayerNorms sit (and the
# pre-norm stack ends with a final LayerNorm, as pre-norm stacks do):
#
# - post-norm: :math:`x \leftarrow \mathrm{LN}(x + F(x))`;
# - pre-norm: :math:`x \leftarrow x + F(\mathrm{LN}(x))`, so the residual
#   stream runs untouched from block 1 to the output.

settings = inspect.signature(run_depth_grid).parameters
sizes = {
    name: settings[name].default
    for name in ("d_model", "num_heads", "d_ff", "seq_len", "n_train")
}
print(sizes)
for norm_first in (False, True):
    model = DeepOrderClassifier(
        num_layers=10,
        norm_first=norm_first,
        d_model=sizes["d_model"],
        num_heads=sizes["num_heads"],
        d_ff=sizes["d_ff"],
    )
    x = torch.randn(3, sizes["seq_len"], sizes["d_model"])  # (B, T, D)
    logits = model(x)  # (B,)
    n_params = sum(p.numel() for p in model.parameters())
    kind = "pre-norm " if norm_first else "post-norm"
    print(
        f"{kind}: {len(model.encoder.layers)} blocks, {n_params} parameters",
        end=", ",
    )
    print("logits", tuple(logits.shape))

# %%
# Six configurations, five seeds
# ------------------------------
# Full-batch Adam without gradient clipping; the gradient norm of every block
# is recorded before every tenth update (step 0 is the initialisation).

for name in ("steps", "record_every"):
    print(f"{name:12s} = {settings[name].default}")
print(pd.DataFrame(DEPTH_CONFIGS).to_string(index=False))

grid = run_depth_grid(DEPTH_CONFIGS, seeds=range(5), device=device)

# %%
# Final loss, relapses and test accuracy
# --------------------------------------
# One row per run, then a summary per configuration. A loss of
# ln 2 = 0.693 is what answering 50 % for every sequence costs; "one answer"
# marks a model that gives the same answer for every test sequence;
# "loss" is the final training loss, "test %" the test accuracy in percent.

per_seed = pd.DataFrame(
    [
        {
            "configuration": label,
            "seed": run.seed,
            "loss": run.losses[-1],
            "relapse at": first_relapse(run.losses),
            "test %": 100 * run.test_accuracy,
            "one answer": run.test_positive_share in (0.0, 1.0),
        }
        for label, runs in grid.items()
        for run in runs
    ]
)
print(per_seed.round(3).to_string(index=False))
groups = per_seed.groupby("configuration", sort=False)
pd.DataFrame(
    {
        "relapses": groups["relapse at"].count(),
        "one answer": groups["one answer"].sum(),
        "final loss, max": groups["loss"].max().round(3),
        "mean test acc. (%)": groups["test %"].mean().round(1),
    }
)

# %%
# Loss curves
# -----------
# Post-norm in the left column, pre-norm in the right; one line per seed, a dot at each
# relapse, the same logarithmic y axis for all. The dotted line marks the
# first update at the full rate after the warm-up.

fig, axes = plt.subplots(
    3, 2, figsize=(5, 7), sharex=True, sharey=True, layout="constrained"
)
# post-norm down the left column, pre-norm down the right
for ax, (label, runs) in zip(axes.T.flat, grid.items(), strict=True):
    for run in runs:
        (line,) = ax.plot(run.losses, linewidth=1, label=f"seed {run.seed}")
        step = first_relapse(run.losses)
        if step is not None:
            ax.plot(step, run.losses[step], "o", color=line.get_color())
    ax.axhline(np.log(2), color="black", linestyle="--", linewidth=1)
    warmup = runs[0].warmup_steps
    if warmup:
        ax.axvline(
            warmup - 1, color="grey", linestyle=":", label="full rate"
        )
    ax.set_yscale("log")
    ax.set_title(label.replace(", ", "\n", 1))
    ax.set_xlabel("training step")
    ax.label_outer()
fig.supylabel("binary cross-entropy")
handles, labels = axes[
    2, 0
].get_legend_handles_labels()  # a panel with the warm-up
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle("Training loss of 10-block stacks (dashed: ln 2)")
plt.show()

# %%
# The first/last ratio
# --------------------
# Block 1's gradient norm divided by block 10's, at every recorded step: 1
# means the input end of the stack gets as much gradient as the output end;
# far below 1 means the gradient has shrunk on its way down.

fig, axes = plt.subplots(
    3, 2, figsize=(5, 7), sharex=True, sharey=True, layout="constrained"
)
# post-norm down the left column, pre-norm down the right
for ax, (label, runs) in zip(axes.T.flat, grid.items(), strict=True):
    for run in runs:
        ax.plot(
            run.grad_norm_steps,
            run.first_last_ratios,
            linewidth=1,
            label=f"seed {run.seed}",
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_title(label.replace(", ", "\n", 1))
    ax.set_xlabel("training step")
    ax.label_outer()
fig.supylabel("block 1 / block 10 gradient norm")
handles, labels = axes.flat[0].get_legend_handles_labels()
fig.legend(handles, labels, loc="outside lower center", ncols=3)
fig.suptitle("First/last gradient-norm ratio during training")
plt.show()

# %%
# The ratio at initialisation and its median over the recorded training
# steps (step 10 onwards), per run: compare the two columns of each
# configuration, and the post-norm rows with the pre-norm ones.

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
