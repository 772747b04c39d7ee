"""Input validation shared by the public functions of :mod:`lessons_code`.

Every public entry point checks what it is given before any tensor arithmetic
runs, so a reader who passes the wrong thing gets a message that names the
parameter, what was expected and what arrived -- never a shape error raised
from deep inside PyTorch.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import numpy as np
import torch

__all__ = [
    "check_array",
    "check_bool",
    "check_bool_mask",
    "check_device",
    "check_int",
    "check_int_list",
    "check_like",
    "check_optimizer_and_scheduler",
    "check_real",
    "check_tensor",
]


def _describe(value: object) -> str:
    """Return a short description of ``value`` for an error message."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"{value!r} of type {type(value).__name__}"


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` if it is a ``bool`` (not merely truthy, not 0 or 1).

    Raises
    ------
    TypeError
        If ``value`` is not a ``bool``.
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {_describe(value)}")
    return value


def check_int(value: object, name: str, *, minimum: int) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``.

    Every caller states the bound: ``minimum=1`` for a size, ``minimum=0``
    for a seed or a count that may be zero, ``minimum=2`` for a sequence that
    needs two distinct positions.

    Booleans are rejected even though Python treats them as integers: ``True``
    as a sequence length is always a mistake.

    Parameters
    ----------
    value
        The object to check.
    name
        The parameter name used in error messages.
    minimum
        The smallest accepted value.

    Returns
    -------
    int
        ``value`` as a plain Python ``int``.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value`` is smaller than ``minimum``.

    Examples
    --------
    >>> check_int(0, "seed", minimum=0)
    0
    >>> check_int(0, "d_model", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: d_model must be an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an integer >= {minimum}, got {_describe(value)}"
        )
    if value < minimum:
        raise ValueError(
            f"{name} must be an integer >= {minimum}, got {value}"
        )
    return int(value)


def check_int_list(
    values: object, name: str, *, minimum: int
) -> list[int]:
    """Return ``values`` as a non-empty list of integers, each ``>= minimum``.

    Parameters
    ----------
    values
        The object to check: an iterable of integers, e.g. ``range(5)``.
    name
        The parameter name used in error messages (an entry is named
        ``name[i]``).
    minimum
        The smallest accepted value of every entry.

    Returns
    -------
    list of int
        The entries, in order, as plain Python ``int``.

    Raises
    ------
    TypeError
        If ``values`` is not an iterable of integers (a string is not).
    ValueError
        If it is empty or an entry is smaller than ``minimum``.

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


def check_device(value: object, name: str) -> torch.device:
    """Return ``value`` as a :class:`torch.device`; ``None`` means the CPU.

    Parameters
    ----------
    value
        ``None``, a device name such as ``"cpu"`` or ``"cuda:0"``, or a
        :class:`torch.device`.
    name
        The parameter name used in error messages.

    Returns
    -------
    torch.device
        The device.

    Raises
    ------
    TypeError
        If ``value`` is none of the above.
    ValueError
        If ``value`` is a string that names no device type.

    Examples
    --------
    >>> check_device(None, "device"), check_device("cpu", "device")
    (device(type='cpu'), device(type='cpu'))
    """
    if value is None:
        return torch.device("cpu")
    if isinstance(value, torch.device):
        return value
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be None, a device name or a torch.device, got {_describe(value)}"
        )
    try:
        return torch.device(value)
    except RuntimeError as error:
        raise ValueError(
            f"{name} must name a device such as 'cpu' or 'cuda', got {value!r}"
        ) from error


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
        raise TypeError(
            f"{name} must be a torch.Tensor, got {_describe(value)}"
        )
    if not value.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype, got {_describe(value)}"
        )
    if ndim is not None:
        accepted = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if value.ndim not in accepted:
            wanted = " or ".join(str(n) for n in accepted)
            raise ValueError(
                f"{name} must have {wanted} dimensions, got {value.ndim} "
                f"(shape {tuple(value.shape)})"
            )
    if last_dim is not None and (
        value.ndim == 0 or value.shape[-1] != last_dim
    ):
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
        raise TypeError(
            f"{name} must be a numpy.ndarray, got {_describe(value)}"
        )
    if not (
        np.issubdtype(value.dtype, np.floating)
        or np.issubdtype(value.dtype, np.integer)
    ):
        raise TypeError(
            f"{name} must hold real numbers, got {_describe(value)}"
        )
    if ndim is not None and value.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimensions, got {value.ndim} (shape {value.shape})"
        )
    return value.astype(
        np.result_type(value.dtype, np.float64), copy=False
    )


def check_real(
    value: object,
    name: str,
    *,
    minimum: float = 0.0,
    strict: bool = False,
) -> float:
    """Return ``value`` as a ``float`` if it is a finite real number above ``minimum``.

    Parameters
    ----------
    value
        The object to check.
    name
        The parameter name used in error messages.
    minimum
        The smallest accepted value.
    strict
        If ``True``, ``minimum`` itself is rejected (``value > minimum``);
        otherwise it is accepted (``value >= minimum``).

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans are rejected).
    ValueError
        If ``value`` is not finite or is below (or, with ``strict``, equal to)
        ``minimum``.
    """
    relation = ">" if strict else ">="
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number {relation} {minimum}, got {_describe(value)}"
        )
    number = float(value)
    too_small = number <= minimum if strict else number < minimum
    if not np.isfinite(number) or too_small:
        raise ValueError(
            f"{name} must be a finite real number {relation} {minimum}, got {value}"
        )
    return number


def check_bool_mask(
    value: object, name: str, *, shape: Sequence[int]
) -> torch.Tensor:
    """Return ``value`` if it is a boolean tensor that broadcasts to ``shape``.

    Masks in :mod:`lessons_code` use the convention of
    ``torch.nn.functional.scaled_dot_product_attention``: ``True`` means
    "may attend".

    Parameters
    ----------
    value
        The object to check.
    name
        The parameter name used in error messages.
    shape
        The shape the mask must broadcast to without growing, e.g. the shape of
        the attention scores ``(B, H, T_q, T_k)``.

    Raises
    ------
    TypeError
        If ``value`` is not a tensor of dtype ``torch.bool``.
    ValueError
        If its shape does not broadcast to ``shape``.
    """
    target = torch.Size(tuple(shape))
    if not isinstance(value, torch.Tensor) or value.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a boolean torch.Tensor (True = may attend), got {_describe(value)}"
        )
    try:
        broadcast = torch.broadcast_shapes(value.shape, target)
    except RuntimeError:
        broadcast = None
    if broadcast != target:
        raise ValueError(
            f"{name} must broadcast to shape {tuple(target)}, got shape {tuple(value.shape)}"
        )
    return value


def check_like(
    value: torch.Tensor, name: str, *, like: torch.Tensor, like_name: str
) -> None:
    """Check that ``value`` has the dtype and device of ``like``.

    Raises
    ------
    TypeError
        If the dtypes differ.
    ValueError
        If the devices differ.
    """
    if value.dtype != like.dtype:
        raise TypeError(
            f"{name} must have the dtype of {like_name} ({like.dtype}), got {value.dtype}"
        )
    if value.device != like.device:
        raise ValueError(
            f"{name} must be on the device of {like_name} ({like.device}), got {value.device}"
        )


def check_optimizer_and_scheduler(
    optimizer: object, scheduler: object
) -> None:
    """Check the ``optimizer`` and ``scheduler`` of a training step.

    Parameters
    ----------
    optimizer
        The object passed as ``optimizer``.
    scheduler
        The object passed as ``scheduler``; it must schedule ``optimizer``.

    Raises
    ------
    TypeError
        If ``optimizer`` is not a :class:`torch.optim.Optimizer` or
        ``scheduler`` not a :class:`torch.optim.lr_scheduler.LRScheduler`.
    ValueError
        If ``scheduler`` schedules another optimiser.

    Examples
    --------
    >>> optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> check_optimizer_and_scheduler(optimizer, "warm-up")
    Traceback (most recent call last):
    ...
    TypeError: scheduler must be a torch.optim.lr_scheduler.LRScheduler, got str
    """
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            "optimizer must be a torch.optim.Optimizer, got "
            f"{type(optimizer).__name__}"
        )
    if not isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler):
        raise TypeError(
            "scheduler must be a torch.optim.lr_scheduler.LRScheduler, "
            f"got {type(scheduler).__name__}"
        )
    if scheduler.optimizer is not optimizer:
        raise ValueError(
            "scheduler must schedule the optimizer passed as optimizer, "
            "got a scheduler of another optimizer"
        )
