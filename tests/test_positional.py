"""Tests for :mod:`lessons_code.positional`."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons_code.positional import (
    positional_encoding,
    positional_encoding_numpy,
    shift_rotation,
)

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


def test_float64_table_is_the_float64_formula() -> None:
    # Asked for float64, the table is the formula's float64 value (the two
    # forms of the formula differ by rounding alone), not a float32 table
    # widened: that one is up to half a float32 ulp (3e-8) off.
    exact = positional_encoding(64, 32, dtype=torch.float64).numpy()
    assert np.abs(exact - positional_encoding_numpy(64, 32)).max() <= 1e-13
    widened = positional_encoding(64, 32).double().numpy()
    assert np.abs(widened - positional_encoding_numpy(64, 32)).max() > 1e-9
    # every dtype is one rounding of the float64 table
    half = positional_encoding(64, 32, dtype=torch.bfloat16)
    assert torch.equal(half, torch.from_numpy(exact).to(torch.bfloat16))
    with pytest.raises(TypeError, match=r"dtype must be a floating-point torch\.dtype"):
        positional_encoding(4, 4, dtype=torch.int64)
    with pytest.raises(TypeError, match=r"dtype must be a floating-point torch\.dtype"):
        positional_encoding(4, 4, dtype="float64")  # type: ignore[arg-type]


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


# -- a shift is a rotation -------------------------------------------------------


@pytest.mark.parametrize("d_model", [2, 8, 32, 64])
def test_rotation_moves_every_position(d_model: int) -> None:
    pe = positional_encoding_numpy(60, d_model)
    for k in (-59, -7, -1, 0, 1, 3, 30, 59):
        rotation = shift_rotation(k, d_model)
        for p in range(max(0, -k), min(60, 60 - k)):
            np.testing.assert_allclose(pe[p] @ rotation, pe[p + k], rtol=0, atol=1e-12)


def test_rotation_moves_the_float32_table() -> None:
    pe = positional_encoding(40, 16)  # float32
    rotation = torch.from_numpy(shift_rotation(5, 16)).float()
    torch.testing.assert_close(pe[:-5] @ rotation, pe[5:])


def test_rotation_against_the_formula() -> None:
    # Block i is [[cos a, -sin a], [sin a, cos a]], a = k / 10000**(2i/D); zeros elsewhere.
    k, d_model = 2.5, 6
    expected = np.zeros((6, 6))
    for i in range(3):
        a = k / 10000 ** (2 * i / d_model)
        expected[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [math.cos(a), -math.sin(a)],
            [math.sin(a), math.cos(a)],
        ]
    np.testing.assert_allclose(shift_rotation(k, d_model), expected, rtol=0, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    d_model=st.integers(min_value=1, max_value=32).map(lambda d: 2 * d),
    a=st.floats(min_value=-100, max_value=100),
    b=st.floats(min_value=-100, max_value=100),
)
def test_property_rotations_are_orthogonal_invert_and_add(d_model: int, a: float, b: float) -> None:
    r_a, r_b = shift_rotation(a, d_model), shift_rotation(b, d_model)
    assert r_a.dtype == np.float64
    assert r_a.shape == (d_model, d_model)
    np.testing.assert_allclose(r_a.T @ r_a, np.eye(d_model), rtol=0, atol=1e-12)
    np.testing.assert_allclose(shift_rotation(-a, d_model), r_a.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r_a @ r_b, shift_rotation(a + b, d_model), rtol=0, atol=1e-10)
    assert np.isclose(np.linalg.det(r_a), 1.0)


def test_zero_shift_is_the_identity() -> None:
    np.testing.assert_array_equal(shift_rotation(0, 10), np.eye(10))


def test_dot_product_is_symmetric_in_the_offset() -> None:
    pe = positional_encoding_numpy(120, 32)
    for p in (40, 55, 60):
        for k in range(1, 40):
            assert abs(pe[p] @ pe[p + k] - pe[p] @ pe[p - k]) <= 1e-12
            # and it is the sum of cos(k w_i) over the pairs
            freqs = 10000.0 ** (-np.arange(0, 32, 2) / 32)
            assert abs(pe[p] @ pe[p + k] - np.cos(k * freqs).sum()) <= 1e-12


def test_projected_scores_tell_ahead_from_behind() -> None:
    pe = positional_encoding_numpy(100, 16)
    rng = np.random.default_rng(1)
    w_q, w_k = rng.standard_normal((2, 16, 4))
    scores = (pe @ w_q) @ (pe @ w_k).T  # (T, T)
    p = 50
    differences = []
    for k in range(1, 20):
        rotation = shift_rotation(k, 16)
        difference = scores[p, p + k] - scores[p, p - k]
        assert np.isclose(difference, pe[p] @ w_q @ w_k.T @ (rotation.T - rotation) @ pe[p])
        differences.append(abs(difference))
    assert max(differences) > 0.1
    # With W_q W_k^T a multiple of the identity the form is symmetric: no difference.
    scaled = (pe @ (2 * np.eye(16))) @ (pe @ (3 * np.eye(16))).T
    assert all(abs(scaled[p, p + k] - scaled[p, p - k]) <= 1e-9 for k in range(1, 20))
    # Tied projections W_q = W_k give a symmetric W_q W_k^T, which is not enough.
    tied = (pe @ w_q) @ (pe @ w_q).T
    assert max(abs(tied[p, p + k] - tied[p, p - k]) for k in range(1, 20)) > 0.1


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((1, 7), ValueError, r"d_model must be even \(pairs of sine and cosine columns\), got 7"),
        ((1, 0), ValueError, "d_model must be an integer >= 2, got 0"),
        ((1, 2.0), TypeError, "d_model must be an integer"),
        ((float("nan"), 4), ValueError, "offset must be a finite real number"),
        ((float("inf"), 4), ValueError, "offset must be a finite real number"),
        (("3", 4), TypeError, "offset must be a real number"),
        ((True, 4), TypeError, "offset must be a real number"),
        ((None, 4), TypeError, "offset must be a real number"),
    ],
)
def test_shift_rotation_errors(args, error, match) -> None:
    with pytest.raises(error, match=match):
        shift_rotation(*args)


def test_shift_rotation_accepts_numpy_numbers() -> None:
    np.testing.assert_array_equal(shift_rotation(np.int64(3), np.int32(4)), shift_rotation(3, 4))
