"""A small character-level language model, to see why text is sampled.

Greedy decoding suits a task with one right answer, such as a date. On
free text a language model's most likely continuation tends to repeat
itself, and drawing from its whole distribution wanders off into the
unlikely tail (Holtzman et al., 2020). Seeing both needs a model of text,
and a text that every reader already has: :func:`help_text` takes the
prose of Python's own help pages (the standard library's
``pydoc_data.topics``, what ``help("assert")`` prints), so nothing is
downloaded. The text changes a little from one Python version to the
next, and so do the trained weights.

- :func:`train_text_model` trains a :class:`lessons_code.modern.DecoderOnlyLM`
  on that text, one character per token, for a few seconds;
- :func:`repeated_fraction` and :func:`unknown_word_fraction` measure the
  two failures on a generated text: how much of it repeats what it
  already wrote, and how many of its words appear nowhere in the training
  text.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from lessons_code._checks import check_device, check_int, check_real
from lessons_code.dates import CharVocab
from lessons_code.modern import DecoderOnlyLM
from lessons_code.results import stored
from lessons_code.training import adam_with_warmup, seeded

__all__ = [
    "TextModelExperiment",
    "help_text",
    "repeated_fraction",
    "train_text_model",
    "unknown_word_fraction",
    "words",
]

_PRINTABLE = frozenset(chr(c) for c in range(32, 127))
_WORD = re.compile(r"[A-Za-z]+")


@functools.cache
def help_text() -> tuple[str, ...]:
    """Return the prose paragraphs of Python's help pages, in a fixed order.

    The pages are the values of ``pydoc_data.topics.topics``, sorted by
    topic name. A paragraph is a run of lines separated by blank lines;
    indented lines (code, grammar rules) and heading underlines are left
    out, the lines of a paragraph are joined by single spaces, and a
    paragraph with a character outside printable ASCII is left out too.

    Returns
    -------
    tuple of str
        The paragraphs.

    Examples
    --------
    >>> paragraphs = help_text()
    >>> len(paragraphs) > 500, all(p == p.strip() for p in paragraphs)
    (True, True)
    """
    # the standard library's help text
    from pydoc_data.topics import topics

    paragraphs: list[str] = []
    for name in sorted(topics):
        for block in re.split(r"\n\s*\n", topics[name]):
            lines = [
                line
                for line in block.split("\n")
                if line.strip()
                and not line.startswith(" ")
                and set(line.strip()) - set("*=-~^")
            ]
            paragraph = " ".join(line.strip() for line in lines)
            if len(paragraph) >= 40 and set(paragraph) <= _PRINTABLE:
                paragraphs.append(paragraph)
    return tuple(paragraphs)


def words(text: str) -> list[str]:
    """Return the words of ``text``: its runs of ASCII letters, lowercased.

    Examples
    --------
    >>> words("The 'assert' statement, e.g. assert x.")
    ['the', 'assert', 'statement', 'e', 'g', 'assert', 'x']
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a string, got {type(text).__name__}"
        )
    return [word.lower() for word in _WORD.findall(text)]


def repeated_fraction(text: str, n: int = 16) -> float:
    """Return the fraction of ``text``'s n-character windows that occurred earlier in it.

    A text that has fallen into a loop repeats its windows over and over,
    and the fraction approaches 1; a text that keeps saying new things
    keeps it near 0.

    Parameters
    ----------
    text
        The text.
    n
        Window length in characters, at least 1.

    Returns
    -------
    float
        Windows seen before, over all windows (0 for a text shorter than
        ``n + 1`` characters).

    Raises
    ------
    TypeError
        If ``text`` is not a string or ``n`` not an integer.
    ValueError
        If ``n < 1``.

    Examples
    --------
    >>> repeated_fraction("abcdabcdabcd", n=4)  # 9 windows, 5 seen before
    0.5555555555555556
    >>> repeated_fraction("abcdefgh", n=4)
    0.0
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a string, got {type(text).__name__}"
        )
    n = check_int(n, "n", minimum=1)
    seen: set[str] = set()
    repeats = 0
    windows = len(text) - n + 1
    for start in range(max(windows, 0)):
        window = text[start : start + n]
        repeats += window in seen
        seen.add(window)
    return repeats / windows if windows > 1 else 0.0


def unknown_word_fraction(text: str, known: Iterable[str]) -> float:
    """Return the fraction of ``text``'s words that are not in ``known``.

    The first and last word are left out, since a continuation may begin
    or end in the middle of one.

    Parameters
    ----------
    text
        The text (see :func:`words`).
    known
        The known words, lowercase.

    Returns
    -------
    float
        Unknown words over counted words (0 if none is counted).

    Raises
    ------
    TypeError
        If ``text`` is not a string.

    Examples
    --------
    >>> unknown_word_fraction("xx the cat sta on the matt yy", {"the", "cat", "on"})
    0.3333333333333333
    """
    counted = words(text)[1:-1]
    known = set(known)
    if not counted:
        return 0.0
    return sum(word not in known for word in counted) / len(counted)


@dataclass(frozen=True)
class TextModelExperiment:
    """What :func:`train_text_model` returns.

    Attributes
    ----------
    seed
        The seed of the run (initial weights and batches).
    settings
        Every other argument of the call, by name (``device`` as a
        string).
    vocab
        The characters of the text, as a :class:`lessons_code.dates.CharVocab`.
    train_text, held_out_text
        The text trained on, and the held-out text after it: every tenth
        paragraph of :func:`help_text`, joined by newlines.
    losses
        Training loss at every step, nats per character, shape ``(steps,)``.
    held_out_loss
        The trained model's loss on the held-out text, nats per character.
    model
        The trained model (CPU, float32, evaluation mode).
    train_seconds
        Wall-clock seconds of the training. It differs between runs,
        unlike everything else; a result read back by
        :func:`lessons_code.results.stored` keeps the seconds of the call
        that trained it.
    """

    seed: int
    settings: dict[str, int | float | str]
    vocab: CharVocab
    train_text: str
    held_out_text: str
    losses: np.ndarray
    held_out_loss: float
    model: DecoderOnlyLM
    train_seconds: float


def _windows(
    ids: torch.Tensor, starts: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the inputs and next-character labels of the windows at ``starts``."""
    index = starts[:, None] + torch.arange(length + 1)  # (B, length + 1)
    chunk = ids[index]
    return chunk[:, :-1], chunk[:, 1:]


@stored
def train_text_model(
    seed: int = 0,
    *,
    steps: int = 300,
    seq_len: int = 128,
    batch_size: int = 32,
    d_model: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    d_ff: int = 128,
    peak_lr: float = 1e-2,
    warmup_steps: int = 30,
    device: torch.device | str | None = None,
) -> TextModelExperiment:
    """Train a character-level language model on Python's help text.

    The paragraphs of :func:`help_text`, every tenth held out, are joined
    by newlines; a :class:`lessons_code.modern.DecoderOnlyLM` learns to
    predict every next character of random windows of ``seq_len``
    characters, scored at every position, as a language model is
    pretrained. Adam (betas 0.9 and 0.98), the learning rate rising
    linearly to ``peak_lr`` over ``warmup_steps`` and falling linearly to
    0 (:func:`lessons_code.training.warmup_linear_decay`).

    The defaults train for a few seconds on one CPU thread: enough for
    words and phrases of the help text, not for sentences that make sense.

    Deterministic for a given seed, device, PyTorch version, Python version
    (the help text is Python's) and thread count. With
    ``LESSONS_CODE_RESULTS`` set, the result is saved and a later call with
    the same arguments reads it (:func:`lessons_code.results.stored`).

    Parameters
    ----------
    seed
        Seed of the initial weights and of the batches.
    steps
        Number of training steps.
    seq_len
        Characters per training window, and the model's ``max_len``: a
        prompt and its continuation together must not be longer (past the
        trained length RoPE's scores are untrained, see
        :func:`lessons_code.extrapolation.train_previous_token`).
    batch_size
        Windows per step.
    d_model, num_layers, num_heads, num_kv_heads, d_ff
        Sizes of the model (see :class:`lessons_code.modern.DecoderOnlyLM`).
    peak_lr
        Learning rate at the end of the warm-up.
    warmup_steps
        Length of the linear warm-up.
    device
        Where to train (default: the CPU); the returned model is on the
        CPU.

    Returns
    -------
    TextModelExperiment
        The vocabulary, the texts, the loss curve and the trained model.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size or count is too small, ``seed < 0``, ``peak_lr`` is not
        positive, ``warmup_steps > steps``, or the head counts do not fit
        ``d_model``.

    Examples
    --------
    >>> run = train_text_model(0, steps=2, seq_len=16, batch_size=2, d_model=16,
    ...                        num_heads=2, num_kv_heads=1, d_ff=16,
    ...                        warmup_steps=1)
    >>> run.losses.shape, run.model.vocab_size == len(run.vocab)
    ((2,), True)
    """
    seed = check_int(seed, "seed", minimum=0)
    steps = check_int(steps, "steps", minimum=1)
    seq_len = check_int(seq_len, "seq_len", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    peak_lr = check_real(peak_lr, "peak_lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=1)
    if warmup_steps > steps:
        raise ValueError(
            f"warmup_steps must be at most steps = {steps}, got {warmup_steps}"
        )
    device = check_device(device, "device")
    settings: dict[str, int | float | str] = {
        "steps": steps,
        "seq_len": seq_len,
        "batch_size": batch_size,
        "d_model": d_model,
        "num_layers": num_layers,
        "num_heads": num_heads,
        "num_kv_heads": num_kv_heads,
        "d_ff": d_ff,
        "peak_lr": peak_lr,
        "warmup_steps": warmup_steps,
        "device": str(device),
    }
    paragraphs = help_text()
    held_out = "\n".join(paragraphs[9::10])
    train = "\n".join(p for i, p in enumerate(paragraphs) if i % 10 != 9)
    vocab = CharVocab("".join(sorted(set(train + held_out))))
    train_ids = torch.tensor(vocab.encode(train))
    held_ids = torch.tensor(vocab.encode(held_out))

    def build() -> DecoderOnlyLM:  # checks the sizes
        return DecoderOnlyLM(
            len(vocab),
            d_model,
            num_layers,
            num_heads,
            num_kv_heads,
            d_ff,
            seq_len,  # RoPE reads no longer than it trained on
        )

    data = torch.Generator().manual_seed(seed)
    began = time.perf_counter()
    model = seeded(seed, build).to(device)
    optimizer, scheduler = adam_with_warmup(
        model.parameters(), peak_lr, warmup_steps, steps
    )
    losses = np.empty(steps)
    model.train()
    for step in range(steps):
        starts = torch.randint(
            len(train_ids) - seq_len, (batch_size,), generator=data
        )
        inputs, labels = _windows(
            train_ids, starts, seq_len
        )  # (B, T) each
        logits = model(inputs.to(device))  # (B, T, V)
        loss = F.cross_entropy(
            logits.flatten(0, 1), labels.to(device).flatten()
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses[step] = loss.item()
    train_seconds = time.perf_counter() - began
    model = model.cpu().eval()

    # the held-out text in consecutive windows, every character scored once
    count = (len(held_ids) - 1) // seq_len
    starts = torch.arange(count) * seq_len
    inputs, labels = _windows(held_ids, starts, seq_len)
    with torch.no_grad():
        held_loss = F.cross_entropy(
            model(inputs).flatten(0, 1), labels.flatten()
        ).item()
    return TextModelExperiment(
        seed=seed,
        settings=settings,
        vocab=vocab,
        train_text=train,
        held_out_text=held_out,
        losses=losses,
        held_out_loss=held_loss,
        model=model,
        train_seconds=train_seconds,
    )
