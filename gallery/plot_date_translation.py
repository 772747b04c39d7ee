"""
A whole Transformer, trained: translating dates
===============================================

Train a small encoder-decoder Transformer, built from the book's blocks, to
rewrite dates such as ``november 30, 2026``, ``30 nov 2026``,
``11/30/2026`` or ``30.11.2026`` as ``2026-11-30``, one character at a time.
You will see the training loss and the learning rate with its warm-up, the
exact-match accuracy on 500 dates the model never saw (each in four
formats), a few translations made by greedy decoding, and the learned
cross-attention on real characters: which source characters each output
character is read from.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# Everything runs on the CPU. The split of the dates comes from NumPy's
# ``default_rng(0)`` and the initial weights and batches from torch seed 0,
# so the run is reproducible with the same number of threads. The model is
# small: one thread trains it faster than several threads waiting for each
# other, so this example uses one (and puts the setting back at the end).

import datetime
import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from lessons_code.dates import (
    DATE_VOCAB,
    FORMATS,
    date_pairs,
    split_dates,
    train_date_model,
)
from lessons_code.plots import weights_heatmap
from lessons_code.transformer import greedy_decode

threads = torch.get_num_threads()
torch.set_num_threads(1)
print("threads:", torch.get_num_threads())

# %%
# The task
# --------
# Every day from 1950 to 2049, in four source formats, each translated to
# ISO 8601. The split is by date: a held-out date appears in no format in
# training.

for source, target in date_pairs([datetime.date(2026, 11, 30)]):
    print(f"{source:>18}  ->  {target}")

train_dates, test_dates = split_dates(500, seed=0)
print(f"{len(train_dates)} training dates, {len(test_dates)} held out")
n_chars = len(DATE_VOCAB.characters)
print(f"{len(DATE_VOCAB)} tokens: {n_chars} characters and 3 special")

# %%
# Training
# --------
# ``train_date_model`` builds the Transformer (2 encoder and 2 decoder
# blocks, width 64, 4 heads), trains it with teacher forcing (the decoder
# reads the correct previous characters and predicts the next one at every
# position at once) and a learning rate that warms up linearly and then
# decays linearly to zero, and finally translates every held-out pair by
# greedy decoding. Its default settings:

defaults = inspect.signature(train_date_model).parameters
settings = {
    name: p.default for name, p in defaults.items() if name != "seed"
}
for name, value in settings.items():
    print(f"{name:>14}: {value}")

run = train_date_model(0)
print(f"training took {run.train_seconds:.1f} s")

# %%
# The training curve
# ------------------
# The loss is the mean cross-entropy per target character, on a logarithmic
# scale; the dotted line marks the end of the warm-up.

steps = np.arange(1, len(run.losses) + 1)
fig, (ax_loss, ax_lr) = plt.subplots(
    2,
    1,
    figsize=(5, 4.6),
    sharex=True,
    height_ratios=(2, 1),
    layout="constrained",
)
ax_loss.plot(steps, run.losses)
ax_loss.set_yscale("log")
ax_loss.set_ylabel("cross-entropy")
ax_loss.set_title("Date model: training loss and learning rate")
ax_lr.plot(steps, run.learning_rates)
ax_lr.set_ylabel("learning rate")
ax_lr.set_xlabel("training step")
for ax in (ax_loss, ax_lr):
    ax.axvline(settings["warmup_steps"], color="black", linestyle=":")
plt.show()

# %%
# Held-out accuracy
# -----------------
# Exact match: a translation counts only if all ten characters are right.

accuracy = pd.Series(
    {**run.accuracy_by_format, "all formats": run.accuracy},
    name="exact match (%)",
)
(100 * accuracy).round(2).to_frame()

# %%
# A few held-out translations, and any that went wrong:

held_out = pd.DataFrame(
    run.held_out, columns=["source", "target", "output"]
)
wrong = held_out[held_out["target"] != held_out["output"]]
print(f"{len(wrong)} wrong of {len(held_out)}")
pd.concat([held_out.sample(6, random_state=0), wrong.head(6)])

# %%
# Greedy decoding of dates you choose
# -----------------------------------
# The model writes one character at a time, each the most likely given the
# source and what it has written so far, until it writes the end token.

sources = ["march 7, 1999", "7 mar 1999", "3/7/1999", "07.03.1999"]
out = greedy_decode(
    run.model,
    DATE_VOCAB.encode_batch(sources),
    start_id=DATE_VOCAB.start_id,
    end_id=DATE_VOCAB.end_id,
    max_len=11,
)
for source, ids in zip(sources, out, strict=True):
    print(f"{source:>14}  ->  {DATE_VOCAB.decode(ids)}")

# %%
# Cross-attention on real characters
# ----------------------------------
# One held-out date in two formats. Each row is the decoder position that
# writes the character on its label; each column a source character. The
# weights are those of decoder block 2, averaged over its 4 heads, on one
# colour scale for both panels: the rows that write the year look at the
# year, those that write the month at the month, wherever the format puts
# them.

date = datetime.date(1963, 10, 24)
print("held out:", date in test_dates)
pairs = date_pairs([date], styles=["long", "us"])
src = DATE_VOCAB.encode_batch([source for source, _ in pairs])
tgt = DATE_VOCAB.encode_batch(
    [target for _, target in pairs], start=True, end=True
)  # (2, 12): <s>, 10 characters, </s>
maps = run.model.attention_weights(src, tgt[:, :-1])
cross = maps["cross"][1].mean(dim=1)  # block 2, mean of heads: (B, T, S)
written = DATE_VOCAB.symbols(tgt[0, 1:])  # what each row writes

fig, axes = plt.subplots(1, 2, figsize=(5, 3.4), layout="constrained")
for i, ax in enumerate(axes):
    length = int((src[i] != DATE_VOCAB.pad_id).sum())
    image = weights_heatmap(
        ax,
        cross[i, :, :length],
        title=pairs[i][0],
        xlabel="source character",
        ylabel="writes",
        colorbar=False,
    )
    ax.set_xticks(range(length), DATE_VOCAB.symbols(src[i, :length]))
    ax.set_yticks(range(len(written)), written)
fig.colorbar(image, ax=axes, label="attention weight")
fig.suptitle("Cross-attention, decoder block 2, mean over heads")
plt.show()

# %%
# The headline numbers of this run:

print(f"held-out exact match: {run.accuracy:.2%}")
for style in FORMATS:
    print(f"  {style:>8}: {run.accuracy_by_format[style]:.2%}")

torch.set_num_threads(threads)  # as it was before this example
