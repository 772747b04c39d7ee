"""Input validation shared by the public functions of :mod:`lessons_code`.

Every public entry point checks what it is given before any tensor arithmetic
runs, so a reader who passes the wrong thing gets a message that names the
parameter, what was expected and what arrived -- never a shape error raised
from deep inside PyTorch.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch

__all__ = [
    "check_array",
    "check_positive_int",
    "check_tensor",
]


def _describe(value: object) -> str:
    """Return a short description of ``value`` for an error message."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"{value!r} of type {type(value).__name__}"


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``.

    Booleans are rejected even though Python treats them as integers: ``True``
    as a sequence length is always a mistake.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value`` is smaller than ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {_describe(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_tensor(
    value: object,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    last_dim: int | None = None,
) -> torch.Tensor:
    """Return ``value`` if it is a floating-point tensor of an accepted rank.

    Parameters
    ----------
    value
        The object to check.
    name
        The parameter name used in error messages.
    ndim
        Accepted number(s) of dimensions, or ``None`` for any.
    last_dim
        Required size of the last dimension, or ``None`` for any.

    Raises
    ------
    TypeError
        If ``value`` is not a floating-point :class:`torch.Tensor`.
    ValueError
        If its rank or last dimension is not the expected one.
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {_describe(value)}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {_describe(value)}")
    if ndim is not None:
        accepted = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if value.ndim not in accepted:
            wanted = " or ".join(str(n) for n in accepted)
            raise ValueError(
                f"{name} must have {wanted} dimensions, got {value.ndim} "
                f"(shape {tuple(value.shape)})"
            )
    if last_dim is not None and (value.ndim == 0 or value.shape[-1] != last_dim):
        raise ValueError(
            f"{name} must have last dimension {last_dim}, got shape {tuple(value.shape)}"
        )
    return value


def check_array(
    value: object,
    name: str,
    *,
    ndim: int | None = None,
) -> np.ndarray:
    """Return ``value`` as a floating-point NumPy array of rank ``ndim``.

    Raises
    ------
    TypeError
        If ``value`` is not a real numeric NumPy array.
    ValueError
        If its rank is not ``ndim``.
    """
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {_describe(value)}")
    if not (np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got {_describe(value)}")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimensions, got {value.ndim} (shape {value.shape})"
        )
    return value.astype(np.result_type(value.dtype, np.float64), copy=False)
