r"""The decoder-only Transformer of today's language models, one change at a time.

The 2017 block (:mod:`lessons_code.blocks`) and the blocks of current
decoder-only models (Llama and its relatives) differ in a handful of parts,
each of which is a small module or function here:

- :class:`RMSNorm` in front of each sub-layer (pre-norm): it scales every
  token to unit root mean square and learns one gain per feature, with no
  mean subtracted and no bias;
- :class:`SwiGLU`, a gated feed-forward network:
  ``down(silu(gate(x)) * up(x))``;
- rotary position embeddings (:func:`rope_tables`, :func:`apply_rope`): the
  queries and keys are *rotated* by an angle proportional to their position,
  pair of features by pair of features, so that a query-key score depends
  on the two positions only through their difference;
- grouped-query attention (:func:`grouped_query_attention`,
  :class:`GroupedQueryAttention`): ``H`` query heads share ``H_kv`` key and
  value heads, from multi-head (``H_kv = H``) to multi-query (``H_kv = 1``);
- a key-value cache (:class:`KVCache`) for generation, so that each new
  token computes its own keys and values only;
- :class:`ModernBlock` and :class:`DecoderOnlyLM`, which put them together,
  and :func:`generate` with the samplers of :func:`next_token_distribution`
  (greedy, temperature, top-k, top-p).

Rotary layout. The book's positional-encoding page shows that a shift by
``p`` positions turns each pair of columns ``(2i, 2i + 1)`` of the
sinusoidal table by the angle ``p * w_i``
(:func:`lessons_code.positional.shift_rotation`). RoPE applies that same
rotation to the queries and keys, so :func:`apply_rope` pairs the features
``(2i, 2i + 1)`` of each head, as the RoPE paper writes it. Hugging Face's
Llama code pairs feature ``i`` with feature ``i + d_head / 2`` instead
("rotate half"). The two layouts differ only in the order of the features
within a head: a score is a dot product, which is unchanged when the
features of both the query and the key are permuted alike. So
:meth:`ModernBlock.from_llama` reorders the rows of the query and key
projections (:func:`interleave_rope_rows`) and the copied block computes
the same function; the book keeps the pairing that its earlier page derives.

Shapes use ``B`` for the batch size, ``T`` for the sequence length, ``D``
for the model width, ``H`` for the query heads, ``H_kv`` for the key and
value heads, ``d_head = D / H`` and ``V`` for the vocabulary size.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_device,
    check_int,
    check_like,
    check_real,
    check_tensor,
)
from lessons_code.attention import scaled_dot_product_attention
from lessons_code.multihead import merge_heads, split_heads
from lessons_code.positional import positional_encoding
from lessons_code.transformer import _check_tokens

__all__ = [
    "DecoderOnlyLM",
    "GroupedQueryAttention",
    "KVCache",
    "ModernBlock",
    "RMSNorm",
    "SwiGLU",
    "apply_rope",
    "attention_scores_per_step",
    "generate",
    "grouped_query_attention",
    "interleave_rope_rows",
    "kv_cache_size",
    "next_token_distribution",
    "repeat_kv_heads",
    "rope_tables",
    "sample",
]

# The wavelengths of the rotary angles, as in the sinusoidal encoding.
ROPE_BASE = 10000.0
# The position schemes DecoderOnlyLM offers.
_POSITIONS = ("rope", "sinusoidal", "none")


def _check_dtype(dtype: object) -> torch.dtype:
    """Return ``dtype`` if it is a floating-point ``torch.dtype``."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            f"dtype must be a floating-point torch.dtype, got {dtype!r}"
        )
    return dtype


def _check_heads(d_model: int, num_heads: int, num_kv_heads: int) -> None:
    """Raise unless the head counts divide: ``H | D`` and ``H_kv | H``."""
    if d_model % num_heads:
        raise ValueError(
            f"num_heads must divide d_model, got d_model={d_model} "
            f"and num_heads={num_heads}"
        )
    if num_heads % num_kv_heads:
        raise ValueError(
            f"num_kv_heads must divide num_heads, got num_heads={num_heads} "
            f"and num_kv_heads={num_kv_heads}"
        )


# --------------------------------------------------------------------------
# RMSNorm and SwiGLU
# --------------------------------------------------------------------------


class RMSNorm(nn.Module):
    r"""Root-mean-square normalisation with a learned gain per feature.

    .. math::

       \operatorname{RMSNorm}(x)_i = \frac{x_i}{\sqrt{\tfrac{1}{D}\sum_j x_j^2
       + \varepsilon}}\;\gamma_i

    Unlike LayerNorm it subtracts no mean and adds no bias: it only rescales
    each token to unit root mean square, then multiplies feature ``i`` by
    its learned gain :math:`\gamma_i` (``weight``). It computes what
    ``torch.nn.RMSNorm(D, eps=eps)`` computes; :meth:`from_torch` copies one.

    Parameters
    ----------
    d_model
        Model width ``D``, the number of features normalised together.
    eps
        Small positive number added to the mean square.

    Shape
    -----
    - Input: ``(..., D)``.
    - Output: ``(..., D)``.

    where ``D`` is the model width.

    Raises
    ------
    TypeError
        If ``d_model`` is not an integer or ``eps`` not a real number.
    ValueError
        If ``d_model < 1`` or ``eps`` is not positive.

    Examples
    --------
    >>> norm = RMSNorm(4)
    >>> norm(torch.tensor([[3.0, -3.0, 3.0, -3.0]]))
    tensor([[ 1.0000, -1.0000,  1.0000, -1.0000]], grad_fn=<MulBackward0>)
    >>> sum(p.numel() for p in norm.parameters())  # one gain per feature
    4
    """

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.d_model = check_int(d_model, "d_model", minimum=1)
        self.eps = check_real(eps, "eps", strict=True)
        self.weight = nn.Parameter(torch.ones(self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise every token of ``x`` ``(..., D)`` and apply the gain."""
        x = check_tensor(x, "x", last_dim=self.d_model)
        check_like(
            x, "x", like=self.weight, like_name="the module's parameters"
        )
        mean_square = x.pow(2).mean(dim=-1, keepdim=True)  # (..., 1)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, eps={self.eps}"

    @classmethod
    def from_torch(cls, norm: nn.RMSNorm) -> RMSNorm:
        """Build an :class:`RMSNorm` with the gain and epsilon of ``norm``.

        Parameters
        ----------
        norm
            A ``torch.nn.RMSNorm`` over one dimension, with a gain
            (``elementwise_affine=True``). Its ``eps=None`` means the
            machine epsilon of its dtype, which is copied as a number.

        Returns
        -------
        RMSNorm
            A new module on the device and with the dtype of ``norm``.

        Raises
        ------
        TypeError
            If ``norm`` is not a ``torch.nn.RMSNorm``.
        ValueError
            If it normalises more than one dimension or has no gain.

        Examples
        --------
        >>> torch_norm = nn.RMSNorm(8, eps=1e-6)
        >>> x = torch.randn(2, 3, 8)
        >>> bool((RMSNorm.from_torch(torch_norm)(x) - torch_norm(x)).abs().max() < 1e-6)
        True
        """
        if not isinstance(norm, nn.RMSNorm):
            raise TypeError(
                f"norm must be a torch.nn.RMSNorm, got {type(norm).__name__}"
            )
        if len(norm.normalized_shape) != 1:
            raise ValueError(
                "norm must normalise one dimension, got normalized_shape "
                f"{tuple(norm.normalized_shape)}"
            )
        if norm.weight is None:
            raise ValueError(
                "norm must have a gain (elementwise_affine=True)"
            )
        weight = norm.weight
        eps = norm.eps
        if eps is None:  # PyTorch then uses its dtype's machine epsilon
            eps = torch.finfo(weight.dtype).eps
        module = cls(norm.normalized_shape[0], eps=eps)
        module = module.to(device=weight.device, dtype=weight.dtype)
        with torch.no_grad():
            module.weight.copy_(weight)
        return module


class SwiGLU(nn.Module):
    """The gated feed-forward network of Llama: ``down(silu(gate(x)) * up(x))``.

    Two projections from ``D`` to ``FF`` run side by side: the ``gate``
    goes through SiLU (``z * sigmoid(z)``) and multiplies the ``up``
    projection feature by feature; ``down`` maps the product back to ``D``.
    No projection has a bias. With three matrices instead of two, a SwiGLU
    network of hidden width ``FF`` has ``3 D FF`` parameters.

    Parameters
    ----------
    d_model
        Model width ``D``.
    d_ff
        Hidden width ``FF``.

    Shape
    -----
    - Input: ``(..., D)``.
    - Output: ``(..., D)``.

    where ``D`` is the model width.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> ff = SwiGLU(d_model=16, d_ff=32)
    >>> ff(torch.randn(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    >>> sum(p.numel() for p in ff.parameters()) == 3 * 16 * 32
    True
    """

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.d_model = check_int(d_model, "d_model", minimum=1)
        self.d_ff = check_int(d_ff, "d_ff", minimum=1)
        self.gate_proj = nn.Linear(self.d_model, self.d_ff, bias=False)
        self.up_proj = nn.Linear(self.d_model, self.d_ff, bias=False)
        self.down_proj = nn.Linear(self.d_ff, self.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the network to every position of ``x`` ``(..., D)``."""
        hidden = F.silu(self.gate_proj(x)) * self.up_proj(x)  # (..., FF)
        return self.down_proj(hidden)  # (..., D)


# --------------------------------------------------------------------------
# Rotary position embeddings
# --------------------------------------------------------------------------


def rope_tables(
    num_positions: int,
    d_head: int,
    *,
    start: int = 0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
    base: float = ROPE_BASE,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Return the cosines and sines of the rotary angles ``p * w_i``.

    Feature pair ``(2i, 2i + 1)`` of a head at position ``p`` is turned by
    the angle :math:`p\,\omega_i` with ``w_i = base ** (-2i / d)``,
    ``d = d_head``: with the default base, :math:`\omega_i = 10000^{-2i/d}`,
    the frequencies of the sinusoidal encoding over the width of one head.
    A larger base slows every pair but the first (Llama 3 uses 500,000).
    The angles are computed in float64 and the cosines and sines rounded
    once, to ``dtype``; row ``t`` depends on its position
    ``start + t`` alone, so the rows of a table that starts later equal
    the matching rows of a longer one.

    Parameters
    ----------
    num_positions
        Number of positions ``T`` (rows), at least 1.
    d_head
        Head width ``d``, even and at least 2.
    start
        The position of the first row (a cached generation step starts
        where the cache ends).
    dtype
        Floating-point dtype of the tables.
    device
        Device of the tables (default: the CPU).
    base
        The base of the frequencies, greater than 1.

    Returns
    -------
    cos : torch.Tensor
        ``cos(p * w_i)`` for ``p = start, ..., start + T - 1``.
    sin : torch.Tensor
        ``sin(p * w_i)``, likewise.

    Shape
    -----
    Output: two tensors of shape ``(T, d / 2)``, one column per feature pair.

    Raises
    ------
    TypeError
        If a size or ``start`` is not an integer, or ``dtype`` is not a
        floating-point ``torch.dtype``.
    ValueError
        If a size is too small, ``d_head`` is odd or ``start < 0``.

    Examples
    --------
    >>> cos, sin = rope_tables(6, 8)
    >>> cos.shape
    torch.Size([6, 4])
    >>> cos[0]  # position 0 is not turned
    tensor([1., 1., 1., 1.])
    >>> later_cos, _ = rope_tables(2, 8, start=4)
    >>> bool((later_cos == cos[4:]).all())
    True
    """
    num_positions = check_int(num_positions, "num_positions", minimum=1)
    d_head = _check_even_head(d_head)
    start = check_int(start, "start", minimum=0)
    dtype = _check_dtype(dtype)
    device = check_device(device, "device")
    base = _check_rope_base(base)

    pair = torch.arange(0, d_head, 2, dtype=torch.float64)  # (d/2,): 2i
    inv_freq = base ** (-pair / d_head)  # (d/2,): w_i
    positions = torch.arange(
        start, start + num_positions, dtype=torch.float64
    )  # (T,)
    angles = positions[:, None] * inv_freq  # (T, d/2): p w_i
    cos = torch.cos(angles).to(device=device, dtype=dtype)
    sin = torch.sin(angles).to(device=device, dtype=dtype)
    return cos, sin  # (T, d/2), (T, d/2)


def _check_rope_base(base: object, name: str = "base") -> float:
    """Return ``base`` as a float if it is a real number greater than 1."""
    base = check_real(base, name, strict=True)
    if base <= 1:
        raise ValueError(f"{name} must be greater than 1, got {base}")
    return base


def _check_even_head(d_head: object) -> int:
    """Return ``d_head`` if it is an even integer >= 2 (RoPE turns pairs)."""
    d_head = check_int(d_head, "d_head", minimum=2)
    if d_head % 2:
        raise ValueError(
            f"d_head must be even (RoPE turns pairs of features), got {d_head}"
        )
    return d_head


def apply_rope(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> torch.Tensor:
    r"""Turn each feature pair ``(2i, 2i + 1)`` of ``x`` by its position's angle.

    For the pair :math:`(a, b)` of a vector at position :math:`p`:

    .. math::

       \begin{aligned}
       a &\mapsto a\cos p\omega_i - b\sin p\omega_i, \\
       b &\mapsto a\sin p\omega_i + b\cos p\omega_i,
       \end{aligned}

    the rotation whose matrix the positional-encoding page builds:
    ``apply_rope(x, cos, sin)[..., p, :]`` is the row
    ``x[..., p, :] @ shift_rotation(p, d).T`` (a rotation matrix acting on
    a column vector). A rotation keeps lengths, and the rotations of two
    positions compose: for a query at ``m`` and a key at ``n``,
    :math:`(R_m q) \cdot (R_n k) = q \cdot R_{n - m} k`, so the score depends
    on the positions only through ``n - m``.

    Parameters
    ----------
    x
        Queries or keys, one ``(T, d)`` slice per batch element and head.
    cos, sin
        The tables of :func:`rope_tables` for the ``T`` positions of ``x``.

    Returns
    -------
    torch.Tensor
        ``x`` with every feature pair turned.

    Shape
    -----
    - ``x``: ``(..., T, d)``, e.g. ``(B, H, T, d_head)``.
    - ``cos``, ``sin``: ``(T, d / 2)``.
    - Output: ``(..., T, d)``, the shape of ``x``.

    Raises
    ------
    TypeError
        If an input is not a floating-point tensor, or the tables'
        dtype differs from that of ``x``.
    ValueError
        If a shape does not fit, or ``cos`` and ``sin`` are on another
        device than ``x``.

    Examples
    --------
    >>> q = torch.randn(1, 2, 5, 8)  # (B, H, T, d_head)
    >>> cos, sin = rope_tables(5, 8)
    >>> turned = apply_rope(q, cos, sin)
    >>> bool(torch.allclose(turned.norm(dim=-1), q.norm(dim=-1)))  # lengths kept
    True
    """
    x = check_tensor(x, "x")
    if x.ndim < 2:
        raise ValueError(
            f"x must have at least 2 dimensions (..., T, d), got shape {tuple(x.shape)}"
        )
    *_, T, d = x.shape
    if d % 2:
        raise ValueError(
            f"x must have an even last dimension (feature pairs), got shape {tuple(x.shape)}"
        )
    for name, table in (("cos", cos), ("sin", sin)):
        table = check_tensor(table, name, ndim=2)
        if tuple(table.shape) != (T, d // 2):
            raise ValueError(
                f"{name} must have shape {(T, d // 2)} (T, d / 2) for x of shape "
                f"{tuple(x.shape)}, got shape {tuple(table.shape)}"
            )
        check_like(table, name, like=x, like_name="x")

    pairs = x.unflatten(-1, (d // 2, 2))  # (..., T, d/2, 2)
    a, b = pairs[..., 0], pairs[..., 1]  # (..., T, d/2) each
    turned = torch.stack(
        (a * cos - b * sin, a * sin + b * cos), dim=-1
    )  # (..., T, d/2, 2)
    return turned.flatten(-2)  # (..., T, d)


def interleave_rope_rows(
    weight: torch.Tensor, num_heads: int
) -> torch.Tensor:
    """Reorder a query or key projection from the "rotate half" layout to pairs.

    Hugging Face's Llama rotates feature ``i`` of a head together with
    feature ``i + d / 2``; :func:`apply_rope` rotates ``2i`` with
    ``2i + 1``. Within each head this moves row ``i`` of the projection to
    row ``2i`` and row ``i + d / 2`` to row ``2i + 1``. Applied to both the
    query and the key projection it leaves every attention score as it was
    (a dot product does not depend on the order of the features, only on
    which features meet); the value and output projections are not touched.

    Parameters
    ----------
    weight
        The weight of a query or key projection (``nn.Linear.weight``), its
        rows grouped by head.
    num_heads
        The number of heads the rows are grouped in: ``H`` for the queries,
        ``H_kv`` for the keys.

    Returns
    -------
    torch.Tensor
        A new tensor with the rows reordered.

    Shape
    -----
    - ``weight``: ``(num_heads * d, D)`` with ``d`` even.
    - Output: the shape of ``weight``.

    Raises
    ------
    TypeError
        If ``weight`` is not a floating-point tensor or ``num_heads`` not an
        integer.
    ValueError
        If ``weight`` is not 2-dimensional, or ``num_heads`` does not split
        its rows into heads of even width.

    Examples
    --------
    >>> rows = torch.arange(8.0)[:, None]  # one head of width 8, row r holds r
    >>> interleave_rope_rows(rows, num_heads=1).flatten()
    tensor([0., 4., 1., 5., 2., 6., 3., 7.])
    """
    weight = check_tensor(weight, "weight", ndim=2)
    num_heads = check_int(num_heads, "num_heads", minimum=1)
    rows, D = weight.shape
    if rows % num_heads or (rows // num_heads) % 2:
        raise ValueError(
            f"num_heads must split the {rows} rows of weight into heads of even "
            f"width, got num_heads={num_heads}"
        )
    d = rows // num_heads
    # (H, 2, d/2, D): the halves [0, d/2) and [d/2, d) of every head
    halves = weight.reshape(num_heads, 2, d // 2, D)
    # (H, d/2, 2, D): row i of the first half, then row i of the second
    return halves.transpose(1, 2).reshape(rows, D)


# --------------------------------------------------------------------------
# Grouped-query attention
# --------------------------------------------------------------------------


def repeat_kv_heads(x: torch.Tensor, groups: int) -> torch.Tensor:
    """Repeat every key or value head ``groups`` times, next to itself.

    Query head ``h`` of a grouped-query attention reads key and value head
    ``h // groups``; after the repetition, head ``h`` of the result is that
    head, so plain multi-head attention can run on it.

    Parameters
    ----------
    x
        Keys or values.
    groups
        Query heads per key/value head, ``H / H_kv``.

    Returns
    -------
    torch.Tensor
        The heads, each repeated ``groups`` times in a row.

    Shape
    -----
    - ``x``: ``(B, H_kv, T, d_head)``.
    - Output: ``(B, H_kv * groups, T, d_head)``.

    Raises
    ------
    TypeError
        If ``x`` is not a floating-point tensor or ``groups`` not an integer.
    ValueError
        If ``x`` is not 4-dimensional or ``groups < 1``.

    Examples
    --------
    >>> k = torch.tensor([10.0, 20.0]).reshape(1, 2, 1, 1)  # two kv heads
    >>> repeat_kv_heads(k, 3).flatten()
    tensor([10., 10., 10., 20., 20., 20.])
    """
    x = check_tensor(x, "x", ndim=4)
    groups = check_int(groups, "groups", minimum=1)
    return x.repeat_interleave(groups, dim=1)  # (B, H_kv * groups, T, d)


def grouped_query_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention with ``H`` query heads over ``H_kv`` key/value heads.

    Each key/value head serves a group of ``H / H_kv`` consecutive query
    heads (:func:`repeat_kv_heads`); then every query head attends as in
    :func:`lessons_code.attention.scaled_dot_product_attention`. The result
    equals ``torch.nn.functional.scaled_dot_product_attention(q, k, v,
    is_causal=causal, enable_gqa=True)`` when ``T_q = T_k``.

    With ``causal``, the queries are the *last* ``T_q`` of the ``T_k``
    positions (a generation step with a cache has one query and all the
    keys so far): query ``i`` sees the keys ``0, ..., T_k - T_q + i``.

    Parameters
    ----------
    q
        Queries, ``H`` heads.
    k, v
        Keys and values, ``H_kv`` heads; ``H_kv`` must divide ``H``.
    causal
        Let each query see only the keys at its position and before.

    Returns
    -------
    output : torch.Tensor
        One weighted sum of the values per query head.
    weights : torch.Tensor
        The attention weights of every query head.

    Shape
    -----
    - ``q``: ``(B, H, T_q, d_head)``; ``k``, ``v``: ``(B, H_kv, T_k, d_head)``.
    - Output: ``output`` ``(B, H, T_q, d_head)``, ``weights`` ``(B, H, T_q, T_k)``.

    Raises
    ------
    TypeError
        If an input is not a floating-point tensor, the dtypes differ, or
        ``causal`` is not a bool.
    ValueError
        If a shape does not fit, ``H_kv`` does not divide ``H``, or
        ``causal`` with fewer keys than queries.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> q = torch.randn(1, 4, 5, 8, generator=g)  # 4 query heads
    >>> k, v = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(2))  # 2 kv heads
    >>> out, weights = grouped_query_attention(q, k, v)
    >>> out.shape, weights.shape
    (torch.Size([1, 4, 5, 8]), torch.Size([1, 4, 5, 5]))
    >>> theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    >>> bool((out - theirs).abs().max() < 1e-6)
    True
    """
    q = check_tensor(q, "q", ndim=4)
    k = check_tensor(k, "k", ndim=4)
    v = check_tensor(v, "v", ndim=4)
    causal = check_bool(causal, "causal")
    check_like(k, "k", like=q, like_name="q")
    check_like(v, "v", like=q, like_name="q")
    B, H, T_q, d = q.shape
    _, H_kv, T_k, _ = k.shape
    if k.shape[0] != B or k.shape[3] != d:
        raise ValueError(
            f"k must have shape (B, H_kv, T_k, d_head) = ({B}, H_kv, T_k, {d}) "
            f"for q of shape {tuple(q.shape)}, got shape {tuple(k.shape)}"
        )
    if v.shape != k.shape:
        raise ValueError(
            f"v must have the shape of k {tuple(k.shape)}, got shape {tuple(v.shape)}"
        )
    if H % H_kv:
        raise ValueError(
            f"the key/value heads must divide the query heads, got {H_kv} "
            f"key/value heads (k of shape {tuple(k.shape)}) and {H} query heads"
        )
    if causal and T_k < T_q:
        raise ValueError(
            f"causal attention needs at least as many keys as queries, got "
            f"{T_k} keys and {T_q} queries"
        )

    k = repeat_kv_heads(k, H // H_kv)  # (B, H, T_k, d)
    v = repeat_kv_heads(v, H // H_kv)  # (B, H, T_k, d)
    mask = None
    if causal:
        # (T_q, T_k): query i sits at position T_k - T_q + i
        ones = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device)
        mask = torch.tril(ones, diagonal=T_k - T_q)
    return scaled_dot_product_attention(q, k, v, mask)


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with grouped key/value heads and rotary positions (Llama style).

    ``q_proj`` makes ``H`` query heads of width ``d_head = D / H``;
    ``k_proj`` and ``v_proj`` make only ``H_kv`` key and value heads, each
    shared by ``H / H_kv`` query heads; ``o_proj`` mixes the concatenated
    heads. No projection has a bias. With ``rope`` the queries and keys are
    turned by :func:`apply_rope` after the projection, at their positions
    ``start, ..., start + T - 1``.

    ``num_kv_heads = num_heads`` is multi-head attention, ``num_kv_heads = 1``
    multi-query attention. The key and value projections, and a cache of
    their outputs, shrink by the factor ``H / H_kv``.

    Parameters
    ----------
    d_model
        Model width ``D``.
    num_heads
        Number of query heads ``H``; it must divide ``D``.
    num_kv_heads
        Number of key/value heads ``H_kv``; it must divide ``H``.
    rope
        Turn the queries and keys by their positions (then ``d_head`` must
        be even); ``False`` leaves the attention without positions.
    rope_base
        The base of the rotary frequencies (:func:`rope_tables`).

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size and ``T`` the number of new positions.

    Raises
    ------
    TypeError
        If a size is not an integer or ``rope`` not a bool.
    ValueError
        If a size is smaller than 1, ``num_heads`` does not divide
        ``d_model``, ``num_kv_heads`` does not divide ``num_heads``, or the
        head width is odd with ``rope``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> attn = GroupedQueryAttention(d_model=32, num_heads=8, num_kv_heads=2)
    >>> attn(torch.randn(2, 5, 32)).shape
    torch.Size([2, 5, 32])
    >>> attn.k_proj.weight.shape  # 2 heads of width 4
    torch.Size([8, 32])
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int,
        *,
        rope: bool = True,
        rope_base: float = ROPE_BASE,
    ) -> None:
        super().__init__()
        d_model = check_int(d_model, "d_model", minimum=1)
        num_heads = check_int(num_heads, "num_heads", minimum=1)
        num_kv_heads = check_int(num_kv_heads, "num_kv_heads", minimum=1)
        _check_heads(d_model, num_heads, num_kv_heads)
        self.rope = check_bool(rope, "rope")
        self.rope_base = _check_rope_base(rope_base, "rope_base")
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        if self.rope and self.d_head % 2:
            raise ValueError(
                f"d_model / num_heads must be even with rope=True (RoPE turns "
                f"pairs of features), got d_head = {self.d_head}"
            )
        kv_width = num_kv_heads * self.d_head
        self.q_proj = nn.Linear(d_model, d_model, bias=False)
        self.k_proj = nn.Linear(d_model, kv_width, bias=False)
        self.v_proj = nn.Linear(d_model, kv_width, bias=False)
        self.o_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        *,
        start: int = 0,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> torch.Tensor:
        """Attend from the new positions of ``x`` to themselves and to the cached ones.

        Parameters
        ----------
        x
            The new positions ``(B, T, D)``.
        start
            The position of ``x``'s first token; with a cache it must be
            the cache's length.
        cache
            Optional :class:`KVCache`: the new keys and values are written
            into it (at ``layer``) and the queries attend to all of its
            filled positions. The caller advances it
            (:meth:`KVCache.advance`) once every layer has run.
        layer
            Which layer of ``cache`` this attention uses.

        Returns
        -------
        torch.Tensor
            The attention output ``(B, T, D)``.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype,
            or ``cache`` is not a :class:`KVCache`.
        ValueError
            If ``x`` is not ``(B, T, D)``, ``start`` differs from the cache's
            length, or the cache does not fit (see :meth:`KVCache.update`).
        """
        x = check_tensor(x, "x", ndim=3, last_dim=self.d_model)
        check_like(
            x,
            "x",
            like=self.q_proj.weight,
            like_name="the module's parameters",
        )
        start = check_int(start, "start", minimum=0)
        if cache is not None:
            _check_cache_start(cache, start)
        T = x.shape[1]

        q = split_heads(self.q_proj(x), self.num_heads)  # (B, H, T, d)
        k = split_heads(
            self.k_proj(x), self.num_kv_heads
        )  # (B, H_kv, T, d)
        v = split_heads(
            self.v_proj(x), self.num_kv_heads
        )  # (B, H_kv, T, d)
        if self.rope:
            cos, sin = rope_tables(
                T,
                self.d_head,
                start=start,
                dtype=x.dtype,
                device=x.device,
                base=self.rope_base,
            )  # (T, d/2) each
            q = apply_rope(q, cos, sin)  # (B, H, T, d)
            k = apply_rope(k, cos, sin)  # (B, H_kv, T, d)
        if cache is not None:
            # all positions so far: (B, H_kv, start + T, d)
            k, v = cache.update(layer, k, v)

        heads, _ = grouped_query_attention(q, k, v)  # (B, H, T, d)
        return self.o_proj(merge_heads(heads))  # (B, T, D)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return (
            f"d_model={self.d_model}, num_heads={self.num_heads}, "
            f"num_kv_heads={self.num_kv_heads}, d_head={self.d_head}, rope={self.rope}"
        )


def _check_cache_start(cache: object, start: int) -> None:
    """Raise unless ``cache`` is a :class:`KVCache` whose filled length is ``start``."""
    if not isinstance(cache, KVCache):
        raise TypeError(
            f"cache must be a lessons_code.modern.KVCache or None, got {type(cache).__name__}"
        )
    if start != cache.length:
        raise ValueError(
            f"start must be the cache's length {cache.length} (the next free "
            f"position), got start={start}"
        )


# --------------------------------------------------------------------------
# The key-value cache
# --------------------------------------------------------------------------


class KVCache:
    """The keys and values of every layer for the positions generated so far.

    Generating token ``t + 1`` needs the keys and values of positions
    ``0, ..., t`` in every layer; they do not change once computed (a
    causal model's position never sees later ones), so a cache keeps them
    and each step computes those of its new position only.

    The cache holds, per layer, a key and a value tensor of ``max_len``
    positions, filled from the start: ``length`` positions are filled.
    A model writes a step's keys and values into every layer
    (:meth:`update`), then moves ``length`` on (:meth:`advance`).

    Parameters
    ----------
    num_layers
        Number of layers ``L``.
    batch_size
        Number of sequences ``B``.
    num_kv_heads
        Key/value heads per layer ``H_kv``.
    max_len
        Positions the cache can hold ``T_max``.
    d_head
        Head width ``d_head``.
    dtype
        Floating-point dtype of the keys and values (the model's).
    device
        Device of the keys and values (default: the CPU).

    Shape
    -----
    Each layer's keys and values: ``(B, H_kv, T_max, d_head)``.

    Raises
    ------
    TypeError
        If a size is not an integer, or ``dtype`` not a floating-point
        ``torch.dtype``.
    ValueError
        If a size is smaller than 1.

    Attributes
    ----------
    keys, values : list of torch.Tensor
        One ``(B, H_kv, T_max, d_head)`` tensor per layer; positions from
        ``length`` on are not filled yet.
    length : int
        Number of filled positions.

    Examples
    --------
    >>> cache = KVCache(num_layers=2, batch_size=1, num_kv_heads=2, max_len=8, d_head=4)
    >>> keys, values = cache.update(0, torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    >>> keys.shape  # the 3 positions written so far
    torch.Size([1, 2, 3, 4])
    >>> cache.advance(3)
    >>> cache.length
    3
    """

    def __init__(
        self,
        num_layers: int,
        batch_size: int,
        num_kv_heads: int,
        max_len: int,
        d_head: int,
        *,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> None:
        self.num_layers = check_int(num_layers, "num_layers", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.num_kv_heads = check_int(
            num_kv_heads, "num_kv_heads", minimum=1
        )
        self.max_len = check_int(max_len, "max_len", minimum=1)
        self.d_head = check_int(d_head, "d_head", minimum=1)
        self.dtype = _check_dtype(dtype)
        self.device = check_device(device, "device")
        shape = (batch_size, num_kv_heads, max_len, d_head)
        self.keys = [
            torch.zeros(shape, dtype=dtype, device=self.device)
            for _ in range(num_layers)
        ]
        self.values = [torch.zeros_like(k) for k in self.keys]
        self.length = 0

    def __repr__(self) -> str:
        return (
            f"KVCache(num_layers={self.num_layers}, batch_size={self.batch_size}, "
            f"num_kv_heads={self.num_kv_heads}, max_len={self.max_len}, "
            f"d_head={self.d_head}, dtype={self.dtype}, length={self.length})"
        )

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the new keys and values of ``layer`` and return all its filled ones.

        The new positions go to ``length, ..., length + T - 1``; ``length``
        itself moves only with :meth:`advance`, so every layer of one step
        writes at the same place.

        Parameters
        ----------
        layer
            The layer, ``0 <= layer < L``.
        k, v
            The keys and values of the new positions.

        Returns
        -------
        keys : torch.Tensor
            The layer's keys of positions ``0, ..., length + T - 1``.
        values : torch.Tensor
            Its values, likewise.

        Shape
        -----
        - ``k``, ``v``: ``(B, H_kv, T, d_head)``.
        - Output: two tensors ``(B, H_kv, length + T, d_head)``.

        Raises
        ------
        TypeError
            If ``layer`` is not an integer, or ``k`` or ``v`` is not a
            floating-point tensor of the cache's dtype.
        ValueError
            If ``layer`` is out of range, ``k`` or ``v`` does not have the
            cache's batch size, heads and head width, or the new positions
            do not fit in ``max_len``.
        """
        layer = check_int(layer, "layer", minimum=0)
        if layer >= self.num_layers:
            raise ValueError(
                f"layer must be below the cache's num_layers={self.num_layers}, got {layer}"
            )
        B, H_kv, d = self.batch_size, self.num_kv_heads, self.d_head
        k = check_tensor(k, "k", ndim=4)
        v = check_tensor(v, "v", ndim=4)
        for name, t in (("k", k), ("v", v)):
            if (t.shape[0], t.shape[1], t.shape[3]) != (B, H_kv, d):
                raise ValueError(
                    f"{name} must have shape (B, H_kv, T, d_head) = ({B}, {H_kv}, T, {d}) "
                    f"to fit the cache, got shape {tuple(t.shape)}"
                )
            check_like(
                t, name, like=self.keys[layer], like_name="the cache"
            )
        if v.shape != k.shape:
            raise ValueError(
                f"v must have the shape of k {tuple(k.shape)}, got shape {tuple(v.shape)}"
            )
        end = self._end(k.shape[2])
        self.keys[layer][:, :, self.length : end] = k
        self.values[layer][:, :, self.length : end] = v
        return (
            self.keys[layer][:, :, :end],
            self.values[layer][:, :, :end],
        )  # (B, H_kv, end, d) each

    def advance(self, num_positions: int) -> None:
        """Count ``num_positions`` more positions as filled (after every layer's :meth:`update`).

        Parameters
        ----------
        num_positions
            How many positions the step wrote.

        Raises
        ------
        TypeError
            If ``num_positions`` is not an integer.
        ValueError
            If it is smaller than 1 or the cache would overflow.
        """
        num_positions = check_int(
            num_positions, "num_positions", minimum=1
        )
        self.length = self._end(num_positions)

    def _end(self, num_positions: int) -> int:
        """Return ``length + num_positions``, or raise if it exceeds ``max_len``."""
        end = self.length + num_positions
        if end > self.max_len:
            raise ValueError(
                f"the cache holds max_len={self.max_len} positions and {self.length} "
                f"are filled: {num_positions} more overflow it"
            )
        return end


def kv_cache_size(
    num_layers: int,
    batch_size: int,
    seq_len: int,
    num_kv_heads: int,
    d_head: int,
    *,
    dtype: torch.dtype = torch.float32,
) -> dict[str, int]:
    """Numbers and bytes a key-value cache stores for ``seq_len`` positions.

    Every layer keeps a key and a value vector of width ``d_head`` per
    sequence, key/value head and position:
    ``2 * N * B * T * H_kv * d_head`` numbers. Only ``H_kv`` enters, not the
    number of query heads: grouped-query attention with ``H_kv`` heads
    stores ``H / H_kv`` times less than multi-head attention, multi-query
    attention (``H_kv = 1``) ``H`` times less.

    Parameters
    ----------
    num_layers
        Number of layers (blocks) ``N``.
    batch_size
        Number of sequences ``B``.
    seq_len
        Number of cached positions ``T``.
    num_kv_heads
        Key/value heads per layer ``H_kv``.
    d_head
        Head width.
    dtype
        Floating-point dtype of the stored numbers.

    Returns
    -------
    dict of str to int
        ``"numbers"``: how many numbers are stored; ``"bytes"``: their size
        in ``dtype``.

    Raises
    ------
    TypeError
        If a size is not an integer or ``dtype`` not a floating-point
        ``torch.dtype``.
    ValueError
        If a size is smaller than 1.

    Examples
    --------
    >>> mha = kv_cache_size(num_layers=4, batch_size=1, seq_len=256, num_kv_heads=8, d_head=16)
    >>> mqa = kv_cache_size(num_layers=4, batch_size=1, seq_len=256, num_kv_heads=1, d_head=16)
    >>> mha["numbers"], mha["bytes"], mha["numbers"] // mqa["numbers"]
    (262144, 1048576, 8)
    """
    N = check_int(num_layers, "num_layers", minimum=1)
    B = check_int(batch_size, "batch_size", minimum=1)
    T = check_int(seq_len, "seq_len", minimum=1)
    H_kv = check_int(num_kv_heads, "num_kv_heads", minimum=1)
    d = check_int(d_head, "d_head", minimum=1)
    dtype = _check_dtype(dtype)
    numbers = 2 * N * B * T * H_kv * d  # keys and values
    return {"numbers": numbers, "bytes": numbers * dtype.itemsize}


def attention_scores_per_step(
    prompt_len: int, max_new_tokens: int, *, use_cache: bool
) -> list[int]:
    """Query-key scores one head of one layer computes for each generated token.

    Generating ``N`` tokens after a prompt of ``P`` takes ``N`` forward
    passes; pass ``s = 0, ..., N - 1`` produces token ``P + s``.

    - Without a cache, pass ``s`` runs on all ``P + s`` tokens so far:
      ``(P + s)^2`` scores (a ``(T, T)`` matrix, of which the causal mask
      keeps ``T (T + 1) / 2``).
    - With a cache, pass 0 runs on the prompt (``P^2`` scores) and every
      later pass on its one new token, which meets the ``P + s`` keys so
      far: ``P + s`` scores.

    These are the scores :func:`grouped_query_attention` computes (it
    computes the whole ``(T_q, T_k)`` matrix before masking); multiply by
    ``B * H * L`` for a whole batch and model.

    Parameters
    ----------
    prompt_len
        Prompt length ``P``.
    max_new_tokens
        Tokens generated ``N``.
    use_cache
        Count with a key-value cache.

    Returns
    -------
    list of int
        ``N`` counts, one per generated token.

    Raises
    ------
    TypeError
        If a length is not an integer or ``use_cache`` not a bool.
    ValueError
        If a length is smaller than 1.

    Examples
    --------
    >>> attention_scores_per_step(4, 3, use_cache=False)
    [16, 25, 36]
    >>> attention_scores_per_step(4, 3, use_cache=True)
    [16, 5, 6]
    """
    P = check_int(prompt_len, "prompt_len", minimum=1)
    N = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    use_cache = check_bool(use_cache, "use_cache")
    if use_cache:
        return [P * P] + [P + s for s in range(1, N)]
    return [(P + s) ** 2 for s in range(N)]


# --------------------------------------------------------------------------
# The block and the model
# --------------------------------------------------------------------------


class ModernBlock(nn.Module):
    """A Llama-style decoder block: pre-RMSNorm, grouped-query attention with RoPE, SwiGLU.

    ::

        x = x + Attention(RMSNorm1(x))
        x = x + SwiGLU(RMSNorm2(x))

    The attention is causal :class:`GroupedQueryAttention`; both sub-layers
    are pre-norm, with no bias anywhere and no dropout.
    :meth:`from_llama` copies the weights of a decoder layer of Hugging
    Face's Llama implementation.

    Parameters
    ----------
    d_model
        Model width ``D``.
    num_heads
        Query heads ``H``; it must divide ``D``.
    num_kv_heads
        Key/value heads ``H_kv``; it must divide ``H``.
    d_ff
        Hidden width ``FF`` of the SwiGLU network.
    eps
        The RMSNorms' epsilon (Llama's default is ``1e-6``).
    rope
        Rotary positions in the attention.
    rope_base
        The base of the rotary frequencies (:func:`rope_tables`).

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - Output: ``(B, T, D)``.

    Raises
    ------
    TypeError
        If a size is not an integer, ``eps`` not a real number or ``rope``
        not a bool.
    ValueError
        If a size is smaller than 1, a head count does not divide (see
        :class:`GroupedQueryAttention`) or ``eps`` is not positive.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> block = ModernBlock(d_model=32, num_heads=4, num_kv_heads=2, d_ff=64)
    >>> block(torch.randn(2, 6, 32)).shape
    torch.Size([2, 6, 32])
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int,
        d_ff: int,
        *,
        eps: float = 1e-6,
        rope: bool = True,
        rope_base: float = ROPE_BASE,
    ) -> None:
        super().__init__()
        self.self_attn = GroupedQueryAttention(
            d_model,
            num_heads,
            num_kv_heads,
            rope=rope,
            rope_base=rope_base,
        )
        self.feed_forward = SwiGLU(d_model, d_ff)
        self.norm1 = RMSNorm(d_model, eps)
        self.norm2 = RMSNorm(d_model, eps)
        self.d_model = self.self_attn.d_model

    def forward(
        self,
        x: torch.Tensor,
        *,
        start: int = 0,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> torch.Tensor:
        """Run the block on the new positions ``x``.

        Parameters
        ----------
        x
            The new positions ``(B, T, D)``.
        start, cache, layer
            As in :meth:`GroupedQueryAttention.forward`.

        Returns
        -------
        torch.Tensor
            The transformed positions ``(B, T, D)``.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype.
        ValueError
            If ``x`` is not ``(B, T, D)`` or the cache does not fit.
        """
        attn = self.self_attn(
            self.norm1(x), start=start, cache=cache, layer=layer
        )
        x = x + attn  # (B, T, D)
        return x + self.feed_forward(self.norm2(x))  # (B, T, D)

    @classmethod
    def from_llama(
        cls,
        state_dict: Mapping[str, torch.Tensor],
        *,
        num_heads: int,
        num_kv_heads: int,
        eps: float = 1e-6,
    ) -> ModernBlock:
        """Build a :class:`ModernBlock` with the weights of a Hugging Face Llama decoder layer.

        Reads the layer's ``state_dict()`` by its names (``self_attn.q_proj``,
        ..., ``mlp.gate_proj``, ..., ``input_layernorm``,
        ``post_attention_layernorm``), so this package needs no import of
        ``transformers``. The query and key projections are reordered from
        Llama's "rotate half" layout to this module's feature pairs
        (:func:`interleave_rope_rows`); everything else is copied as it is.

        Parameters
        ----------
        state_dict
            ``layer.state_dict()`` of a ``LlamaDecoderLayer`` without biases
            (``attention_bias=False``, ``mlp_bias=False``, the defaults),
            with ``head_dim = hidden_size / num_attention_heads`` and the
            default rotary settings (``rope_theta = 10000``, no scaling).
        num_heads
            The config's ``num_attention_heads``.
        num_kv_heads
            The config's ``num_key_value_heads``.
        eps
            The config's ``rms_norm_eps``.

        Returns
        -------
        ModernBlock
            A new block on the device and with the dtype of the weights.

        Raises
        ------
        TypeError
            If ``state_dict`` is not a mapping of tensors, or a size is not
            an integer.
        ValueError
            If a weight is missing, a bias is present, or a shape does not
            fit the head counts.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"state_dict must be a mapping of names to tensors, got "
                f"{type(state_dict).__name__}"
            )
        biases = sorted(
            name for name in state_dict if name.endswith(".bias")
        )
        if biases:
            raise ValueError(
                f"state_dict must come from a layer without biases, got {biases}"
            )
        names = {
            "self_attn.q_proj.weight": ("self_attn", "q_proj"),
            "self_attn.k_proj.weight": ("self_attn", "k_proj"),
            "self_attn.v_proj.weight": ("self_attn", "v_proj"),
            "self_attn.o_proj.weight": ("self_attn", "o_proj"),
            "mlp.gate_proj.weight": ("feed_forward", "gate_proj"),
            "mlp.up_proj.weight": ("feed_forward", "up_proj"),
            "mlp.down_proj.weight": ("feed_forward", "down_proj"),
            "input_layernorm.weight": ("norm1", ""),
            "post_attention_layernorm.weight": ("norm2", ""),
        }
        missing = [name for name in names if name not in state_dict]
        if missing:
            raise ValueError(
                f"state_dict must hold a Llama decoder layer's weights, missing {missing}"
            )
        weights = {
            name: check_tensor(state_dict[name], f"state_dict[{name!r}]")
            for name in names
        }
        norm = weights["input_layernorm.weight"]
        gate = weights["mlp.gate_proj.weight"]
        block = cls(
            norm.shape[0],
            num_heads,
            num_kv_heads,
            gate.shape[0],
            eps=eps,
        ).to(device=norm.device, dtype=norm.dtype)
        # Llama's "rotate half" rows -> this module's feature pairs
        weights["self_attn.q_proj.weight"] = interleave_rope_rows(
            weights["self_attn.q_proj.weight"], num_heads
        )
        weights["self_attn.k_proj.weight"] = interleave_rope_rows(
            weights["self_attn.k_proj.weight"], num_kv_heads
        )
        with torch.no_grad():
            for name, (part, child) in names.items():
                module = block.get_submodule(part)
                target = module.get_submodule(child) if child else module
                ours = target.get_parameter("weight")
                if ours.shape != weights[name].shape:
                    raise ValueError(
                        f"state_dict[{name!r}] must have shape {tuple(ours.shape)} "
                        f"for num_heads={num_heads} and num_kv_heads={num_kv_heads}, "
                        f"got shape {tuple(weights[name].shape)}"
                    )
                ours.copy_(weights[name])
        return block


class DecoderOnlyLM(nn.Module):
    """A small decoder-only language model: embedding, modern blocks, RMSNorm, logits.

    ``logits = output(RMSNorm(blocks(embedding(tokens))))``: every position
    predicts the next token, seeing only itself and the positions before
    it. The positions enter through RoPE inside every attention
    (``positions="rope"``, the default), or as the sinusoidal table added
    to the embeddings (``"sinusoidal"``, the 2017 way, for comparison), or
    not at all (``"none"``).

    Parameters
    ----------
    vocab_size
        Number of tokens ``V``.
    d_model
        Model width ``D``.
    num_layers
        Number of :class:`ModernBlock` layers ``N``.
    num_heads
        Query heads ``H``; it must divide ``D``.
    num_kv_heads
        Key/value heads ``H_kv``; it must divide ``H``.
    d_ff
        Hidden width of the SwiGLU networks.
    max_len
        The longest context: a forward pass accepts positions below
        ``max_len``, and :meth:`make_cache` makes caches of that length.
        RoPE itself has no limit; a larger ``max_len`` changes no weight.
    positions
        ``"rope"``, ``"sinusoidal"`` or ``"none"``.
    tie_weights
        Share the embedding matrix with the output layer.
    eps
        The RMSNorms' epsilon.
    rope_base
        The base of the rotary frequencies (:func:`rope_tables`), with
        ``positions="rope"``.

    Shape
    -----
    - ``tokens``: ``(B, T)`` token ids in ``[0, V)``.
    - Output: logits ``(B, T, V)``.

    Raises
    ------
    TypeError
        If a size is not an integer, ``positions`` not a string,
        ``tie_weights`` not a bool or ``eps`` not a real number.
    ValueError
        If a size is smaller than 1, a head count does not divide, or
        ``positions`` is not one of the three names.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = DecoderOnlyLM(vocab_size=12, d_model=32, num_layers=2, num_heads=4,
    ...                       num_kv_heads=2, d_ff=64, max_len=16)
    >>> model(torch.tensor([[1, 5, 7]])).shape
    torch.Size([1, 3, 12])
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        num_layers: int,
        num_heads: int,
        num_kv_heads: int,
        d_ff: int,
        max_len: int,
        *,
        positions: str = "rope",
        tie_weights: bool = False,
        eps: float = 1e-6,
        rope_base: float = ROPE_BASE,
    ) -> None:
        super().__init__()
        self.vocab_size = check_int(vocab_size, "vocab_size", minimum=1)
        self.num_layers = check_int(num_layers, "num_layers", minimum=1)
        self.max_len = check_int(max_len, "max_len", minimum=1)
        if not isinstance(positions, str):
            raise TypeError(
                f"positions must be a string, got {type(positions).__name__}"
            )
        if positions not in _POSITIONS:
            raise ValueError(
                f"positions must be one of {_POSITIONS}, got {positions!r}"
            )
        self.positions = positions
        self.tie_weights = check_bool(tie_weights, "tie_weights")
        d_model = check_int(d_model, "d_model", minimum=1)
        num_heads = check_int(num_heads, "num_heads", minimum=1)
        num_kv_heads = check_int(num_kv_heads, "num_kv_heads", minimum=1)
        _check_heads(d_model, num_heads, num_kv_heads)
        self.embedding = nn.Embedding(self.vocab_size, d_model)
        self.blocks = nn.ModuleList(
            ModernBlock(
                d_model,
                num_heads,
                num_kv_heads,
                d_ff,
                eps=eps,
                rope=positions == "rope",
                rope_base=rope_base,
            )
            for _ in range(self.num_layers)
        )
        self.final_norm = RMSNorm(d_model, eps)
        self.output = nn.Linear(d_model, self.vocab_size, bias=False)
        if self.tie_weights:
            self.output.weight = self.embedding.weight
        self.d_model = d_model
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        cache: KVCache | None = None,
        start: int | None = None,
    ) -> torch.Tensor:
        """Next-token logits for every position of ``tokens``.

        Parameters
        ----------
        tokens
            Token ids ``(B, T)``, at positions ``start, ..., start + T - 1``.
        cache
            Optional :class:`KVCache` (e.g. from :meth:`make_cache`) holding
            the keys and values of the positions before ``start``; the new
            ones are added to it and its length moves on by ``T``.
        start
            The position of the first token; by default the cache's length,
            or 0 without a cache.

        Returns
        -------
        torch.Tensor
            Logits ``(B, T, V)``; row ``t`` scores the token at position
            ``start + t + 1``.

        Raises
        ------
        TypeError
            If ``tokens`` is not an integer tensor, ``cache`` not a
            :class:`KVCache` or ``start`` not an integer.
        ValueError
            If a token id is out of range, the positions reach ``max_len``,
            ``start`` differs from the cache's length, or the cache does not
            fit the model (layers, batch size, heads, head width, dtype).
        """
        tokens = _check_tokens(tokens, "tokens", self.vocab_size)
        B, T = tokens.shape
        if cache is not None:
            self._check_cache(cache, B)
            start = cache.length if start is None else start
        start = check_int(
            0 if start is None else start, "start", minimum=0
        )
        if cache is not None:
            _check_cache_start(cache, start)
        if start + T > self.max_len:
            raise ValueError(
                f"the positions start + T = {start} + {T} must not exceed "
                f"max_len = {self.max_len}"
            )

        x = self.embedding(tokens)  # (B, T, D)
        if self.positions == "sinusoidal":
            table = positional_encoding(
                start + T, self.d_model, dtype=x.dtype, device=x.device
            )  # (start + T, D)
            x = x + table[start:]  # (B, T, D)
        for layer, block in enumerate(self.blocks):
            x = block(
                x, start=start, cache=cache, layer=layer
            )  # (B, T, D)
        if cache is not None:
            cache.advance(T)
        return self.output(self.final_norm(x))  # (B, T, V)

    def make_cache(
        self, batch_size: int, max_len: int | None = None
    ) -> KVCache:
        """Make an empty :class:`KVCache` that fits this model (its dtype and device).

        Parameters
        ----------
        batch_size
            Number of sequences ``B``.
        max_len
            Positions to hold; by default the model's ``max_len``.

        Returns
        -------
        KVCache
            ``num_layers`` layers of ``(B, H_kv, max_len, d_head)`` zeros.

        Raises
        ------
        TypeError
            If a size is not an integer.
        ValueError
            If a size is smaller than 1.
        """
        weight = self.final_norm.weight
        return KVCache(
            self.num_layers,
            batch_size,
            self.num_kv_heads,
            self.max_len if max_len is None else max_len,
            self.d_head,
            dtype=weight.dtype,
            device=weight.device,
        )

    def _check_cache(self, cache: object, batch_size: int) -> None:
        """Raise unless ``cache`` is a :class:`KVCache` of this model's sizes and dtype."""
        if not isinstance(cache, KVCache):
            raise TypeError(
                f"cache must be a lessons_code.modern.KVCache or None, got {type(cache).__name__}"
            )
        wanted = (
            self.num_layers,
            batch_size,
            self.num_kv_heads,
            self.d_head,
        )
        got = (
            cache.num_layers,
            cache.batch_size,
            cache.num_kv_heads,
            cache.d_head,
        )
        if got != wanted:
            raise ValueError(
                "cache must have the model's (num_layers, batch_size, num_kv_heads, "
                f"d_head) = {wanted}, got {got}"
            )
        check_like(
            cache.keys[0],
            "cache",
            like=self.final_norm.weight,
            like_name="the model's parameters",
        )


# --------------------------------------------------------------------------
# Sampling and generation
# --------------------------------------------------------------------------


def _check_sampler(
    temperature: object, top_k: object, top_p: object
) -> tuple[float, int | None, float | None]:
    """Validate the sampler settings shared by the sampling functions."""
    temperature = check_real(temperature, "temperature")
    if top_k is not None:
        top_k = check_int(top_k, "top_k", minimum=1)
    if top_p is not None:
        top_p = check_real(top_p, "top_p", strict=True)
        if top_p > 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    return temperature, top_k, top_p


def next_token_distribution(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    """Return the probabilities a sampler draws the next token from.

    The steps, in order:

    1. temperature: ``softmax(logits / temperature)``; below 1 it sharpens
       the distribution, above 1 it flattens it, and ``temperature = 0``
       puts all the mass on the most likely token (greedy decoding; the
       first one on a tie);
    2. top-k: only the ``top_k`` most likely tokens keep their probability;
    3. top-p (nucleus): only the smallest set of most likely tokens whose
       probabilities (after step 2) sum to at least ``top_p`` keeps its
       probability;

    and what is kept after each filter is renormalised to sum to 1, so
    the kept tokens keep their ratios.

    Parameters
    ----------
    logits
        Next-token scores, one row per sequence.
    temperature
        Non-negative divisor of the logits; 0 is greedy.
    top_k
        Keep the ``top_k`` most likely tokens (all of them if ``top_k >= V``);
        ``None`` keeps all.
    top_p
        Keep the nucleus of mass ``top_p``, in ``(0, 1]``; ``None`` (or 1)
        keeps all.

    Returns
    -------
    torch.Tensor
        Probabilities, zero outside the kept tokens, summing to 1 along the
        last dimension.

    Shape
    -----
    - ``logits``: ``(..., V)``.
    - Output: ``(..., V)``.

    Raises
    ------
    TypeError
        If ``logits`` is not a floating-point tensor or a setting has the
        wrong type.
    ValueError
        If ``logits`` has no dimension, ``temperature < 0``, ``top_k < 1``
        or ``top_p`` is outside ``(0, 1]``.

    Examples
    --------
    >>> logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    >>> next_token_distribution(logits).round(decimals=3)
    tensor([0.6440, 0.2370, 0.0870, 0.0320])
    >>> next_token_distribution(logits, top_k=2).round(decimals=3)
    tensor([0.7310, 0.2690, 0.0000, 0.0000])
    >>> next_token_distribution(logits, top_p=0.8).round(decimals=3)  # 0.644 < 0.8
    tensor([0.7310, 0.2690, 0.0000, 0.0000])
    >>> next_token_distribution(logits, temperature=0)
    tensor([1., 0., 0., 0.])
    """
    logits = check_tensor(logits, "logits")
    if logits.ndim == 0:
        raise ValueError("logits must have at least 1 dimension (..., V)")
    temperature, top_k, top_p = _check_sampler(temperature, top_k, top_p)

    if temperature == 0.0:  # greedy: all the mass on the top token
        best = logits.argmax(dim=-1, keepdim=True)  # (..., 1)
        return torch.zeros_like(logits).scatter_(-1, best, 1.0)
    probs = torch.softmax(logits / temperature, dim=-1)  # (..., V)
    if top_k is not None and top_k < logits.shape[-1]:
        kept = probs.topk(top_k, dim=-1).indices  # (..., k)
        keep = torch.zeros_like(probs, dtype=torch.bool)
        keep.scatter_(-1, kept, True)  # (..., V)
        probs = probs * keep
        probs = probs / probs.sum(dim=-1, keepdim=True)
    if top_p is not None and top_p < 1.0:
        # most likely first; a token stays if the mass before it is < p
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        before = sorted_probs.cumsum(dim=-1) - sorted_probs  # (..., V)
        keep_sorted = before < top_p  # the top token always stays
        keep = torch.zeros_like(keep_sorted).scatter_(
            -1, order, keep_sorted
        )  # (..., V), back in token order
        probs = probs * keep
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs  # (..., V)


def sample(
    logits: torch.Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Draw one next token per row from :func:`next_token_distribution`.

    ``temperature = 0`` returns the most likely token (greedy) and draws
    nothing. Otherwise the draw uses ``generator`` (on the device of
    ``logits``), so a seeded generator repeats its draws.

    Parameters
    ----------
    logits
        Next-token scores, one row per sequence.
    temperature
        Divisor of the logits, as in :func:`next_token_distribution`; 0 is
        greedy.
    top_k
        Keep the ``top_k`` most likely tokens, as in
        :func:`next_token_distribution`.
    top_p
        Keep the nucleus of mass ``top_p``, as in
        :func:`next_token_distribution`.
    generator
        The random number generator (default: PyTorch's global one).

    Returns
    -------
    torch.Tensor
        Token ids (``torch.long``).

    Shape
    -----
    - ``logits``: ``(..., V)``.
    - Output: ``(...)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a setting is out of range (see :func:`next_token_distribution`).

    Examples
    --------
    >>> logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    >>> sample(logits, temperature=0)
    tensor([0])
    >>> g = torch.Generator().manual_seed(0)
    >>> draws = sample(logits.expand(1000, 4), top_k=2, generator=g)
    >>> sorted(set(draws.tolist()))  # only the two most likely tokens
    [0, 1]
    """
    if generator is not None and not isinstance(
        generator, torch.Generator
    ):
        raise TypeError(
            f"generator must be a torch.Generator or None, got {type(generator).__name__}"
        )
    probs = next_token_distribution(
        logits, temperature=temperature, top_k=top_k, top_p=top_p
    )  # (..., V)
    if temperature == 0:
        return probs.argmax(dim=-1)  # (...)
    rows = probs.reshape(-1, probs.shape[-1])  # (N, V)
    drawn = torch.multinomial(rows, 1, generator=generator)  # (N, 1)
    return drawn.reshape(probs.shape[:-1])  # (...)


def generate(
    model: DecoderOnlyLM,
    prompt: torch.Tensor,
    max_new_tokens: int,
    *,
    use_cache: bool = True,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    return_logits: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Continue every prompt by ``max_new_tokens`` tokens, one at a time.

    Each step runs the model, takes the logits of the last position and
    draws the next token with :func:`sample`. Without a cache every step
    runs the model on the whole sequence so far; with one
    (:meth:`DecoderOnlyLM.make_cache`), the first step runs on the prompt
    and every later step on its one new token, reading the earlier
    positions' keys and values from the cache. Both give the same tokens
    (up to rounding in the logits); :func:`attention_scores_per_step`
    counts what each computes.

    Runs without gradients, in evaluation mode (the model's mode is
    restored afterwards).

    Parameters
    ----------
    model
        A :class:`DecoderOnlyLM`.
    prompt
        Token ids ``(B, P)``; all prompts have the same length.
    max_new_tokens
        Tokens to generate ``N``; ``P + N - 1`` must not exceed the
        model's ``max_len`` (the last token is not fed back).
    use_cache
        Use a key-value cache.
    temperature
        Divisor of the logits before the softmax; 0 is greedy decoding (see
        :func:`next_token_distribution`).
    top_k
        Draw only among the ``top_k`` most likely tokens; ``None`` keeps all.
    top_p
        Draw only from the nucleus of mass ``top_p``; ``None`` keeps all.
    generator
        Random number generator for the draws.
    return_logits
        Also return each step's logits.

    Returns
    -------
    torch.Tensor or tuple of torch.Tensor
        The generated tokens ``(B, N)`` (without the prompt), or
        ``(tokens, logits)`` with the logits ``(B, N, V)`` each token was
        drawn from when ``return_logits`` is true.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`DecoderOnlyLM`, ``prompt`` not an
        integer tensor, or a setting has the wrong type.
    ValueError
        If a token id is out of range, ``max_new_tokens < 1``, the
        sequence would exceed ``max_len``, or a sampler setting is out of
        range.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = DecoderOnlyLM(12, 32, num_layers=2, num_heads=4, num_kv_heads=2,
    ...                       d_ff=64, max_len=16)
    >>> prompt = torch.tensor([[1, 5, 7]])
    >>> cached = generate(model, prompt, 5, temperature=0)
    >>> uncached = generate(model, prompt, 5, temperature=0, use_cache=False)
    >>> cached.shape, bool((cached == uncached).all())
    (torch.Size([1, 5]), True)
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(
            f"model must be a lessons_code.modern.DecoderOnlyLM, got {type(model).__name__}"
        )
    prompt = _check_tokens(prompt, "prompt", model.vocab_size)
    N = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    use_cache = check_bool(use_cache, "use_cache")
    return_logits = check_bool(return_logits, "return_logits")
    _check_sampler(temperature, top_k, top_p)
    B, P = prompt.shape
    if model.max_len < P + N - 1:
        raise ValueError(
            f"the prompt ({P} tokens) and max_new_tokens={N} need {P + N - 1} "
            f"positions, more than the model's max_len = {model.max_len}"
        )

    was_training = model.training
    steps: list[torch.Tensor] = []  # (B, V) per step
    tokens = prompt  # (B, P + s) after s steps
    try:
        model.eval()
        with torch.no_grad():
            cache = model.make_cache(B, P + N - 1) if use_cache else None
            new_tokens = prompt  # what the next pass feeds
            for _ in range(N):
                # without a cache: all P + s tokens; with one: the new ones
                fed = tokens if cache is None else new_tokens
                logits = model(
                    fed, cache=cache
                )  # (B, P + s or 1 or P, V)
                last = logits[:, -1]  # (B, V)
                steps.append(last)
                next_token = sample(
                    last,
                    temperature=temperature,
                    top_k=top_k,
                    top_p=top_p,
                    generator=generator,
                )  # (B,)
                new_tokens = next_token[:, None]  # (B, 1)
                tokens = torch.cat([tokens, new_tokens], dim=1)
    finally:
        model.train(was_training)
    generated = tokens[:, P:]  # (B, N)
    if return_logits:
        return generated, torch.stack(steps, dim=1)  # (B, N, V)
    return generated
