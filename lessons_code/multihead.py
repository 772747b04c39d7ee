"""Multi-head attention, from scratch and checked against PyTorch.

``H`` heads split the model width ``D`` into ``H`` chunks of
``d_head = D / H``. Each head runs scaled dot-product attention on its own
chunk of the queries, keys and values; the heads' outputs are concatenated
back to width ``D`` and mixed by an output projection.

Two implementations share the same steps:

- :func:`multihead_attention_steps` (and its short form
  :func:`multihead_attention`) reads the weights of an existing
  ``torch.nn.MultiheadAttention`` and recomputes its output step by step;
- :class:`MultiHeadAttention` is a module with parameters of its own, optional
  masks, and a :meth:`~MultiHeadAttention.from_torch` constructor that copies
  PyTorch's weights.

Masks are boolean with ``True`` meaning "may attend", as in
``torch.nn.functional.scaled_dot_product_attention``.
``torch.nn.MultiheadAttention`` reads boolean masks the opposite way
(``True`` means "masked out"): pass it ``~mask``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_bool_mask,
    check_int,
    check_like,
    check_tensor,
)
from lessons_code.attention import scaled_dot_product_attention

__all__ = [
    "MultiHeadAttention",
    "attention_flops",
    "merge_heads",
    "multihead_attention",
    "multihead_attention_steps",
    "split_heads",
]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split the model width into heads: ``(B, T, D) -> (B, H, T, D / H)``.

    Head ``h`` receives features ``h * d_head`` to ``(h + 1) * d_head - 1``,
    the same chunking as ``torch.nn.MultiheadAttention``.

    Parameters
    ----------
    x
        A batch of sequences.
    num_heads
        Number of heads ``H``; it must divide ``D``.

    Returns
    -------
    torch.Tensor
        The same numbers, one ``(T, d_head)`` slice per batch element and head.

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - Output: ``(B, H, T, d_head)``.

    where ``B`` is the batch size, ``T`` the sequence length, ``D`` the model
    width, ``H`` the number of heads and ``d_head = D / H``.

    Raises
    ------
    TypeError
        If ``x`` is not a floating-point tensor or ``num_heads`` not an integer.
    ValueError
        If ``x`` is not 3-dimensional, ``num_heads < 1`` or ``H`` does not
        divide ``D``.

    Examples
    --------
    >>> split_heads(torch.zeros(2, 5, 16), num_heads=4).shape
    torch.Size([2, 4, 5, 4])
    """
    x = check_tensor(x, "x", ndim=3)
    num_heads = check_int(num_heads, "num_heads", minimum=1)
    B, T, D = x.shape
    _check_divisible(D, num_heads)
    d_head = D // num_heads
    x = x.view(B, T, num_heads, d_head)  # (B, T, H, d_head)
    return x.transpose(1, 2)  # (B, H, T, d_head)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads again: ``(B, H, T, d_head) -> (B, T, H * d_head)``.

    The inverse of :func:`split_heads`.

    Parameters
    ----------
    x
        One ``(T, d_head)`` slice per batch element and head.

    Returns
    -------
    torch.Tensor
        The heads' features side by side, head 0 first.

    Shape
    -----
    - ``x``: ``(B, H, T, d_head)``.
    - Output: ``(B, T, D)`` with ``D = H * d_head``.

    where ``B`` is the batch size, ``H`` the number of heads, ``T`` the
    sequence length and ``d_head`` the width of one head.

    Raises
    ------
    TypeError
        If ``x`` is not a floating-point tensor.
    ValueError
        If ``x`` is not 4-dimensional.

    Examples
    --------
    >>> x = torch.randn(2, 5, 16)
    >>> bool(torch.equal(merge_heads(split_heads(x, 4)), x))
    True
    """
    x = check_tensor(x, "x", ndim=4)
    B, H, T, d_head = x.shape
    x = x.transpose(1, 2)  # (B, T, H, d_head)
    return x.reshape(B, T, H * d_head)  # (B, T, D)


def _check_divisible(d_model: int, num_heads: int) -> None:
    """Raise if ``num_heads`` does not divide ``d_model``."""
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model must be divisible by num_heads, got d_model={d_model} "
            f"and num_heads={num_heads}"
        )


def _check_torch_mha(
    mha: object, name: str = "mha"
) -> nn.MultiheadAttention:
    """Return ``mha`` if this package can reproduce it, else raise.

    Accepted: a ``torch.nn.MultiheadAttention`` built with ``batch_first=True``,
    without separate ``kdim``/``vdim``, ``add_bias_kv`` or ``add_zero_attn``.
    (Its attention dropout is ignored: compare in ``eval()`` mode.)

    Parameters
    ----------
    mha
        The object to check.
    name
        The parameter name used in error messages.

    Returns
    -------
    torch.nn.MultiheadAttention
        ``mha`` itself.

    Raises
    ------
    TypeError
        If ``mha`` is not a ``torch.nn.MultiheadAttention``.
    ValueError
        If it uses a feature this package does not implement.
    """
    if not isinstance(mha, nn.MultiheadAttention):
        raise TypeError(
            f"{name} must be a torch.nn.MultiheadAttention, got {type(mha).__name__}"
        )
    if not mha.batch_first:
        raise ValueError(
            f"{name} must be built with batch_first=True (inputs of shape (B, T, D)), "
            "got batch_first=False"
        )
    if not mha._qkv_same_embed_dim:
        raise ValueError(
            f"{name} must have kdim == vdim == embed_dim ({mha.embed_dim}), "
            f"got kdim={mha.kdim} and vdim={mha.vdim}"
        )
    if mha.bias_k is not None or mha.add_zero_attn:
        raise ValueError(
            f"{name} must be built without add_bias_kv and add_zero_attn"
        )
    return mha


def multihead_attention_steps(
    x: torch.Tensor, mha: nn.MultiheadAttention
) -> dict[str, torch.Tensor]:
    """Multi-head self-attention step by step, with the weights of ``mha``.

    Reads the packed input projection ``in_proj_weight`` (``W_q``, ``W_k`` and
    ``W_v`` stacked), the packed ``in_proj_bias`` (``None`` if ``mha`` has no
    bias) and ``out_proj`` of a ``torch.nn.MultiheadAttention``, and returns
    every intermediate tensor so that their shapes can be shown.

    Parameters
    ----------
    x
        A batch of sequences; queries, keys and values all come from it.
    mha
        A ``torch.nn.MultiheadAttention`` with ``batch_first=True`` and no
        separate ``kdim``/``vdim``. Dropout is not applied (use ``mha.eval()``
        to compare).

    Returns
    -------
    dict of str to torch.Tensor
        In the order they are computed: ``"q"``, ``"k"``, ``"v"`` (the
        projections), ``"q_heads"``, ``"k_heads"``, ``"v_heads"`` (split into
        heads), ``"weights"`` (per-head attention weights), ``"heads"``
        (per-head outputs), ``"concat"`` (heads side by side) and ``"output"``
        (after the output projection).

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - ``q``, ``k``, ``v``, ``concat``, ``output``: ``(B, T, D)``.
    - ``q_heads``, ``k_heads``, ``v_heads``, ``heads``: ``(B, H, T, d_head)``.
    - ``weights``: ``(B, H, T, T)``.

    where ``B`` is the batch size, ``T`` the sequence length, ``D`` the model
    width (``mha.embed_dim``), ``H`` the number of heads (``mha.num_heads``)
    and ``d_head = D / H``.

    Raises
    ------
    TypeError
        If ``mha`` is not a ``torch.nn.MultiheadAttention``, or ``x`` is not a
        floating-point tensor of the dtype of ``mha``'s weights.
    ValueError
        If ``mha`` is not ``batch_first`` or has separate ``kdim``/``vdim``,
        or ``x`` is not ``(B, T, D)``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> mha = nn.MultiheadAttention(16, num_heads=4, batch_first=True)
    >>> steps = multihead_attention_steps(torch.randn(2, 5, 16), mha)
    >>> for name, t in steps.items():
    ...     print(f"{name:8s}{tuple(t.shape)}")
    q       (2, 5, 16)
    k       (2, 5, 16)
    v       (2, 5, 16)
    q_heads (2, 4, 5, 4)
    k_heads (2, 4, 5, 4)
    v_heads (2, 4, 5, 4)
    weights (2, 4, 5, 5)
    heads   (2, 4, 5, 4)
    concat  (2, 5, 16)
    output  (2, 5, 16)
    """
    mha = _check_torch_mha(mha)
    x = check_tensor(x, "x", ndim=3, last_dim=mha.embed_dim)
    check_like(x, "x", like=mha.in_proj_weight, like_name="mha's weights")
    H = mha.num_heads

    # The packed projection (3D, D) stacks W_q, W_k and W_v.
    w_q, w_k, w_v = mha.in_proj_weight.chunk(3)  # three (D, D)
    if mha.in_proj_bias is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = mha.in_proj_bias.chunk(3)  # three (D,)

    q = F.linear(x, w_q, b_q)  # x @ w_q.T + b_q: (B, T, D)
    k = F.linear(x, w_k, b_k)  # (B, T, D)
    v = F.linear(x, w_v, b_v)  # (B, T, D)

    q_heads = split_heads(q, H)  # (B, H, T, d_head)
    k_heads = split_heads(k, H)  # (B, H, T, d_head)
    v_heads = split_heads(v, H)  # (B, H, T, d_head)

    # Every head attends on its own; scores are divided by sqrt(d_head).
    heads, weights = scaled_dot_product_attention(
        q_heads, k_heads, v_heads
    )
    # heads: (B, H, T, d_head), weights: (B, H, T, T)

    concat = merge_heads(heads)  # (B, T, D)
    output = mha.out_proj(concat)  # (B, T, D)
    return {
        "q": q,
        "k": k,
        "v": v,
        "q_heads": q_heads,
        "k_heads": k_heads,
        "v_heads": v_heads,
        "weights": weights,
        "heads": heads,
        "concat": concat,
        "output": output,
    }


def multihead_attention(
    x: torch.Tensor, mha: nn.MultiheadAttention
) -> torch.Tensor:
    """Multi-head self-attention computed from the weights of ``mha``.

    Equal (up to rounding) to ``mha(x, x, x, need_weights=False)[0]``; see
    :func:`multihead_attention_steps` for the computation and its
    intermediate tensors.

    Parameters
    ----------
    x
        A batch of sequences.
    mha
        A ``torch.nn.MultiheadAttention`` with ``batch_first=True`` and no
        separate ``kdim``/``vdim``; dropout is not applied.

    Returns
    -------
    torch.Tensor
        The attention output after the output projection.

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size, ``T`` the sequence length and ``D`` the model
    width (``mha.embed_dim``).

    Raises
    ------
    TypeError
        If ``mha`` or ``x`` has the wrong type or dtype.
    ValueError
        If ``mha`` is not ``batch_first`` or ``x`` is not ``(B, T, D)``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> mha = nn.MultiheadAttention(16, num_heads=4, batch_first=True)
    >>> x = torch.randn(2, 5, 16)
    >>> ours = multihead_attention(x, mha)
    >>> theirs = mha(x, x, x, need_weights=False)[0]
    >>> bool((ours - theirs).abs().max() < 1e-6)
    True
    """
    return multihead_attention_steps(x, mha)["output"]


class MultiHeadAttention(nn.Module):
    """Multi-head attention with its own parameters.

    ``q_proj``, ``k_proj`` and ``v_proj`` map the queries, keys and values to
    width ``D``; the result is split into ``H`` heads of width ``d_head = D / H``
    that attend independently (scores divided by ``sqrt(d_head)``); the heads
    are concatenated and mixed by ``out_proj``. It has the same parameters as
    ``torch.nn.MultiheadAttention`` (``4 D^2 + 4 D`` with bias), stored as
    four ``D x D`` linear layers instead of one packed ``3D x D`` matrix; the
    query, key and value weights are initialised like PyTorch's
    (Xavier-uniform, zero biases), one matrix at a time.

    Parameters
    ----------
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H``; it must divide ``D``.
    bias
        Whether the four projections have a bias.

    Shape
    -----
    - ``query``: ``(B, T_q, D)``; ``key`` and ``value``: ``(B, T_k, D)``.
    - ``mask``: ``(T_q, T_k)``, ``(B, T_q, T_k)`` or ``(B, H, T_q, T_k)``, or any
      shape that broadcasts to them (e.g. ``(B, 1, 1, T_k)`` for padding).
    - Output: ``(B, T_q, D)``, and with ``return_weights`` also the weights
      ``(B, H, T_q, T_k)``.

    where ``B`` is the batch size, ``T_q`` the number of queries, ``T_k`` the
    number of keys, ``D`` the model width, ``H`` the number of heads and
    ``d_head = D / H``.

    Raises
    ------
    TypeError
        If ``d_model`` or ``num_heads`` is not an integer.
    ValueError
        If ``d_model`` or ``num_heads`` is smaller than 1, or ``num_heads``
        does not divide ``d_model``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> attn = MultiHeadAttention(d_model=16, num_heads=4)
    >>> x = torch.randn(2, 5, 16)
    >>> out, weights = attn(x, x, x, return_weights=True)
    >>> out.shape, weights.shape
    (torch.Size([2, 5, 16]), torch.Size([2, 4, 5, 5]))
    >>> sum(p.numel() for p in attn.parameters()) == 4 * 16**2 + 4 * 16
    True
    """

    def __init__(
        self, d_model: int, num_heads: int, bias: bool = True
    ) -> None:
        super().__init__()
        d_model = check_int(d_model, "d_model", minimum=1)
        num_heads = check_int(num_heads, "num_heads", minimum=1)
        _check_divisible(d_model, num_heads)
        bias = check_bool(bias, "bias")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Initialise like ``torch.nn.MultiheadAttention``: Xavier-uniform, zero biases."""
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            nn.init.xavier_uniform_(proj.weight)
        # PyTorch keeps nn.Linear's default here
        self.out_proj.reset_parameters()
        for proj in (
            self.q_proj,
            self.k_proj,
            self.v_proj,
            self.out_proj,
        ):
            if proj.bias is not None:
                nn.init.zeros_(proj.bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``query`` to ``key``/``value``.

        Parameters
        ----------
        query
            The sequences that ask (the same tensor as ``key`` and ``value``
            for self-attention, a decoder's states for cross-attention).
        key, value
            The sequences attended to.
        mask
            Optional boolean tensor, ``True`` where a query may attend to a key
            (``torch.nn.MultiheadAttention`` uses the opposite meaning). See
            the Shape section of the class for the accepted shapes.
        return_weights
            Also return the per-head attention weights.

        Returns
        -------
        torch.Tensor or tuple of torch.Tensor
            The output ``(B, T_q, D)``, or ``(output, weights)`` with weights
            ``(B, H, T_q, T_k)`` when ``return_weights`` is true.

        Raises
        ------
        TypeError
            If an input is not a floating-point tensor of the parameters'
            dtype, or ``mask`` is not boolean.
        ValueError
            If a shape is wrong (see the class's Shape section), or ``mask``
            leaves a query with no key to attend to.
        """
        query = check_tensor(
            query, "query", ndim=3, last_dim=self.d_model
        )
        key = check_tensor(key, "key", ndim=3, last_dim=self.d_model)
        value = check_tensor(
            value, "value", ndim=3, last_dim=self.d_model
        )
        check_like(
            query,
            "query",
            like=self.out_proj.weight,
            like_name="the module's parameters",
        )
        check_like(key, "key", like=query, like_name="query")
        check_like(value, "value", like=query, like_name="query")
        B, T_q, _ = query.shape
        T_k = key.shape[1]
        if key.shape[0] != B:
            raise ValueError(
                f"key must have the batch size {B} of query, got key of shape {tuple(key.shape)}"
            )
        if value.shape != key.shape:
            raise ValueError(
                f"value must have the shape of key {tuple(key.shape)}, "
                f"got shape {tuple(value.shape)}"
            )
        if mask is not None:
            # broadcasts to (B, H, T_q, T_k)
            mask = self._check_mask(mask, B, T_q, T_k)

        # q: (B, H, T_q, d_head); k and v: (B, H, T_k, d_head)
        q = split_heads(self.q_proj(query), self.num_heads)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)

        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        # heads: (B, H, T_q, d_head), weights: (B, H, T_q, T_k)

        output = self.out_proj(merge_heads(heads))  # (B, T_q, D)
        if return_weights:
            return output, weights
        return output

    def _check_mask(
        self,
        mask: object,
        B: int,
        T_q: int,
        T_k: int,
        name: str = "mask",
    ) -> torch.Tensor:
        """Return ``mask`` with a head axis, ready to broadcast to ``(B, H, T_q, T_k)``.

        ``name`` is the parameter named in error messages (a block passes
        its own, e.g. ``"memory_mask"``).
        """
        scores_shape = (B, self.num_heads, T_q, T_k)
        if isinstance(mask, torch.Tensor) and mask.ndim not in (2, 3, 4):
            raise ValueError(
                f"{name} must have 2, 3 or 4 dimensions ((T_q, T_k), (B, T_q, T_k) or "
                f"(B, H, T_q, T_k)), got shape {tuple(mask.shape)}"
            )
        if isinstance(mask, torch.Tensor) and mask.ndim == 3:
            check_bool_mask(mask, name, shape=(B, T_q, T_k))
            mask = mask.unsqueeze(1)  # (B, 1, T_q, T_k)
        return check_bool_mask(mask, name, shape=scores_shape)

    def extra_repr(self) -> str:
        """Show the sizes when the module is printed."""
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_head={self.d_head}"

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention) -> MultiHeadAttention:
        """Build a :class:`MultiHeadAttention` with the weights of ``mha``.

        Parameters
        ----------
        mha
            A ``torch.nn.MultiheadAttention`` with ``batch_first=True`` and no
            separate ``kdim``/``vdim``, ``add_bias_kv`` or ``add_zero_attn``.

        Returns
        -------
        MultiHeadAttention
            A new module on the device and with the dtype of ``mha``, holding
            copies of its weights.

        Raises
        ------
        TypeError
            If ``mha`` is not a ``torch.nn.MultiheadAttention``.
        ValueError
            If ``mha`` uses a feature this module does not implement.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> mha = nn.MultiheadAttention(16, num_heads=4, batch_first=True)
        >>> ours = MultiHeadAttention.from_torch(mha)
        >>> x = torch.randn(2, 5, 16)
        >>> from lessons_code.attention import causal_mask
        >>> mask = causal_mask(5)  # True = may attend; PyTorch wants ~mask
        >>> theirs = mha(x, x, x, attn_mask=~mask, need_weights=False)[0]
        >>> bool((ours(x, x, x, mask=mask) - theirs).abs().max() < 1e-6)
        True
        """
        mha = _check_torch_mha(mha)
        weight = mha.in_proj_weight
        module = cls(
            mha.embed_dim,
            mha.num_heads,
            bias=mha.in_proj_bias is not None,
        )
        module = module.to(device=weight.device, dtype=weight.dtype)
        w_q, w_k, w_v = weight.chunk(3)  # three (D, D)
        with torch.no_grad():
            module.q_proj.weight.copy_(w_q)
            module.k_proj.weight.copy_(w_k)
            module.v_proj.weight.copy_(w_v)
            module.out_proj.weight.copy_(mha.out_proj.weight)
            if mha.in_proj_bias is not None:
                b_q, b_k, b_v = mha.in_proj_bias.chunk(3)  # three (D,)
                module.q_proj.bias.copy_(b_q)
                module.k_proj.bias.copy_(b_k)
                module.v_proj.bias.copy_(b_v)
                module.out_proj.bias.copy_(mha.out_proj.bias)
        return module


def attention_flops(
    seq_len: int, d_model: int, num_heads: int
) -> dict[str, int]:
    """Multiply-adds of one multi-head self-attention over one sequence.

    Counts the matrix products only (not the softmax, scaling or biases):

    - ``projections``: ``Q``, ``K`` and ``V``, each ``(T, D) @ (D, D)``: ``3 T D^2``;
    - ``scores``: per head ``(T, d_head) @ (d_head, T)``, times ``H``: ``T^2 D``;
    - ``weighted_sum``: per head ``(T, T) @ (T, d_head)``, times ``H``: ``T^2 D``;
    - ``output_projection``: ``(T, D) @ (D, D)``: ``T D^2``.

    ``H`` cancels out of every term because ``H * d_head = D``: ``H`` heads of
    width ``D / H`` cost the same as one head of width ``D``. The price of
    attention is the ``T^2`` in the middle two terms.

    Parameters
    ----------
    seq_len
        Sequence length ``T``.
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H``; it must divide ``D``.

    Returns
    -------
    dict of str to int
        ``"projections"``, ``"scores"``, ``"weighted_sum"``,
        ``"output_projection"`` and their sum ``"total"``.

    Shape
    -----
    ``T`` is the sequence length, ``D`` the model width, ``H`` the number of
    heads and ``d_head = D / H``.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If an argument is smaller than 1 or ``num_heads`` does not divide
        ``d_model``.

    Examples
    --------
    >>> flops = attention_flops(seq_len=5, d_model=16, num_heads=4)
    >>> flops["scores"], flops["total"]
    (400, 5920)
    >>> attention_flops(5, 16, 1) == attention_flops(5, 16, 16)
    True
    """
    T = check_int(seq_len, "seq_len", minimum=1)
    D = check_int(d_model, "d_model", minimum=1)
    H = check_int(num_heads, "num_heads", minimum=1)
    _check_divisible(D, H)
    d_head = D // H
    counts = {
        "projections": 3 * T * D * D,
        "scores": H * (T * d_head * T),
        "weighted_sum": H * (T * T * d_head),
        "output_projection": T * D * D,
    }
    counts["total"] = sum(counts.values())
    return counts
