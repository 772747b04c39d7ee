r"""A step-by-step recurrent network, to time against one parallel self-attention.

An Elman RNN computes

.. math::

   \begin{aligned}
   h_t &= \tanh(x_t W_{xh} + h_{t-1} W_{hh} + b),\\
   h_{-1} &= 0,
   \end{aligned}

so step ``t`` cannot start before step ``t - 1`` has finished: a sequence of
length ``T`` is a chain of ``T`` dependent steps. Self-attention relates all
positions in one batched computation (one sequential step), at the price of
``T^2`` scores. :func:`time_rnn_vs_attention` measures both on the reader's
machine; timings depend on the hardware and are printed, never asserted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from lessons_code._checks import (
    check_device,
    check_int,
    check_int_list,
    check_like,
    check_tensor,
)
from lessons_code.attention import scaled_dot_product_attention

__all__ = ["TimingRecord", "rnn_loop", "time_rnn_vs_attention"]


def rnn_loop(
    x: torch.Tensor,
    w_xh: torch.Tensor,
    w_hh: torch.Tensor,
    b: torch.Tensor,
) -> torch.Tensor:
    """Run an Elman RNN over ``x`` one time step after the other.

    Parameters
    ----------
    x
        A batch of input sequences.
    w_xh
        Input-to-hidden weights.
    w_hh
        Hidden-to-hidden (recurrent) weights.
    b
        Hidden bias.

    Returns
    -------
    torch.Tensor
        The hidden state after every step, ``h_0`` to ``h_{T-1}``.

    Shape
    -----
    - ``x``: ``(B, T, D)``; ``w_xh``: ``(D, hidden)``;
      ``w_hh``: ``(hidden, hidden)``; ``b``: ``(hidden,)``.
    - Output: ``(B, T, hidden)``.

    where ``B`` is the batch size, ``T`` the sequence length, ``D`` the input
    width and ``hidden`` the hidden width.

    Raises
    ------
    TypeError
        If an input is not a floating-point tensor, or the dtypes differ.
    ValueError
        If a shape does not fit the others, or the devices differ.

    Examples
    --------
    >>> x = torch.randn(2, 7, 3)
    >>> w_xh, w_hh, b = torch.randn(3, 5), torch.randn(5, 5), torch.zeros(5)
    >>> h = rnn_loop(x, w_xh, w_hh, b)
    >>> h.shape
    torch.Size([2, 7, 5])
    >>> bool(torch.allclose(h[:, 0], torch.tanh(x[:, 0] @ w_xh)))  # h_{-1} = 0
    True
    """
    x = check_tensor(x, "x", ndim=3)
    w_xh = check_tensor(w_xh, "w_xh", ndim=2)
    w_hh = check_tensor(w_hh, "w_hh", ndim=2)
    b = check_tensor(b, "b", ndim=1)
    for name, weight in (("w_xh", w_xh), ("w_hh", w_hh), ("b", b)):
        check_like(weight, name, like=x, like_name="x")
    B, T, D = x.shape
    if w_xh.shape[0] != D:
        raise ValueError(
            f"w_xh must have {D} rows (the width D of x), got shape {tuple(w_xh.shape)}"
        )
    hidden = w_xh.shape[1]
    if w_hh.shape != (hidden, hidden):
        raise ValueError(
            f"w_hh must have shape {(hidden, hidden)}, "
            f"got shape {tuple(w_hh.shape)}"
        )
    if b.shape != (hidden,):
        raise ValueError(
            f"b must have shape {(hidden,)}, got shape {tuple(b.shape)}"
        )

    h = x.new_zeros(B, hidden)  # (B, hidden): h_{-1}
    states = []
    # T dependent steps: step t needs h from step t - 1
    for t in range(T):
        h = torch.tanh(x[:, t] @ w_xh + h @ w_hh + b)  # (B, hidden)
        states.append(h)
    return torch.stack(states, dim=1)  # (B, T, hidden)


@dataclass(frozen=True)
class TimingRecord:
    """Timings of one sequence length.

    Attributes
    ----------
    seq_len
        Sequence length ``T``.
    rnn_seconds, attention_seconds
        Best wall-clock time over the repeats of :func:`rnn_loop` and of one
        self-attention (projections included) on the same input.
    rnn_steps, attention_steps
        Number of sequential steps: ``T`` for the RNN, 1 for attention.
    """

    seq_len: int
    rnn_seconds: float
    attention_seconds: float
    rnn_steps: int
    attention_steps: int


def _best_time(fn: Callable[[], object], repeats: int) -> float:
    """Best wall-clock time of ``fn()`` over ``repeats`` calls, after one warm-up call."""
    fn()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def time_rnn_vs_attention(
    seq_lens: list[int] | tuple[int, ...] | range,
    d_model: int = 64,
    repeats: int = 5,
    *,
    batch_size: int = 1,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> list[TimingRecord]:
    """Time a step-by-step RNN against one batched self-attention.

    For every length ``T`` the same random input ``(B, T, D)`` goes through
    :func:`rnn_loop` (hidden width ``D``) and through single-head
    self-attention (``Q``, ``K``, ``V`` projections, then
    :func:`lessons_code.attention.scaled_dot_product_attention`), without
    autograd. Each is timed ``repeats`` times after a warm-up call and the best
    time is kept. On a GPU the asynchronous kernels are synchronised before
    the clock stops.

    Parameters
    ----------
    seq_lens
        The sequence lengths to time, each at least 1.
    d_model
        Width ``D`` of the inputs and of the RNN's hidden state.
    repeats
        Timed calls per length and model.
    batch_size
        Number of sequences ``B`` processed together.
    seed
        Seed of the random inputs and weights (a local generator).
    device
        Where to run (default: the CPU).

    Returns
    -------
    list of TimingRecord
        One record per length, in the order given.

    Shape
    -----
    Inputs ``(B, T, D)`` for each ``T`` in ``seq_lens``, where ``B`` is the batch
    size and ``D`` the width.

    Raises
    ------
    TypeError
        If ``seq_lens`` is not an iterable or a size is not an integer.
    ValueError
        If ``seq_lens`` is empty or a size is smaller than 1.

    Examples
    --------
    >>> records = time_rnn_vs_attention([4, 8], d_model=8, repeats=1)
    >>> [(r.seq_len, r.rnn_steps, r.attention_steps) for r in records]
    [(4, 4, 1), (8, 8, 1)]
    """
    lengths = check_int_list(seq_lens, "seq_lens", minimum=1)
    D = check_int(d_model, "d_model", minimum=1)
    repeats = check_int(repeats, "repeats", minimum=1)
    B = check_int(batch_size, "batch_size", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    device = check_device(device, "device")
    synchronize: Callable[[], None] = (
        torch.cuda.synchronize
        if device.type == "cuda"
        else (lambda: None)
    )

    gen = torch.Generator().manual_seed(seed)
    scale = 1.0 / math.sqrt(D)
    w_xh, w_hh, w_q, w_k, w_v = (
        (torch.randn(D, D, generator=gen) * scale).to(device)
        for _ in range(5)
    )
    b = torch.zeros(D, device=device)

    def attention(x: torch.Tensor) -> torch.Tensor:
        # (B, T, D)
        out, _ = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
        return out

    records = []
    with torch.no_grad():
        for T in lengths:
            # (B, T, D)
            x = torch.randn(B, T, D, generator=gen).to(device)

            def run_rnn(x: torch.Tensor = x) -> None:
                rnn_loop(x, w_xh, w_hh, b)
                synchronize()

            def run_attention(x: torch.Tensor = x) -> None:
                attention(x)
                synchronize()

            records.append(
                TimingRecord(
                    seq_len=T,
                    rnn_seconds=_best_time(run_rnn, repeats),
                    attention_seconds=_best_time(run_attention, repeats),
                    rnn_steps=T,
                    attention_steps=1,
                )
            )
    return records
