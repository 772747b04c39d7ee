"""Tests for :mod:`lessons_code._checks`, the package's argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from lessons_code._checks import check_int


@pytest.mark.parametrize(("value", "minimum"), [(0, 0), (1, 1), (7, 2), (np.int64(3), 0)])
def test_check_int_accepts_integers_at_the_bound_and_above(value: object, minimum: int) -> None:
    checked = check_int(value, "n", minimum=minimum)
    assert checked == value
    assert type(checked) is int


def test_check_int_names_the_parameter_and_the_bound() -> None:
    with pytest.raises(ValueError, match=r"seed must be an integer >= 0, got -1"):
        check_int(-1, "seed", minimum=0)
    with pytest.raises(ValueError, match=r"seq_len must be an integer >= 2, got 1"):
        check_int(1, "seq_len", minimum=2)


@pytest.mark.parametrize("value", [True, 1.0, "3", None])
def test_check_int_rejects_what_is_not_an_integer(value: object) -> None:
    with pytest.raises(TypeError, match="n must be an integer >= 1"):
        check_int(value, "n", minimum=1)


def test_check_int_has_no_default_bound() -> None:
    with pytest.raises(TypeError, match="minimum"):
        check_int(3, "n")  # type: ignore[call-arg]
