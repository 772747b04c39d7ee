"""Values as the prose prints them: bounds rounded the safe way, counts in words.

A lesson page's removed cells glue a bound, "at least a" or "at most b", with
:func:`at_least` or :func:`at_most` and the format its prose prints it with,
and :mod:`claims` checks that they did. A count that is 0 under some
arithmetic is glued through :func:`in_words`, since the prose checks refuse a
pasted zero. This module imports nothing from
Sphinx, so the page's cells can use it wherever they run: in the build, and
in the tests that run a lesson notebook with its removed cells in a reader's
environment.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal


def _rounded(value: float, spec: str, rounding: str) -> float:
    match = re.fullmatch(r",?\.(\d+)([eEfF])", spec)  # "," groups thousands, as format does
    if match is None:
        raise ValueError(f"spec: expected a format such as '.2f', ',.0f' or '.1e', got {spec!r}")
    digits, kind = int(match.group(1)), match.group(2).lower()
    exact = Decimal(repr(float(value)))  # the shortest decimal that is the float
    step = Decimal(1).scaleb(-digits)
    if kind == "f" or exact == 0:
        return float(exact.quantize(step, rounding=rounding))
    power = exact.adjusted()
    return float(exact.scaleb(-power).quantize(step, rounding=rounding).scaleb(power))


def at_least(value: float, spec: str) -> float:
    """``value`` rounded down to the digits ``format(_, spec)`` prints.

    The result is a lower bound of ``value`` that the format prints exactly:
    ``at_least(0.2479, ".2f")`` is 0.24, where ``format(0.2479, ".2f")`` says 0.25.
    """
    return _rounded(value, spec, ROUND_FLOOR)


def at_most(value: float, spec: str) -> float:
    """``value`` rounded up to the digits ``format(_, spec)`` prints (see :func:`at_least`)."""
    return _rounded(value, spec, ROUND_CEILING)


def in_words(count: int) -> str:
    """``count`` as a sentence reads it: ``"none"`` for 0, its digits otherwise."""
    return str(count) if count else "none"
