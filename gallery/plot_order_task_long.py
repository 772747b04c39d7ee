"""
Order detection with longer sequences
=====================================

The order task of the previous example again, with sequences of 32 tokens
instead of 8: ``A`` and ``B`` are now two tokens among 32, and the training
has to find them among 30 noise vectors instead of 6. You will see the
test accuracy of five seeds with and without the sinusoidal positional
encoding as a table and a bar chart, the training losses, and how many epochs
the loss takes to fall below 0.1.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device. The data come from NumPy's ``default_rng(3)``
# inside the package and each run seeds its own model, so the numbers are
# reproducible on a CPU with the same number of threads. The tiny models
# train fastest on one thread per run (the setting is put back at the end).

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from lessons_code.order_task import (
    make_order_splits,
    run_order_experiment,
    run_order_grid,
)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
threads = torch.get_num_threads()
torch.set_num_threads(1)
print("device:", device, "| threads:", torch.get_num_threads())

# %%
# Longer sequences, same amount of data
# -------------------------------------
# Still 400 training and 150 test sequences of width 16; only :math:`T`
# changes.

data = make_order_splits(seq_len=32)
print("train x (N, T, D):", tuple(data.x_train.shape))
print("test x (N, T, D): ", tuple(data.x_test.shape))
print(f"share of label 1 in the test set: {data.y_test.mean():.2f}")

# %%
# Ten training runs
# -----------------
# Seeds 0 to 4, without and with the encoding, with the helper's default
# epochs and learning rate, trained side by side by ``run_order_grid``.

defaults = inspect.signature(run_order_experiment).parameters
epochs, lr = defaults["epochs"].default, defaults["lr"].default
print(f"epochs = {epochs}, learning rate = {lr}")

runs = run_order_grid(seq_lens=(32,), seeds=range(5), device=device)
training = sum(run.seconds for run in runs)  # each run's own clock
print(f"{len(runs)} runs on {device}, trained side by side;")
print(f"their training times add up to {training:.1f} s")

# %%
# Test accuracy, run by run
# -------------------------
# In percent, one row per setting, then the mean and the sample standard
# deviation over the seeds (dividing by n - 1 = 4, as in the book).

order = ["without", "with"]
results = pd.DataFrame(
    {
        "positional encoding": "with" if run.use_pos_enc else "without",
        "seed": run.seed,
        "train accuracy (%)": 100 * run.train_accuracy,
        "test accuracy (%)": 100 * run.test_accuracy,
    }
    for run in runs
)
table = results.pivot_table(
    index="positional encoding", columns="seed", values="test accuracy (%)"
).reindex(order)
table.columns = [f"seed {seed}" for seed in table.columns]
seed_columns = list(table.columns)
table["mean"] = table[seed_columns].mean(axis=1)
table["std"] = table[seed_columns].std(axis=1, ddof=1)  # sample std, n - 1
table.round(1)

# %%
# As a chart
# ----------
# Bars are the means, dots the seeds. Two lines mark chance: a coin flip
# (50 %) and always answering the test set's majority label.

fig, ax = plt.subplots(figsize=(5, 4))
positions = np.arange(len(order))
ax.bar(positions, table["mean"], color=["tab:gray", "tab:blue"])
for i, pe in enumerate(order):
    scores = table.loc[pe, seed_columns]
    ax.plot(np.full(len(scores), i), scores, "k.", markersize=8)
majority = 100 * max(data.y_test.mean(), 1 - data.y_test.mean())
ax.axhline(50, color="black", linestyle="--", label="coin flip (50 %)")
ax.axhline(
    majority,
    color="black",
    linestyle=":",
    label=f"majority label ({majority:.1f} %)",
)
ax.set_xticks(positions, [f"{pe} PE" for pe in order])
ax.set_yticks(range(0, 101, 20))
ax.set_ylim(0, 120)
ax.set_title("Order detection, T = 32: test accuracy over 5 seeds")
ax.set_xlabel("positional encoding (PE)")
ax.set_ylabel("test accuracy (%)")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()

# %%
# Training losses
# ---------------
# With the encoding the loss falls close to zero, as at :math:`T = 8`.
# Without it the loss falls too, but only as the model memorises training
# sequences through their noise, which the test accuracy above shows does
# not carry over to new ones. The curves are means over the seeds.

fig, ax = plt.subplots(figsize=(5, 3.6))
for use_pe, colour in ((False, "tab:gray"), (True, "tab:blue")):
    curves = [run.losses for run in runs if run.use_pos_enc == use_pe]
    label = "with PE" if use_pe else "without PE"
    ax.plot(np.mean(curves, axis=0), color=colour, label=label)
ax.axhline(np.log(2), color="black", linestyle="--", label="ln 2")
ax.set_title("Training loss, T = 32 (mean of 5 seeds)")
ax.set_xlabel("epoch")
ax.set_ylabel("binary cross-entropy")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
fig.tight_layout()
plt.show()


# %%
# How long each run takes to fit its training set: the first epoch at which
# its training loss is below 0.1 (``> 300`` when it does not get there within
# the 300 epochs), next to its accuracies. The lesson on positional encoding sets
# these counts beside the same counts at :math:`T = 8`.


def first_epoch_below(losses: list[float], level: float) -> int | str:
    """Index of the first loss under ``level``; "> len(losses)" if none."""
    return next(
        (i for i, loss in enumerate(losses) if loss < level),
        f"> {len(losses)}",
    )


results["epochs to loss < 0.1"] = [
    first_epoch_below(run.losses, 0.1) for run in runs
]
results.set_index(["positional encoding", "seed"]).round(1)

# %%
# The headline numbers of this run:

for pe, row in table.iterrows():
    mean, std = row["mean"], row["std"]
    print(f"T = 32, {pe:7s} PE: {mean:5.1f} % (sample std {std:.1f} %)")

torch.set_num_threads(threads)  # as it was before this example
