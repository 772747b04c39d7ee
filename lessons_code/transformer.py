"""The full encoder-decoder Transformer, built from the book's blocks.

The pieces, in the order the data meets them:

- :class:`TokenEmbedding`: a learned vector per token, scaled by
  ``sqrt(D)``, plus the sinusoidal positional encoding of
  :func:`lessons_code.positional.positional_encoding`;
- :class:`lessons_code.blocks.Encoder` over the source tokens;
- :class:`lessons_code.blocks.Decoder` over the target tokens: causal
  self-attention, and cross-attention to the encoder's output (``memory``);
- a linear layer from the decoder's width to one logit per target token.

Sequences of different lengths are padded to a common length with a padding
token; :func:`padding_mask` marks the real tokens (``True`` = may attend,
the book's convention), so that no query ever attends to a padding key.
:class:`Transformer` builds these masks itself when it knows its ``pad_id``.
:meth:`Transformer.from_torch` copies the weights of a ``torch.nn.Transformer``
(with the embeddings and output layer around it), and
:func:`greedy_decode` produces an output sequence one token at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import cast

import torch
from torch import nn

from lessons_code._checks import check_bool, check_int, check_real
from lessons_code.blocks import Decoder, Encoder, EncoderBlock
from lessons_code.multihead import MultiHeadAttention
from lessons_code.positional import positional_encoding

# A forward hook registered with_kwargs=True: (module, args, kwargs, output).
_Hook = Callable[
    [nn.Module, tuple[object, ...], dict[str, object], object], None
]

__all__ = [
    "TokenEmbedding",
    "Transformer",
    "greedy_decode",
    "padding_mask",
]


def _check_tokens(
    tokens: object, name: str, vocab_size: int | None = None
) -> torch.Tensor:
    """Return ``tokens`` if it is a ``(B, T)`` integer tensor of token ids below ``vocab_size``."""
    if not isinstance(tokens, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of token ids, got {type(tokens).__name__}"
        )
    if (
        tokens.is_floating_point()
        or tokens.is_complex()
        or (tokens.dtype == torch.bool)
    ):
        raise TypeError(
            f"{name} must have an integer dtype (token ids), got {tokens.dtype}"
        )
    if tokens.ndim != 2 or tokens.shape[1] == 0:
        raise ValueError(
            f"{name} must have shape (B, T) with T >= 1, got shape {tuple(tokens.shape)}"
        )
    if vocab_size is not None and tokens.numel() > 0:
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(
                f"{name} must hold token ids in [0, {vocab_size}), "
                f"got values from {low} to {high}"
            )
    return tokens.long()


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Boolean mask of the real (non-padding) tokens, shaped to mask attention keys.

    ``True`` means "may attend" (the book's convention): every query may
    attend to a key that is a real token, none to a padding token.
    ``torch.nn.Transformer`` wants the opposite, ``tokens == pad_id``, as its
    ``*_key_padding_mask``.

    Parameters
    ----------
    tokens
        A batch of token ids, padded at the end with ``pad_id``.
    pad_id
        The id of the padding token.

    Returns
    -------
    torch.Tensor
        ``tokens != pad_id`` with two axes inserted, so that it broadcasts
        over heads and queries.

    Shape
    -----
    - ``tokens``: ``(B, T)``.
    - Output: ``(B, 1, 1, T)``, broadcastable to the scores ``(B, H, T_q, T)``.

    where ``B`` is the batch size, ``T`` the (padded) sequence length, ``H``
    the number of heads and ``T_q`` the number of queries.

    Raises
    ------
    TypeError
        If ``tokens`` is not an integer tensor or ``pad_id`` not an integer.
    ValueError
        If ``tokens`` is not ``(B, T)`` or ``pad_id < 0``.

    Examples
    --------
    >>> tokens = torch.tensor([[5, 6, 7], [5, 0, 0]])  # 0 pads the second row
    >>> padding_mask(tokens, pad_id=0)[:, 0, 0]
    tensor([[ True,  True,  True],
            [ True, False, False]])
    """
    tokens = _check_tokens(tokens, "tokens")
    pad_id = check_int(pad_id, "pad_id", minimum=0)
    real = tokens != pad_id  # (B, T)
    return real[:, None, None, :]  # (B, 1, 1, T)


class TokenEmbedding(nn.Module):
    """Token embedding scaled by ``sqrt(D)``, plus the sinusoidal positional encoding.

    ``x = E[token] * sqrt(D) + PE[position]`` (Vaswani et al., 2017, section
    3.4), then dropout. The embedding table ``E`` is drawn from a normal
    distribution with standard deviation ``1 / sqrt(D)``, so the scaled
    embedding has entries of about unit size, like the positional encoding.

    Parameters
    ----------
    vocab_size
        Number of distinct tokens ``V``.
    d_model
        Model width ``D``.
    max_len
        Longest sequence accepted (rows of the stored positional encoding).
    positional
        Add the positional encoding; ``False`` leaves the tokens without any
        notion of order.
    dropout
        Dropout probability on the sum (training only).

    Shape
    -----
    - Input: ``(B, T)`` token ids in ``[0, V)``.
    - Output: ``(B, T, D)``.

    where ``B`` is the batch size, ``T <= max_len`` the sequence length and
    ``D`` the model width.

    Raises
    ------
    TypeError
        If a size is not an integer, ``positional`` not a bool or ``dropout``
        not a real number.
    ValueError
        If a size is smaller than 1 or ``dropout`` is not in ``[0, 1)``.

    Examples
    --------
    >>> embed = TokenEmbedding(vocab_size=10, d_model=16, max_len=8)
    >>> embed(torch.tensor([[1, 2, 3]])).shape
    torch.Size([1, 3, 16])
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        max_len: int = 64,
        *,
        positional: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        vocab_size = check_int(vocab_size, "vocab_size", minimum=1)
        d_model = check_int(d_model, "d_model", minimum=1)
        self.max_len = check_int(max_len, "max_len", minimum=1)
        self.positional = check_bool(positional, "positional")
        _check_dropout(dropout)
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model**-0.5)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Embed ``tokens`` ``(B, T)`` as vectors ``(B, T, D)``."""
        tokens = _check_tokens(
            tokens, "tokens", self.embedding.num_embeddings
        )
        T = tokens.shape[1]
        if self.max_len < T:
            raise ValueError(
                f"tokens must have at most max_len = {self.max_len} positions, got {T}"
            )
        x = self.embedding(tokens) * math.sqrt(self.d_model)  # (B, T, D)
        if self.positional:
            # the fixed table (T, D) broadcasts over the batch; it is made in
            # the embedding's own dtype, so a float64 model adds the float64
            # encoding (a fixed function of the position, not a weight)
            pe = positional_encoding(
                T, self.d_model, dtype=x.dtype, device=x.device
            )
            x = x + pe  # (B, T, D)
        return self.dropout(x)  # (B, T, D)


def _check_dropout(dropout: object) -> None:
    """Raise unless ``dropout`` is a probability in ``[0, 1)``."""
    p = check_real(dropout, "dropout")
    if p >= 1.0:
        raise ValueError(
            f"dropout must be a probability in [0, 1), got {dropout}"
        )


class Transformer(nn.Module):
    """An encoder-decoder Transformer: embeddings, encoder, decoder, output logits.

    ``logits = Linear(Decoder(TokenEmbedding(tgt), Encoder(TokenEmbedding(src))))``:
    the encoder reads the source tokens; the decoder reads the target tokens
    (shifted right, starting with a start token), attends causally to
    itself and, through cross-attention, to the encoder's output, and the
    output layer turns each position into scores for the next target token.

    With ``pad_id`` set, padding tokens are masked as keys everywhere: in the
    encoder's self-attention, the decoder's self-attention and the
    cross-attention (:func:`padding_mask`).

    Parameters
    ----------
    src_vocab_size, tgt_vocab_size
        Numbers of source and target tokens (they may be equal).
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H`` of every attention; it must divide ``D``.
    num_encoder_layers, num_decoder_layers
        Numbers of encoder and decoder blocks.
    d_ff
        Hidden width of every feed-forward network.
    norm_first
        Pre-norm blocks if ``True``, post-norm blocks if ``False``.
    dropout
        Dropout probability of the embeddings and every block (training only).
    max_len
        Longest source or target sequence accepted.
    pad_id
        Id of the padding token in both vocabularies, or ``None`` for
        sequences that are never padded.
    positional
        Add the positional encoding to the embeddings.
    final_norm
        End the encoder and the decoder with a LayerNorm each, as
        ``torch.nn.Transformer`` does.
    layer_norm_eps
        Epsilon of every LayerNorm.

    Shape
    -----
    - ``src``: ``(B, S)``; ``tgt``: ``(B, T)`` (token ids).
    - Output: ``(B, T, V)`` logits.

    where ``B`` is the batch size, ``S`` the source and ``T`` the target
    length, and ``V`` the target vocabulary size.

    Raises
    ------
    TypeError
        If a size is not an integer or a flag not a bool.
    ValueError
        If a size is smaller than 1, ``num_heads`` does not divide
        ``d_model``, or ``pad_id`` is outside a vocabulary.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = Transformer(12, 10, d_model=16, num_heads=4, d_ff=32, pad_id=0)
    >>> src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])  # the second is padded
    >>> tgt = torch.tensor([[1, 2, 3], [1, 4, 5]])
    >>> model(src, tgt).shape
    torch.Size([2, 3, 10])
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_encoder_layers: int = 2,
        num_decoder_layers: int = 2,
        d_ff: int = 256,
        norm_first: bool = False,
        *,
        dropout: float = 0.0,
        max_len: int = 64,
        pad_id: int | None = None,
        positional: bool = True,
        final_norm: bool = True,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        src_vocab_size = check_int(
            src_vocab_size, "src_vocab_size", minimum=1
        )
        tgt_vocab_size = check_int(
            tgt_vocab_size, "tgt_vocab_size", minimum=1
        )
        if pad_id is not None:
            pad_id = check_int(pad_id, "pad_id", minimum=0)
            if pad_id >= min(src_vocab_size, tgt_vocab_size):
                raise ValueError(
                    "pad_id must be a token id of both vocabularies (below "
                    f"{min(src_vocab_size, tgt_vocab_size)}), got {pad_id}"
                )
        self.pad_id = pad_id
        self.src_embed = TokenEmbedding(
            src_vocab_size,
            d_model,
            max_len,
            positional=positional,
            dropout=dropout,
        )
        self.tgt_embed = TokenEmbedding(
            tgt_vocab_size,
            d_model,
            max_len,
            positional=positional,
            dropout=dropout,
        )
        self.encoder = Encoder(
            num_encoder_layers,
            d_model,
            num_heads,
            d_ff,
            norm_first,
            dropout=dropout,
            final_norm=final_norm,
            layer_norm_eps=layer_norm_eps,
        )
        self.decoder = Decoder(
            num_decoder_layers,
            d_model,
            num_heads,
            d_ff,
            norm_first,
            dropout=dropout,
            final_norm=final_norm,
            layer_norm_eps=layer_norm_eps,
        )
        self.output = nn.Linear(d_model, tgt_vocab_size)

    def _padding(self, tokens: torch.Tensor) -> torch.Tensor | None:
        """Return the padding mask ``(B, 1, 1, T)`` of ``tokens`` (``None`` without ``pad_id``)."""
        if self.pad_id is None:
            return None
        return padding_mask(tokens, self.pad_id)

    def encode(
        self, src: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run the encoder over the source tokens.

        Parameters
        ----------
        src
            Source token ids ``(B, S)``.

        Returns
        -------
        memory : torch.Tensor
            The encoder's output ``(B, S, D)``.
        memory_mask : torch.Tensor or None
            The source's padding mask ``(B, 1, 1, S)`` (``None`` without a
            ``pad_id``), for the decoder's cross-attention.

        Raises
        ------
        TypeError
            If ``src`` is not an integer tensor.
        ValueError
            If ``src`` is not ``(B, S)`` or holds ids outside the vocabulary.
        """
        src = _check_tokens(
            src, "src", self.src_embed.embedding.num_embeddings
        )
        mask = self._padding(src)  # (B, 1, 1, S) or None
        memory = self.encoder(self.src_embed(src), mask)  # (B, S, D)
        return memory, mask

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        causal: bool = True,
    ) -> torch.Tensor:
        """Run the decoder and the output layer: logits for the next token at every position.

        Parameters
        ----------
        tgt
            Target token ids ``(B, T)``, starting with the start token.
        memory
            The encoder's output ``(B, S, D)`` (from :meth:`encode`).
        memory_mask
            The source's padding mask (from :meth:`encode`), or ``None``.
        causal
            Causal self-attention in the decoder (``True`` for training and
            generation).

        Returns
        -------
        torch.Tensor
            Logits ``(B, T, V)``.

        Raises
        ------
        TypeError
            If ``tgt`` is not an integer tensor or ``memory`` not a tensor of
            the parameters' dtype.
        ValueError
            If a shape does not fit or ``tgt`` holds ids outside the
            vocabulary.
        """
        tgt = _check_tokens(
            tgt, "tgt", self.tgt_embed.embedding.num_embeddings
        )
        mask = self._padding(tgt)  # (B, 1, 1, T) or None
        x = self.decoder(
            self.tgt_embed(tgt),  # (B, T, D)
            memory,
            causal,
            mask=mask,
            memory_mask=memory_mask,
        )  # (B, T, D)
        return self.output(x)  # (B, T, V)

    def forward(
        self, src: torch.Tensor, tgt: torch.Tensor, causal: bool = True
    ) -> torch.Tensor:
        """Logits for every target position, given the whole source.

        Parameters
        ----------
        src
            Source token ids ``(B, S)``.
        tgt
            Target token ids ``(B, T)``, starting with the start token
            (teacher forcing: the target shifted right by one).
        causal
            Causal self-attention in the decoder.

        Returns
        -------
        torch.Tensor
            Logits ``(B, T, V)``; position ``t`` scores the token that
            follows ``tgt[:, t]``.

        Raises
        ------
        TypeError
            If ``src`` or ``tgt`` is not an integer tensor.
        ValueError
            If a shape does not fit, the batch sizes differ, or a token id is
            outside its vocabulary.
        """
        src = _check_tokens(src, "src")
        tgt = _check_tokens(tgt, "tgt")
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"tgt must have the batch size {src.shape[0]} of src, "
                f"got shape {tuple(tgt.shape)}"
            )
        memory, memory_mask = self.encode(src)  # (B, S, D), mask
        return self.decode(tgt, memory, memory_mask, causal)  # (B, T, V)

    def attention_weights(
        self, src: torch.Tensor, tgt: torch.Tensor, causal: bool = True
    ) -> dict[str, torch.Tensor]:
        """Every attention map of the model on one batch of (source, target) pairs.

        The model runs once (without gradients, in evaluation mode; its mode
        is restored afterwards) while each attention module's weights are
        recorded.

        Parameters
        ----------
        src
            Source token ids ``(B, S)``.
        tgt
            Target token ids ``(B, T)``, starting with the start token.
        causal
            Causal self-attention in the decoder.

        Returns
        -------
        dict of str to torch.Tensor
            ``"encoder"``: the encoder's self-attention ``(N_enc, B, H, S, S)``;
            ``"decoder"``: the decoder's self-attention ``(N_dec, B, H, T, T)``;
            ``"cross"``: the decoder's cross-attention ``(N_dec, B, H, T, S)``.
            Index 0 of the first axis is block 1 (next to the input), index 0
            of the head axis is head 1. Row ``t`` of a map is the query at
            position ``t``; every row sums to 1, masked keys get 0.

        Shape
        -----
        ``N_enc`` and ``N_dec`` are the numbers of encoder and decoder blocks,
        ``B`` the batch size, ``H`` the number of heads, ``S`` the source and
        ``T`` the target length.

        Raises
        ------
        TypeError, ValueError
            As :meth:`forward`.

        Examples
        --------
        >>> model = Transformer(12, 10, d_model=16, num_heads=4, d_ff=32,
        ...                     num_encoder_layers=3, pad_id=0)
        >>> src, tgt = torch.tensor([[3, 4, 5, 0]]), torch.tensor([[1, 2]])
        >>> maps = model.attention_weights(src, tgt)
        >>> {name: tuple(w.shape) for name, w in maps.items()}
        {'encoder': (3, 1, 4, 4, 4), 'decoder': (2, 1, 4, 2, 2), 'cross': (2, 1, 4, 2, 4)}
        >>> float(maps["cross"][..., -1].max())  # the padding key gets no weight
        0.0
        """
        records: dict[str, list[torch.Tensor]] = {
            "encoder": [],
            "decoder": [],
            "cross": [],
        }
        # (name, module) in the order the model calls them
        modules = [
            ("encoder", module)
            for module in self.encoder.modules()
            if isinstance(module, MultiHeadAttention)
        ]
        for path, module in self.decoder.named_modules():
            if isinstance(module, MultiHeadAttention):
                cross = path.endswith("cross_attn")
                modules.append(("cross" if cross else "decoder", module))
        handles = [
            module.register_forward_hook(
                _weight_recorder(records[name]), with_kwargs=True
            )
            for name, module in modules
        ]
        was_training = self.training
        try:
            self.eval()
            with torch.no_grad():
                self(src, tgt, causal)
        finally:
            self.train(was_training)
            for handle in handles:
                handle.remove()
        return {name: torch.stack(maps) for name, maps in records.items()}

    @classmethod
    def from_torch(
        cls,
        transformer: nn.Transformer,
        src_embedding: nn.Embedding,
        tgt_embedding: nn.Embedding,
        output: nn.Linear,
        *,
        pad_id: int | None = None,
        max_len: int = 64,
        positional: bool = True,
    ) -> Transformer:
        """Build a :class:`Transformer` with the weights of a PyTorch model.

        PyTorch's ``torch.nn.Transformer`` starts at the embedded sequences
        and ends at the decoder's output; the token embeddings and the output
        layer are separate modules, passed here. The result computes
        ``output(transformer(src_embedding(src) * sqrt(D) + PE,
        tgt_embedding(tgt) * sqrt(D) + PE, ...))``, with the masks
        ``tgt_mask`` = causal and the padding masks
        ``src_key_padding_mask = memory_key_padding_mask = (src == pad_id)``,
        ``tgt_key_padding_mask = (tgt == pad_id)``.

        Parameters
        ----------
        transformer
            A ``torch.nn.Transformer`` built with ``batch_first=True``, the
            ReLU activation and ``bias=True``.
        src_embedding, tgt_embedding
            The token embeddings, of width ``transformer.d_model``.
        output
            The output layer, from ``d_model`` to the target vocabulary (the
            size of ``tgt_embedding``); without a bias, a zero bias is used.
        pad_id
            Id of the padding token, or ``None``.
        max_len
            Longest sequence the new model accepts.
        positional
            Add the positional encoding to the embeddings.

        Returns
        -------
        Transformer
            A new model on the device and with the dtype of ``transformer``.

        Raises
        ------
        TypeError
            If an argument is not of the type named above.
        ValueError
            If the sizes do not fit together, or a layer of ``transformer``
            cannot be reproduced.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> torch_model = nn.Transformer(16, 4, 2, 2, 32, dropout=0.0,
        ...                              batch_first=True).eval()
        >>> src_emb, tgt_emb = nn.Embedding(12, 16), nn.Embedding(10, 16)
        >>> out = nn.Linear(16, 10)
        >>> model = Transformer.from_torch(torch_model, src_emb, tgt_emb, out)
        >>> src, tgt = torch.randint(0, 12, (2, 7)), torch.randint(0, 10, (2, 5))
        >>> from lessons_code.attention import causal_mask
        >>> pe = positional_encoding(7, 16)
        >>> theirs = out(torch_model(src_emb(src) * 4 + pe, tgt_emb(tgt) * 4 + pe[:5],
        ...                          tgt_mask=~causal_mask(5)))
        >>> bool((model(src, tgt) - theirs).abs().max() < 1e-5)
        True
        """
        if not isinstance(transformer, nn.Transformer):
            raise TypeError(
                f"transformer must be a torch.nn.Transformer, got {type(transformer).__name__}"
            )
        for name, module in (
            ("src_embedding", src_embedding),
            ("tgt_embedding", tgt_embedding),
        ):
            if not isinstance(module, nn.Embedding):
                raise TypeError(
                    f"{name} must be a torch.nn.Embedding, got {type(module).__name__}"
                )
            if module.embedding_dim != transformer.d_model:
                raise ValueError(
                    f"{name} must have embedding_dim = d_model = {transformer.d_model}, "
                    f"got {module.embedding_dim}"
                )
        if not isinstance(output, nn.Linear):
            raise TypeError(
                f"output must be a torch.nn.Linear, got {type(output).__name__}"
            )
        if (
            output.in_features != transformer.d_model
            or output.out_features != tgt_embedding.num_embeddings
        ):
            raise ValueError(
                "output must map d_model = "
                f"{transformer.d_model} to the {tgt_embedding.num_embeddings} target "
                f"tokens, got Linear({output.in_features}, {output.out_features})"
            )
        if not isinstance(
            transformer.encoder, nn.TransformerEncoder
        ) or not isinstance(transformer.decoder, nn.TransformerDecoder):
            raise TypeError(
                "transformer must use PyTorch's own encoder and decoder, "
                "not a custom_encoder or custom_decoder"
            )
        encoder = Encoder.from_torch(transformer.encoder)
        decoder = Decoder.from_torch(transformer.decoder)
        first = cast(EncoderBlock, encoder.layers[0])
        weight = first.norm1.weight
        model = cls(
            src_embedding.num_embeddings,
            tgt_embedding.num_embeddings,
            transformer.d_model,
            transformer.nhead,
            len(encoder.layers),
            len(decoder.layers),
            first.feed_forward.linear1.out_features,
            first.norm_first,
            dropout=first.dropout1.p,
            max_len=max_len,
            pad_id=pad_id,
            positional=positional,
            final_norm=encoder.final_norm is not None,
            layer_norm_eps=first.norm1.eps,
        ).to(device=weight.device, dtype=weight.dtype)
        model.encoder = encoder
        model.decoder = decoder
        with torch.no_grad():
            model.src_embed.embedding.weight.copy_(src_embedding.weight)
            model.tgt_embed.embedding.weight.copy_(tgt_embedding.weight)
            model.output.weight.copy_(output.weight)
            if output.bias is None:
                model.output.bias.zero_()
            else:
                model.output.bias.copy_(output.bias)
        return model


def _weight_recorder(
    store: list[torch.Tensor],
) -> _Hook:
    """Return a forward hook that appends its module's attention weights to ``store``.

    It calls the module's ``forward`` again with ``return_weights=True``
    (``forward`` itself runs no hooks, so this does not recurse).
    """

    def hook(
        module: nn.Module,
        args: tuple[object, ...],
        kwargs: dict[str, object],
        output: object,
    ) -> None:
        _, weights = module.forward(
            *args, **{**kwargs, "return_weights": True}
        )
        store.append(weights.detach())  # (B, H, T_q, T_k)

    return hook


def greedy_decode(
    model: Transformer,
    src: torch.Tensor,
    *,
    start_id: int,
    end_id: int,
    max_len: int,
    causal: bool = True,
) -> torch.Tensor:
    """Generate target tokens one at a time, each the most likely next token.

    The encoder runs once; the decoder then runs on the tokens produced so
    far (starting with ``start_id``) and appends, for every sequence, the
    token of highest logit at the last position, until every sequence has
    produced ``end_id`` or ``max_len`` tokens were produced. After its
    ``end_id``, a sequence is filled with ``model.pad_id`` (or ``end_id``
    when the model has no padding token).

    Every step runs the whole decoder again over the whole prefix: an
    output of ``L`` tokens costs the decoder ``1 + 2 + ... + L = L(L + 1) / 2``
    token positions, where a cache of each position's keys and values would
    cost ``L``.

    Runs without gradients, in evaluation mode (the model's mode is
    restored afterwards).

    Parameters
    ----------
    model
        A :class:`Transformer`.
    src
        Source token ids ``(B, S)``.
    start_id
        The token every target starts with.
    end_id
        The token that ends a target.
    max_len
        Most tokens generated per sequence.
    causal
        Causal self-attention in the decoder; ``False`` only for a model
        trained without the mask (see :meth:`Transformer.decode`).

    Returns
    -------
    torch.Tensor
        The generated token ids (without the start token), on the device of
        ``src``.

    Shape
    -----
    - ``src``: ``(B, S)``.
    - Output: ``(B, L)`` with ``L <= max_len``.

    where ``B`` is the batch size, ``S`` the source length and ``L`` the
    length of the longest generated sequence.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`Transformer`, ``src`` not an integer
        tensor, an id not an integer or ``causal`` not a bool.
    ValueError
        If an id is outside the target vocabulary or ``max_len < 1``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = Transformer(12, 10, d_model=16, num_heads=4, d_ff=32)
    >>> out = greedy_decode(model, torch.tensor([[3, 4, 5]]), start_id=1, end_id=2,
    ...                     max_len=6)
    >>> out.shape[0], out.shape[1] <= 6
    (1, True)
    """
    if not isinstance(model, Transformer):
        raise TypeError(
            f"model must be a lessons_code.transformer.Transformer, got {type(model).__name__}"
        )
    vocab = model.tgt_embed.embedding.num_embeddings
    start_id = check_int(start_id, "start_id", minimum=0)
    end_id = check_int(end_id, "end_id", minimum=0)
    max_len = check_int(max_len, "max_len", minimum=1)
    causal = check_bool(causal, "causal")
    for name, token in (("start_id", start_id), ("end_id", end_id)):
        if token >= vocab:
            raise ValueError(
                f"{name} must be a target token id below {vocab}, got {token}"
            )
    fill = end_id if model.pad_id is None else model.pad_id
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            memory, memory_mask = model.encode(src)  # (B, S, D), mask
            B = memory.shape[0]
            # (B, 1): every target starts with the start token
            out = torch.full(
                (B, 1), start_id, dtype=torch.long, device=memory.device
            )
            done = torch.zeros(B, dtype=torch.bool, device=memory.device)
            for _ in range(max_len):
                logits = model.decode(
                    out, memory, memory_mask, causal
                )  # (B, t, V)
                next_token = logits[:, -1].argmax(dim=-1)  # (B,)
                next_token = next_token.masked_fill(done, fill)
                out = torch.cat([out, next_token[:, None]], dim=1)
                done = done | (next_token == end_id)
                if bool(done.all()):
                    break
    finally:
        model.train(was_training)
    return out[:, 1:]  # (B, L): without the start token
