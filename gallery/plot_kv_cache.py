"""
Generating with and without a key-value cache
=============================================

Let a small decoder-only model continue a prompt of 8 tokens by 249 more,
once by running the whole sequence again at every step and once with a
key-value cache, on the CPU with one thread. You will see a check that both
ways write the same tokens from the same logits, the exact number of
attention scores each step computes, and a plot of the measured time of a
step against the length of the sequence so far, at every eighth length up
to 256. The times belong to this machine and this run: the only claims made
of them are directions, checked with a wide margin.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# The model is untrained: a cache changes how the next token is computed,
# not which token it is, so random weights show the difference as well as
# trained ones would. It has 2 blocks of width 64, 4 query heads sharing 2
# key-value heads, and room for 256 positions. The model is small, so one
# thread runs it without threads waiting for each other; the example puts
# the setting back at the end.

import time
from statistics import median

import matplotlib.pyplot as plt
import numpy as np
import torch

from lessons_code.modern import (
    DecoderOnlyLM,
    attention_scores_per_step,
    generate,
    kv_cache_size,
)

threads = torch.get_num_threads()
torch.set_num_threads(1)
torch.manual_seed(0)
model = DecoderOnlyLM(
    vocab_size=64,
    d_model=64,
    num_layers=2,
    num_heads=4,
    num_kv_heads=2,
    d_ff=128,
    max_len=256,
).eval()
n_prompt, n_new = 8, 249  # prompt and new tokens; the last step reads 256
prompt = torch.randint(64, (1, n_prompt))  # (B, n_prompt), one sequence
parameters = sum(p.numel() for p in model.parameters())
print("prompt:", prompt.tolist()[0])
print(f"parameters: {parameters:,}")
print("threads:", torch.get_num_threads())

# %%
# The same tokens from the same logits
# ------------------------------------
# :func:`~lessons_code.modern.generate` writes one token per step, greedily
# here (``temperature=0``: the most likely token). Without a cache every step
# runs the model on the whole sequence so far; with one, the first step runs
# on the prompt and every later step on its one new token, reading the keys
# and values of all earlier positions from the cache. Both ways must write
# the same 249 tokens, and the logits each token was chosen from may differ
# only by rounding: the two ways add the same products in another order.
# The tokens of an untrained model mean nothing; what counts is that both
# ways choose the same ones.

cached, cached_logits = generate(
    model, prompt, n_new, temperature=0.0, return_logits=True
)  # (B, n_new) tokens, (B, n_new, V) logits
uncached, uncached_logits = generate(
    model,
    prompt,
    n_new,
    use_cache=False,
    temperature=0.0,
    return_logits=True,
)
gap = (cached_logits - uncached_logits).abs().max().item()
largest = uncached_logits.abs().max().item()
print("generated tokens (batch, new):", tuple(cached.shape))
print("first ten:", cached[0, :10].tolist())
print("identical tokens:", torch.equal(cached, uncached))
print(f"largest logit gap: {gap:.1e} (logits up to {largest:.2f})")
assert torch.equal(cached, uncached)
assert gap <= 1e-6

# %%
# What each step computes
# -----------------------
# Step ``s`` reads the ``t = n_prompt + s`` tokens so far and writes the
# next one. Without a cache it runs every layer on all of them: each head
# computes the full ``t x t`` matrix of query-key scores (the causal mask
# then hides the upper half), and the keys and values of every earlier
# position are computed again. With a cache, step 0 runs on the prompt
# (``n_prompt x n_prompt`` scores) and every later step on its one new
# token, whose query meets ``t`` keys: ``t`` scores. The counts below are
# exact, for one head of one layer
# (:func:`~lessons_code.modern.attention_scores_per_step`); the model
# computes 4 heads x 2 layers = 8 times as many.

without_cache = attention_scores_per_step(n_prompt, n_new, use_cache=False)
with_cache = attention_scores_per_step(n_prompt, n_new, use_cache=True)
header = ("step", "tokens so far", "without cache", "with cache")
print("{:>6}  {:>13}  {:>14}  {:>11}".format(*header))
for step in (0, 1, 2, 3, 64, 128, n_new - 1):
    print(
        f"{step:>6}  {n_prompt + step:>13}  {without_cache[step]:>14,}"
        f"  {with_cache[step]:>11,}"
    )
total_without, total_with = sum(without_cache), sum(with_cache)
print(
    f"{f'all {n_new} steps':>21}  {total_without:>14,}  {total_with:>11,}"
)
print(f"ratio of the totals: {total_without / total_with:.1f}")

# One more token adds 2t + 1 scores to a step without the cache, 1 with it.
# t: tokens so far at steps 0 to n_new - 2
t = np.arange(n_prompt, n_prompt + n_new - 1)
assert (np.diff(without_cache) == 2 * t + 1).all()
assert (np.diff(with_cache[1:]) == 1).all()
assert total_without > 170 * total_with

# %%
# The cache pays in memory for what it saves in work: every layer keeps a
# key and a value vector of width ``d_head = 16`` for every key-value head
# and position it has read, 256 positions here (the last token is written,
# never read). :func:`~lessons_code.modern.kv_cache_size` counts them, and a
# cache made as ``generate`` makes it holds exactly that many numbers. With
# a key-value head for each of the 4 query heads, as in multi-head
# attention, it would hold twice as many.

read = n_prompt + n_new - 1  # positions read: the last token is not
size = kv_cache_size(
    num_layers=2, batch_size=1, seq_len=read, num_kv_heads=2, d_head=16
)
cache = model.make_cache(1, read)  # what generate makes
held = sum(kv.numel() for kv in cache.keys + cache.values)
multi_head = kv_cache_size(2, 1, read, num_kv_heads=4, d_head=16)
print(f"cache for {read} positions: {size['numbers']:,} numbers")
print(f"in float32: {size['bytes'] / 1024:.1f} KiB")
print(f"with 4 key-value heads: {multi_head['bytes'] / 1024:.1f} KiB")
assert held == size["numbers"]
assert multi_head["numbers"] == 2 * size["numbers"]

# %%
# Timing the steps
# ----------------
# One step is one call of the model and the choice of the next token. The
# step that reads ``t`` tokens runs, without a cache, on the first ``t``
# tokens of the sequence that ``generate`` wrote; with a cache, on the last
# of them alone, once the keys and values of the ``t - 1`` before it are in
# a fresh cache (put there outside the clock). ``time.perf_counter`` times
# the step at every eighth length, 5 times each. The repeats go over all the
# lengths in turn, so that a pause of the machine spoils one repeat of a few
# lengths rather than every repeat of one, and each length keeps the median
# of its 5 times. The first length, 8, is timed in the same way, one token
# after 7 in the cache; ``generate``'s own first step reads the whole prompt
# at once, as the counts above say.

sequence = torch.cat([prompt, cached], dim=1)  # (1, n_prompt + n_new)


def step_seconds(length: int, use_cache: bool) -> float:
    """Seconds of the step that reads ``length`` tokens, picks the next."""
    with torch.no_grad():
        if use_cache:
            cache = model.make_cache(1, length)
            model(sequence[:, : length - 1], cache=cache)  # earlier steps
            fed = sequence[:, length - 1 : length]  # (1, 1)
        else:
            cache = None
            fed = sequence[:, :length]  # (1, length)
        began = time.perf_counter()
        logits = model(fed, cache=cache)
        logits[:, -1].argmax(dim=-1)  # the next token
        return time.perf_counter() - began


REPEATS = 5
lengths = np.arange(
    n_prompt, n_prompt + n_new, 8
)  # 8, 16, ..., 256 tokens so far
seconds = {True: [], False: []}  # per repeat: one time per length
for _ in range(REPEATS):
    for use_cache in (True, False):
        seconds[use_cache].append(
            [step_seconds(int(t), use_cache) for t in lengths]
        )
step_ms = {k: 1e3 * np.median(v, axis=0) for k, v in seconds.items()}
print(f"median of {REPEATS} times, ms per step:")
print(f"{'tokens so far':>13}  {'without cache':>13}  {'with cache':>10}")
for i in (0, 1, len(lengths) // 2, -1):
    without_ms, with_ms = step_ms[False][i], step_ms[True][i]
    print(f"{lengths[i]:>13}  {without_ms:>13.3f}  {with_ms:>10.3f}")

# %%
# Time per token against the length
# ---------------------------------
# At the top, the exact score counts of one head and layer for every step,
# on a logarithmic scale; below, the measured time of the steps. Without a
# cache a step runs every layer on all the tokens so far, so it has more to
# compute the longer the sequence. With a cache a step runs every layer on
# one token, whatever the length, and its attention reads one more key than
# the step before. (The count of the first step is the exception: with the
# cache it reads the whole prompt.)

# tokens so far at steps 0 to n_new - 1
every_length = np.arange(n_prompt, n_prompt + n_new)
fig, (ax_count, ax_time) = plt.subplots(
    2, 1, figsize=(5, 6), sharex=True, layout="constrained"
)
styles = {
    False: {"color": "C0", "marker": "o", "label": "without cache"},
    True: {"color": "C1", "marker": "s", "label": "with cache"},
}
counts = {False: without_cache, True: with_cache}
for use_cache, style in styles.items():
    ax_count.plot(every_length, counts[use_cache], color=style["color"])
    ax_time.plot(lengths, step_ms[use_cache], markersize=4, **style)
ax_count.set_yscale("log")
ax_count.set_ylabel("attention scores per step")
ax_count.set_title("Scores per step, one head of one layer")
ax_time.set_ylim(bottom=0)
ax_time.set_ylabel("median time per step (ms)")
ax_time.set_xlabel("tokens so far (prompt and generated)")
ax_time.set_title("Measured time per step (CPU, 1 thread)")
fig.legend(loc="outside lower center", ncols=2)
plt.show()

# %%
# What the times show
# -------------------
# At the four timed lengths of the last 32 steps (232 to 256 tokens), the
# step with the cache is faster than the step without it; and the step
# without the cache is slower there than at the four timed lengths up to 32
# tokens. The example checks both with a wide margin, at least 1.5 times,
# and claims nothing finer: the ratios depend on the machine, on what else
# it is doing, and on the size of the model, whose every call also costs a
# fixed amount of Python and PyTorch overhead that no cache removes.
# Scores are not the whole cost of a step and that overhead is paid either
# way, so the time saved is far less than the score count saved: the
# example checks that the measured ratio stays below a tenth of the
# ratio of the score counts of those steps.

late = lengths > read - 32  # the lengths of the last 32 steps
early = lengths <= 32
late_with = median(step_ms[True][late])
late_without = median(step_ms[False][late])
early_without = median(step_ms[False][early])
print(
    "timed lengths:", lengths[late].tolist(), "and", lengths[early].tolist()
)
print(f"232 to 256 tokens, without cache: {late_without:.3f} ms per step")
print(f"232 to 256 tokens, with cache:    {late_with:.3f} ms per step")
print(f"8 to 32 tokens, without cache:    {early_without:.3f} ms per step")
ratio = late_without / late_with
late_steps = lengths[late] - n_prompt  # the steps that read those lengths
count_ratio = sum(without_cache[s] for s in late_steps) / sum(
    with_cache[s] for s in late_steps
)
print(f"without / with cache, 232 to 256 tokens: {ratio:.1f} in time,")
print(f"{count_ratio:.0f} in attention scores")
assert lengths[late].tolist() == [232, 240, 248, 256]
assert lengths[early].tolist() == [8, 16, 24, 32]
assert late_without >= 1.5 * late_with
assert late_without >= 1.5 * early_without
assert ratio < count_ratio / 10

torch.set_num_threads(threads)  # as it was before this example
