"""
A recurrent loop versus one parallel self-attention
===================================================

Time a step-by-step recurrent network against a single batched self-attention
over growing sequence lengths, on the machine that runs this script. You will
see two plots: the measured time of both against the sequence length ``T``, and
the number of steps that have to run one after the other (``T`` for the RNN,
one for attention), next to the number of attention scores, which grows as
``T^2``.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# Set-up
# ------
# One line picks the device: the GPU when there is one, the CPU otherwise.

import platform

import matplotlib.pyplot as plt
import pandas as pd
import torch

from lessons_code.multihead import attention_flops
from lessons_code.rnn import rnn_loop, time_rnn_vs_attention

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
print("device:", device)
cpu = platform.processor() or platform.machine()
print("machine:", platform.platform(), "|", cpu)
print("torch", torch.__version__, "| threads:", torch.get_num_threads())

# %%
# The recurrence is a chain
# -------------------------
# An Elman RNN computes :math:`h_t = \tanh(x_t W_{xh} + h_{t-1} W_{hh} + b)`.
# Step :math:`t` needs the hidden state of step :math:`t - 1`, so the loop over
# time cannot be spread over many cores: a sequence of length :math:`T` is a
# chain of :math:`T` dependent steps.

B, T, D = 2, 7, 8
x = torch.randn(B, T, D, device=device)  # (B, T, D)
w_xh = torch.randn(D, D, device=device) / D**0.5  # (D, N)
w_hh = torch.randn(D, D, device=device) / D**0.5  # (N, N)
b = torch.zeros(D, device=device)  # (N,)
states = rnn_loop(x, w_xh, w_hh, b)
print("input x (B, T, D):       ", tuple(x.shape))
print("hidden states (B, T, N): ", tuple(states.shape))

# %%
# Timing both on this machine
# ---------------------------
# :func:`~lessons_code.rnn.time_rnn_vs_attention` feeds the same random input
# to the loop and to one self-attention (the ``Q``, ``K``, ``V`` projections and
# the scaled dot-product), keeps the best of a few repeats, and synchronises
# the GPU before it stops the clock. The numbers are whatever this machine
# measures; they are printed, never checked.

lengths = [16, 32, 64, 128, 256, 512, 1024]
records = time_rnn_vs_attention(lengths, 64, repeats=3, device=device)
timings = pd.DataFrame(
    {
        "T": [r.seq_len for r in records],
        "RNN loop (ms)": [1e3 * r.rnn_seconds for r in records],
        "self-attention (ms)": [1e3 * r.attention_seconds for r in records],
        "sequential steps, RNN": [r.rnn_steps for r in records],
        "sequential steps, attention": [r.attention_steps for r in records],
        "attention scores": [r.seq_len**2 for r in records],
    }
)
timings.round(3)

# %%
# Time and sequential steps against the length
# --------------------------------------------
# At the top, the measured times on logarithmic axes. Below, what
# explains them: the RNN has ``T`` steps that must wait for each other, while
# attention has one step whose amount of work grows with the ``T x T`` score
# matrix.

t = timings["T"]
rnn_ms = timings["RNN loop (ms)"]
attention_ms = timings["self-attention (ms)"]
fig, (ax_time, ax_steps) = plt.subplots(2, 1, figsize=(5, 7))
ax_time.plot(t, rnn_ms, "o-", label="RNN loop")
ax_time.plot(t, attention_ms, "s-", label="self-attention")
ax_time.set_xscale("log", base=2)
ax_time.set_yscale("log")
where = device.type.upper()
ax_time.set_title(f"Forward time on {where}, D = 64, batch 1")
ax_time.set_xlabel("sequence length T")
ax_time.set_ylabel("best time of one forward pass (ms)")
ax_time.legend()

rnn_steps = timings["sequential steps, RNN"]
attention_steps = timings["sequential steps, attention"]
ax_steps.plot(t, rnn_steps, "o-", label="RNN: T steps")
ax_steps.plot(t, attention_steps, "s-", label="attention: 1 step")
ax_steps.plot(t, timings["attention scores"], "^--", label="scores: T^2")
ax_steps.set_xscale("log", base=2)
ax_steps.set_yscale("log")
ax_steps.set_title("Sequential steps and attention scores")
ax_steps.set_xlabel("sequence length T")
ax_steps.set_ylabel("count")
ax_steps.legend()
fig.tight_layout()
plt.show()

# %%
# What attention pays instead
# ---------------------------
# Attention removes the chain, but not the work: every position is compared
# with every other, so the score matrix has :math:`T^2` entries and its two
# matrix products cost :math:`2 T^2 D` multiply-adds, against :math:`4 T D^2`
# for the four projections. :func:`~lessons_code.multihead.attention_flops`
# counts them; past :math:`T = 2D` the quadratic part is the larger one, and
# the longer the sequence, the closer doubling :math:`T` comes to quadrupling
# the work.

flops = pd.DataFrame(
    {"T": T, **attention_flops(seq_len=T, d_model=64, num_heads=1)}
    for T in lengths
)
quadratic = flops["scores"] + flops["weighted_sum"]
flops["share of scores and weighted sum"] = quadratic / flops["total"]
flops.round(3)

# %%
# The ratio of the two measured times, for the longest sequence, on this machine:

last = timings.iloc[-1]
longest = int(last["T"])
rnn, attention = last["RNN loop (ms)"], last["self-attention (ms)"]
print(f"T = {longest}: RNN loop {rnn:.2f} ms, attention {attention:.2f} ms")
print(f"time of the RNN loop / time of attention: {rnn / attention:.2f}")
print(f"sequential steps: {longest} for the RNN, 1 for attention")
growth = (longest // lengths[0]) ** 2
print(f"the score matrix grew {growth} times from T = {lengths[0]}")
