"""Transformer blocks: LayerNorm, the encoder block and stack, the decoder block and stack.

An encoder block wraps two sub-layers -- multi-head self-attention and a
position-wise feed-forward network -- each in a residual connection and a
LayerNorm. Where the LayerNorm sits is the one design choice:

- post-norm (Vaswani et al., 2017): ``x = LN1(x + MHA(x)); x = LN2(x + FF(x))``;
- pre-norm (Xiong et al., 2020): ``x = x + MHA(LN1(x)); x = x + FF(LN2(x))``.

Each block maps ``(B, T, D)`` to ``(B, T, D)``, which is why blocks stack.
The PyTorch classes here match ``torch.nn.TransformerEncoderLayer``,
``torch.nn.TransformerEncoder``, ``torch.nn.TransformerDecoderLayer`` and
``torch.nn.TransformerDecoder`` when given the same weights (``from_torch``).

Masks are boolean with ``True`` meaning "may attend". The ``torch.nn.Transformer*``
layers read boolean masks the opposite way (``True`` means "masked out").
"""

from __future__ import annotations

from typing import Any, ClassVar, Self, TypeVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_array,
    check_bool,
    check_int,
    check_like,
    check_real,
    check_tensor,
)
from lessons_code.attention import causal_mask, self_attention
from lessons_code.multihead import MultiHeadAttention

_Block = TypeVar("_Block", bound="EncoderBlock | DecoderBlock")
# The PyTorch layers that from_torch reproduces.
_TorchLayer = nn.TransformerEncoderLayer | nn.TransformerDecoderLayer

__all__ = [
    "Decoder",
    "DecoderBlock",
    "Encoder",
    "EncoderBlock",
    "FeedForward",
    "encoder_block_numpy",
    "layer_norm",
]


# --------------------------------------------------------------------------
# NumPy: the block written out in a few lines
# --------------------------------------------------------------------------


def layer_norm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """LayerNorm without affine parameters, over the last axis.

    Each token is normalised with the mean and (biased) variance of its own
    features: ``(x - mean) / sqrt(var + eps)``.

    Parameters
    ----------
    x
        Real values; the last axis holds one token's features.
    eps
        Small positive number added to the variance.

    Returns
    -------
    numpy.ndarray
        float64 values with mean 0 and variance ``var / (var + eps)``
        (about 1) along the last axis.

    Shape
    -----
    - ``x``: ``(..., D)``.
    - Output: ``(..., D)``.

    where ``D`` is the number of features (the model width).

    Raises
    ------
    TypeError
        If ``x`` is not a real NumPy array or ``eps`` not a real number.
    ValueError
        If ``x`` has no dimensions or ``eps`` is not positive.

    Examples
    --------
    >>> y = layer_norm(np.array([[1.0, 2.0, 3.0, 4.0]]))
    >>> y.round(3)
    array([[-1.342, -0.447,  0.447,  1.342]])
    >>> float(abs(y.mean()))
    0.0
    """
    x = check_array(x, "x")
    eps = check_real(eps, "eps", strict=True)
    if x.ndim == 0:
        raise ValueError(
            "x must have at least 1 dimension, got a 0-dimensional array"
        )
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = x.var(axis=-1, keepdims=True)  # (..., 1), biased: divides by D
    return (x - mean) / np.sqrt(var + eps)  # (..., D)


def encoder_block_numpy(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w1: np.ndarray,
    b1: np.ndarray,
    w2: np.ndarray,
    b2: np.ndarray,
    eps: float = 1e-6,
) -> np.ndarray:
    """Apply a single-head, post-norm encoder block in NumPy.

    ``h = LN(x + Attn(x))`` and ``out = LN(h + ReLU(h W1 + b1) W2 + b2)``,
    where ``Attn`` is single-head self-attention and ``LN`` is
    :func:`layer_norm` (no affine parameters).

    Parameters
    ----------
    x
        The sequence, one token per row.
    w_q, w_k, w_v
        Attention projections. ``w_v`` must be square (``D x D``) so the
        attention output can be added to ``x``.
    w1, b1
        First feed-forward layer (``D -> FF``).
    w2, b2
        Second feed-forward layer (``FF -> D``).
    eps
        The LayerNorm epsilon.

    Returns
    -------
    numpy.ndarray
        The block's output, float64.

    Shape
    -----
    - ``x``: ``(T, D)``; ``w_q``, ``w_k``: ``(D, d_k)``; ``w_v``: ``(D, D)``.
    - ``w1``: ``(D, FF)``, ``b1``: ``(FF,)``, ``w2``: ``(FF, D)``, ``b2``: ``(D,)``.
    - Output: ``(T, D)``, the shape of ``x``.

    where ``T`` is the number of tokens, ``D`` the model width, ``d_k`` the
    query/key width and ``FF`` the hidden width of the feed-forward network.

    Raises
    ------
    TypeError
        If an input is not a real NumPy array.
    ValueError
        If a shape does not fit the others.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> T, D, FF = 5, 8, 16
    >>> x = rng.standard_normal((T, D))
    >>> w_q, w_k, w_v = (0.2 * rng.standard_normal((D, D)) for _ in range(3))
    >>> w1, w2 = 0.2 * rng.standard_normal((D, FF)), 0.2 * rng.standard_normal((FF, D))
    >>> out = encoder_block_numpy(x, w_q, w_k, w_v, w1, np.zeros(FF), w2, np.zeros(D))
    >>> out.shape
    (5, 8)
    """
    x = check_array(x, "x", ndim=2)
    D = x.shape[1]
    w_v = check_array(w_v, "w_v", ndim=2)
    if w_v.shape != (D, D):
        raise ValueError(
            f"w_v must have shape {(D, D)} so the attention output can be added to x, "
            f"got shape {w_v.shape}"
        )
    w1 = check_array(w1, "w1", ndim=2)
    if w1.shape[0] != D:
        raise ValueError(
            f"w1 must have {D} rows (the width D of x), got shape {w1.shape}"
        )
    FF = w1.shape[1]
    for name, value, shape in (
        ("b1", b1, (FF,)),
        ("w2", w2, (FF, D)),
        ("b2", b2, (D,)),
    ):
        array = check_array(value, name, ndim=len(shape))
        if array.shape != shape:
            raise ValueError(
                f"{name} must have shape {shape}, got shape {array.shape}"
            )

    attn, _ = self_attention(x, w_q, w_k, w_v)  # (T, D)
    h = layer_norm(x + attn, eps)  # (T, D): residual, then LayerNorm
    hidden = np.maximum(0.0, h @ w1 + b1)  # (T, FF)
    ff = hidden @ w2 + b2  # (T, D)
    return layer_norm(h + ff, eps)  # (T, D)


# --------------------------------------------------------------------------
# PyTorch modules
# --------------------------------------------------------------------------


def _check_block_sizes(
    d_model: object, num_heads: object, d_ff: object, dropout: object
) -> None:
    """Validate the constructor arguments shared by the blocks."""
    check_int(d_model, "d_model", minimum=1)
    check_int(num_heads, "num_heads", minimum=1)
    check_int(d_ff, "d_ff", minimum=1)
    p = check_real(dropout, "dropout")
    if p >= 1.0:
        raise ValueError(
            f"dropout must be a probability in [0, 1), got {dropout}"
        )


def _check_input(
    x: object, d_model: int, like: torch.Tensor
) -> torch.Tensor:
    """Return ``x`` if it is a ``(B, T, D)`` tensor of the module's dtype and device."""
    x = check_tensor(x, "x", ndim=3, last_dim=d_model)
    check_like(x, "x", like=like, like_name="the module's parameters")
    return x


def _copy_linear(ours: nn.Linear, theirs: nn.Linear) -> None:
    """Copy the weight and bias of a ``torch.nn.Linear``."""
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)


def _copy_layer_norm(ours: nn.LayerNorm, theirs: nn.LayerNorm) -> None:
    """Copy the affine parameters and the epsilon of a ``torch.nn.LayerNorm``."""
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)
    ours.eps = theirs.eps


def _check_torch_layer(
    layer: object, name: str, kind: type[_TorchLayer]
) -> None:
    """Raise unless ``layer`` is a ``kind`` this package can reproduce."""
    if not isinstance(layer, kind):
        raise TypeError(
            f"{name} must be a torch.nn.{kind.__name__}, got {type(layer).__name__}"
        )
    if not layer.self_attn.batch_first:
        raise ValueError(
            f"{name} must be built with batch_first=True, got batch_first=False"
        )
    if not (
        layer.activation is F.relu
        or isinstance(layer.activation, nn.ReLU)
    ):
        raise ValueError(
            f"{name} must use the ReLU activation (activation='relu'), got {layer.activation!r}"
        )
    if layer.linear1.bias is None or layer.norm1.bias is None:
        raise ValueError(f"{name} must be built with bias=True")
    if layer.norm1.weight is None:
        raise ValueError(
            f"{name} must have LayerNorms with elementwise_affine=True"
        )


def _block_like(cls: type[_Block], layer: _TorchLayer) -> _Block:
    """Build a ``cls`` with the sizes, self-attention, feed-forward and norms of ``layer``.

    ``layer`` is a checked ``torch.nn.TransformerEncoderLayer`` or
    ``TransformerDecoderLayer``; every ``norm1``, ``norm2``, ... the new block
    has is copied from the layer's namesake. Sub-layers only a decoder has
    (cross-attention) are left to the caller.
    """
    weight = layer.linear1.weight
    block = cls(
        layer.self_attn.embed_dim,
        layer.self_attn.num_heads,
        layer.linear1.out_features,
        norm_first=layer.norm_first,
        dropout=layer.dropout.p,
        layer_norm_eps=layer.norm1.eps,
    )
    block.to(device=weight.device, dtype=weight.dtype)  # in place
    block.self_attn = MultiHeadAttention.from_torch(layer.self_attn)
    with torch.no_grad():
        _copy_linear(block.feed_forward.linear1, layer.linear1)
        _copy_linear(block.feed_forward.linear2, layer.linear2)
        for name, norm in block.named_children():
            if isinstance(norm, nn.LayerNorm):
                _copy_layer_norm(norm, getattr(layer, name))
    return block


class FeedForward(nn.Module):
    """Position-wise feed-forward network: ``Linear(D, FF) -> ReLU -> Linear(FF, D)``.

    The same two-layer network is applied to every position separately.

    Parameters
    ----------
    d_model
        Model width ``D``.
    d_ff
        Hidden width ``FF``.
    dropout
        Dropout probability on the hidden activations (training only).

    Shape
    -----
    - Input: ``(..., D)``.
    - Output: ``(..., D)``.

    where ``D`` is the model width.

    Raises
    ------
    TypeError
        If a size is not an integer or ``dropout`` not a real number.
    ValueError
        If a size is smaller than 1 or ``dropout`` is not in ``[0, 1)``.

    Examples
    --------
    >>> FeedForward(d_model=16, d_ff=32)(torch.randn(2, 6, 16)).shape
    torch.Size([2, 6, 16])
    """

    def __init__(
        self, d_model: int, d_ff: int, *, dropout: float = 0.0
    ) -> None:
        super().__init__()
        _check_block_sizes(d_model, 1, d_ff, dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the network to every position of ``x``."""
        hidden = F.relu(self.linear1(x))  # (..., FF)
        return self.linear2(self.dropout(hidden))  # (..., D)


class EncoderBlock(nn.Module):
    """A transformer encoder block: self-attention and feed-forward, each with residual + LayerNorm.

    Post-norm (``norm_first=False``, the 2017 paper)::

        x = LN1(x + MHA(x))
        x = LN2(x + FF(x))

    Pre-norm (``norm_first=True``)::

        x = x + MHA(LN1(x))
        x = x + FF(LN2(x))

    Dropout (active only in training) is applied to each sub-layer's output
    before it is added back, and inside the feed-forward network, as in
    ``torch.nn.TransformerEncoderLayer`` (which also drops attention weights;
    this block does not).

    Parameters
    ----------
    d_model
        Model width ``D``.
    num_heads
        Number of attention heads ``H``; it must divide ``D``.
    d_ff
        Hidden width ``FF`` of the feed-forward network.
    norm_first
        Pre-norm if ``True``, post-norm if ``False``.
    dropout
        Dropout probability (training only).
    layer_norm_eps
        The LayerNorms' epsilon (PyTorch's default is ``1e-5``).

    Shape
    -----
    - ``x``: ``(B, T, D)``; ``mask``: ``(T, T)``, ``(B, T, T)`` or
      ``(B, H, T, T)`` (``True`` = may attend).
    - Output: ``(B, T, D)``, the shape of ``x``.

    where ``B`` is the batch size, ``T`` the sequence length, ``D`` the model
    width and ``H`` the number of heads.

    Raises
    ------
    TypeError
        If a size is not an integer, or ``norm_first`` not a bool.
    ValueError
        If a size is smaller than 1, ``num_heads`` does not divide ``d_model``,
        or ``dropout`` is not in ``[0, 1)``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> block = EncoderBlock(d_model=16, num_heads=4, d_ff=32)
    >>> x = torch.randn(2, 6, 16)
    >>> block(x).shape
    torch.Size([2, 6, 16])
    >>> block.norm_first
    False
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        norm_first: bool = False,
        *,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        _check_block_sizes(d_model, num_heads, d_ff, dropout)
        self.d_model = d_model
        norm_first = check_bool(norm_first, "norm_first")
        layer_norm_eps = check_real(
            layer_norm_eps, "layer_norm_eps", strict=True
        )
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Run the block.

        Parameters
        ----------
        x
            A batch of sequences ``(B, T, D)``.
        mask
            Optional boolean self-attention mask, ``True`` = may attend.

        Returns
        -------
        torch.Tensor
            The transformed sequences ``(B, T, D)``.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype.
        ValueError
            If ``x`` is not ``(B, T, D)`` or ``mask`` does not fit.
        """
        x = _check_input(x, self.d_model, like=self.norm1.weight)
        if self.norm_first:
            x = x + self._attention(self.norm1(x), mask)  # (B, T, D)
            x = x + self._feed_forward(self.norm2(x))  # (B, T, D)
        else:
            x = self.norm1(x + self._attention(x, mask))  # (B, T, D)
            x = self.norm2(x + self._feed_forward(x))  # (B, T, D)
        return x

    def _attention(
        self, x: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Self-attention sub-layer (without its residual)."""
        # (B, T, D)
        return self.dropout1(self.self_attn(x, x, x, mask=mask))

    def _feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """Feed-forward sub-layer (without its residual)."""
        return self.dropout2(self.feed_forward(x))  # (B, T, D)

    @classmethod
    def from_torch(
        cls, layer: nn.TransformerEncoderLayer
    ) -> EncoderBlock:
        """Build an :class:`EncoderBlock` with the weights of a PyTorch encoder layer.

        Copies the attention and feed-forward weights, both LayerNorms (with
        their epsilon), ``norm_first`` and the dropout probability.

        Parameters
        ----------
        layer
            A ``torch.nn.TransformerEncoderLayer`` built with
            ``batch_first=True``, the ReLU activation and ``bias=True``.

        Returns
        -------
        EncoderBlock
            A new block on the device and with the dtype of ``layer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``torch.nn.TransformerEncoderLayer``.
        ValueError
            If it is not ``batch_first``, uses another activation, or has no
            biases.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0,
        ...                                    batch_first=True).eval()
        >>> block = EncoderBlock.from_torch(layer)
        >>> x = torch.randn(2, 6, 16)
        >>> bool((block(x) - layer(x)).abs().max() < 1e-5)
        True
        """
        _check_torch_layer(layer, "layer", nn.TransformerEncoderLayer)
        return _block_like(cls, layer)


class _Stack(nn.Module):
    """What :class:`Encoder` and :class:`Decoder` share: blocks, then an optional LayerNorm.

    A subclass names its block class in ``_block`` (:class:`EncoderBlock` or
    :class:`DecoderBlock`) and writes its own ``forward``.
    """

    _block: ClassVar[Any]

    def __init__(
        self,
        num_layers: int,
        d_model: int,
        num_heads: int,
        d_ff: int,
        norm_first: bool = False,
        *,
        dropout: float = 0.0,
        final_norm: bool = False,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        num_layers = check_int(num_layers, "num_layers", minimum=1)
        _check_block_sizes(d_model, num_heads, d_ff, dropout)
        self.d_model = d_model
        norm_first = check_bool(norm_first, "norm_first")
        layer_norm_eps = check_real(
            layer_norm_eps, "layer_norm_eps", strict=True
        )
        self.norm_first = norm_first
        self.layers = nn.ModuleList(
            self._block(
                d_model,
                num_heads,
                d_ff,
                norm_first,
                dropout=dropout,
                layer_norm_eps=layer_norm_eps,
            )
            for _ in range(num_layers)
        )
        self.final_norm = (
            nn.LayerNorm(d_model, eps=layer_norm_eps)
            if check_bool(final_norm, "final_norm")
            else None
        )

    @classmethod
    def _from_torch_stack(
        cls, stack: nn.Module, name: str, torch_type: type[nn.Module]
    ) -> Self:
        """Build a stack with the weights of PyTorch's ``stack`` (its layers and ``norm``)."""
        if not isinstance(stack, torch_type):
            raise TypeError(
                f"{name} must be a torch.nn.{torch_type.__name__}, got {type(stack).__name__}"
            )
        norm = stack.norm
        if norm is not None and not isinstance(norm, nn.LayerNorm):
            raise TypeError(
                f"{name}.norm must be None or a torch.nn.LayerNorm, "
                f"got {type(norm).__name__}"
            )
        layers = stack.layers
        assert isinstance(
            layers, nn.ModuleList
        )  # both PyTorch stacks keep one
        if len(layers) == 0:
            raise ValueError(
                f"{name} must have at least one layer, got 0"
            )
        blocks = [cls._block.from_torch(layer) for layer in layers]
        first = blocks[0]
        weight = first.norm1.weight
        ours = cls(
            len(blocks),
            first.d_model,
            first.self_attn.num_heads,
            first.feed_forward.linear1.out_features,
            first.norm_first,
            dropout=first.dropout1.p,
            final_norm=norm is not None,
        ).to(device=weight.device, dtype=weight.dtype)
        ours.layers = nn.ModuleList(blocks)
        if ours.final_norm is not None and norm is not None:
            with torch.no_grad():
                _copy_layer_norm(ours.final_norm, norm)
        return ours


class Encoder(_Stack):
    """A stack of ``num_layers`` :class:`EncoderBlock` s, with an optional final LayerNorm.

    Pre-norm stacks usually end with a final LayerNorm (the blocks' outputs
    are never normalised otherwise); ``torch.nn.TransformerEncoder`` calls it
    ``norm``.

    Parameters
    ----------
    num_layers
        Number of blocks ``N``.
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H`` per block; it must divide ``D``.
    d_ff
        Hidden width ``FF`` of each feed-forward network.
    norm_first
        Pre-norm blocks if ``True``, post-norm blocks if ``False``.
    dropout
        Dropout probability of every block (training only).
    final_norm
        Apply a LayerNorm after the last block.
    layer_norm_eps
        Epsilon of every LayerNorm.

    Shape
    -----
    - ``x``: ``(B, T, D)``; ``mask``: ``(T, T)``, ``(B, T, T)`` or
      ``(B, H, T, T)`` (``True`` = may attend).
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size, ``T`` the sequence length, ``D`` the model
    width and ``H`` the number of heads.

    Raises
    ------
    TypeError
        If a size is not an integer or a flag not a bool.
    ValueError
        If a size is smaller than 1 or ``num_heads`` does not divide ``d_model``.

    Examples
    --------
    >>> encoder = Encoder(num_layers=3, d_model=16, num_heads=4, d_ff=32)
    >>> encoder(torch.randn(2, 6, 16)).shape
    torch.Size([2, 6, 16])
    >>> len(encoder.layers), encoder.final_norm is None
    (3, True)
    """

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Run the blocks in turn, then the final LayerNorm if there is one.

        Parameters
        ----------
        x
            A batch of sequences ``(B, T, D)``.
        mask
            Optional boolean self-attention mask used by every block.

        Returns
        -------
        torch.Tensor
            The encoded sequences ``(B, T, D)``.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype.
        ValueError
            If ``x`` is not ``(B, T, D)`` or ``mask`` does not fit.
        """
        for layer in self.layers:
            x = layer(x, mask)  # (B, T, D)
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T, D)
        return x

    _block = EncoderBlock

    @classmethod
    def from_torch(cls, encoder: nn.TransformerEncoder) -> Encoder:
        """Build an :class:`Encoder` with the weights of a ``torch.nn.TransformerEncoder``.

        Every layer is copied with :meth:`EncoderBlock.from_torch`; the
        encoder's optional final ``norm`` becomes ``final_norm``.

        Parameters
        ----------
        encoder
            A ``torch.nn.TransformerEncoder`` whose layers are accepted by
            :meth:`EncoderBlock.from_torch` and whose ``norm`` is ``None`` or a
            ``torch.nn.LayerNorm``.

        Returns
        -------
        Encoder
            A new encoder on the device and with the dtype of ``encoder``.

        Raises
        ------
        TypeError
            If ``encoder`` is not a ``torch.nn.TransformerEncoder``, or its
            ``norm`` is not a LayerNorm.
        ValueError
            If one of its layers cannot be reproduced.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        >>> torch_encoder = nn.TransformerEncoder(layer, num_layers=2,
        ...                                       enable_nested_tensor=False).eval()
        >>> encoder = Encoder.from_torch(torch_encoder)
        >>> x = torch.randn(2, 6, 16)
        >>> bool((encoder(x) - torch_encoder(x)).abs().max() < 1e-5)
        True
        """
        return cls._from_torch_stack(
            encoder, "encoder", nn.TransformerEncoder
        )


class DecoderBlock(nn.Module):
    """A transformer decoder block: causal self-attention, cross-attention, feed-forward.

    Each sub-layer has its residual connection and LayerNorm. Post-norm
    (``norm_first=False``)::

        x = LN1(x + SelfAttn(x))
        x = LN2(x + CrossAttn(x, memory))
        x = LN3(x + FF(x))

    Pre-norm (``norm_first=True``)::

        x = x + SelfAttn(LN1(x))
        x = x + CrossAttn(LN2(x), memory)
        x = x + FF(LN3(x))

    In the cross-attention the queries come from the decoder (``x``) and the
    keys and values from the encoder's output (``memory``).

    Parameters
    ----------
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H`` of both attentions; it must divide ``D``.
    d_ff
        Hidden width ``FF`` of the feed-forward network.
    norm_first
        Pre-norm if ``True``, post-norm if ``False``.
    dropout
        Dropout probability on each sub-layer's output and in the feed-forward
        network (training only).
    layer_norm_eps
        Epsilon of the three LayerNorms.

    Shape
    -----
    - ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``.
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size, ``T`` the decoder's sequence length, ``S``
    the encoder's sequence length and ``D`` the model width.

    Raises
    ------
    TypeError
        If a size is not an integer, or ``norm_first`` not a bool.
    ValueError
        If a size is smaller than 1 or ``num_heads`` does not divide ``d_model``.

    Examples
    --------
    >>> block = DecoderBlock(d_model=16, num_heads=4, d_ff=32)
    >>> block(torch.randn(2, 5, 16), memory=torch.randn(2, 7, 16)).shape
    torch.Size([2, 5, 16])
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        norm_first: bool = False,
        *,
        dropout: float = 0.0,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        _check_block_sizes(d_model, num_heads, d_ff, dropout)
        self.d_model = d_model
        norm_first = check_bool(norm_first, "norm_first")
        layer_norm_eps = check_real(
            layer_norm_eps, "layer_norm_eps", strict=True
        )
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        causal: bool = True,
        *,
        mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run the block.

        Parameters
        ----------
        x
            The decoder's sequences ``(B, T, D)``.
        memory
            The encoder's output ``(B, S, D)``, attended to by every position.
        causal
            If ``True``, position ``t`` of ``x`` attends only to positions
            ``<= t`` in the self-attention (see
            :func:`lessons_code.attention.causal_mask`).
        mask
            Optional boolean self-attention mask, ``True`` = may attend, e.g.
            a padding mask ``(B, 1, 1, T)`` from
            :func:`lessons_code.transformer.padding_mask`. With ``causal`` a
            pair may attend only if both masks allow it.
        memory_mask
            Optional boolean cross-attention mask, ``True`` where a position
            of ``x`` may attend to a position of ``memory``, e.g. the padding
            mask ``(B, 1, 1, S)`` of the encoder's input.

        Returns
        -------
        torch.Tensor
            The transformed sequences ``(B, T, D)``.

        Shape
        -----
        - ``mask``: ``(T, T)``, ``(B, T, T)`` or ``(B, H, T, T)``, or any shape
          that broadcasts to them, such as ``(B, 1, 1, T)``.
        - ``memory_mask``: ``(T, S)``, ``(B, T, S)`` or ``(B, H, T, S)``, or any
          shape that broadcasts to them, such as ``(B, 1, 1, S)``.

        where ``B`` is the batch size, ``H`` the number of heads, ``T`` the
        decoder's and ``S`` the encoder's sequence length.

        Raises
        ------
        TypeError
            If ``x`` or ``memory`` is not a floating-point tensor of the
            parameters' dtype, ``causal`` not a bool, or a mask not boolean.
        ValueError
            If ``x`` is not ``(B, T, D)``, ``memory`` not ``(B, S, D)``, or a
            mask does not fit (or leaves a position nothing to attend to).

        Examples
        --------
        >>> block = DecoderBlock(d_model=16, num_heads=4, d_ff=32)
        >>> x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
        >>> real = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])  # (B, S)
        >>> memory_mask = real[:, None, None, :]  # (B, 1, 1, S): keys only
        >>> block(x, memory, memory_mask=memory_mask).shape
        torch.Size([2, 5, 16])
        """
        x = _check_input(x, self.d_model, like=self.norm1.weight)
        memory = check_tensor(
            memory, "memory", ndim=3, last_dim=self.d_model
        )
        check_like(memory, "memory", like=x, like_name="x")
        if memory.shape[0] != x.shape[0]:
            raise ValueError(
                f"memory must have the batch size {x.shape[0]} of x, "
                f"got memory of shape {tuple(memory.shape)}"
            )
        causal = check_bool(causal, "causal")
        B, T, _ = x.shape
        S = memory.shape[1]
        if mask is not None:
            mask = self.self_attn._check_mask(mask, B, T, T)
        if memory_mask is not None:
            memory_mask = self.cross_attn._check_mask(
                memory_mask, B, T, S, name="memory_mask"
            )
        if causal:  # a pair may attend if both masks allow it
            future = causal_mask(T, device=x.device)  # (T, T)
            mask = future if mask is None else future & mask

        # Each of the three sub-layers keeps the shape (B, T, D).
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask)
            x = x + self._cross_attention(
                self.norm2(x), memory, memory_mask
            )
            x = x + self._feed_forward(self.norm3(x))
        else:
            x = self.norm1(x + self._self_attention(x, mask))
            x = self.norm2(
                x + self._cross_attention(x, memory, memory_mask)
            )
            x = self.norm3(x + self._feed_forward(x))
        return x

    def _self_attention(
        self, x: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Self-attention sub-layer (without its residual)."""
        # (B, T, D)
        return self.dropout1(self.self_attn(x, x, x, mask=mask))

    def _cross_attention(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Cross-attention sub-layer: queries from ``x``, keys and values from ``memory``."""
        # (B, T, D)
        return self.dropout2(
            self.cross_attn(x, memory, memory, mask=memory_mask)
        )

    def _feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """Feed-forward sub-layer (without its residual)."""
        return self.dropout3(self.feed_forward(x))  # (B, T, D)

    @classmethod
    def from_torch(
        cls, layer: nn.TransformerDecoderLayer
    ) -> DecoderBlock:
        """Build a :class:`DecoderBlock` with the weights of a PyTorch decoder layer.

        Parameters
        ----------
        layer
            A ``torch.nn.TransformerDecoderLayer`` built with
            ``batch_first=True``, the ReLU activation and ``bias=True``.

        Returns
        -------
        DecoderBlock
            A new block on the device and with the dtype of ``layer``.

        Raises
        ------
        TypeError
            If ``layer`` is not a ``torch.nn.TransformerDecoderLayer``.
        ValueError
            If it is not ``batch_first``, uses another activation, or has no
            biases.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> layer = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        >>> block = DecoderBlock.from_torch(layer.eval())
        >>> x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
        >>> causal = nn.Transformer.generate_square_subsequent_mask(5)  # float, -inf above
        >>> theirs = layer(x, memory, tgt_mask=causal, tgt_is_causal=True)
        >>> bool((block(x, memory, causal=True) - theirs).abs().max() < 1e-5)
        True
        """
        _check_torch_layer(layer, "layer", nn.TransformerDecoderLayer)
        block = _block_like(cls, layer)
        block.cross_attn = MultiHeadAttention.from_torch(
            layer.multihead_attn
        )
        return block


class Decoder(_Stack):
    """A stack of ``num_layers`` :class:`DecoderBlock` s, with an optional final LayerNorm.

    Every block attends to the same ``memory`` (the encoder's output) with
    the same masks; ``torch.nn.TransformerDecoder`` calls the final
    LayerNorm ``norm``.

    Parameters
    ----------
    num_layers
        Number of blocks ``N``.
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H`` of every attention; it must divide ``D``.
    d_ff
        Hidden width ``FF`` of each feed-forward network.
    norm_first
        Pre-norm blocks if ``True``, post-norm blocks if ``False``.
    dropout
        Dropout probability of every block (training only).
    final_norm
        Apply a LayerNorm after the last block.
    layer_norm_eps
        Epsilon of every LayerNorm.

    Shape
    -----
    - ``x``: ``(B, T, D)``; ``memory``: ``(B, S, D)``.
    - ``mask``: broadcastable to ``(B, H, T, T)``; ``memory_mask``:
      broadcastable to ``(B, H, T, S)`` (``True`` = may attend).
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size, ``T`` the decoder's and ``S`` the
    encoder's sequence length, ``D`` the model width and ``H`` the number of
    heads.

    Raises
    ------
    TypeError
        If a size is not an integer or a flag not a bool.
    ValueError
        If a size is smaller than 1 or ``num_heads`` does not divide ``d_model``.

    Examples
    --------
    >>> decoder = Decoder(num_layers=2, d_model=16, num_heads=4, d_ff=32)
    >>> decoder(torch.randn(2, 5, 16), torch.randn(2, 7, 16)).shape
    torch.Size([2, 5, 16])
    >>> len(decoder.layers), decoder.final_norm is None
    (2, True)
    """

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        causal: bool = True,
        *,
        mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Run the blocks in turn, then the final LayerNorm if there is one.

        Parameters
        ----------
        x
            The decoder's sequences ``(B, T, D)``.
        memory
            The encoder's output ``(B, S, D)``.
        causal
            Causal self-attention in every block (see
            :meth:`DecoderBlock.forward`).
        mask
            Optional boolean self-attention mask used by every block,
            combined with the causal mask.
        memory_mask
            Optional boolean cross-attention mask used by every block.

        Returns
        -------
        torch.Tensor
            The decoded sequences ``(B, T, D)``.

        Raises
        ------
        TypeError
            If ``x`` or ``memory`` is not a floating-point tensor of the
            parameters' dtype, ``causal`` not a bool or a mask not boolean.
        ValueError
            If a shape does not fit (see the class's Shape section).
        """
        for layer in self.layers:
            # (B, T, D)
            x = layer(
                x, memory, causal, mask=mask, memory_mask=memory_mask
            )
        if self.final_norm is not None:
            x = self.final_norm(x)  # (B, T, D)
        return x

    _block = DecoderBlock

    @classmethod
    def from_torch(cls, decoder: nn.TransformerDecoder) -> Decoder:
        """Build a :class:`Decoder` with the weights of a ``torch.nn.TransformerDecoder``.

        Every layer is copied with :meth:`DecoderBlock.from_torch`; the
        decoder's optional final ``norm`` becomes ``final_norm``.

        Parameters
        ----------
        decoder
            A ``torch.nn.TransformerDecoder`` whose layers are accepted by
            :meth:`DecoderBlock.from_torch` and whose ``norm`` is ``None`` or a
            ``torch.nn.LayerNorm``.

        Returns
        -------
        Decoder
            A new decoder on the device and with the dtype of ``decoder``.

        Raises
        ------
        TypeError
            If ``decoder`` is not a ``torch.nn.TransformerDecoder``, or its
            ``norm`` is not a LayerNorm.
        ValueError
            If one of its layers cannot be reproduced.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> layer = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)
        >>> torch_decoder = nn.TransformerDecoder(layer, num_layers=2).eval()
        >>> decoder = Decoder.from_torch(torch_decoder)
        >>> x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
        >>> future = ~causal_mask(5)  # PyTorch: True = masked out
        >>> theirs = torch_decoder(x, memory, tgt_mask=future)
        >>> bool((decoder(x, memory) - theirs).abs().max() < 1e-5)
        True
        """
        return cls._from_torch_stack(
            decoder, "decoder", nn.TransformerDecoder
        )
