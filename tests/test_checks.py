"""Tests for :mod:`lessons_code._checks`, the package's argument checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons_code._checks import check_device, check_int, check_int_list


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


def test_check_int_list_returns_a_list_of_ints() -> None:
    assert check_int_list(range(3), "seeds", minimum=0) == [0, 1, 2]
    assert check_int_list((np.int64(8), 16), "seq_lens", minimum=2) == [8, 16]


def test_check_int_list_names_the_bad_entry() -> None:
    with pytest.raises(ValueError, match=r"seeds\[1\] must be an integer >= 0, got -2"):
        check_int_list([0, -2], "seeds", minimum=0)
    with pytest.raises(TypeError, match=r"seeds\[0\] must be an integer"):
        check_int_list([1.5], "seeds", minimum=0)
    with pytest.raises(ValueError, match="seeds must not be empty"):
        check_int_list([], "seeds", minimum=0)
    with pytest.raises(TypeError, match="seeds must be an iterable of integers"):
        check_int_list("012", "seeds", minimum=0)
    with pytest.raises(TypeError, match="seeds must be an iterable of integers"):
        check_int_list(5, "seeds", minimum=0)


def test_check_device() -> None:
    assert check_device(None, "device") == torch.device("cpu")
    assert check_device("cpu", "device") == torch.device("cpu")
    assert check_device(torch.device("meta"), "device") == torch.device("meta")
    with pytest.raises(ValueError, match="device must name a device"):
        check_device("gpu-please", "device")
    with pytest.raises(TypeError, match=r"device must be None, a device name or a torch\.device"):
        check_device(1.0, "device")
