"""
How fast is attention written by hand?
======================================

Time three ways of computing the same attention on the machine that runs this
script: the book's own implementation, ``torch.nn.MultiheadAttention``, and
PyTorch's fused ``torch.nn.functional.scaled_dot_product_attention``. You will
see the machine described first, then a check that the three agree, then a
table and a plot of the time per call for a few sequence lengths. The numbers
belong to this machine and this run; they are printed, never checked.

To run this example on your machine, download |wheel_download| and install it
with ``pip install lessons_code-*.whl matplotlib pandas``.
"""

# %%
# The machine
# -----------
# Timings mean little without the machine they were taken on, so it comes
# first. One line picks the device.

import platform
from collections.abc import Callable
from functools import partial

import matplotlib.pyplot as plt
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils import benchmark

from lessons_code.attention import scaled_dot_product_attention
from lessons_code.multihead import MultiHeadAttention, split_heads

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
threads = torch.get_num_threads()
print("platform: ", platform.platform())
print("processor:", platform.processor() or platform.machine())
print("python:   ", platform.python_version())
print("torch:    ", torch.__version__)
print("threads:  ", threads)
gpu = torch.cuda.get_device_name() if device.type == "cuda" else ""
print("device:   ", device, gpu)

# %%
# Three implementations, one result
# ---------------------------------
# A batch of 8 sequences of width :math:`D = 64` with :math:`H = 4` heads.
# The book's :class:`~lessons_code.multihead.MultiHeadAttention` receives the
# weights of PyTorch's module, so both compute the same function. For the
# attention core alone, the book's
# :func:`~lessons_code.attention.scaled_dot_product_attention` and PyTorch's
# fused kernel receive the same per-head queries, keys and values.

B, D, H = 8, 64, 4
torch_mha = nn.MultiheadAttention(D, H, batch_first=True).to(device).eval()
book_mha = MultiHeadAttention.from_torch(torch_mha).eval()


def inputs(T: int) -> tuple[torch.Tensor, ...]:
    """A batch x (B, T, D) and per-head q, k, v (B, H, T, d_head)."""
    x = torch.randn(B, T, D, device=device)
    q, k, v = (split_heads(torch.randn_like(x), H) for _ in range(3))
    return x, q, k, v


x, q, k, v = inputs(128)
print("module input x (B, T, D):          ", tuple(x.shape))
print("per-head q, k, v (B, H, T, d_head):", tuple(q.shape))

with torch.no_grad():
    theirs = torch_mha(x, x, x, need_weights=False)[0]  # (B, T, D)
    module_gap = (book_mha(x, x, x) - theirs).abs().max()
    book_core, _ = scaled_dot_product_attention(
        q, k, v
    )  # (B, H, T, d_head)
    fused_core = F.scaled_dot_product_attention(q, k, v)
    core_gap = (book_core - fused_core).abs().max()
print(f"modules: max abs difference {module_gap:.2e}")
print(f"core:    max abs difference {core_gap:.2e}")

# %%
# Timing
# ------
# :class:`torch.utils.benchmark.Timer` calls each function repeatedly,
# synchronises the GPU, and here uses all of PyTorch's threads (its own
# default is a single thread); autograd is off. The book's versions are
# written for reading: they compute and return the full weight matrix of
# every head, which the fused kernel never stores.


def median_ms(fn: Callable[[], object]) -> float:
    """Median time of one call of ``fn`` in ms, without autograd."""
    timer = benchmark.Timer("fn()", globals={"fn": fn}, num_threads=threads)
    with torch.no_grad():
        return 1e3 * timer.blocked_autorange(min_run_time=0.2).median


rows = []
for T in (64, 256, 1024):
    x, q, k, v = inputs(T)
    calls = {
        "book: MultiHeadAttention": partial(book_mha, x, x, x),
        "torch: nn.MultiheadAttention": partial(
            torch_mha, x, x, x, need_weights=False
        ),
        "book: scaled_dot_product_attention": partial(
            scaled_dot_product_attention, q, k, v
        ),
        "torch: F.scaled_dot_product_attention": partial(
            F.scaled_dot_product_attention, q, k, v
        ),
    }
    rows.append(
        {"T": T} | {name: median_ms(fn) for name, fn in calls.items()}
    )
times = pd.DataFrame(rows).set_index("T")  # one column per implementation
table = times.T.round(3)  # one row per implementation, one column per T
table.columns = [f"T = {T}" for T in table.columns]
thread_count = "1 thread" if threads == 1 else f"{threads} threads"
table.rename_axis(f"ms per call ({device.type}, {thread_count})")

# %%
# The same numbers as a plot
# --------------------------
# Both kinds of implementation do :math:`O(T^2)` work, so every curve bends
# upwards at long sequences; how far apart they lie is a property of this
# machine and this version of PyTorch.

fig, ax = plt.subplots(figsize=(5, 5.4), layout="constrained")
for column, marker in zip(times.columns, "os^v", strict=True):
    ax.plot(times.index, times[column], marker=marker, label=column)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
where = device.type.upper()
ax.set_title(f"Attention time per call on {where}\n(B = 8, D = 64, H = 4)")
ax.set_xlabel("sequence length T")
ax.set_ylabel("median time per call (ms)")
fig.legend(loc="outside lower center")
plt.show()
