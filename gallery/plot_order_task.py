"""
Order detection: why attention needs positions
==============================================

Train a small self-attention classifier to tell whether token ``A`` comes
before token ``B`` in a sequence of 8 noise vectors, five times with and five
times without the sinusoidal positional encoding. You will see a table of the
test accuracy of every run with its mean and sample standard deviation, a bar
chart of the same numbers, and the training losses: without positions the
model can only memorise its training set and is no better than chance on new
sequences; with them it solves the task. The example after this one repeats the experiment
with sequences four times as long.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device. The data come from NumPy's ``default_rng(3)``
# inside the package; each run seeds its own model with ``torch.manual_seed``,
# so the whole table is reproducible on a CPU with the same number of threads.
# The models are tiny: on a CPU, several threads spend more time waiting for
# each other than computing, so this example gives each run one thread (and
# puts the setting back at the end).

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from lessons_code.order_task import (
    OrderClassifier,
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
# The task
# --------
# Two fixed random vectors ``A`` and ``B`` replace the noise (standard normal
# times 0.1) at two distinct random positions. The label is 1 when ``A`` comes
# first. Both orders contain the very same vectors, so only their positions
# can tell the labels apart. 400 sequences train, 150 test.

data = make_order_splits(seq_len=8)
print("train x (N, T, D):", tuple(data.x_train.shape))
print("train y (N,):     ", tuple(data.y_train.shape))
print("test x (N, T, D): ", tuple(data.x_test.shape))
print("test y (N,):      ", tuple(data.y_test.shape))
share_train, share_test = data.y_train.mean(), data.y_test.mean()
print(f"share of label 1: train {share_train:.2f}, test {share_test:.2f}")

# %%
# The model
# ---------
# Multi-head self-attention (4 heads), a mean over positions, then
# ``Linear(16, 16) -> ReLU -> Linear(16, 1)``. With ``use_pos_enc=True`` the
# encoding is added to the input first.

model = OrderClassifier(d_model=16, num_heads=4, use_pos_enc=True)
logits = model(data.x_train[:3])
print(model)
print("logits for 3 sequences:", tuple(logits.shape))

# %%
# Ten training runs
# -----------------
# Every run trains with full-batch Adam on binary cross-entropy (the epochs
# and learning rate are the helper's defaults, printed below), for seeds 0 to
# 4, with and without the encoding. ``run_order_grid`` trains the ten models
# side by side, one thread per CPU core; every run gives exactly what it
# would give alone.

defaults = inspect.signature(run_order_experiment).parameters
epochs, lr = defaults["epochs"].default, defaults["lr"].default
print(f"epochs = {epochs}, learning rate = {lr}")

runs = run_order_grid(seq_lens=(8,), seeds=range(5), device=device)
training = sum(run.seconds for run in runs)  # each run's own clock
print(f"{len(runs)} runs on {device}, trained side by side;")
print(f"their training times add up to {training:.1f} s")

# %%
# Test accuracy, run by run
# -------------------------
# One row per setting, one column per seed, then the mean and the sample
# standard deviation (n - 1) over the five seeds, in percent.

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
)
order = ["without", "with"]
table = table.reindex(order)
table.columns = [f"seed {seed}" for seed in table.columns]
seed_columns = list(table.columns)
table["mean"] = table[seed_columns].mean(axis=1)
table["std"] = table[seed_columns].std(axis=1, ddof=1)  # sample std, n - 1
table.round(1)

# %%
# The same numbers as a chart
# ---------------------------
# Bars are the means, error bars one sample standard deviation, dots the
# single seeds. Two lines mark chance: a coin flip (50 %) and always
# answering the test set's majority label, which needs no knowledge of order.

labels = [f"{pe} PE" for pe in order]
positions = np.arange(len(order))
colours = ["tab:gray" if pe == "without" else "tab:blue" for pe in order]

fig, ax = plt.subplots(figsize=(5, 4))
ax.bar(
    positions, table["mean"], yerr=table["std"], color=colours, capsize=6
)
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
ax.set_xticks(positions, labels)
ax.set_yticks(range(0, 101, 20))
ax.set_ylim(0, 120)
ax.set_title("Order detection, T = 8: test accuracy over 5 seeds")
ax.set_xlabel("positional encoding (PE)")
ax.set_ylabel("test accuracy (%)")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()

# %%
# Memorising is not learning the order
# ------------------------------------
# Self-attention without positions is permutation equivariant and the mean
# over positions is permutation invariant, so the pooled vector depends only
# on *which* tokens occur, never on their order, and the two labels show the
# same tokens. Whatever the model without positions does to its training
# loss, it can only do by memorising the 400 training sequences through
# their noise, which tells nothing about a new sequence. The curves are the
# mean over the five seeds; :math:`\ln 2 \approx 0.693` is the loss of a
# coin flip.

fig, ax = plt.subplots(figsize=(5, 3.6))
for use_pe, colour in ((False, "tab:gray"), (True, "tab:blue")):
    curves = [run.losses for run in runs if run.use_pos_enc == use_pe]
    label = "with PE" if use_pe else "without PE"
    ax.plot(np.mean(curves, axis=0), color=colour, label=label)
ax.axhline(np.log(2), color="black", linestyle="--", label="ln 2")
ax.set_title("Training loss, T = 8 (mean of 5 seeds)")
ax.set_xlabel("epoch")
ax.set_ylabel("binary cross-entropy")
ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
fig.tight_layout()
plt.show()

# %%
# Training and test accuracy side by side, as means over the seeds: what the
# model learnt about the training set, and what of it carries over.

columns = ["train accuracy (%)", "test accuracy (%)"]
accuracy = results.groupby("positional encoding")[columns].mean()
accuracy.reindex(order).round(1)

# %%
# The headline numbers of this run:

for pe, row in table.iterrows():
    mean, std = row["mean"], row["std"]
    print(f"T = 8, {pe:7s} PE: {mean:5.1f} % (sample std {std:.1f} %)")

torch.set_num_threads(threads)  # as it was before this example
