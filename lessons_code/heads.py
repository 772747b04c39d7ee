"""Two relations at once: a small task on which attention heads specialise.

Every sequence holds ``T`` tokens drawn uniformly from a vocabulary of ``V``
symbols, and one of its positions is *marked* (the model is told which, by a
learned marker vector added there). At every position ``t >= 1`` the model
must name two tokens at once: the **previous** token ``tokens[t - 1]``, a
relation to the neighbour, and the **marked** token, a relation to one
position that is usually far away. The answer is the pair, one of ``V * V``
classes ``previous * V + marked``. Position 0 has no previous token and is
not scored.

The model is as small as it can be: token, position and marker embeddings
added together, ONE :class:`~lessons_code.multihead.MultiHeadAttention`
layer, and a linear readout of each position's attention output. With
several heads one head can fetch the previous token and another the marked
token. With one head of the same width ``D`` a single softmax has to serve
both relations, and its output is one weighted average of the values it
attends to.

The settings the book's multi-head attention lesson uses: ``T = 10``,
``V = 6``, ``D = 16``, 256 training and 500 test sequences from NumPy
``default_rng(0)``, full-batch Adam with learning rate 0.05 for 150 steps,
model seeds 0 to 4, with ``H = 1`` and ``H = 4`` (``d_head = 16`` and 4).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_device,
    check_int,
    check_int_list,
    check_real,
    check_tensor,
)
from lessons_code.multihead import MultiHeadAttention
from lessons_code.results import stored
from lessons_code.training import map_in_threads, seeded

__all__ = [
    "HeadsRun",
    "TwoRelationData",
    "TwoRelationModel",
    "head_focus",
    "make_two_relation_data",
    "make_two_relation_splits",
    "run_heads_grid",
    "train_two_relation",
]

#: Seed of the NumPy generator that draws the training and test sets.
DATA_SEED = 0


def _check_index_tensor(
    value: object, name: str, *, ndim: int, upper: int, upper_name: str
) -> torch.Tensor:
    """Return ``value`` if it is an int64 tensor of rank ``ndim`` with entries in ``[0, upper)``."""
    if not isinstance(value, torch.Tensor) or value.dtype != torch.int64:
        kind = (
            f"a tensor of dtype {value.dtype}"
            if isinstance(value, torch.Tensor)
            else type(value).__name__
        )
        raise TypeError(
            f"{name} must be a torch.int64 tensor, got {kind}"
        )
    if value.ndim != ndim:
        raise ValueError(
            f"{name} must have {ndim} dimensions, got shape {tuple(value.shape)}"
        )
    if value.numel() and (value.min() < 0 or value.max() >= upper):
        raise ValueError(
            f"{name} must hold integers in [0, {upper_name}) = [0, {upper}), "
            f"got values from {int(value.min())} to {int(value.max())}"
        )
    return value


@dataclass(frozen=True)
class TwoRelationData:
    """Sequences of the two-relation task with their marked positions and answers.

    Attributes
    ----------
    tokens
        Token ids ``(n, T)``, int64, in ``[0, V)``.
    marked
        The marked position of each sequence ``(n,)``, int64, in ``[0, T)``.
    labels
        The answers at positions ``1`` to ``T - 1`` ``(n, T - 1)``, int64:
        ``labels[:, t - 1] = tokens[:, t - 1] * V + tokens[marked]``.
    vocab_size
        ``V``.
    """

    tokens: torch.Tensor
    marked: torch.Tensor
    labels: torch.Tensor
    vocab_size: int

    def to(self, device: torch.device | str | None) -> TwoRelationData:
        """Return the same data with every tensor on ``device``.

        Parameters
        ----------
        device
            The target device (``None``: the CPU).

        Returns
        -------
        TwoRelationData
            A new record; ``self`` is unchanged.

        Raises
        ------
        TypeError
            If ``device`` is not a device name or a ``torch.device``.
        ValueError
            If ``device`` names no device type.

        Examples
        --------
        >>> data = make_two_relation_data(np.random.default_rng(0), 2)
        >>> data.to("cpu").tokens.device
        device(type='cpu')
        """
        device = check_device(device, "device")
        return TwoRelationData(
            self.tokens.to(device),
            self.marked.to(device),
            self.labels.to(device),
            self.vocab_size,
        )


def make_two_relation_data(
    rng: np.random.Generator,
    n: int,
    seq_len: int = 10,
    vocab_size: int = 6,
) -> TwoRelationData:
    """Draw ``n`` sequences of the two-relation task.

    Every token is uniform over the ``V`` symbols and the marked position is
    uniform over the ``T`` positions, all drawn from ``rng``. The answer at
    position ``t >= 1`` is the pair (previous token, marked token), encoded as
    the class ``tokens[t - 1] * V + tokens[marked]``.

    Parameters
    ----------
    rng
        NumPy generator (it is advanced, so consecutive calls give different
        data).
    n
        Number of sequences.
    seq_len
        Sequence length ``T``, at least 2 (position 1 needs a previous token).
    vocab_size
        Number of symbols ``V``, at least 2.

    Returns
    -------
    TwoRelationData
        int64 tensors on the CPU.

    Shape
    -----
    ``tokens``: ``(n, T)``, ``marked``: ``(n,)``, ``labels``: ``(n, T - 1)``,
    where ``n`` is the number of sequences and ``T`` the sequence length.

    Raises
    ------
    TypeError
        If ``rng`` is not a ``numpy.random.Generator`` or a size is not an
        integer.
    ValueError
        If ``n < 1``, ``seq_len < 2`` or ``vocab_size < 2``.

    Examples
    --------
    >>> data = make_two_relation_data(np.random.default_rng(0), 3, seq_len=5, vocab_size=4)
    >>> data.tokens.shape, data.marked.shape, data.labels.shape
    (torch.Size([3, 5]), torch.Size([3]), torch.Size([3, 4]))
    >>> t, m = data.tokens[0], data.marked[0]
    >>> bool((data.labels[0] == t[:-1] * 4 + t[m]).all())
    True
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )
    n = check_int(n, "n", minimum=1)
    T = check_int(seq_len, "seq_len", minimum=2)
    V = check_int(vocab_size, "vocab_size", minimum=2)
    tokens = rng.integers(0, V, size=(n, T))  # (n, T)
    marked = rng.integers(0, T, size=n)  # (n,)
    marked_token = tokens[np.arange(n), marked]  # (n,)
    # position t's answer: (tokens[t - 1], marked token), for t = 1 .. T - 1
    labels = tokens[:, :-1] * V + marked_token[:, None]  # (n, T - 1)
    return TwoRelationData(
        torch.from_numpy(tokens).long(),
        torch.from_numpy(marked).long(),
        torch.from_numpy(labels).long(),
        V,
    )


def make_two_relation_splits(
    seq_len: int = 10,
    vocab_size: int = 6,
    *,
    n_train: int = 256,
    n_test: int = 500,
    data_seed: int = DATA_SEED,
) -> tuple[TwoRelationData, TwoRelationData]:
    """Draw the book's training and test sets from one NumPy generator.

    ``numpy.random.default_rng(data_seed)`` draws the training set, then the
    test set, with :func:`make_two_relation_data`.

    Parameters
    ----------
    seq_len
        Sequence length ``T``, at least 2.
    vocab_size
        Number of symbols ``V``, at least 2.
    n_train, n_test
        Numbers of training and test sequences.
    data_seed
        Seed of the NumPy generator.

    Returns
    -------
    tuple of TwoRelationData
        The training set and the test set.

    Shape
    -----
    As for :func:`make_two_relation_data`, with ``n_train`` and ``n_test``
    sequences.

    Raises
    ------
    TypeError
        If a size or the seed is not an integer.
    ValueError
        If a size is too small or ``data_seed < 0``.

    Examples
    --------
    >>> train, test = make_two_relation_splits()
    >>> train.tokens.shape, test.labels.shape
    (torch.Size([256, 10]), torch.Size([500, 9]))
    """
    n_train = check_int(n_train, "n_train", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=1)
    data_seed = check_int(data_seed, "data_seed", minimum=0)
    rng = np.random.default_rng(data_seed)
    train = make_two_relation_data(rng, n_train, seq_len, vocab_size)
    test = make_two_relation_data(rng, n_test, seq_len, vocab_size)
    return train, test


class TwoRelationModel(nn.Module):
    """Embeddings -> one multi-head attention layer -> a linear readout per position.

    The input of the attention layer at position ``t`` is the sum of a token
    embedding, a learned position embedding and, at the marked position
    only, a learned marker vector. The readout maps each position's
    attention output to ``V * V`` logits, one per (previous token, marked
    token) pair. There is no residual connection: everything the readout
    sees at ``t`` has come through the attention weights.

    Parameters
    ----------
    vocab_size
        Number of symbols ``V``.
    seq_len
        Longest sequence ``T`` (the number of position embeddings).
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H``; it must divide ``D``.

    Shape
    -----
    - ``tokens``: ``(B, T')`` with ``T' <= T``; ``marked``: ``(B,)``.
    - Output: logits ``(B, T', V * V)``, and with ``return_weights`` also the
      attention weights ``(B, H, T', T')``.

    where ``B`` is the batch size, ``T'`` the length of the sequences given,
    ``V`` the number of symbols and ``H`` the number of heads.

    Raises
    ------
    TypeError
        If a size is not an integer.
    ValueError
        If a size is too small or ``num_heads`` does not divide ``d_model``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = TwoRelationModel(vocab_size=6, seq_len=10, d_model=16, num_heads=4)
    >>> data = make_two_relation_data(np.random.default_rng(0), 3)
    >>> logits, weights = model(data.tokens, data.marked, return_weights=True)
    >>> logits.shape, weights.shape
    (torch.Size([3, 10, 36]), torch.Size([3, 4, 10, 10]))
    """

    def __init__(
        self,
        vocab_size: int = 6,
        seq_len: int = 10,
        d_model: int = 16,
        num_heads: int = 4,
    ) -> None:
        super().__init__()
        self.vocab_size = check_int(vocab_size, "vocab_size", minimum=2)
        self.seq_len = check_int(seq_len, "seq_len", minimum=2)
        d_model = check_int(d_model, "d_model", minimum=1)
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(seq_len, d_model)
        self.marker = nn.Embedding(
            2, d_model
        )  # row 1: "this one is marked"
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.readout = nn.Linear(d_model, vocab_size * vocab_size)

    def forward(
        self,
        tokens: torch.Tensor,
        marked: torch.Tensor,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return the logits of every position (and the attention weights).

        Parameters
        ----------
        tokens
            Token ids, int64 in ``[0, V)``.
        marked
            The marked position of each sequence, int64 in ``[0, T')``.
        return_weights
            Also return the per-head attention weights.

        Returns
        -------
        torch.Tensor or tuple of torch.Tensor
            Logits ``(B, T', V * V)``, or ``(logits, weights)`` with weights
            ``(B, H, T', T')``. The logits at position 0 answer nothing (it
            has no previous token); training and scoring skip them.

        Raises
        ------
        TypeError
            If ``tokens`` or ``marked`` is not an int64 tensor, or
            ``return_weights`` not a bool.
        ValueError
            If a shape is wrong or an entry is out of range.
        """
        self._check_inputs(tokens, marked)
        return_weights = check_bool(return_weights, "return_weights")
        _, T = tokens.shape  # (B, T)
        positions = torch.arange(T, device=tokens.device)  # (T,)
        # 1 at each sequence's marked position, 0 elsewhere: (B, T)
        is_marked = (positions == marked[:, None]).long()
        x = self.token(tokens) + self.position(positions)  # (B, T, D)
        x = x + self.marker(is_marked)  # the marker vector at the mark
        out, weights = self.attention(x, x, x, return_weights=True)
        # out: (B, T, D), weights: (B, H, T, T)
        logits = self.readout(out)  # (B, T, V * V)
        if return_weights:
            return logits, weights
        return logits

    def _check_inputs(self, tokens: object, marked: object) -> None:
        """Raise unless ``tokens`` and ``marked`` fit the model's sizes."""
        tokens = _check_index_tensor(
            tokens,
            "tokens",
            ndim=2,
            upper=self.vocab_size,
            upper_name="vocab_size",
        )
        B, T = tokens.shape
        if not 1 <= T <= self.seq_len:
            raise ValueError(
                f"tokens must have between 1 and seq_len = {self.seq_len} positions, "
                f"got shape {tuple(tokens.shape)}"
            )
        marked = _check_index_tensor(
            marked, "marked", ndim=1, upper=T, upper_name="T"
        )
        if marked.shape[0] != B:
            raise ValueError(
                f"marked must hold one position per sequence ({B}), "
                f"got shape {tuple(marked.shape)}"
            )


def head_focus(
    weights: torch.Tensor, marked: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """How much weight each head gives the previous token and the marked token.

    For every head, the attention weight that query ``t`` gives key
    ``t - 1`` (the previous token) and the weight it gives the marked
    position, averaged over the sequences and over the queries ``t = 1`` to
    ``T - 1`` (the positions that are scored). A head that fetches the
    previous token scores close to 1 on the first; one that fetches the
    marked token, close to 1 on the second. Where ``t - 1`` is the marked
    position the same weight counts for both.

    Parameters
    ----------
    weights
        Per-head attention weights, each row summing to 1.
    marked
        The marked position of each sequence, int64 in ``[0, T)``.

    Returns
    -------
    previous : torch.Tensor
        Mean weight on the previous token, one value per head.
    marked : torch.Tensor
        Mean weight on the marked token, one value per head.

    Shape
    -----
    - ``weights``: ``(B, H, T, T)``; ``marked``: ``(B,)``.
    - Output: ``(H,)`` and ``(H,)``.

    where ``B`` is the batch size, ``H`` the number of heads and ``T`` the
    sequence length.

    Raises
    ------
    TypeError
        If ``weights`` is not a floating-point tensor or ``marked`` not an
        int64 tensor.
    ValueError
        If ``weights`` is not square in its last two axes, ``T < 2``, or
        ``marked`` has the wrong length or an entry outside ``[0, T)``.

    Examples
    --------
    >>> T = 4
    >>> previous_token = torch.eye(T).roll(-1, dims=1)  # query t looks at t - 1
    >>> marked_token = torch.zeros(T, T).index_fill(1, torch.tensor([2]), 1.0)
    >>> weights = torch.stack([previous_token, marked_token])[None]  # (1, 2, T, T)
    >>> previous, marked = head_focus(weights, torch.tensor([2]))
    >>> previous.tolist(), marked.tolist()
    ([1.0, 0.3333333432674408], [0.3333333432674408, 1.0])
    """
    weights = check_tensor(weights, "weights", ndim=4)
    B, _, T, T_k = weights.shape  # (B, H, T, T)
    if T_k != T or T < 2:
        raise ValueError(
            "weights must have shape (B, H, T, T) with T >= 2, "
            f"got shape {tuple(weights.shape)}"
        )
    marked = _check_index_tensor(
        marked, "marked", ndim=1, upper=T, upper_name="T"
    )
    if marked.shape[0] != B:
        raise ValueError(
            f"marked must hold one position per sequence ({B}), "
            f"got shape {tuple(marked.shape)}"
        )
    queries = torch.arange(1, T, device=weights.device)  # t = 1 .. T - 1
    # weight of query t on key t - 1: (B, H, T - 1)
    on_previous = weights[:, :, queries, queries - 1]
    # weight of every query on the marked key: (B, H, T)
    on_marked = weights[torch.arange(B), :, :, marked]
    on_marked = on_marked[:, :, 1:]  # (B, H, T - 1), queries 1 .. T - 1
    return on_previous.mean(dim=(0, 2)), on_marked.mean(dim=(0, 2))


@dataclass
class HeadsRun:
    """The record of one training run of the two-relation task.

    Attributes
    ----------
    num_heads
        Number of heads ``H``.
    seed
        The torch seed of the model's initialisation.
    losses
        Training loss (cross-entropy) before each step's update.
    test_accuracy
        Fraction of the test positions whose pair is named exactly.
    previous_focus, marked_focus
        :func:`head_focus` on the test set, one value per head.
    seconds
        Wall-clock time of the training loop.
    model_state
        The trained model's ``state_dict``, on the CPU;
        :meth:`trained_model` rebuilds the model from it.
    """

    num_heads: int
    seed: int
    losses: list[float] = field(repr=False)
    test_accuracy: float
    previous_focus: list[float]
    marked_focus: list[float]
    seconds: float
    model_state: dict[str, torch.Tensor] = field(
        repr=False, compare=False
    )

    def trained_model(self) -> TwoRelationModel:
        """Rebuild the trained :class:`TwoRelationModel` of this run, in eval mode.

        Returns
        -------
        TwoRelationModel
            A new model on the CPU holding a copy of the trained weights.

        Raises
        ------
        ValueError
            If the record holds no trained weights.

        Examples
        --------
        >>> run = train_two_relation(num_heads=4, seed=0, steps=2)
        >>> run.trained_model().attention.num_heads
        4
        """
        if not self.model_state:
            raise ValueError(
                "model_state must hold the trained weights, got an empty dict"
            )
        V = self.model_state["token.weight"].shape[0]  # (V, D)
        T, D = self.model_state["position.weight"].shape  # (T, D)
        model = TwoRelationModel(V, T, D, self.num_heads)
        model.load_state_dict(self.model_state)
        return model.eval()


def train_two_relation(
    num_heads: int,
    seed: int,
    *,
    d_model: int = 16,
    steps: int = 150,
    lr: float = 0.05,
    device: torch.device | str | None = None,
) -> HeadsRun:
    """Train a :class:`TwoRelationModel` on the two-relation task and evaluate it.

    The data come from :func:`make_two_relation_splits` (``T = 10``,
    ``V = 6``, NumPy ``default_rng(0)``); ``seed`` seeds only the model's
    initialisation. Training is full-batch Adam on the cross-entropy of
    positions 1 to ``T - 1`` and draws no random numbers, so on the CPU a
    run is reproducible for a given seed (with the same number of threads).

    Parameters
    ----------
    num_heads
        Number of heads ``H``; it must divide ``d_model``.
    seed
        Seed for the model's initial weights.
    d_model
        Model width ``D``, the same whatever ``H`` is.
    steps
        Number of full-batch updates.
    lr
        Adam's learning rate.
    device
        Where to train (default: the CPU).

    Returns
    -------
    HeadsRun
        The loss curve, the test accuracy, each head's focus on the two
        targets, and the trained weights.

    Shape
    -----
    Training tokens ``(256, 10)``, test tokens ``(500, 10)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``num_heads`` does not divide ``d_model``, ``steps < 1``,
        ``lr <= 0`` or ``seed < 0``.

    Examples
    --------
    >>> run = train_two_relation(num_heads=4, seed=0, steps=5)
    >>> len(run.losses), len(run.previous_focus), 0.0 <= run.test_accuracy <= 1.0
    (5, 4, True)
    """
    num_heads = check_int(num_heads, "num_heads", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    steps = check_int(steps, "steps", minimum=1)
    lr = check_real(lr, "lr", strict=True)
    device = check_device(device, "device")

    train, test = make_two_relation_splits()
    train, test = train.to(device), test.to(device)
    model = seeded(
        seed,
        lambda: TwoRelationModel(
            train.vocab_size, train.tokens.shape[1], d_model, num_heads
        ),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    losses: list[float] = []
    start = time.perf_counter()
    for _ in range(steps):
        optimizer.zero_grad()
        logits = model(train.tokens, train.marked)  # (B, T, V * V)
        logits = logits[:, 1:]  # position 0 has no previous token
        loss = F.cross_entropy(
            logits.flatten(0, 1), train.labels.flatten()
        )
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        logits, weights = model(
            test.tokens, test.marked, return_weights=True
        )
        guesses = logits[:, 1:].argmax(dim=-1)  # (B, T - 1)
        test_accuracy = (guesses == test.labels).float().mean().item()
        previous, marked = head_focus(weights, test.marked)
    return HeadsRun(
        num_heads=num_heads,
        seed=seed,
        losses=losses,
        test_accuracy=test_accuracy,
        previous_focus=previous.tolist(),
        marked_focus=marked.tolist(),
        seconds=seconds,
        model_state={
            name: t.detach().cpu().clone()
            for name, t in model.state_dict().items()
        },
    )


@stored
def run_heads_grid(
    head_counts: Iterable[int] = (1, 4),
    seeds: Iterable[int] = range(5),
    *,
    d_model: int = 16,
    steps: int = 150,
    lr: float = 0.05,
    device: torch.device | str | None = None,
    workers: int | None = None,
) -> list[HeadsRun]:
    """Train the two-relation task for every number of heads and seed, at one width.

    Each combination is one :func:`train_two_relation`; the runs share
    nothing, so ``workers`` threads train them side by side, each giving
    exactly what it gives alone (see
    :func:`lessons_code.training.map_in_threads`). With the environment
    variable ``LESSONS_CODE_RESULTS`` naming a folder the result is saved
    there and reused by a later identical call (see
    :mod:`lessons_code.results`).

    Parameters
    ----------
    head_counts
        Numbers of heads ``H``; each must divide ``d_model``.
    seeds
        Model seeds (each at least 0).
    d_model, steps, lr, device
        As for :func:`train_two_relation`.
    workers
        Number of threads (default: the number of CPU cores, at most one per
        run).

    Returns
    -------
    list of HeadsRun
        One record per run, ordered by number of heads, then seed.

    Shape
    -----
    As for :func:`train_two_relation`.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``head_counts`` or ``seeds`` is empty or holds a value that is too
        small (and as for :func:`train_two_relation`).

    Examples
    --------
    >>> runs = run_heads_grid(head_counts=(1, 4), seeds=(0,), steps=2, workers=1)
    >>> [(run.num_heads, run.seed) for run in runs]
    [(1, 0), (4, 0)]
    """
    head_counts = check_int_list(head_counts, "head_counts", minimum=1)
    seeds = check_int_list(seeds, "seeds", minimum=0)
    settings = [(heads, seed) for heads in head_counts for seed in seeds]

    def run(setting: tuple[int, int]) -> HeadsRun:
        heads, seed = setting
        return train_two_relation(
            heads,
            seed,
            d_model=d_model,
            steps=steps,
            lr=lr,
            device=device,
        )

    return map_in_threads(run, settings, workers=workers)
