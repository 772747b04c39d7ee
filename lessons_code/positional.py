r"""Sinusoidal positional encoding (Vaswani et al., 2017).

Self-attention treats its input as a set, so the order of the tokens has to be
added to the tokens themselves. The original Transformer adds a fixed table
``PE`` of shape ``(T, D)`` to the embeddings:

.. math::

   \begin{aligned}
   PE_{(pos, 2i)} &= \sin\!\left(\frac{pos}{10000^{2i/D}}\right),\\
   PE_{(pos, 2i+1)} &= \cos\!\left(\frac{pos}{10000^{2i/D}}\right).
   \end{aligned}

Column ``j`` oscillates with angular frequency ``10000 ** (-2 * (j // 2) / D)``:
even columns carry the sine, odd columns the cosine of the same frequency. The
two functions below compute the same table in two algebraically equal ways, one
in PyTorch and one in NumPy, so that a test can check them against each other.

A shift of every position by ``k`` turns each pair of columns by the angle
``k`` times its frequency: ``PE[pos + k] = PE[pos] @ R_k`` for every ``pos``,
where :func:`shift_rotation` builds the block-diagonal matrix ``R_k``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from lessons_code._checks import check_int, check_real

__all__ = [
    "positional_encoding",
    "positional_encoding_numpy",
    "shift_rotation",
]


def positional_encoding(
    num_positions: int,
    d_model: int,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Sinusoidal positional encoding in PyTorch, written in the power form.

    The formula is evaluated in float64 and rounded once, to ``dtype``: a
    float64 model gets the formula's float64 value, not a float32 table
    widened afterwards.

    Parameters
    ----------
    num_positions
        Number of positions ``T`` (rows of the table), at least 1.
    d_model
        Model width ``D`` (columns of the table), at least 1. An odd ``D``
        is allowed: its last column is a sine.

    Returns
    -------
    torch.Tensor
        A float32 tensor whose row ``pos`` is the encoding of position ``pos``.

    Shape
    -----
    Output: ``(T, D)``, where ``T`` is ``num_positions`` and ``D`` is ``d_model``.

    Raises
    ------
    TypeError
        If a size is not an integer or ``dtype`` is not a floating-point
        ``torch.dtype``.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> pe = positional_encoding(50, 32)
    >>> pe.shape
    torch.Size([50, 32])
    >>> float(pe[0, 1])  # cos(0)
    1.0
    >>> positional_encoding(50, 32, dtype=torch.float64).dtype
    torch.float64
    """
    num_positions = check_int(num_positions, "num_positions", minimum=1)
    d_model = check_int(d_model, "d_model", minimum=1)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"dtype must be a floating-point torch.dtype, got {dtype!r}"
        )

    # The computation runs in float64 (on the CPU, which every PyTorch
    # build can do in float64) and is rounded once at the end, to dtype.
    positions = torch.arange(num_positions, dtype=torch.float64)  # (T,)
    positions = positions.unsqueeze(1)  # (T, 1)
    # (D,): i for columns 2i, 2i+1
    pair_index = torch.arange(d_model, dtype=torch.float64) // 2
    inv_freq = 1.0 / 10000.0 ** (2.0 * pair_index / d_model)  # (D,)
    angles = positions * inv_freq  # (T, D)

    pe = torch.empty_like(angles)  # (T, D)
    pe[:, 0::2] = torch.sin(angles[:, 0::2])  # even columns: sine
    pe[:, 1::2] = torch.cos(angles[:, 1::2])  # odd columns: cosine
    return pe.to(device=device, dtype=dtype)


def positional_encoding_numpy(
    num_positions: int, d_model: int
) -> np.ndarray:
    """Sinusoidal positional encoding in NumPy, written in the exp-log form.

    Uses ``1 / 10000**(2i/D) == exp(-ln(10000) * 2i / D)``, the form many
    implementations use because it avoids a large power.

    Parameters
    ----------
    num_positions
        Number of positions ``T`` (rows of the table), at least 1.
    d_model
        Model width ``D`` (columns of the table), at least 1; an odd ``D`` is
        allowed and its last column is a sine.

    Returns
    -------
    numpy.ndarray
        A float64 array whose row ``pos`` is the encoding of position ``pos``.

    Shape
    -----
    Output: ``(T, D)``, where ``T`` is ``num_positions`` and ``D`` is ``d_model``.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> pe = positional_encoding_numpy(20, 16)
    >>> pe.shape
    (20, 16)
    >>> bool(abs(pe).max() <= 1.0)
    True
    """
    num_positions = check_int(num_positions, "num_positions", minimum=1)
    d_model = check_int(d_model, "d_model", minimum=1)

    # (T, 1)
    positions = np.arange(num_positions, dtype=np.float64)[:, None]
    # (ceil(D/2),): the values 2i
    even_dims = np.arange(0, d_model, 2, dtype=np.float64)
    # (ceil(D/2),)
    inv_freq = np.exp(-np.log(10000.0) * even_dims / d_model)
    angles = positions * inv_freq  # (T, ceil(D/2))

    pe = np.empty((num_positions, d_model), dtype=np.float64)  # (T, D)
    pe[:, 0::2] = np.sin(angles)  # ceil(D/2) sine columns
    # floor(D/2) cosine columns
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return pe


def shift_rotation(offset: float, d_model: int) -> np.ndarray:
    r"""Return the matrix that moves a sinusoidal encoding ``offset`` positions along.

    Column pair :math:`(2i, 2i+1)` of the encoding holds
    :math:`(\sin p\omega_i, \cos p\omega_i)` with
    :math:`\omega_i = 10000^{-2i/D}`. The angle-addition formulas give the
    pair at position :math:`p + k` from the pair at :math:`p` by a rotation
    through the angle :math:`k\omega_i`, whatever :math:`p` is. The returned
    matrix holds these :math:`2 \times 2` rotations on its diagonal, so that
    the row ``pe[p] @ shift_rotation(k, D)`` equals ``pe[p + k]`` for the
    table ``pe = positional_encoding_numpy(T, D)`` (rows are vectors, as in
    the rest of the package).

    Parameters
    ----------
    offset
        The shift :math:`k`, in positions; it may be negative (a shift
        back) or fractional.
    d_model
        Model width ``D``, even and at least 2 (an odd width ends with a
        sine that has no cosine to turn with).

    Returns
    -------
    numpy.ndarray
        A float64 orthogonal matrix with :math:`2 \times 2` blocks
        ``[[cos a, -sin a], [sin a, cos a]]``, ``a = offset * w_i``, on its
        diagonal and zeros elsewhere.

    Shape
    -----
    Output: ``(D, D)``, where ``D`` is ``d_model``.

    Raises
    ------
    TypeError
        If ``offset`` is not a real number or ``d_model`` not an integer.
    ValueError
        If ``offset`` is not finite, or ``d_model`` is smaller than 2 or odd.

    Examples
    --------
    >>> pe = positional_encoding_numpy(10, 8)
    >>> rotation = shift_rotation(3, 8)
    >>> rotation.shape
    (8, 8)
    >>> bool(np.allclose(pe[2] @ rotation, pe[5]))
    True
    >>> bool(np.allclose(shift_rotation(-3, 8), rotation.T))  # back is the inverse
    True
    """
    offset = check_real(offset, "offset", minimum=-math.inf)
    d_model = check_int(d_model, "d_model", minimum=2)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even (pairs of sine and cosine columns), got {d_model}"
        )

    # (D/2,): the values 2i, and w_i, the frequency of columns 2i, 2i + 1
    even_dims = np.arange(0, d_model, 2, dtype=np.float64)
    inv_freq = np.exp(-np.log(10000.0) * even_dims / d_model)
    angles = offset * inv_freq  # (D/2,): k w_i
    cos, sin = np.cos(angles), np.sin(angles)  # (D/2,), (D/2,)

    sines = np.arange(0, d_model, 2)  # (D/2,): the sine columns 2i
    cosines = sines + 1  # (D/2,): the cosine columns 2i + 1
    rotation = np.zeros((d_model, d_model))  # (D, D), acting on rows
    # column 2i of the result: sin(p + k) = sin(p) cos(k) + cos(p) sin(k)
    rotation[sines, sines] = cos
    rotation[cosines, sines] = sin
    # column 2i + 1: cos(p + k) = -sin(p) sin(k) + cos(p) cos(k)
    rotation[sines, cosines] = -sin
    rotation[cosines, cosines] = cos
    return rotation
