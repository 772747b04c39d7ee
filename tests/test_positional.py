"""Tests for :mod:`lessons_code.positional`."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_code.positional import positional_encoding, positional_encoding_numpy

SIZES = [(1, 1), (1, 2), (5, 3), (20, 16), (50, 32), (7, 9), (128, 64)]


def formula(pos: int, j: int, d_model: int) -> float:
    """The paper's formula for one entry, written out with scalars."""
    i = j // 2
    angle = pos / 10000 ** (2 * i / d_model)
    return math.sin(angle) if j % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize(("num_positions", "d_model"), SIZES)
def test_numpy_matches_formula_elementwise(num_positions: int, d_model: int) -> None:
    pe = positional_encoding_numpy(num_positions, d_model)
    expected = np.array(
        [[formula(p, j, d_model) for j in range(d_model)] for p in range(num_positions)]
    )
    np.testing.assert_allclose(pe, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("num_positions", "d_model"), SIZES)
def test_torch_matches_formula_elementwise(num_positions: int, d_model: int) -> None:
    pe = positional_encoding(num_positions, d_model)
    expected = torch.tensor(
        [[formula(p, j, d_model) for j in range(d_model)] for p in range(num_positions)],
        dtype=torch.float32,
    )
    torch.testing.assert_close(pe, expected)


@pytest.mark.parametrize(("num_positions", "d_model"), SIZES)
def test_two_implementations_agree(num_positions: int, d_model: int) -> None:
    from_torch = positional_encoding(num_positions, d_model).double().numpy()
    from_numpy = positional_encoding_numpy(num_positions, d_model)
    # float32 rounding of values in [-1, 1]: at most half an ulp, 2**-25 ~ 3e-8.
    assert np.abs(from_torch - from_numpy).max() <= 2**-24


def test_dtypes_and_shapes() -> None:
    assert positional_encoding(50, 32).dtype == torch.float32
    assert positional_encoding(50, 32).shape == (50, 32)
    assert positional_encoding_numpy(20, 16).dtype == np.float64
    assert positional_encoding_numpy(20, 16).shape == (20, 16)


def test_odd_width_ends_with_a_sine() -> None:
    pe = positional_encoding_numpy(10, 5)
    last = np.sin(np.arange(10) / 10000 ** (4 / 5))  # column 4 = 2i with i = 2
    np.testing.assert_allclose(pe[:, 4], last, rtol=0, atol=1e-12)


def test_first_row_alternates_zero_and_one() -> None:
    np.testing.assert_array_equal(positional_encoding_numpy(1, 6)[0], [0, 1, 0, 1, 0, 1])


def test_values_bounded_and_rows_distinct() -> None:
    pe = positional_encoding_numpy(200, 32)
    assert np.abs(pe).max() <= 1.0
    assert len({row.tobytes() for row in pe}) == 200


def test_dot_product_depends_only_on_offset() -> None:
    pe = positional_encoding_numpy(100, 32)
    dots = pe @ pe.T
    for offset in (0, 1, 5, 17, 40):
        diagonal = np.diagonal(dots, offset=offset)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("function", [positional_encoding, positional_encoding_numpy])
@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((0, 16), ValueError, "num_positions must be an integer >= 1, got 0"),
        ((-3, 16), ValueError, "num_positions must be an integer >= 1, got -3"),
        ((10, 0), ValueError, "d_model must be an integer >= 1, got 0"),
        ((10.0, 16), TypeError, "num_positions must be an integer >= 1, got 10.0 of type float"),
        ((10, "16"), TypeError, "d_model must be an integer"),
        ((True, 16), TypeError, "num_positions must be an integer"),
        ((10, None), TypeError, "d_model must be an integer"),
    ],
)
def test_bad_sizes_raise(function, args, error, match) -> None:
    with pytest.raises(error, match=match):
        function(*args)


def test_numpy_integer_sizes_are_accepted() -> None:
    pe = positional_encoding(np.int64(4), np.int32(6))
    assert pe.shape == (4, 6)


@settings(max_examples=25, deadline=None)
@given(
    d_model=st.integers(min_value=2, max_value=64).map(lambda d: 2 * (d // 2)),
    offset=st.integers(min_value=0, max_value=40),
    starts=st.lists(st.integers(min_value=0, max_value=60), min_size=2, max_size=5),
)
def test_property_dot_product_depends_only_on_offset(
    d_model: int, offset: int, starts: list[int]
) -> None:
    pe = positional_encoding_numpy(max(starts) + offset + 1, d_model)
    dots = [float(pe[p] @ pe[p + offset]) for p in starts]
    np.testing.assert_allclose(dots, dots[0], rtol=0, atol=1e-9)
