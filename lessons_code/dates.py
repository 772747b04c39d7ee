"""Translating dates between formats, one character at a time: a task a reader can read.

The source is a date written the way people write it -- ``"november 30, 2026"``,
``"30 nov 2026"``, ``"11/30/2026"`` or ``"30.11.2026"`` -- and the target
is the same date in ISO 8601, ``"2026-11-30"``. Both are sequences of
characters. The task needs what a Transformer offers: the output's year,
month and day must be copied from different places in the input depending on
its format (cross-attention), a month name must become a number, and the
order of the characters matters (positional encoding).

The module holds the task's data (:func:`format_date`, :func:`split_dates`,
:func:`date_pairs`), its character vocabulary (:class:`CharVocab`,
``DATE_VOCAB``) and the experiment (:func:`train_date_model`): a small
:class:`lessons_code.transformer.Transformer` trained with teacher forcing and
a learning-rate warm-up (each step is one :func:`teacher_forcing_step`), then
scored by the exact match of its greedy decodings on dates it never saw, in
any format.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_int,
    check_optimizer_and_scheduler,
    check_real,
)
from lessons_code.results import stored
from lessons_code.training import adam_with_warmup, seeded
from lessons_code.transformer import (
    Transformer,
    _check_tokens,
    greedy_decode,
)

__all__ = [
    "DATE_VOCAB",
    "FIRST_DATE",
    "FORMATS",
    "FUTURE_FIRST",
    "FUTURE_LAST",
    "LAST_DATE",
    "UNSEEN_FORMATS",
    "CharVocab",
    "DateExperiment",
    "date_pairs",
    "format_date",
    "split_dates",
    "stress_pairs",
    "teacher_forcing_step",
    "train_date_model",
    "translate",
]

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

#: The source formats, by name, with the example of 30 November 2026.
FORMATS: dict[str, str] = {
    "long": "november 30, 2026",  # month name, day, year
    "short": "30 nov 2026",  # day, abbreviated month, year
    "us": "11/30/2026",  # month/day/year, no leading zeros
    "european": "30.11.2026",  # day.month.year, two digits each
}

#: Source formats that training never uses, for a stress test: the day
#: first as in ``"short"``, the month's whole name as in ``"long"``.
UNSEEN_FORMATS: dict[str, str] = {
    "british": "30 november 2026",  # day, month name, year
}

#: The first and last dates of the task (100 years).
FIRST_DATE = datetime.date(1950, 1, 1)
LAST_DATE = datetime.date(2049, 12, 31)

#: The first and last dates of the stress test's future years, none of
#: them a year of the task.
FUTURE_FIRST = datetime.date(2050, 1, 1)
FUTURE_LAST = datetime.date(2099, 12, 31)


def _check_date(value: object, name: str) -> datetime.date:
    """Return ``value`` if it is a ``datetime.date`` (not a ``datetime``)."""
    if not isinstance(value, datetime.date) or isinstance(
        value, datetime.datetime
    ):
        raise TypeError(
            f"{name} must be a datetime.date, got {type(value).__name__}"
        )
    return value


def format_date(date: datetime.date, style: str) -> str:
    """Write ``date`` in one of the source formats, or in ISO 8601.

    Parameters
    ----------
    date
        The date.
    style
        A key of ``FORMATS`` (``"long"``, ``"short"``, ``"us"``,
        ``"european"``), of ``UNSEEN_FORMATS`` (``"british"``) or
        ``"iso"``, the target format.

    Returns
    -------
    str
        The date as text, lower case.

    Raises
    ------
    TypeError
        If ``date`` is not a ``datetime.date`` or ``style`` not a string.
    ValueError
        If ``style`` names no format.

    Examples
    --------
    >>> day = datetime.date(2026, 11, 30)
    >>> [format_date(day, style) for style in [*FORMATS, "iso"]]
    ['november 30, 2026', '30 nov 2026', '11/30/2026', '30.11.2026', '2026-11-30']
    >>> format_date(datetime.date(1999, 3, 7), "us")
    '3/7/1999'
    >>> format_date(day, "british")
    '30 november 2026'
    """
    date = _check_date(date, "date")
    if not isinstance(style, str):
        raise TypeError(
            f"style must be a string, got {type(style).__name__}"
        )
    y, m, d = date.year, date.month, date.day
    month = MONTHS[m - 1]
    if style == "long":
        return f"{month} {d}, {y}"
    if style == "short":
        return f"{d} {month[:3]} {y}"
    if style == "us":
        return f"{m}/{d}/{y}"
    if style == "european":
        return f"{d:02d}.{m:02d}.{y}"
    if style == "british":
        return f"{d} {month} {y}"
    if style == "iso":
        return date.isoformat()
    names = ", ".join(
        repr(name) for name in [*FORMATS, *UNSEEN_FORMATS, "iso"]
    )
    raise ValueError(f"style must be one of {names}, got {style!r}")


def split_dates(
    num_test: int,
    seed: int,
    *,
    first: datetime.date = FIRST_DATE,
    last: datetime.date = LAST_DATE,
) -> tuple[list[datetime.date], list[datetime.date]]:
    """Split the calendar dates from ``first`` to ``last`` into training and held-out dates.

    The split is by date, so a held-out date is never seen in training in
    any format. The dates are shuffled by NumPy's ``default_rng(seed)``;
    the first ``num_test`` are held out.

    Parameters
    ----------
    num_test
        Number of held-out dates.
    seed
        Seed of the shuffle.
    first, last
        The range of dates, both included.

    Returns
    -------
    train : list of datetime.date
        The training dates, in calendar order.
    test : list of datetime.date
        The held-out dates, in calendar order.

    Raises
    ------
    TypeError
        If ``num_test`` or ``seed`` is not an integer, or ``first`` or
        ``last`` not a ``datetime.date``.
    ValueError
        If ``num_test < 1``, ``seed < 0``, or the range holds no more than
        ``num_test`` dates.

    Examples
    --------
    >>> train, test = split_dates(100, seed=0)
    >>> len(train) + len(test) == (LAST_DATE - FIRST_DATE).days + 1
    True
    >>> len(test), set(train) & set(test)
    (100, set())
    """
    num_test = check_int(num_test, "num_test", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    first = _check_date(first, "first")
    last = _check_date(last, "last")
    count = (last - first).days + 1
    if count <= num_test:
        raise ValueError(
            f"num_test must be smaller than the {max(count, 0)} dates from "
            f"{first} to {last}, got {num_test}"
        )
    order = np.random.default_rng(seed).permutation(count)
    dates = [first + datetime.timedelta(days=int(i)) for i in order]
    return sorted(dates[num_test:]), sorted(dates[:num_test])


def date_pairs(
    dates: Iterable[datetime.date], styles: Sequence[str] = tuple(FORMATS)
) -> list[tuple[str, str]]:
    """Every date in every style, with its ISO 8601 translation.

    Parameters
    ----------
    dates
        The dates.
    styles
        Source formats (keys of ``FORMATS`` or ``UNSEEN_FORMATS``); every
        format of ``FORMATS``, those of training, by default.

    Returns
    -------
    list of tuple of str
        ``(source, target)`` pairs, date by date and, within a date, in the
        order of ``styles``.

    Raises
    ------
    TypeError
        If a date is not a ``datetime.date`` or ``styles`` is not a sequence
        of strings.
    ValueError
        If ``styles`` is empty or names a format that does not exist.

    Examples
    --------
    >>> date_pairs([datetime.date(2026, 11, 30)], styles=["short", "us"])
    [('30 nov 2026', '2026-11-30'), ('11/30/2026', '2026-11-30')]
    """
    if isinstance(styles, str) or not isinstance(styles, Sequence):
        raise TypeError(
            f"styles must be a sequence of format names, got {type(styles).__name__}"
        )
    if not styles:
        raise ValueError("styles must name at least one format")
    for style in styles:
        if style not in FORMATS and style not in UNSEEN_FORMATS:
            names = ", ".join(
                repr(name) for name in [*FORMATS, *UNSEEN_FORMATS]
            )
            raise ValueError(
                f"styles must hold names among {names}, got {style!r}"
            )
    return [
        (format_date(date, style), format_date(date, "iso"))
        for date in dates
        for style in styles
    ]


def stress_pairs(
    num_test_dates: int = 500, seed: int = 0
) -> dict[str, list[tuple[str, str]]]:
    """Pairs outside the training distribution of :func:`train_date_model`.

    Two cases, each changing one thing:

    ``"future years"``
        ``num_test_dates`` dates from ``FUTURE_FIRST`` to ``FUTURE_LAST``
        (years 2050 to 2099; training stops at 2049), drawn by
        :func:`split_dates` with ``seed``, each in every format of
        ``FORMATS``.
    ``"unseen format"``
        The held-out dates of ``train_date_model(seed,
        num_test_dates=num_test_dates)`` (years of the task, dates it never
        trained on), each in every format of ``UNSEEN_FORMATS``, except
        the texts that a training format writes alike: May is its own
        abbreviation, so ``"2 may 1950"`` is also the ``"short"`` format,
        and the dates of May are left out.

    Parameters
    ----------
    num_test_dates
        Dates per case, and the size of the held-out split.
    seed
        Seed of the split, the one of the trained model.

    Returns
    -------
    dict of str to list of tuple of str
        The ``(source, target)`` pairs of each case, date by date.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If ``num_test_dates < 1`` or ``seed < 0``.

    Examples
    --------
    >>> cases = stress_pairs(2, seed=0)
    >>> {name: len(pairs) for name, pairs in cases.items()}
    {'future years': 8, 'unseen format': 2}
    >>> cases["unseen format"][0]
    ('20 september 1958', '1958-09-20')
    >>> date_pairs([datetime.date(1950, 5, 2)], styles=["short", "british"])
    [('2 may 1950', '1950-05-02'), ('2 may 1950', '1950-05-02')]
    """
    num_test_dates = check_int(
        num_test_dates, "num_test_dates", minimum=1
    )
    seed = check_int(seed, "seed", minimum=0)
    _, future = split_dates(
        num_test_dates, seed, first=FUTURE_FIRST, last=FUTURE_LAST
    )
    _, held_out = split_dates(num_test_dates, seed)
    trained = {source for source, _ in date_pairs(held_out)}
    unseen = date_pairs(held_out, styles=tuple(UNSEEN_FORMATS))
    return {
        "future years": date_pairs(future),
        "unseen format": [
            pair for pair in unseen if pair[0] not in trained
        ],
    }


@dataclass(frozen=True)
class CharVocab:
    """A character vocabulary with padding, start and end tokens.

    Token ids: ``0`` pads, ``1`` starts a target, ``2`` ends it, and every
    character of ``characters`` follows in order.

    Parameters
    ----------
    characters
        The characters that texts may contain, each once.

    Raises
    ------
    TypeError
        If ``characters`` is not a string.
    ValueError
        If it is empty or repeats a character.

    Examples
    --------
    >>> vocab = CharVocab("abc")
    >>> len(vocab), vocab.encode("cab", end=True)
    (6, [5, 3, 4, 2])
    >>> vocab.decode([1, 5, 3, 4, 2, 0])
    'cab'
    """

    characters: str
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    #: The symbols of the three special tokens, as :meth:`symbols` shows them.
    SPECIALS = ("<pad>", "<s>", "</s>")
    pad_id = 0
    start_id = 1
    end_id = 2

    def __post_init__(self) -> None:
        if not isinstance(self.characters, str):
            raise TypeError(
                f"characters must be a string, got {type(self.characters).__name__}"
            )
        if not self.characters:
            raise ValueError("characters must not be empty")
        if len(set(self.characters)) != len(self.characters):
            raise ValueError(
                f"characters must not repeat a character, got {self.characters!r}"
            )
        # character -> token id, for encode (a frozen dataclass sets it so)
        first = len(self.SPECIALS)
        index = {
            char: first + i for i, char in enumerate(self.characters)
        }
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        """Return the number of token ids (the three special tokens included)."""
        return len(self.SPECIALS) + len(self.characters)

    def encode(
        self, text: str, *, start: bool = False, end: bool = False
    ) -> list[int]:
        """Token ids of the characters of ``text``.

        Parameters
        ----------
        text
            Characters of the vocabulary.
        start
            Put the start token first.
        end
            Put the end token last.

        Returns
        -------
        list of int
            One id per character (plus the requested special tokens).

        Raises
        ------
        TypeError
            If ``text`` is not a string or a flag not a bool.
        ValueError
            If ``text`` holds a character outside the vocabulary.
        """
        if not isinstance(text, str):
            raise TypeError(
                f"text must be a string, got {type(text).__name__}"
            )
        start = check_bool(start, "start")
        end = check_bool(end, "end")
        index = self._index
        unknown = set(text) - index.keys()
        if unknown:
            raise ValueError(
                "text must hold characters of the vocabulary, got "
                f"{sorted(unknown)[0]!r} in {text!r}"
            )
        ids = [index[char] for char in text]
        return [self.start_id] * start + ids + [self.end_id] * end

    def decode(self, ids: Iterable[int]) -> str:
        """Turn token ids back into text: characters up to the first end token, no special tokens.

        Parameters
        ----------
        ids
            Token ids (a list, or a 1-D integer tensor).

        Returns
        -------
        str
            The characters.

        Raises
        ------
        TypeError
            If ``ids`` is not an iterable of integers.
        ValueError
            If an id is outside the vocabulary.
        """
        chars = []
        for token in self._checked_ids(ids):
            if token == self.end_id:
                break
            if token >= len(self.SPECIALS):
                chars.append(self.characters[token - len(self.SPECIALS)])
        return "".join(chars)

    def symbols(self, ids: Iterable[int]) -> list[str]:
        """Return the symbol of every token id (``"<s>"`` etc. for special tokens), for axis labels.

        Parameters
        ----------
        ids
            Token ids (a list, or a 1-D integer tensor).

        Returns
        -------
        list of str
            One symbol per id, special tokens and padding included.

        Raises
        ------
        TypeError
            If ``ids`` is not an iterable of integers.
        ValueError
            If an id is outside the vocabulary.

        Examples
        --------
        >>> CharVocab("ab").symbols([1, 3, 4, 2, 0])
        ['<s>', 'a', 'b', '</s>', '<pad>']
        """
        table = [*self.SPECIALS, *self.characters]
        return [table[token] for token in self._checked_ids(ids)]

    def _checked_ids(self, ids: object) -> Iterator[int]:
        """Check that ``ids`` is iterable now, then yield each id once it is checked."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        if isinstance(ids, str) or not isinstance(ids, Iterable):
            raise TypeError(
                f"ids must be an iterable of token ids, got {type(ids).__name__}"
            )

        def each() -> Iterator[int]:
            for i, token in enumerate(ids):
                token = check_int(token, f"ids[{i}]", minimum=0)
                if token >= len(self):
                    raise ValueError(
                        f"ids[{i}] must be a token id below {len(self)}, got {token}"
                    )
                yield token

        return each()

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        start: bool = False,
        end: bool = False,
    ) -> torch.Tensor:
        """Encode texts and pad them at the end to a common length.

        Parameters
        ----------
        texts
            The texts.
        start, end
            Add the start or end token to each (see :meth:`encode`).

        Returns
        -------
        torch.Tensor
            ``int64`` token ids, padded with ``pad_id``.

        Shape
        -----
        Output: ``(B, T)``, where ``B`` is the number of texts and ``T`` the
        longest encoded length.

        Raises
        ------
        TypeError
            If ``texts`` is not a sequence of strings.
        ValueError
            If ``texts`` is empty, or a text holds a character outside the
            vocabulary or encodes to no token.

        Examples
        --------
        >>> CharVocab("abc").encode_batch(["ab", "c"], end=True)
        tensor([[3, 4, 2],
                [5, 2, 0]])
        """
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(
                f"texts must be a sequence of strings, got {type(texts).__name__}"
            )
        if not texts:
            raise ValueError("texts must hold at least one text")
        start = check_bool(start, "start")
        end = check_bool(end, "end")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(
                    f"texts[{i}] must be a string, got {type(text).__name__}"
                )
        # The same ids as encode, computed for all texts at once: each
        # text's code points, one row per text, 0 past its end.
        lengths = np.array([len(text) for text in texts])  # (B,)
        width = int(lengths.max())
        if width + start + end == 0:
            raise ValueError(
                "texts must encode to at least one token, got only empty texts"
            )
        codes = np.array(texts, dtype=f"<U{max(width, 1)}")
        codes = codes.view(np.uint32).reshape(len(texts), -1)[:, :width]
        lookup = np.full(max(map(ord, self._index)) + 2, -1)
        for char, token in self._index.items():
            lookup[ord(char)] = token
        ids = lookup[np.minimum(codes, len(lookup) - 1)]  # -1: unknown
        inside = np.arange(width) < lengths[:, None]  # (B, W)
        unknown = inside & (ids < 0)
        if unknown.any():
            self.encode(
                texts[int(unknown.any(axis=1).argmax())]
            )  # raises
        ids = np.where(inside, ids, self.pad_id)  # (B, W)
        out = np.full((len(texts), width + start + end), self.pad_id)
        out[:, start : start + width] = ids
        if start:
            out[:, 0] = self.start_id
        if end:
            out[np.arange(len(texts)), lengths + start] = self.end_id
        return torch.from_numpy(out).long()  # (B, T)


#: The vocabulary of the date task: the characters of every format.
DATE_VOCAB = CharVocab(
    " ,-./0123456789" + "".join(sorted(set("".join(MONTHS))))
)


@dataclass(frozen=True)
class DateExperiment:
    """What :func:`train_date_model` returns.

    Attributes
    ----------
    seed
        The seed of the run (split, initial weights and batches).
    settings
        Every other argument of the call, by name.
    losses
        Training loss (mean cross-entropy per target token) at every step,
        shape ``(steps,)``.
    learning_rates
        The learning rate of every step, shape ``(steps,)``.
    accuracy
        Exact-match accuracy of the greedy decodings on the held-out pairs,
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
        evaluation). It differs between runs, unlike everything else. A
        result read back by :func:`lessons_code.results.stored` keeps the
        seconds of the call that trained it.
    """

    seed: int
    settings: dict[str, int | float | bool | str]
    losses: np.ndarray
    learning_rates: np.ndarray
    accuracy: float
    accuracy_by_format: dict[str, float]
    held_out: list[tuple[str, str, str]]
    model: Transformer
    train_seconds: float


def teacher_forcing_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    src: torch.Tensor,
    tgt: torch.Tensor,
    *,
    pad_id: int,
    causal: bool = True,
) -> float:
    """Take one training step of an encoder-decoder with teacher forcing.

    Each target is ``<s> y1 ... yT``, ``yT`` being the end token. The
    decoder reads every token but the last, ``<s> y1 ... y(T-1)``, and is
    scored on predicting every token but the first, ``y1 ... yT``: the
    mean cross-entropy over the ``B * T`` predictions, those of padding
    excepted. Then one update of ``optimizer`` and one step of
    ``scheduler``. This is the body of the training loop of
    :func:`train_date_model`.

    Parameters
    ----------
    model
        An encoder-decoder such as
        :class:`lessons_code.transformer.Transformer`: ``model(src,
        tgt_in, causal=causal)`` returns logits of shape ``(B, T, V)``.
        Put it in training mode first.
    optimizer
        The optimiser of ``model``'s parameters.
    scheduler
        The learning-rate schedule of ``optimizer``; it is stepped after
        the update.
    src
        Source token ids.
    tgt
        Target token ids, each row ``<s> y1 ... yT``, padded at the end
        with ``pad_id``.
    pad_id
        The padding id: target positions that hold it do not count in the
        loss.
    causal
        The decoder's causal mask; ``False`` lets every position see the
        tokens after it, the one it predicts among them (an experiment).

    Returns
    -------
    float
        The loss of the batch, computed before the update.

    Shape
    -----
    - ``src``: ``(B, S)``.
    - ``tgt``: ``(B, T + 1)``, ``T >= 1``.

    where ``B`` is the batch size, ``S`` the source length and ``T`` the
    number of predictions per target.

    Raises
    ------
    TypeError
        If ``model`` is not a module, ``optimizer`` not an optimiser,
        ``scheduler`` not a learning-rate scheduler, ``src`` or ``tgt`` not
        an integer tensor, ``pad_id`` not an integer or ``causal`` not a
        bool.
    ValueError
        If ``scheduler`` schedules another optimiser, ``src`` or ``tgt`` is
        not 2-D, they differ in batch size, ``tgt`` has fewer than 2
        columns, or ``pad_id < 0``.

    Examples
    --------
    >>> V = len(DATE_VOCAB)
    >>> model = seeded(0, lambda: Transformer(V, V, 16, 2, 1, 1, 16))
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    >>> scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    >>> pairs = date_pairs([datetime.date(2026, 11, 30)])  # 4 formats
    >>> src = DATE_VOCAB.encode_batch([source for source, _ in pairs])
    >>> tgt = DATE_VOCAB.encode_batch([target for _, target in pairs], start=True, end=True)
    >>> src.shape, tgt.shape
    (torch.Size([4, 17]), torch.Size([4, 12]))
    >>> losses = [
    ...     teacher_forcing_step(model, optimizer, scheduler, src, tgt, pad_id=DATE_VOCAB.pad_id)
    ...     for _ in range(20)
    ... ]
    >>> losses[-1] < losses[0] / 4
    True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"model must be a torch.nn.Module, got {type(model).__name__}"
        )
    check_optimizer_and_scheduler(optimizer, scheduler)
    src = _check_tokens(src, "src")
    tgt = _check_tokens(tgt, "tgt")
    if tgt.shape[1] < 2:
        raise ValueError(
            "tgt must have at least 2 columns (<s> and one more token), "
            f"got shape {tuple(tgt.shape)}"
        )
    if src.shape[0] != tgt.shape[0]:
        raise ValueError(
            "tgt must have the batch size of src "
            f"({src.shape[0]}), got shape {tuple(tgt.shape)}"
        )
    pad_id = check_int(pad_id, "pad_id", minimum=0)
    causal = check_bool(causal, "causal")
    # Teacher forcing: read <s> y1 ... y(T-1), predict y1 ... yT.
    logits = model(src, tgt[:, :-1], causal=causal)  # (B, T, V)
    loss = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),  # (B * T, V)
        tgt[:, 1:].reshape(-1),  # (B * T,)
        ignore_index=pad_id,  # padding is not a prediction
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()  # the learning rate of the next step
    return loss.item()


def translate(
    model: Transformer, sources: Sequence[str], *, causal: bool = True
) -> list[str]:
    """Translate dates with a trained model: greedy decoding, one batch.

    Parameters
    ----------
    model
        A :class:`lessons_code.transformer.Transformer` over
        ``DATE_VOCAB``, such as the model of :func:`train_date_model`.
    sources
        Dates as text, in characters of ``DATE_VOCAB``.
    causal
        The decoder's causal mask (``False`` only for a model trained
        without it).

    Returns
    -------
    list of str
        One output per source: the characters written before the end
        token. Decoding stops after 11 tokens, the ten characters of an
        ISO date and the end token, so an output has at most 11
        characters.

    Raises
    ------
    TypeError
        If ``model`` is not a Transformer, ``sources`` not a sequence of
        strings or ``causal`` not a bool.
    ValueError
        If ``sources`` is empty or holds a character outside the
        vocabulary.

    Examples
    --------
    >>> model = seeded(0, lambda: Transformer(len(DATE_VOCAB), len(DATE_VOCAB), 16, 2, 1, 1, 16))
    >>> outputs = translate(model, ["3/7/1999", "7 mar 1999"])
    >>> len(outputs), all(len(text) <= 11 for text in outputs)
    (2, True)
    """
    vocab = DATE_VOCAB
    predicted = greedy_decode(
        model,
        vocab.encode_batch(sources),
        start_id=vocab.start_id,
        end_id=vocab.end_id,
        max_len=11,  # 10 characters and </s>
        causal=causal,
    )
    return [vocab.decode(row) for row in predicted]


def _exact_match(
    pairs: Sequence[tuple[str, str]], predicted: Sequence[str]
) -> tuple[list[tuple[str, str, str]], float, dict[str, float]]:
    """Score the outputs of the held-out pairs by exact match.

    ``pairs`` are :func:`date_pairs` of the held-out dates in every format
    of ``FORMATS``, and ``predicted`` the output for each. Returns the
    ``(source, target, prediction)`` triples, the share of predictions
    equal to their target, and that share per format.
    """
    held_out = [
        (src, tgt, out)
        for (src, tgt), out in zip(pairs, predicted, strict=True)
    ]
    correct = np.array([tgt == out for _, tgt, out in held_out])
    by_format = correct.reshape(-1, len(FORMATS)).mean(axis=0)
    return (
        held_out,
        float(correct.mean()),
        {
            name: float(value)
            for name, value in zip(FORMATS, by_format, strict=True)
        },
    )


@stored
def train_date_model(
    seed: int = 0,
    *,
    steps: int = 500,
    batch_size: int = 64,
    d_model: int = 64,
    num_heads: int = 4,
    num_layers: int = 2,
    d_ff: int = 128,
    peak_lr: float = 3e-3,
    warmup_steps: int = 100,
    schedule: str = "linear",
    num_test_dates: int = 500,
    positional: bool = True,
    causal: bool = True,
) -> DateExperiment:
    """Train a small Transformer to translate dates to ISO 8601, and score it on unseen dates.

    The calendar dates from ``FIRST_DATE`` to ``LAST_DATE`` are split
    with :func:`split_dates` (``num_test_dates`` held out). Every step draws
    ``batch_size`` training pairs (any training date, any format) and takes
    one Adam step (betas 0.9 and 0.98) on the cross-entropy of the next
    target character given the previous ones (teacher forcing,
    :func:`teacher_forcing_step`), the learning
    rate rising linearly to ``peak_lr`` over ``warmup_steps`` and then
    decaying: linearly to 0 at the last step
    (:func:`lessons_code.training.warmup_linear_decay`), or as
    ``1/sqrt(step)``, the 2017 paper's schedule
    (:func:`lessons_code.training.warmup_inverse_sqrt`).
    The trained model then translates every held-out date in every format
    with :func:`translate` (greedy decoding).

    Deterministic for a given seed, PyTorch version and thread count. With
    ``LESSONS_CODE_RESULTS`` set, the result is saved and a later call with
    the same arguments reads it (:func:`lessons_code.results.stored`).

    Parameters
    ----------
    seed
        Seed of the split, the initial weights and the batches.
    steps
        Number of training steps.
    batch_size
        Pairs per step.
    d_model, num_heads, d_ff
        Sizes of the :class:`lessons_code.transformer.Transformer`.
    num_layers
        Number of encoder blocks, and of decoder blocks.
    peak_lr
        Learning rate at the end of the warm-up.
    warmup_steps
        Length of the linear warm-up.
    schedule
        The decay after the warm-up: ``"linear"`` (to 0 at the last step) or
        ``"inverse_sqrt"`` (the paper's).
    num_test_dates
        Number of held-out dates (each in every format).
    positional
        Add the positional encoding to the embeddings (``False`` for the
        experiment of leaving it out).
    causal
        Mask the decoder's self-attention causally, in training and in the
        greedy decoding of the held-out dates (``False`` for the experiment
        of leaving the mask out).

    Returns
    -------
    DateExperiment
        The loss curve, the held-out accuracy, every held-out prediction and
        the trained model.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size or count is smaller than 1, ``seed < 0``, ``peak_lr`` is not
        positive, ``warmup_steps > steps``, ``num_heads`` does not divide
        ``d_model``, or ``schedule`` names no schedule.

    Examples
    --------
    A tiny run (the book's settings are the defaults):

    >>> run = train_date_model(0, steps=2, batch_size=4, d_model=8, num_heads=2, d_ff=8,
    ...                        num_layers=1, warmup_steps=1, num_test_dates=2)
    >>> run.losses.shape, len(run.held_out), 0.0 <= run.accuracy <= 1.0
    ((2,), 8, True)
    >>> run.held_out[0][:2]
    ('september 20, 1958', '1958-09-20')
    """
    seed = check_int(seed, "seed", minimum=0)
    settings: dict[str, int | float | bool | str] = {
        "steps": check_int(steps, "steps", minimum=1),
        "batch_size": check_int(batch_size, "batch_size", minimum=1),
        "d_model": check_int(d_model, "d_model", minimum=1),
        "num_heads": check_int(num_heads, "num_heads", minimum=1),
        "num_layers": check_int(num_layers, "num_layers", minimum=1),
        "d_ff": check_int(d_ff, "d_ff", minimum=1),
        "peak_lr": check_real(peak_lr, "peak_lr", strict=True),
        "warmup_steps": check_int(
            warmup_steps, "warmup_steps", minimum=1
        ),
        "schedule": schedule,
        "num_test_dates": check_int(
            num_test_dates, "num_test_dates", minimum=1
        ),
        "positional": check_bool(positional, "positional"),
        "causal": check_bool(causal, "causal"),
    }
    if schedule not in ("linear", "inverse_sqrt"):
        raise ValueError(
            "schedule must be 'linear' or 'inverse_sqrt', got "
            f"{schedule!r}"
        )
    if warmup_steps > steps:
        raise ValueError(
            f"warmup_steps must be at most steps = {steps}, got {warmup_steps}"
        )
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model must be divisible by num_heads, got d_model={d_model} "
            f"and num_heads={num_heads}"
        )
    vocab = DATE_VOCAB
    began = time.perf_counter()
    train_dates, test_dates = split_dates(num_test_dates, seed)
    train_pairs = date_pairs(train_dates)
    # (N, S): the sources, padded; (N, 12): <s> + 10 characters + </s>
    sources = vocab.encode_batch([src for src, _ in train_pairs])
    targets = vocab.encode_batch(
        [tgt for _, tgt in train_pairs], start=True, end=True
    )
    model = seeded(
        seed,
        lambda: Transformer(
            len(vocab),
            len(vocab),
            d_model,
            num_heads,
            num_layers,
            num_layers,
            d_ff,
            pad_id=vocab.pad_id,
            positional=positional,
        ),
    )
    optimizer, scheduler = adam_with_warmup(
        model.parameters(), peak_lr, warmup_steps, steps, decay=schedule
    )
    batches = torch.Generator().manual_seed(seed)
    losses = np.empty(steps)
    rates = np.empty(steps)
    model.train()
    for step in range(steps):
        rows = torch.randint(
            len(train_pairs), (batch_size,), generator=batches
        )
        rates[step] = scheduler.get_last_lr()[0]
        # (B, S) sources, (B, 12) targets; no target is padded
        losses[step] = teacher_forcing_step(
            model,
            optimizer,
            scheduler,
            sources[rows],
            targets[rows],
            pad_id=vocab.pad_id,
            causal=causal,
        )
    train_seconds = time.perf_counter() - began
    model.eval()

    test_pairs = date_pairs(test_dates)
    predicted = translate(
        model, [src for src, _ in test_pairs], causal=causal
    )
    held_out, accuracy, by_format = _exact_match(test_pairs, predicted)
    return DateExperiment(
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
