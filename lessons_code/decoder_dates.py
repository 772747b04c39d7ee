"""The date task of the capstone, learned by a decoder-only model.

The capstone (:mod:`lessons_code.dates`) translates a date such as
``"30 nov 2026"`` into ``"2026-11-30"`` with an encoder-decoder: the
encoder reads the source, the decoder writes the target and looks at the
source through cross-attention. A decoder-only model has no encoder and no
cross-attention. It reads *one* sequence, the source, a separator and the
target (``_`` stands for a space)::

    3 0 _ n o v _ 2 0 2 6 <s> 2 0 2 6 - 1 1 - 3 0 </s>

and predicts every next token from the tokens before it (causal
self-attention). The separator is the vocabulary's start token ``<s>``,
the token the capstone's decoder starts from; so the two models share
``DATE_VOCAB``, token for token. At test time the prompt is the source
and ``<s>``, and the model continues it greedily
(:func:`lessons_code.modern.generate`) until ``</s>``.

The module holds the sequences (:func:`date_sequences`), the loss on the
target positions (:func:`target_loss`), the greedy translation
(:func:`decoder_translate`) and the experiment
(:func:`train_decoder_dates`): a :class:`lessons_code.modern.DecoderOnlyLM`
trained on the capstone's training pairs and scored, as the capstone is,
by the exact match of its greedy outputs on the held-out dates in every
format.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F

from lessons_code._checks import (
    check_device,
    check_int,
    check_real,
    check_tensor,
)
from lessons_code.dates import (
    DATE_VOCAB,
    _exact_match,
    date_pairs,
    split_dates,
)
from lessons_code.modern import DecoderOnlyLM, generate
from lessons_code.results import stored
from lessons_code.training import adam_with_warmup, adamw_cosine, seeded

__all__ = [
    "IGNORE_INDEX",
    "MAX_LEN",
    "DecoderDateExperiment",
    "date_sequences",
    "decoder_translate",
    "target_loss",
    "train_decoder_dates",
]

#: The label of a position whose prediction is not scored (a source or
#: padding position); ``torch.nn.functional.cross_entropy`` skips it by
#: default.
IGNORE_INDEX = -100

#: The model's positions, with room to spare: the longest sequence, the
#: longest source (18 characters, ``"september 30, 2026"``), ``<s>``, the
#: ten characters of the ISO date and ``</s>``, takes 30 tokens, of which
#: the model reads the first 29 (the last is only predicted).
MAX_LEN = 32

# An ISO date and </s>: what decoder_translate generates at most.
_TARGET_TOKENS = 11


def _check_pairs(pairs: object) -> list[tuple[str, str]]:
    """Return ``pairs`` as a list if it is a non-empty sequence of two strings each."""
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(
            "pairs must be a sequence of (source, target) strings, got "
            f"{type(pairs).__name__}"
        )
    if not pairs:
        raise ValueError("pairs must hold at least one pair")
    for i, pair in enumerate(pairs):
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(text, str) for text in pair)
        ):
            raise TypeError(
                f"pairs[{i}] must be a (source, target) pair of strings, "
                f"got {pair!r}"
            )
        if not pair[0]:
            raise ValueError(
                f"pairs[{i}] must have a source, got {pair!r}"
            )
    return [(source, target) for source, target in pairs]


def date_sequences(
    pairs: Sequence[tuple[str, str]],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Write every pair as one sequence, and say which positions are scored.

    Each pair becomes ``source <s> target </s>`` in the ids of
    ``DATE_VOCAB``, padded at the end with ``<pad>`` to the longest
    sequence. A decoder-only model reads every token but the last
    (``inputs``) and predicts every token but the first (``labels``:
    ``labels[:, t]`` is the token at ``t + 1``, the one position ``t``
    predicts). Only the target and its end token are to be predicted;
    every other label, those of the source and of the padding, is
    ``IGNORE_INDEX``, so :func:`target_loss` leaves them out.

    Why only the target: the source is given, not asked for. Its
    characters are as good as random to the model (any date, in any
    format), so scoring their predictions would train the model to guess
    dates, a loss that cannot go to zero and would outweigh the task, and
    would score the two architectures on different things: the capstone's
    encoder-decoder is scored on the target alone. Padding at the end needs
    no mask: a causal model's position never sees a later one, so no
    scored prediction sees the padding.

    Parameters
    ----------
    pairs
        ``(source, target)`` strings in characters of ``DATE_VOCAB``, such
        as :func:`lessons_code.dates.date_pairs` returns.

    Returns
    -------
    inputs : torch.Tensor
        Token ids (``int64``): every sequence without its last token.
    labels : torch.Tensor
        The next token of every input position where it is a target token
        or ``</s>``, ``IGNORE_INDEX`` elsewhere.

    Shape
    -----
    ``inputs`` and ``labels``: ``(N, T)``, where ``N`` is the number of
    pairs and ``T + 1`` the longest sequence.

    Raises
    ------
    TypeError
        If ``pairs`` is not a sequence of pairs of strings.
    ValueError
        If ``pairs`` is empty or a text holds a character outside the
        vocabulary.

    Examples
    --------
    >>> inputs, labels = date_sequences([("3/7/1999", "1999-03-07")])
    >>> DATE_VOCAB.symbols(inputs[0])[7:11]  # the source ends, <s>, the target
    ['9', '<s>', '1', '9']
    >>> int((labels != IGNORE_INDEX).sum())  # 10 characters and </s>
    11
    >>> DATE_VOCAB.decode(labels[0, 8:])
    '1999-03-07'
    """
    pairs = _check_pairs(pairs)
    vocab = DATE_VOCAB
    pad = vocab.pad_id
    source = vocab.encode_batch([src for src, _ in pairs])  # (N, S)
    target = vocab.encode_batch([tgt for _, tgt in pairs], end=True)
    N, S = source.shape
    U = target.shape[1]  # the longest target and </s>
    length = (source != pad).sum(dim=1, keepdim=True)  # (N, 1)
    # where each target token goes: after the source and <s>
    columns = length + 1 + torch.arange(U)  # (N, U)
    tokens = torch.full((N, S + 1 + U), pad)
    tokens[:, :S] = source
    tokens.scatter_(1, length, vocab.start_id)  # <s> after the source
    tokens.scatter_(1, columns, target)
    scored = torch.zeros_like(tokens, dtype=torch.bool)
    scored.scatter_(1, columns, target != pad)  # target and </s>
    width = int((length + 1 + (target != pad).sum(1, True)).max())
    tokens, scored = tokens[:, :width], scored[:, :width]
    inputs = tokens[:, :-1]  # (N, T)
    labels = tokens[:, 1:].masked_fill(~scored[:, 1:], IGNORE_INDEX)
    return inputs, labels  # (N, T), (N, T)


def target_loss(
    logits: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """Mean cross-entropy of the scored predictions: the target tokens and ``</s>``.

    ``F.cross_entropy`` over every position, where the positions labelled
    ``IGNORE_INDEX`` (source and padding, see :func:`date_sequences`)
    count neither in the sum nor in the number it is divided by. So the
    logits of those positions get no gradient, and the loss is the mean
    over the ``B * 11`` target predictions of a batch of dates, as in the
    capstone's :func:`lessons_code.dates.teacher_forcing_step`.

    Parameters
    ----------
    logits
        Next-token scores of every position.
    labels
        The labels of :func:`date_sequences`.

    Returns
    -------
    torch.Tensor
        The loss, a scalar.

    Shape
    -----
    - ``logits``: ``(B, T, V)``.
    - ``labels``: ``(B, T)``.

    Raises
    ------
    TypeError
        If ``logits`` is not a floating-point tensor or ``labels`` not an
        ``int64`` tensor.
    ValueError
        If the shapes do not fit or no position is scored.

    Examples
    --------
    >>> logits = torch.zeros(1, 3, 4)  # a uniform guess over 4 tokens
    >>> labels = torch.tensor([[IGNORE_INDEX, 2, 3]])
    >>> round(float(target_loss(logits, labels)), 4)  # ln 4, of 2 positions
    1.3863
    """
    logits = check_tensor(logits, "logits", ndim=3)
    if (
        not isinstance(labels, torch.Tensor)
        or labels.dtype != torch.int64
    ):
        raise TypeError(
            "labels must be an int64 tensor, got "
            f"{getattr(labels, 'dtype', type(labels).__name__)}"
        )
    if labels.shape != logits.shape[:2]:
        raise ValueError(
            f"labels must have shape (B, T) = {tuple(logits.shape[:2])}, "
            f"the first two of logits, got shape {tuple(labels.shape)}"
        )
    if not (labels != IGNORE_INDEX).any():
        raise ValueError("labels must score at least one position")
    return F.cross_entropy(
        logits.flatten(0, 1),  # (B * T, V)
        labels.flatten(),  # (B * T,)
        ignore_index=IGNORE_INDEX,
    )


def decoder_translate(
    model: DecoderOnlyLM,
    sources: Sequence[str],
    *,
    use_cache: bool = True,
) -> list[str]:
    """Translate dates with a decoder-only model: greedy continuation of ``source <s>``.

    The sources are grouped by length, so every prompt of a batch has the
    same length and no padding enters a prompt; each group is continued
    by 11 tokens with :func:`lessons_code.modern.generate` at temperature
    0 (greedy), and each output is read up to its first ``</s>``.

    Parameters
    ----------
    model
        A :class:`lessons_code.modern.DecoderOnlyLM` over ``DATE_VOCAB``,
        such as the model of :func:`train_decoder_dates`.
    sources
        Dates as text, in characters of ``DATE_VOCAB``.
    use_cache
        Generate with a key-value cache (the outputs are the same without).

    Returns
    -------
    list of str
        One output per source, in the order of ``sources``; at most 11
        characters.

    Raises
    ------
    TypeError
        If ``model`` is not a DecoderOnlyLM, ``sources`` not a sequence of
        strings or ``use_cache`` not a bool.
    ValueError
        If ``sources`` is empty, a source holds a character outside the
        vocabulary, the model's vocabulary is not ``DATE_VOCAB``'s size, or
        a source is too long for its ``max_len``.

    Examples
    --------
    >>> model = seeded(0, lambda: DecoderOnlyLM(len(DATE_VOCAB), 16, 1, 2, 2, 16, MAX_LEN))
    >>> outputs = decoder_translate(model, ["3/7/1999", "7 mar 1999", "3/8/1999"])
    >>> len(outputs), all(len(text) <= 11 for text in outputs)
    (3, True)
    """
    if not isinstance(model, DecoderOnlyLM):
        raise TypeError(
            "model must be a lessons_code.modern.DecoderOnlyLM, got "
            f"{type(model).__name__}"
        )
    if model.vocab_size != len(DATE_VOCAB):
        raise ValueError(
            f"model must have DATE_VOCAB's {len(DATE_VOCAB)} tokens, got "
            f"vocab_size={model.vocab_size}"
        )
    if isinstance(sources, str) or not isinstance(sources, Sequence):
        raise TypeError(
            f"sources must be a sequence of strings, got {type(sources).__name__}"
        )
    if not sources:
        raise ValueError("sources must hold at least one date")
    for i, source in enumerate(sources):
        if not isinstance(source, str):
            raise TypeError(
                f"sources[{i}] must be a string, got {type(source).__name__}"
            )
    vocab = DATE_VOCAB
    prompts = [[*vocab.encode(text), vocab.start_id] for text in sources]
    device = model.final_norm.weight.device
    groups: dict[int, list[int]] = {}  # prompt length -> rows
    for row, prompt in enumerate(prompts):
        groups.setdefault(len(prompt), []).append(row)
    outputs = [""] * len(sources)
    for rows in groups.values():
        batch = torch.tensor(
            [prompts[row] for row in rows], device=device
        )
        generated = cast(
            torch.Tensor,  # the tokens alone (no return_logits)
            generate(
                model,
                batch,
                _TARGET_TOKENS,
                use_cache=use_cache,
                temperature=0.0,
            ),
        )  # (len(rows), 11)
        for row, ids in zip(rows, generated.tolist(), strict=True):
            outputs[row] = vocab.decode(ids)
    return outputs


@dataclass(frozen=True)
class DecoderDateExperiment:
    """What :func:`train_decoder_dates` returns.

    Attributes
    ----------
    seed
        The seed of the run (split, initial weights and batches).
    settings
        Every other argument of the call, by name (``device`` as a
        string).
    losses
        Training loss (:func:`target_loss`) at every step, shape
        ``(steps,)``.
    learning_rates
        The learning rate of every step, shape ``(steps,)``.
    accuracy
        Exact-match accuracy of the greedy outputs on the held-out pairs,
        in ``[0, 1]``.
    accuracy_by_format
        The same, per source format (keys of ``FORMATS``).
    held_out
        Every held-out pair as ``(source, target, prediction)``, date by
        date, formats in the order of ``FORMATS``.
    model
        The trained model (CPU, float32, evaluation mode).
    train_seconds
        Wall-clock seconds of the training (data, model and steps; not the
        evaluation). It differs between runs, unlike everything else; a
        result read back by :func:`lessons_code.results.stored` keeps the
        seconds of the call that trained it.
    """

    seed: int
    settings: dict[str, int | float | str]
    losses: np.ndarray
    learning_rates: np.ndarray
    accuracy: float
    accuracy_by_format: dict[str, float]
    held_out: list[tuple[str, str, str]]
    model: DecoderOnlyLM
    train_seconds: float


@stored
def train_decoder_dates(
    seed: int = 0,
    *,
    steps: int = 320,
    batch_size: int = 24,
    d_model: int = 96,
    num_heads: int = 4,
    num_kv_heads: int = 4,
    num_layers: int = 2,
    d_ff: int = 160,
    peak_lr: float = 3e-3,
    warmup_steps: int = 60,
    num_test_dates: int = 500,
    positions: str = "rope",
    device: torch.device | str | None = None,
    recipe: str = "2017",
) -> DecoderDateExperiment:
    """Train a decoder-only model on the capstone's dates, and score it on unseen dates.

    The data, split and score are the capstone's
    (:func:`lessons_code.dates.train_date_model`): the calendar dates from
    1950 to 2049 split by :func:`lessons_code.dates.split_dates`
    (``num_test_dates`` held out), every training date in every format
    of ``FORMATS``, written as one sequence each
    (:func:`date_sequences`). Every step draws ``batch_size`` sequences
    and takes one Adam step (betas 0.9 and 0.98) on :func:`target_loss`,
    the cross-entropy of every target token given all the tokens before
    it (teacher forcing), the learning rate rising linearly to
    ``peak_lr`` over ``warmup_steps`` and then falling linearly to 0 at
    the last step (:func:`lessons_code.training.warmup_linear_decay`).
    The trained model then translates every held-out date in every
    format with :func:`decoder_translate` (greedy).

    The default sizes give the model about the parameter count of the
    capstone's (within 1 %), spent on two blocks of width 96 rather than
    four of width 64: the decoder-only model runs every block on the whole
    sequence, source and target, so fewer, wider blocks cost less time
    for the same parameters. It also sees fewer sequences than the
    capstone (``steps * batch_size``), which keeps one training on one
    CPU thread within the book's budget.

    Deterministic for a given seed, device, PyTorch version and thread
    count: the initial weights come from :func:`lessons_code.training.seeded`
    (the caller's random state is kept) and the batches from a generator of
    their own. With ``LESSONS_CODE_RESULTS`` set, the result is saved and a
    later call with the same arguments reads it
    (:func:`lessons_code.results.stored`).

    Parameters
    ----------
    seed
        Seed of the split, the initial weights and the batches.
    steps
        Number of training steps.
    batch_size
        Sequences per step.
    d_model, num_heads, num_kv_heads, num_layers, d_ff
        Sizes of the :class:`lessons_code.modern.DecoderOnlyLM`.
    peak_lr
        Learning rate at the end of the warm-up.
    warmup_steps
        Length of the linear warm-up.
    num_test_dates
        Number of held-out dates (each in every format).
    positions
        ``"rope"``, ``"sinusoidal"`` or ``"none"`` (see
        :class:`lessons_code.modern.DecoderOnlyLM`).
    device
        Where to train (default: the CPU); the returned model is on the CPU.
    recipe
        ``"2017"``: the paper's Adam and the linear schedule above (what
        the capstone trains with); ``"llama"``: Llama's recipe, AdamW with
        betas 0.9 and 0.95 and a weight decay of 0.1, the warm-up followed
        by a cosine to a tenth of ``peak_lr``
        (:func:`lessons_code.training.adamw_cosine`), and the gradients'
        norm clipped to 1.0 before each step.

    Returns
    -------
    DecoderDateExperiment
        The loss curve, the held-out accuracy, every held-out prediction
        and the trained model.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size or count is smaller than 1, ``seed < 0``, ``peak_lr`` is
        not positive, ``warmup_steps > steps`` (``>=`` with
        ``recipe="llama"``), a head count does not divide, ``positions``
        names no scheme or ``recipe`` no recipe.

    Examples
    --------
    A tiny run (the book's settings are the defaults):

    >>> run = train_decoder_dates(0, steps=2, batch_size=4, d_model=8, num_heads=2,
    ...                           num_kv_heads=1, num_layers=1, d_ff=8,
    ...                           warmup_steps=1, num_test_dates=2)
    >>> run.losses.shape, len(run.held_out), 0.0 <= run.accuracy <= 1.0
    ((2,), 8, True)
    >>> run.held_out[0][:2]
    ('september 20, 1958', '1958-09-20')
    """
    seed = check_int(seed, "seed", minimum=0)
    steps = check_int(steps, "steps", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    peak_lr = check_real(peak_lr, "peak_lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    num_test_dates = check_int(
        num_test_dates, "num_test_dates", minimum=1
    )
    if warmup_steps > steps:
        raise ValueError(
            f"warmup_steps must be at most steps = {steps}, got {warmup_steps}"
        )
    device = check_device(device, "device")
    if recipe not in ("2017", "llama"):
        raise ValueError(
            f"recipe must be '2017' or 'llama', got {recipe!r}"
        )
    if recipe == "llama" and warmup_steps == steps:
        raise ValueError(
            f"warmup_steps must be below steps = {steps} with recipe='llama' "
            f"(the cosine needs a step after the warm-up), got {warmup_steps}"
        )
    settings: dict[str, int | float | str] = {
        "recipe": recipe,
        "steps": steps,
        "batch_size": batch_size,
        "d_model": d_model,
        "num_heads": num_heads,
        "num_kv_heads": num_kv_heads,
        "num_layers": num_layers,
        "d_ff": d_ff,
        "peak_lr": peak_lr,
        "warmup_steps": warmup_steps,
        "num_test_dates": num_test_dates,
        "positions": positions,
        "device": str(device),
    }

    def build() -> DecoderOnlyLM:  # checks the sizes and positions
        return DecoderOnlyLM(
            len(DATE_VOCAB),
            d_model,
            num_layers,
            num_heads,
            num_kv_heads,
            d_ff,
            MAX_LEN,
            positions=positions,
        )

    began = time.perf_counter()
    model = seeded(seed, build).to(device)
    train_dates, test_dates = split_dates(num_test_dates, seed)
    inputs, labels = date_sequences(date_pairs(train_dates))  # (N, T)
    inputs, labels = inputs.to(device), labels.to(device)
    optimizer: torch.optim.Optimizer
    if recipe == "llama":
        optimizer, scheduler = adamw_cosine(
            model.parameters(), peak_lr, warmup_steps, steps
        )
    else:
        optimizer, scheduler = adam_with_warmup(
            model.parameters(), peak_lr, warmup_steps, steps
        )
    batches = torch.Generator().manual_seed(seed)
    losses = np.empty(steps)
    rates = np.empty(steps)
    model.train()
    for step in range(steps):
        rows = torch.randint(
            len(inputs), (batch_size,), generator=batches
        )
        logits = model(inputs[rows])  # (B, T, V)
        loss = target_loss(logits, labels[rows])  # target positions only
        optimizer.zero_grad()
        loss.backward()
        if recipe == "llama":  # Llama clips the gradients' norm to 1
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        rates[step] = scheduler.get_last_lr()[0]
        scheduler.step()  # the learning rate of the next step
        losses[step] = loss.item()
    train_seconds = time.perf_counter() - began
    model = model.cpu().eval()

    test_pairs = date_pairs(test_dates)
    predicted = decoder_translate(model, [src for src, _ in test_pairs])
    held_out, accuracy, by_format = _exact_match(test_pairs, predicted)
    return DecoderDateExperiment(
        seed=seed,
        settings=settings,
        losses=losses,
        learning_rates=rates,
        accuracy=accuracy,
        accuracy_by_format=by_format,
        held_out=held_out,
        model=model,
        train_seconds=train_seconds,
    )
