"""Helpers shared by the package's training experiments (order task, depth study).

Private to the package: :mod:`lessons_code.order_task` and
:mod:`lessons_code.depth` build their models, score them and check their lists
of settings with these, so the two experiments seed and measure the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

import torch
from torch import nn

from lessons_code._checks import check_int

__all__ = ["accuracy", "check_int_list", "seeded"]

# Held while a run seeds PyTorch's global generator and draws its initial
# weights, so that runs trained in parallel threads cannot interleave draws.
_INIT_LOCK = threading.Lock()
ModuleT = TypeVar("ModuleT", bound=nn.Module)


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of sequences whose predicted label (logit > 0) is right.

    Examples
    --------
    >>> accuracy(torch.tensor([2.0, -1.0, 0.5]), torch.tensor([1.0, 0.0, 0.0]))
    0.6666666865348816
    """
    return float(((logits > 0).float() == y).float().mean())


def seeded(seed: int, build: Callable[[], ModuleT]) -> ModuleT:
    """``build()`` with torch seeded by ``seed``; the global random state is left as it was.

    Done under a lock, so that models built in parallel threads cannot
    interleave their draws.

    Examples
    --------
    >>> first = seeded(0, lambda: nn.Linear(2, 2))
    >>> second = seeded(0, lambda: nn.Linear(2, 2))
    >>> torch.equal(first.weight, second.weight)
    True
    """
    with _INIT_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def check_int_list(
    values: Iterable[int], name: str, *, minimum: int
) -> list[int]:
    """``values`` as a non-empty list of integers, each at least ``minimum``.

    Raises
    ------
    TypeError
        If ``values`` is not an iterable of integers.
    ValueError
        If it is empty or a value is below ``minimum``.

    Examples
    --------
    >>> check_int_list(range(3), "seeds", minimum=0)
    [0, 1, 2]
    """
    if isinstance(values, str | bytes) or not isinstance(
        values, Iterable
    ):
        raise TypeError(
            f"{name} must be an iterable of integers, got {type(values).__name__}"
        )
    checked = [
        check_int(value, f"{name}[{i}]", minimum=minimum)
        for i, value in enumerate(values)
    ]
    if not checked:
        raise ValueError(f"{name} must not be empty")
    return checked
