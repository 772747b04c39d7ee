"""Rotary against sinusoidal positions on sequences longer than any seen in training.

A model trained on sequences of 16 tokens meets a sequence of 64: what
does it do at position 40? The answer depends on how positions enter it.
This module measures it on the smallest task that needs a position and
nothing else: *copy the previous token*. Every sequence is uniform random
tokens, and position ``t`` must predict the token at ``t - 1``
(:func:`previous_token_sequences`); a model does it with one attention
head that looks exactly one step back.

- With rotary positions (``positions="rope"``,
  :func:`lessons_code.modern.apply_rope`) the query of position ``m`` and
  the key of position ``n`` are turned by the angles ``m * w_i`` and
  ``n * w_i``, so their score depends on the two positions only through
  ``m - n``. A head that learned "score the key one step back highest" on
  the pairs (1, 0), ..., (15, 14) gives the pair (20, 19) the very same
  score: it has seen that offset, if never that position. (What it has
  not seen are keys 16 or more steps back; farther out they matter, see
  :func:`train_previous_token`.)
- With the sinusoidal table added to the embeddings
  (``positions="sinusoidal"``, the 2017 way) the model reads each
  position's own vector. At position 20 the queries and keys are built
  from vectors the weights were never fitted on, and nothing in the
  training made them give the right answer there.

:func:`train_previous_token` trains one model on sequences of
``train_len`` tokens and scores it, position by position, on sequences of
``test_len``; two calls that differ only in ``positions`` compare the two
schemes on the same data, from the same seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from lessons_code._checks import check_device, check_int, check_real
from lessons_code.decoder_dates import IGNORE_INDEX, target_loss
from lessons_code.modern import (
    ROPE_BASE,
    DecoderOnlyLM,
    ModernBlock,
    apply_rope,
    rope_tables,
)
from lessons_code.multihead import split_heads
from lessons_code.results import stored
from lessons_code.training import adam_with_warmup, seeded
from lessons_code.transformer import _check_tokens

__all__ = [
    "PreviousTokenExperiment",
    "previous_token_sequences",
    "score_by_offset",
    "train_previous_token",
]


def previous_token_sequences(
    num_sequences: int,
    length: int,
    vocab_size: int = 16,
    *,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw random token sequences, labelled with the token one position earlier.

    Every token is uniform over the ``vocab_size`` symbols, independent of
    every other, so the label of position ``t`` (the token at ``t - 1``)
    can be told only by looking back exactly one position: the content of
    a sequence gives no hint of where that is. Position 0 has no earlier
    token; its label is ``IGNORE_INDEX``, so that
    :func:`lessons_code.decoder_dates.target_loss` leaves it out.

    Parameters
    ----------
    num_sequences
        Number of sequences ``N``.
    length
        Tokens per sequence ``T``, at least 2 (one scored position).
    vocab_size
        Number of symbols ``V``, at least 2.
    generator
        The random number generator (default: PyTorch's global one).

    Returns
    -------
    tokens : torch.Tensor
        Token ids (``int64``) in ``[0, V)``.
    labels : torch.Tensor
        ``labels[:, t] = tokens[:, t - 1]`` for ``t >= 1``, and
        ``IGNORE_INDEX`` at ``t = 0``.

    Shape
    -----
    ``tokens`` and ``labels``: ``(N, T)``.

    Raises
    ------
    TypeError
        If a size is not an integer or ``generator`` not a
        ``torch.Generator``.
    ValueError
        If ``num_sequences < 1``, ``length < 2`` or ``vocab_size < 2``.

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> tokens, labels = previous_token_sequences(1, 6, 4, generator=g)
    >>> tokens
    tensor([[0, 3, 1, 0, 3, 3]])
    >>> labels  # shifted one step right; nothing to copy at position 0
    tensor([[-100,    0,    3,    1,    0,    3]])
    """
    num_sequences = check_int(num_sequences, "num_sequences", minimum=1)
    length = check_int(length, "length", minimum=2)
    vocab_size = check_int(vocab_size, "vocab_size", minimum=2)
    if generator is not None and not isinstance(
        generator, torch.Generator
    ):
        raise TypeError(
            "generator must be a torch.Generator or None, got "
            f"{type(generator).__name__}"
        )
    tokens = torch.randint(
        vocab_size, (num_sequences, length), generator=generator
    )  # (N, T)
    labels = torch.full_like(tokens, IGNORE_INDEX)
    labels[:, 1:] = tokens[:, :-1]  # position t copies t - 1
    return tokens, labels  # (N, T), (N, T)


@dataclass(frozen=True)
class PreviousTokenExperiment:
    """What :func:`train_previous_token` returns.

    Attributes
    ----------
    seed
        The seed of the run (initial weights, training batches and
        held-out sequences).
    settings
        Every other argument of the call, by name (``device`` as a
        string).
    losses
        Training loss at every step, shape ``(steps,)``.
    learning_rates
        The learning rate of every step, shape ``(steps,)``.
    accuracy
        Accuracy of the most likely token at every position of the
        held-out sequences of length ``test_len``, shape ``(test_len,)``:
        ``accuracy[t]`` is the fraction of sequences whose position ``t``
        predicts the token at ``t - 1``. ``accuracy[0]`` is ``nan``
        (nothing to copy). Positions below ``train_len`` were trained on;
        the others were not.
    model
        The trained model (CPU, float32, evaluation mode).
    train_seconds
        Wall-clock seconds of the training (model and steps; not the
        evaluation). It differs between runs, unlike everything else; a
        result read back by :func:`lessons_code.results.stored` keeps the
        seconds of the call that trained it.
    """

    seed: int
    settings: dict[str, int | float | str]
    losses: np.ndarray
    learning_rates: np.ndarray
    accuracy: np.ndarray
    model: DecoderOnlyLM
    train_seconds: float

    def block_accuracy(self, size: int | None = None) -> np.ndarray:
        """Mean accuracy over consecutive blocks of ``size`` positions.

        Block ``b`` holds positions ``b * size`` to ``(b + 1) * size - 1``
        (the last block may be shorter); position 0, which is not scored,
        counts in none.

        Parameters
        ----------
        size
            Positions per block (default: ``train_len``, so block 0 is
            the trained length and every later block lies beyond it).

        Returns
        -------
        numpy.ndarray
            One accuracy per block, shape ``(ceil(test_len / size),)``.

        Raises
        ------
        TypeError
            If ``size`` is not an integer.
        ValueError
            If ``size < 1``, or ``size = 1`` (block 0 would hold position
            0 alone, which is not scored).
        """
        if size is None:
            size = int(self.settings["train_len"])
        size = check_int(size, "size", minimum=2)
        scored = self.accuracy.copy()
        scored[0] = 0.0  # not scored: counted out below
        counts = np.ones_like(scored)
        counts[0] = 0.0
        starts = np.arange(0, len(scored), size)
        return np.add.reduceat(scored, starts) / np.add.reduceat(
            counts, starts
        )


@stored
def train_previous_token(
    seed: int = 0,
    *,
    positions: str = "rope",
    train_len: int = 16,
    test_len: int = 64,
    steps: int = 200,
    batch_size: int = 32,
    vocab_size: int = 16,
    d_model: int = 32,
    num_heads: int = 4,
    num_layers: int = 1,
    d_ff: int = 64,
    peak_lr: float = 1e-2,
    warmup_steps: int = 20,
    num_test: int = 512,
    device: torch.device | str | None = None,
    rope_base: float = ROPE_BASE,
) -> PreviousTokenExperiment:
    """Train a model to copy the previous token on short sequences; score it on long ones.

    A :class:`lessons_code.modern.DecoderOnlyLM` (``num_heads`` query
    heads, as many key and value heads) learns the task of
    :func:`previous_token_sequences` on sequences of ``train_len`` tokens
    only: every step draws ``batch_size`` fresh sequences and takes one
    Adam step (betas 0.9 and 0.98) on the cross-entropy of positions
    ``1, ..., train_len - 1``
    (:func:`lessons_code.decoder_dates.target_loss`), the learning rate
    rising linearly to ``peak_lr`` over ``warmup_steps`` and then falling
    linearly to 0 (:func:`lessons_code.training.warmup_linear_decay`).
    The trained model then reads ``num_test`` held-out sequences of
    ``test_len`` tokens, and every position is scored by its most likely
    token.

    What it shows. With ``positions="rope"`` a query-key score depends on
    the two positions only through their difference ``m - n`` (see the
    module's introduction), so the head that looks one step back at the
    trained positions looks one step back at every position: the first
    positions past ``train_len`` are copied about as well as the trained
    ones. With ``"sinusoidal"`` the model reads the table's vector of each
    position, and past ``train_len`` those vectors are new to it: its
    accuracy there falls far below. RoPE is not free of the length either.
    Its score is a sum of cosines of the offset ``m - n``, and training
    shaped it only for the offsets it showed, 0 to ``train_len - 1``; a
    long sequence puts keys at larger offsets, whose score nothing kept
    low. Once one of them outscores the key one step back, it takes the
    attention, so farther out RoPE's accuracy falls too, towards chance
    (``1 / vocab_size``).

    A model is causal, so positions below ``train_len`` of a held-out
    sequence are computed exactly as in a sequence of ``train_len``
    tokens: ``accuracy[1:train_len]`` is the accuracy on the trained
    length. The held-out sequences are drawn first, the training batches
    after them, from one generator seeded by ``seed``: two calls that
    differ only in ``positions`` train on the same batches and are scored
    on the same sequences (their initial weights differ only where the
    models do).

    The default sizes keep one training to a few seconds on one CPU
    thread, and 200 steps are enough for both schemes to copy almost every
    trained position.

    Deterministic for a given seed, device, PyTorch version and thread
    count: the initial weights come from
    :func:`lessons_code.training.seeded` (the caller's random state is
    kept). With ``LESSONS_CODE_RESULTS`` set, the result is saved and a
    later call with the same arguments reads it
    (:func:`lessons_code.results.stored`).

    Parameters
    ----------
    seed
        Seed of the initial weights, the batches and the held-out
        sequences.
    positions
        ``"rope"``, ``"sinusoidal"`` or ``"none"`` (see
        :class:`lessons_code.modern.DecoderOnlyLM`). Without positions an
        attention cannot tell the key one step back from the other earlier
        keys but by its content, which here says nothing: such a model
        copies well only at the first few positions.
    train_len
        Tokens per training sequence, at least 2.
    test_len
        Tokens per held-out sequence, at least ``train_len`` (the model's
        ``max_len``).
    steps
        Number of training steps.
    batch_size
        Sequences per step.
    vocab_size
        Number of symbols, at least 2.
    d_model, num_heads, num_layers, d_ff
        Sizes of the model.
    peak_lr
        Learning rate at the end of the warm-up.
    warmup_steps
        Length of the linear warm-up.
    num_test
        Number of held-out sequences.
    device
        Where to train and score (default: the CPU); the returned model is
        on the CPU.
    rope_base
        The base of the rotary frequencies
        (:func:`lessons_code.modern.rope_tables`), with ``positions="rope"``.

    Returns
    -------
    PreviousTokenExperiment
        The loss curve, the held-out accuracy at every position and the
        trained model.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size or count is too small, ``seed < 0``,
        ``test_len < train_len``, ``peak_lr`` is not positive,
        ``warmup_steps > steps``, ``num_heads`` does not divide
        ``d_model``, or ``positions`` names no scheme.

    Examples
    --------
    A tiny run (the book's settings are the defaults):

    >>> run = train_previous_token(0, train_len=4, test_len=8, steps=3,
    ...                            batch_size=4, d_model=8, num_heads=2,
    ...                            d_ff=8, warmup_steps=1, num_test=16)
    >>> run.losses.shape, run.accuracy.shape
    ((3,), (8,))
    >>> run.block_accuracy().shape  # positions 1-3, then 4-7
    (2,)
    """
    seed = check_int(seed, "seed", minimum=0)
    train_len = check_int(train_len, "train_len", minimum=2)
    test_len = check_int(test_len, "test_len", minimum=train_len)
    steps = check_int(steps, "steps", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    vocab_size = check_int(vocab_size, "vocab_size", minimum=2)
    peak_lr = check_real(peak_lr, "peak_lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    num_test = check_int(num_test, "num_test", minimum=1)
    if warmup_steps > steps:
        raise ValueError(
            f"warmup_steps must be at most steps = {steps}, got {warmup_steps}"
        )
    device = check_device(device, "device")
    rope_base = check_real(rope_base, "rope_base", strict=True)
    settings: dict[str, int | float | str] = {
        "positions": positions,
        "train_len": train_len,
        "test_len": test_len,
        "steps": steps,
        "batch_size": batch_size,
        "vocab_size": vocab_size,
        "d_model": d_model,
        "num_heads": num_heads,
        "num_layers": num_layers,
        "d_ff": d_ff,
        "peak_lr": peak_lr,
        "warmup_steps": warmup_steps,
        "num_test": num_test,
        "device": str(device),
        "rope_base": rope_base,
    }

    def build() -> DecoderOnlyLM:  # checks the sizes and positions
        return DecoderOnlyLM(
            vocab_size,
            d_model,
            num_layers,
            num_heads,
            num_heads,
            d_ff,
            test_len,
            positions=positions,
            rope_base=rope_base,
        )

    data = torch.Generator().manual_seed(seed)
    test_tokens, test_labels = previous_token_sequences(
        num_test, test_len, vocab_size, generator=data
    )  # (num_test, test_len) each, drawn before any batch
    began = time.perf_counter()
    model = seeded(seed, build).to(device)
    optimizer, scheduler = adam_with_warmup(
        model.parameters(), peak_lr, warmup_steps, steps
    )
    losses = np.empty(steps)
    rates = np.empty(steps)
    model.train()
    for step in range(steps):
        tokens, labels = previous_token_sequences(
            batch_size, train_len, vocab_size, generator=data
        )  # (B, train_len) each
        logits = model(tokens.to(device))  # (B, train_len, V)
        loss = target_loss(logits, labels.to(device))  # positions >= 1
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        rates[step] = scheduler.get_last_lr()[0]
        scheduler.step()  # the learning rate of the next step
        losses[step] = loss.item()
    train_seconds = time.perf_counter() - began
    model = model.cpu().eval()

    with torch.no_grad():
        predicted = model(test_tokens).argmax(dim=-1)  # (N, test_len)
    correct = (predicted == test_labels).double().mean(dim=0)
    accuracy = correct.numpy()  # (test_len,)
    accuracy[0] = np.nan  # position 0 has nothing to copy
    return PreviousTokenExperiment(
        seed=seed,
        settings=settings,
        losses=losses,
        learning_rates=rates,
        accuracy=accuracy,
        model=model,
        train_seconds=train_seconds,
    )


def score_by_offset(
    model: DecoderOnlyLM, tokens: torch.Tensor
) -> torch.Tensor:
    r"""Mean attention score of every head and rotary pair of the first block, by offset.

    In the first block, the query of position ``m`` and the key of position
    ``n`` score :math:`q_m k_n^\top / \sqrt{d}` after RoPE has turned them:
    a sum over the head's feature pairs, in which pair ``i`` contributes its
    two products, turned relative to each other by the angle
    ``(m - n) * w_i``. For every head, pair and offset ``m - n = 0, ...,
    T - 1`` this returns that contribution averaged over the sequences of
    ``tokens`` and over the query positions that have a key that far back
    (every score is averaged, whatever the causal mask then does with it).
    Summed over the pairs it is the head's mean score at each offset.

    Parameters
    ----------
    model
        A :class:`~lessons_code.modern.DecoderOnlyLM` with rotary positions.
    tokens
        Token ids ``(B, T)`` the model reads.

    Returns
    -------
    torch.Tensor
        ``(H, d / 2, T)``: head, feature pair, offset.

    Raises
    ------
    TypeError
        If ``model`` is not a ``DecoderOnlyLM`` or ``tokens`` not an
        integer tensor.
    ValueError
        If the model has no rotary positions, ``tokens`` is not ``(B, T)``
        or holds an id outside the vocabulary.

    Examples
    --------
    >>> model = DecoderOnlyLM(16, 32, 1, 4, 4, 64, 64)
    >>> tokens, _ = previous_token_sequences(2, 10)
    >>> by_pair = score_by_offset(model, tokens)
    >>> by_pair.shape  # 4 heads, 4 pairs of a head of width 8, 10 offsets
    torch.Size([4, 4, 10])
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(
            f"model must be a lessons_code.modern.DecoderOnlyLM, got {type(model).__name__}"
        )
    if model.positions != "rope":
        raise ValueError(
            f"model must use rotary positions (positions='rope'), got {model.positions!r}"
        )
    tokens = _check_tokens(tokens, "tokens", model.vocab_size)
    block = model.blocks[0]
    assert isinstance(block, ModernBlock)
    attention = block.self_attn
    seen: list[torch.Tensor] = []
    # The first block's attention input: the normalised embeddings.
    hook = attention.register_forward_pre_hook(
        lambda _, args: seen.append(args[0])
    )
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        hook.remove()
    x = seen[0]  # (B, T, D)
    H, d = attention.num_heads, attention.d_head
    T = x.shape[1]
    with torch.no_grad():
        q = split_heads(attention.q_proj(x), H)  # (B, H, T, d)
        k = split_heads(attention.k_proj(x), attention.num_kv_heads)
        k = k.repeat_interleave(
            H // attention.num_kv_heads, dim=1
        )  # (B, H, T, d)
        cos, sin = rope_tables(
            T, d, dtype=x.dtype, base=attention.rope_base
        )
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        B = x.shape[0]
        q_pairs = q.reshape(B, H, T, d // 2, 2)
        k_pairs = k.reshape(B, H, T, d // 2, 2)
        # (B, H, pair, query m, key n): the pair's part of the score
        parts = (
            torch.einsum("bhmic,bhnic->bhimn", q_pairs, k_pairs) / d**0.5
        )
        by_offset = [
            torch.diagonal(parts, offset=-offset, dim1=-2, dim2=-1).mean(
                dim=(0, -1)
            )
            for offset in range(T)
        ]  # each (H, pair): the pairs (m, m - offset)
    return torch.stack(by_offset, dim=-1)  # (H, d/2, T)
