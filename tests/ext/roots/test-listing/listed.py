"""A module for the listing tests: what a listing shows and what it leaves out."""

import math


def check_positive(value, name):
    if value <= 0:
        raise ValueError(f"{name} must be positive")
    return value


def scaled(x, factor):
    """Multiply ``x`` by ``factor``.

    The docstring is paperwork: the listing leaves it out.
    """
    check_positive(factor, "factor")
    factor = check_positive(factor, "factor")
    if x is None:
        raise TypeError("x is None")
    for item in (x, factor):
        check_positive(item, "item")

    # The computation itself.
    return x * factor


class Counter:
    """Counts calls."""

    def __init__(self, start):
        """Start at ``start``."""
        check_positive(start, "start")
        self.count = start

    def _step(self):
        return 1

    def tick(self):
        self.count += self._step()


def keeps_a_check(x):
    y = check_positive(x, "x")
    return y + 1


def rooted(x):
    return math.sqrt(x)
