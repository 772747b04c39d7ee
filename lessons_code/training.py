"""Helpers the book's training experiments share: seeding, scoring, running side by side.

The order-detection experiment (:mod:`lessons_code.order_task`) and the depth
study (:mod:`lessons_code.depth`) build every model with :func:`seeded`,
score it with :func:`accuracy` and train their grids of runs with
:func:`map_in_threads`, so the two experiments seed, measure and parallelise
the same way. The date, copying and text models train with
:func:`adam_with_warmup`. Each helper works on any model and any list of settings, so a
reader can use them for experiments of their own.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch
from torch import nn

from lessons_code._checks import (
    check_int,
    check_like,
    check_real,
    check_tensor,
)

__all__ = [
    "accuracy",
    "adam_with_warmup",
    "adamw_cosine",
    "map_in_threads",
    "seeded",
    "warmup_cosine",
    "warmup_inverse_sqrt",
    "warmup_linear_decay",
]

# Held while a run seeds PyTorch's global generator and draws its initial
# weights, so that runs trained in parallel threads cannot interleave draws.
_INIT_LOCK = threading.Lock()
ModuleT = TypeVar("ModuleT", bound=nn.Module)
ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of examples whose predicted label (logit > 0) equals the label.

    The prediction for a binary task: label 1 where the logit is positive,
    0 elsewhere.

    Parameters
    ----------
    logits
        One logit per example.
    y
        The labels, 0.0 or 1.0, of the dtype and device of ``logits``.

    Returns
    -------
    float
        The accuracy, in ``[0, 1]``.

    Shape
    -----
    ``logits`` and ``y``: ``(n,)``, where ``n`` is the number of examples.

    Raises
    ------
    TypeError
        If an argument is not a floating-point tensor, or the dtypes differ.
    ValueError
        If the shapes differ, there are no examples, or the devices differ.

    Examples
    --------
    >>> accuracy(torch.tensor([2.0, -1.0, 0.5]), torch.tensor([1.0, 0.0, 0.0]))
    0.6666666865348816
    """
    logits = check_tensor(logits, "logits", ndim=1)
    y = check_tensor(y, "y", ndim=1)
    if y.shape != logits.shape:
        raise ValueError(
            f"y must have the shape of logits {tuple(logits.shape)}, "
            f"got {tuple(y.shape)}"
        )
    if logits.numel() == 0:
        raise ValueError(
            "logits must hold at least one example, got none"
        )
    check_like(y, "y", like=logits, like_name="logits")
    return float(((logits > 0).float() == y).float().mean())


def seeded(seed: int, build: Callable[[], ModuleT]) -> ModuleT:
    """Return ``build()`` run with torch seeded by ``seed``; the global random state is kept.

    The seeding happens inside ``torch.random.fork_rng``, so the caller's
    random state is the same afterwards, and under a lock, so that models
    built in parallel threads cannot interleave their draws: the same seed
    gives the same initial weights whatever else is running.

    Parameters
    ----------
    seed
        Seed of PyTorch's global generator while ``build`` runs (at least 0).
    build : collections.abc.Callable
        A function of no arguments that builds the module, e.g.
        ``lambda: nn.Linear(2, 2)``.

    Returns
    -------
    torch.nn.Module
        What ``build`` returned.

    Raises
    ------
    TypeError
        If ``seed`` is not an integer or ``build`` is not callable.
    ValueError
        If ``seed < 0``.

    Examples
    --------
    >>> first = seeded(0, lambda: nn.Linear(2, 2))
    >>> second = seeded(0, lambda: nn.Linear(2, 2))
    >>> torch.equal(first.weight, second.weight)
    True
    """
    seed = check_int(seed, "seed", minimum=0)
    if not callable(build):
        raise TypeError(
            f"build must be a function of no arguments, got {type(build).__name__}"
        )
    with _INIT_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def map_in_threads(
    function: Callable[[ItemT], ResultT],
    items: Sequence[ItemT],
    *,
    workers: int | None = None,
) -> list[ResultT]:
    """Return ``[function(item) for item in items]``, computed by ``workers`` threads.

    PyTorch releases Python's global interpreter lock inside its kernels, so
    on a machine with several cores, threads that each train a small model
    really run at the same time. The results come back in the order of
    ``items`` whatever order the threads finish in. With one worker the items
    are computed one after the other in the calling thread.

    Parameters
    ----------
    function : collections.abc.Callable
        Called once per item; it must not depend on the other calls (use
        :func:`seeded` for anything random).
    items : collections.abc.Sequence
        The arguments, one per call.
    workers
        Number of threads (default: the number of CPU cores, at most one per
        item).

    Returns
    -------
    list
        ``function(item)`` for each item, in the order of ``items``.

    Raises
    ------
    TypeError
        If ``function`` is not callable, ``items`` is not a sequence, or
        ``workers`` is not an integer.
    ValueError
        If ``workers < 1``.

    Examples
    --------
    >>> map_in_threads(lambda n: n * n, [1, 2, 3], workers=2)
    [1, 4, 9]
    """
    if not callable(function):
        raise TypeError(
            f"function must be callable, got {type(function).__name__}"
        )
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise TypeError(
            f"items must be a sequence (e.g. a list), got {type(items).__name__}"
        )
    if workers is None:
        workers = max(1, min(len(items), os.cpu_count() or 1))
    workers = check_int(workers, "workers", minimum=1)
    if workers == 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def warmup_inverse_sqrt(step: int, warmup_steps: int) -> float:
    """Learning-rate factor of the 2017 paper: a linear warm-up, then decay as ``1/sqrt(step)``.

    Vaswani et al. (2017) train with
    ``lr = D^-0.5 * min(n^-0.5, n * warmup^-1.5)`` at update ``n = 1, 2, ...``.
    Written as a fraction of its peak value, reached at ``n = warmup``, this
    is ``min(n / warmup, sqrt(warmup / n))``. With ``n = step + 1`` it is the
    ``lr_lambda`` of ``torch.optim.lr_scheduler.LambdaLR``, which counts
    steps from 0: the optimiser's learning rate is then the peak rate.

    Parameters
    ----------
    step
        The number of updates done so far (0 before the first).
    warmup_steps
        Length of the linear warm-up.

    Returns
    -------
    float
        The factor, in ``(0, 1]``; 1 at ``step = warmup_steps - 1``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``step < 0`` or ``warmup_steps < 1``.

    Examples
    --------
    >>> [round(warmup_inverse_sqrt(s, 4), 3) for s in range(8)]
    [0.25, 0.5, 0.75, 1.0, 0.894, 0.816, 0.756, 0.707]
    >>> model = nn.Linear(2, 2)
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    >>> schedule = torch.optim.lr_scheduler.LambdaLR(
    ...     optimizer, lambda step: warmup_inverse_sqrt(step, 100))
    >>> optimizer.param_groups[0]["lr"]  # the first update's rate: 1e-3 / 100
    1e-05
    """
    step = check_int(step, "step", minimum=0)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    n = step + 1  # the update about to be made, counted from 1
    return min(n / warmup_steps, math.sqrt(warmup_steps / n))


def warmup_linear_decay(
    step: int, warmup_steps: int, total_steps: int
) -> float:
    """Learning-rate factor: a linear warm-up to 1, then a linear decay towards 0.

    ``min(n / warmup, (total - step) / (total - warmup + 1))`` with
    ``n = step + 1``: the rate rises over the first ``warmup_steps`` updates
    and falls back on a straight line, ending near zero, so that the last
    updates are small and the trained weights settle. Use it as the
    ``lr_lambda`` of ``torch.optim.lr_scheduler.LambdaLR``.

    Parameters
    ----------
    step
        The number of updates done so far (0 before the first).
    warmup_steps
        Length of the linear warm-up.
    total_steps
        Number of updates of the whole training, at least ``warmup_steps``.

    Returns
    -------
    float
        The factor, in ``[0, 1]``; 1 at ``step = warmup_steps - 1``, and
        ``1 / (total_steps - warmup_steps + 1)`` at the last update.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``step < 0``, ``warmup_steps < 1`` or
        ``total_steps < warmup_steps``.

    Examples
    --------
    >>> [round(warmup_linear_decay(s, 2, 6), 2) for s in range(6)]
    [0.5, 1.0, 0.8, 0.6, 0.4, 0.2]
    """
    step = check_int(step, "step", minimum=0)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    total_steps = check_int(
        total_steps, "total_steps", minimum=warmup_steps
    )
    rise = (step + 1) / warmup_steps
    fall = (total_steps - step) / (total_steps - warmup_steps + 1)
    return max(0.0, min(rise, fall))


def adam_with_warmup(
    parameters: Iterable[nn.Parameter],
    peak_lr: float,
    warmup_steps: int,
    total_steps: int,
    *,
    decay: str = "linear",
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Return the 2017 paper's Adam and a warm-up schedule for it.

    Adam with ``betas=(0.9, 0.98)`` and ``eps=1e-9``, as Vaswani et al.
    trained, starting at ``peak_lr``, and a ``LambdaLR`` that multiplies
    the rate by :func:`warmup_linear_decay` (``decay="linear"``) or
    :func:`warmup_inverse_sqrt` (``"inverse_sqrt"``, the paper's own
    decay). Step the scheduler after every optimiser step.

    Parameters
    ----------
    parameters
        The parameters to train.
    peak_lr
        The rate at the end of the warm-up (positive).
    warmup_steps
        Length of the linear warm-up, at least 1.
    total_steps
        Number of updates of the whole training, at least
        ``warmup_steps`` (the linear decay ends there).
    decay
        ``"linear"`` or ``"inverse_sqrt"``.

    Returns
    -------
    tuple
        ``(optimizer, scheduler)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``peak_lr`` is not positive, ``warmup_steps < 1``,
        ``total_steps < warmup_steps`` or ``decay`` names no schedule.

    Examples
    --------
    >>> layer = nn.Linear(2, 2)
    >>> optimizer, scheduler = adam_with_warmup(layer.parameters(), 1e-3, 2, 6)
    >>> optimizer.param_groups[0]["lr"]  # the first step's rate: half the peak
    0.0005
    """
    peak_lr = check_real(peak_lr, "peak_lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    total_steps = check_int(
        total_steps, "total_steps", minimum=warmup_steps
    )
    factor: Callable[[int], float]
    if decay == "linear":
        factor = functools.partial(
            warmup_linear_decay,
            warmup_steps=warmup_steps,
            total_steps=total_steps,
        )
    elif decay == "inverse_sqrt":
        factor = functools.partial(
            warmup_inverse_sqrt, warmup_steps=warmup_steps
        )
    else:
        raise ValueError(
            f"decay must be 'linear' or 'inverse_sqrt', got {decay!r}"
        )
    optimizer = torch.optim.Adam(
        parameters, lr=peak_lr, betas=(0.9, 0.98), eps=1e-9
    )
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def warmup_cosine(
    step: int, warmup_steps: int, total_steps: int, final: float = 0.1
) -> float:
    """Learning-rate factor: a linear warm-up to 1, then a cosine down to ``final``.

    With ``n = step + 1``: ``n / warmup`` during the warm-up, then
    ``final + (1 - final) * (1 + cos(pi * t)) / 2`` with ``t`` going from 0
    after the warm-up to 1 at the last update: Llama's schedule (Touvron et
    al., 2023), which ends at a tenth of the peak rate.

    Parameters
    ----------
    step
        The number of updates done so far (0 before the first).
    warmup_steps
        Length of the linear warm-up.
    total_steps
        Number of updates of the whole training, more than
        ``warmup_steps``.
    final
        The factor at the last update, in ``[0, 1]``.

    Returns
    -------
    float
        The factor, in ``[final, 1]`` after the warm-up.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``step < 0``, ``warmup_steps < 1``, ``total_steps <=
        warmup_steps`` or ``final`` is outside ``[0, 1]``.

    Examples
    --------
    >>> [round(warmup_cosine(s, 2, 6), 3) for s in range(6)]
    [0.5, 1.0, 0.868, 0.55, 0.232, 0.1]
    """
    step = check_int(step, "step", minimum=0)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    total_steps = check_int(
        total_steps, "total_steps", minimum=warmup_steps + 1
    )
    final = check_real(final, "final")
    if not 0.0 <= final <= 1.0:
        raise ValueError(f"final must be in [0, 1], got {final}")
    n = step + 1
    if n <= warmup_steps:
        return n / warmup_steps
    t = min(1.0, (n - warmup_steps) / (total_steps - warmup_steps))
    return final + (1.0 - final) * (1.0 + math.cos(math.pi * t)) / 2.0


def adamw_cosine(
    parameters: Iterable[nn.Parameter],
    peak_lr: float,
    warmup_steps: int,
    total_steps: int,
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """Return Llama's optimiser and schedule: AdamW and a warm-up into a cosine.

    AdamW with ``betas=(0.9, 0.95)``, ``eps=1e-5`` and a weight decay of
    0.1 (on every parameter), and :func:`warmup_cosine` to a tenth of
    ``peak_lr`` (Touvron et al., 2023). Llama also clips the gradients'
    norm to 1.0 before each step; the training loop does that
    (``torch.nn.utils.clip_grad_norm_``).

    Parameters
    ----------
    parameters
        The parameters to train.
    peak_lr
        The rate at the end of the warm-up (positive).
    warmup_steps
        Length of the linear warm-up, at least 1.
    total_steps
        Number of updates of the whole training, more than
        ``warmup_steps``.

    Returns
    -------
    tuple
        ``(optimizer, scheduler)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``peak_lr`` is not positive or the step counts are out of range.

    Examples
    --------
    >>> optimizer, _ = adamw_cosine(nn.Linear(2, 2).parameters(), 1e-3, 2, 6)
    >>> optimizer.defaults["betas"], optimizer.defaults["weight_decay"]
    ((0.9, 0.95), 0.1)
    """
    peak_lr = check_real(peak_lr, "peak_lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    total_steps = check_int(
        total_steps, "total_steps", minimum=warmup_steps + 1
    )
    factor = functools.partial(
        warmup_cosine, warmup_steps=warmup_steps, total_steps=total_steps
    )
    optimizer = torch.optim.AdamW(
        parameters,
        lr=peak_lr,
        betas=(0.9, 0.95),
        eps=1e-5,
        weight_decay=0.1,
    )
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
