r"""Scaled dot-product attention and self-attention.

Attention compares each query with every key, turns the scores into weights
with a softmax, and returns the weighted sum of the values:

.. math::

   \operatorname{Attention}(Q, K, V)
   = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V.

In *self*-attention the queries, keys and values are three projections of the
same sequence ``X``: ``Q = X W_q``, ``K = X W_k`` and ``V = X W_v``.

Masks follow the convention of
``torch.nn.functional.scaled_dot_product_attention``: a boolean mask whose
entry ``[i, j]`` is ``True`` when query ``i`` *may attend* to key ``j``.
Beware that ``torch.nn.MultiheadAttention`` and the ``torch.nn.Transformer*``
layers read a boolean mask the opposite way (``True`` means "masked out"), so
a mask built here must be inverted with ``~mask`` before it is passed to them.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from lessons_code._checks import (
    check_array,
    check_bool_mask,
    check_int,
    check_like,
    check_tensor,
)

__all__ = [
    "causal_mask",
    "scaled_dot_product_attention",
    "self_attention",
    "softmax",
]


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax in NumPy.

    Subtracting the largest entry before exponentiating leaves the result
    unchanged (the factor ``exp(-max)`` cancels) but keeps ``exp`` from
    overflowing. Entries equal to ``-inf`` get probability 0.

    Parameters
    ----------
    z
        Real-valued scores.
    axis
        The axis along which the probabilities sum to 1.

    Returns
    -------
    numpy.ndarray
        Non-negative float64 values that sum to 1 along ``axis``.

    Shape
    -----
    Output: the shape of ``z``.

    Raises
    ------
    TypeError
        If ``z`` is not a real NumPy array or ``axis`` is not an integer.
    ValueError
        If ``z`` has no dimensions, ``axis`` is out of range, or a slice along
        ``axis`` is entirely ``-inf`` (it has no probability to distribute).

    Examples
    --------
    >>> p = softmax(np.array([1.0, 2.0, 3.0]))
    >>> p.round(3)
    array([0.09 , 0.245, 0.665])
    >>> bool(np.isclose(p.sum(), 1.0))
    True
    >>> softmax(np.array([1000.0, 1000.0]))  # no overflow
    array([0.5, 0.5])
    """
    z = check_array(z, "z")
    if z.ndim == 0:
        raise ValueError(
            "z must have at least 1 dimension, got a 0-dimensional array"
        )
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(
            f"axis must be an integer, got {axis!r} of type {type(axis).__name__}"
        )
    if not -z.ndim <= axis < z.ndim:
        raise ValueError(
            f"axis must be in [{-z.ndim}, {z.ndim - 1}] for z of shape {z.shape}, got {axis}"
        )

    z_max = z.max(axis=axis, keepdims=True)
    if np.isneginf(z_max).any():
        raise ValueError(
            f"z has a slice along axis {axis} whose entries are all -inf"
        )
    exp_z = np.exp(z - z_max)
    return exp_z / exp_z.sum(axis=axis, keepdims=True)


def self_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Single-head self-attention in NumPy.

    Queries, keys and values are projections of the same sequence:
    ``Q = X W_q``, ``K = X W_k``, ``V = X W_v``; the output is
    ``softmax(Q K^T / sqrt(d_k)) V``.

    Parameters
    ----------
    x
        The sequence, one token per row.
    w_q, w_k
        Query and key projections; they must have the same width ``d_k``.
    w_v
        Value projection.
    mask
        Optional boolean array; ``mask[i, j]`` is ``True`` when token ``i`` may
        attend to token ``j`` (the opposite of the boolean masks of
        ``torch.nn.MultiheadAttention``). Every row needs at least one ``True``.

    Returns
    -------
    output : numpy.ndarray
        The attended values, float64.
    weights : numpy.ndarray
        The attention weights; each row sums to 1, masked entries are 0.

    Shape
    -----
    - ``x``: ``(T, D)``; ``w_q``, ``w_k``: ``(D, d_k)``; ``w_v``: ``(D, d_v)``;
      ``mask``: ``(T, T)``.
    - Output: ``output`` ``(T, d_v)`` and ``weights`` ``(T, T)``.

    where ``T`` is the number of tokens, ``D`` the model width, ``d_k`` the
    query/key width and ``d_v`` the value width.

    Raises
    ------
    TypeError
        If an input is not a real NumPy array, or ``mask`` is not boolean.
    ValueError
        If a shape does not fit the others, or a row of ``mask`` lets its
        token attend to nothing.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((5, 6))
    >>> w_q, w_k, w_v = (0.3 * rng.standard_normal((6, 6)) for _ in range(3))
    >>> out, weights = self_attention(x, w_q, w_k, w_v)
    >>> out.shape, weights.shape
    ((5, 6), (5, 5))
    >>> bool(np.allclose(weights.sum(axis=1), 1.0))
    True
    """
    x = check_array(x, "x", ndim=2)
    w_q = check_array(w_q, "w_q", ndim=2)
    w_k = check_array(w_k, "w_k", ndim=2)
    w_v = check_array(w_v, "w_v", ndim=2)
    T, D = x.shape
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != D:
            raise ValueError(
                f"{name} must have {D} rows (the width D of x), got shape {w.shape}"
            )
    if w_k.shape[1] != w_q.shape[1]:
        raise ValueError(
            f"w_k must have the width d_k = {w_q.shape[1]} of w_q, got shape {w_k.shape}"
        )
    if mask is not None:
        mask = _check_numpy_mask(mask, T)

    q = x @ w_q  # (T, d_k)
    k = x @ w_k  # (T, d_k)
    v = x @ w_v  # (T, d_v)
    d_k = q.shape[1]

    scores = q @ k.T / np.sqrt(d_k)  # (T, T)
    if mask is not None:
        # forbidden pairs get weight exp(-inf) = 0
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)  # (T, T), rows sum to 1
    return weights @ v, weights  # (T, d_v), (T, T)


def _check_numpy_mask(mask: object, seq_len: int) -> np.ndarray:
    """Return ``mask`` if it is a ``(T, T)`` boolean array with a ``True`` in every row."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise TypeError(
            f"mask must be a boolean numpy.ndarray (True = may attend), got {type(mask).__name__}"
            + (
                f" of dtype {mask.dtype}"
                if isinstance(mask, np.ndarray)
                else ""
            )
        )
    if mask.shape != (seq_len, seq_len):
        raise ValueError(
            f"mask must have shape {(seq_len, seq_len)}, got shape {mask.shape}"
        )
    if not mask.any(axis=1).all():
        rows = np.flatnonzero(~mask.any(axis=1)).tolist()
        raise ValueError(
            f"mask lets rows {rows} attend to no token; every row needs a True"
        )
    return mask


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention in PyTorch, with the weights returned.

    Computes ``softmax(q k^T / sqrt(d_k)) v`` over the last two dimensions;
    any leading dimensions (batch, heads) are broadcast like a matrix product.

    Parameters
    ----------
    q
        Queries.
    k
        Keys; same width ``d_k`` as the queries.
    v
        Values; one per key.
    mask
        Optional boolean tensor, ``True`` where a query *may attend* to a key
        (the convention of ``torch.nn.functional.scaled_dot_product_attention``;
        ``torch.nn.MultiheadAttention`` uses the opposite meaning). It must
        broadcast to the shape of the scores ``(..., T_q, T_k)``.

    Returns
    -------
    output : torch.Tensor
        The weighted sums of the values.
    weights : torch.Tensor
        The attention weights; each row sums to 1, masked entries are 0.

    Shape
    -----
    - ``q``: ``(..., T_q, d_k)``, ``k``: ``(..., T_k, d_k)``, ``v``: ``(..., T_k, d_v)``,
      ``mask``: broadcastable to ``(..., T_q, T_k)``.
    - Output: ``output`` ``(..., T_q, d_v)`` and ``weights`` ``(..., T_q, T_k)``.

    where ``...`` are leading batch dimensions (e.g. ``B`` or ``B, H``),
    ``T_q`` / ``T_k`` the numbers of queries / keys, ``d_k`` the query and key
    width and ``d_v`` the value width.

    Raises
    ------
    TypeError
        If an input is not a floating-point tensor, the dtypes differ, or
        ``mask`` is not boolean.
    ValueError
        If a shape does not fit the others, the devices differ, or ``mask``
        leaves some query with no key to attend to (its softmax would be
        ``0 / 0 = NaN``).

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(2, 5, 4, generator=g) for _ in range(3))
    >>> out, weights = scaled_dot_product_attention(q, k, v, mask=causal_mask(5))
    >>> out.shape, weights.shape
    (torch.Size([2, 5, 4]), torch.Size([2, 5, 5]))
    >>> bool(weights[0].triu(diagonal=1).eq(0).all())  # no weight on the future
    True
    """
    q = check_tensor(q, "q")
    k = check_tensor(k, "k")
    v = check_tensor(v, "v")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.ndim < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., T, d), got shape {tuple(t.shape)}"
            )
    check_like(k, "k", like=q, like_name="q")
    check_like(v, "v", like=q, like_name="q")
    *_, T_q, d_k = q.shape
    *_, T_k, _ = k.shape
    if k.shape[-1] != d_k:
        raise ValueError(
            f"k must have the width d_k = {d_k} of q, got k of shape {tuple(k.shape)} "
            f"and q of shape {tuple(q.shape)}"
        )
    if v.shape[-2] != T_k:
        raise ValueError(
            f"v must have one row per key (T_k = {T_k}), got v of shape {tuple(v.shape)} "
            f"and k of shape {tuple(k.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(
            q.shape[:-2], k.shape[:-2], v.shape[:-2]
        )
    except RuntimeError:
        raise ValueError(
            "the leading (batch) dimensions of q, k and v must broadcast, got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)} and {tuple(v.shape)}"
        ) from None
    if mask is not None:
        mask = check_bool_mask(mask, "mask", shape=(*batch, T_q, T_k))
        if mask.device != q.device:
            raise ValueError(
                f"mask must be on the device of q ({q.device}), got {mask.device}"
            )
        if not mask.any(dim=-1).all():
            raise ValueError(
                "mask leaves at least one query with no key to attend to; "
                "every query row needs at least one True"
            )

    # Scaling q (T_q * d_k numbers) rather than the scores (T_q * T_k
    # numbers) gives the same scores, with fewer divisions when d_k < T_k,
    # and the same rounding when sqrt(d_k) is a power of two (d_k = 1, 4,
    # 16, 64, ...).
    scores = (q / math.sqrt(d_k)) @ k.transpose(-2, -1)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # weight 0
    # (..., T_q, T_k), every row sums to 1
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def causal_mask(
    seq_len: int, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """Boolean causal mask: position ``t`` may attend to positions ``<= t``.

    ``True`` means "may attend" (the convention of
    ``torch.nn.functional.scaled_dot_product_attention``). For
    ``torch.nn.MultiheadAttention`` or ``torch.nn.Transformer*`` layers pass
    ``~causal_mask(T)`` instead, since there ``True`` means "masked out".

    Parameters
    ----------
    seq_len
        Sequence length ``T``, at least 1.
    device
        Device of the returned tensor (default: the CPU).

    Returns
    -------
    torch.Tensor
        A ``torch.bool`` tensor, ``True`` on and below the diagonal.

    Shape
    -----
    Output: ``(T, T)``, where ``T`` is ``seq_len``.

    Raises
    ------
    TypeError
        If ``seq_len`` is not an integer.
    ValueError
        If ``seq_len`` is smaller than 1.

    Examples
    --------
    >>> causal_mask(3)
    tensor([[ True, False, False],
            [ True,  True, False],
            [ True,  True,  True]])
    """
    seq_len = check_int(seq_len, "seq_len", minimum=1)
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device)
    return torch.tril(ones)  # (T, T)
