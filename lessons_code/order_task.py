"""The order-detection experiment: why self-attention needs positional encoding.

Two fixed random vectors ``A`` and ``B`` are placed at two distinct random
positions of a sequence of small noise. The label is 1 if ``A`` comes before
``B`` and 0 otherwise. Both orders contain exactly the same vectors, so only
the *positions* can tell them apart.

The classifier is multi-head self-attention, a mean over positions, and a
small MLP. Self-attention without positional encoding is permutation
equivariant and the mean is permutation invariant, so without positional
encoding the classifier sees only *which* vectors occur, never their order:
it cannot beat chance. Adding the sinusoidal encoding to the input first
fixes that. With ``pos_kind="learned"`` the model adds learned position
vectors instead, rows of a trained table (an ``nn.Embedding``), so that the
two kinds can be compared on sequences longer than those of training.

The settings the book's positional-encoding lesson uses: ``T = 8``, ``D = 16``, noise 0.1,
400 training and 150 test sequences generated with NumPy ``default_rng(3)``
(which also draws ``A`` and ``B``), 4 heads, hidden width 16, Adam with
learning rate 0.01, 300 full-batch epochs, model seeds 0 to 4.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_device,
    check_int,
    check_int_list,
    check_like,
    check_real,
    check_tensor,
)
from lessons_code.multihead import MultiHeadAttention
from lessons_code.positional import positional_encoding
from lessons_code.results import stored
from lessons_code.training import accuracy, map_in_threads, seeded

__all__ = [
    "OrderClassifier",
    "OrderData",
    "OrderRun",
    "make_order_dataset",
    "make_order_splits",
    "run_order_experiment",
    "run_order_grid",
    "train_and_evaluate",
]

#: Seed of the NumPy generator that draws A, B and both data sets.
DATA_SEED = 3

#: The kinds of position vectors :class:`OrderClassifier` can add.
POS_KINDS = ("sinusoidal", "learned")


def _check_pos_kind(pos_kind: object, use_pos_enc: bool) -> str:
    """``pos_kind`` if it names one of :data:`POS_KINDS` that fits ``use_pos_enc``."""
    if not isinstance(pos_kind, str):
        raise TypeError(
            f"pos_kind must be one of {POS_KINDS}, got {pos_kind!r} of type "
            f"{type(pos_kind).__name__}"
        )
    if pos_kind not in POS_KINDS:
        raise ValueError(
            f"pos_kind must be one of {POS_KINDS}, got {pos_kind!r}"
        )
    if pos_kind == "learned" and not use_pos_enc:
        raise ValueError(
            "pos_kind='learned' needs use_pos_enc=True (without it no position "
            "vectors are added)"
        )
    return pos_kind


def make_order_dataset(
    rng: np.random.Generator,
    n: int,
    vec_a: torch.Tensor,
    vec_b: torch.Tensor,
    seq_len: int = 8,
    noise: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences of noise holding ``A`` and ``B`` at two distinct random positions.

    Every sequence starts as standard-normal noise times ``noise``; then
    ``vec_a`` replaces the token at one random position and ``vec_b`` the
    token at another. The pair of positions is uniform over all ordered pairs
    of distinct positions, so both labels are equally likely.

    Parameters
    ----------
    rng
        NumPy generator that draws the noise and the positions (it is
        advanced, so consecutive calls give different data).
    n
        Number of sequences.
    vec_a, vec_b
        The two marker vectors; they must have the same width ``D``.
    seq_len
        Sequence length ``T``, at least 2 (two distinct positions).
    noise
        Standard deviation of the background tokens.

    Returns
    -------
    x : torch.Tensor
        float32 sequences.
    y : torch.Tensor
        float32 labels: 1.0 if ``A`` comes before ``B``, else 0.0.

    Shape
    -----
    - ``vec_a``, ``vec_b``: ``(D,)``.
    - Output: ``x`` ``(n, T, D)`` and ``y`` ``(n,)``.

    where ``n`` is the number of sequences, ``T`` the sequence length and ``D``
    the width of the vectors.

    Raises
    ------
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``, a vector is not a
        floating-point tensor, or a size is not an integer.
    ValueError
        If ``n < 1``, ``seq_len < 2``, ``noise < 0``, a vector is not 1-D, or
        the vectors have different widths.

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> a, b = torch.ones(4), -torch.ones(4)
    >>> x, y = make_order_dataset(rng, 3, a, b, seq_len=5)
    >>> x.shape, y.shape
    (torch.Size([3, 5, 4]), torch.Size([3]))
    >>> [int(((x[i] == a).all(dim=1)).sum()) for i in range(3)]  # A occurs once per sequence
    [1, 1, 1]
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(3)), "
            f"got {type(rng).__name__}"
        )
    n = check_int(n, "n", minimum=1)
    seq_len = check_int(seq_len, "seq_len", minimum=2)
    noise = check_real(noise, "noise")
    vec_a = check_tensor(vec_a, "vec_a", ndim=1)
    vec_b = check_tensor(vec_b, "vec_b", ndim=1)
    if vec_b.shape != vec_a.shape:
        raise ValueError(
            f"vec_b must have the width of vec_a ({vec_a.shape[0]}), got width {vec_b.shape[0]}"
        )
    D = vec_a.shape[0]
    a = vec_a.detach().cpu().numpy()  # (D,)
    b = vec_b.detach().cpu().numpy()  # (D,)

    x = rng.standard_normal((n, seq_len, D)) * noise  # (n, T, D)
    # A random permutation of the positions per sequence; its first two
    # entries are two distinct, uniformly chosen positions: (n, 2).
    positions = np.argsort(rng.random((n, seq_len)), axis=1)[:, :2]
    pos_a, pos_b = positions[:, 0], positions[:, 1]  # (n,), (n,)
    rows = np.arange(n)
    x[rows, pos_a] = a
    x[rows, pos_b] = b
    y = (pos_a < pos_b).astype(np.float32)  # (n,)
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y)


@dataclass(frozen=True)
class OrderData:
    """The training and test sets of the order task, and the markers used.

    Attributes
    ----------
    x_train, y_train
        Training sequences ``(n_train, T, D)`` and labels ``(n_train,)``.
    x_test, y_test
        Test sequences ``(n_test, T, D)`` and labels ``(n_test,)``.
    vec_a, vec_b
        The marker vectors ``A`` and ``B``, ``(D,)``.
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    vec_a: torch.Tensor
    vec_b: torch.Tensor

    def to(self, device: torch.device | str | None) -> OrderData:
        """Return the same data with every tensor on ``device``.

        Parameters
        ----------
        device
            The target device (``None``: the CPU).

        Returns
        -------
        OrderData
            A new record; ``self`` is unchanged.

        Raises
        ------
        TypeError
            If ``device`` is not a device name or a ``torch.device``.
        ValueError
            If ``device`` names no device type.

        Examples
        --------
        >>> make_order_splits().to("cpu").x_train.device
        device(type='cpu')
        """
        device = check_device(device, "device")
        return OrderData(
            self.x_train.to(device),
            self.y_train.to(device),
            self.x_test.to(device),
            self.y_test.to(device),
            self.vec_a.to(device),
            self.vec_b.to(device),
        )


def make_order_splits(
    seq_len: int = 8,
    *,
    d_model: int = 16,
    n_train: int = 400,
    n_test: int = 150,
    noise: float = 0.1,
    data_seed: int = DATA_SEED,
) -> OrderData:
    """Build the book's training and test sets from one NumPy generator.

    ``numpy.random.default_rng(data_seed)`` draws ``A`` and ``B`` (standard
    normal, width ``D``), then the training set, then the test set, with
    :func:`make_order_dataset`.

    Parameters
    ----------
    seq_len
        Sequence length ``T``, at least 2.
    d_model
        Width ``D`` of the tokens.
    n_train, n_test
        Numbers of training and test sequences.
    noise
        Standard deviation of the background tokens.
    data_seed
        Seed of the NumPy generator.

    Returns
    -------
    OrderData
        float32 tensors on the CPU.

    Shape
    -----
    ``x_train``: ``(n_train, T, D)``, ``x_test``: ``(n_test, T, D)``, labels
    ``(n_train,)`` and ``(n_test,)``, where ``T`` is the sequence length and
    ``D`` the width.

    Raises
    ------
    TypeError
        If a size or the seed is not an integer.
    ValueError
        If a size is too small, ``noise < 0`` or ``data_seed < 0``.

    Examples
    --------
    >>> data = make_order_splits()
    >>> data.x_train.shape, data.x_test.shape
    (torch.Size([400, 8, 16]), torch.Size([150, 8, 16]))
    """
    seq_len = check_int(seq_len, "seq_len", minimum=2)
    d_model = check_int(d_model, "d_model", minimum=1)
    n_train = check_int(n_train, "n_train", minimum=1)
    n_test = check_int(n_test, "n_test", minimum=1)
    data_seed = check_int(data_seed, "data_seed", minimum=0)
    rng = np.random.default_rng(data_seed)
    # the two marker tokens A and B, (D,) each
    vec_a = torch.from_numpy(
        rng.standard_normal(d_model).astype(np.float32)
    )
    vec_b = torch.from_numpy(
        rng.standard_normal(d_model).astype(np.float32)
    )
    x_train, y_train = make_order_dataset(
        rng, n_train, vec_a, vec_b, seq_len, noise
    )
    x_test, y_test = make_order_dataset(
        rng, n_test, vec_a, vec_b, seq_len, noise
    )
    return OrderData(x_train, y_train, x_test, y_test, vec_a, vec_b)


class OrderClassifier(nn.Module):
    """Self-attention -> mean over positions -> ``Linear(D, 16)`` -> ReLU -> ``Linear(16, 1)``.

    With ``use_pos_enc`` position vectors are added to the input first;
    without them the model cannot see the order of its input. They are the
    sinusoidal positional encoding
    (:func:`lessons_code.positional.positional_encoding`) by default, or,
    with ``pos_kind="learned"``, the first ``T`` rows of a trained table of
    ``max_len`` rows (``positions``, an ``nn.Embedding`` drawn from a
    standard normal; ``None`` for the sinusoidal kind), which only takes
    sequences of up to ``max_len`` positions. The table is built after every
    other layer, so a seed gives the attention and the classifier the same
    initial weights with either kind.

    Parameters
    ----------
    d_model
        Width ``D`` of the tokens.
    num_heads
        Number of attention heads ``H``; it must divide ``D``.
    hidden
        Width of the hidden layer of the classifier head.
    use_pos_enc
        Add position vectors to the input.
    pos_kind
        Which ones: ``"sinusoidal"`` (the fixed encoding) or ``"learned"``
        (a trained table; needs ``use_pos_enc=True``).
    max_len
        Rows of the learned table: the longest sequence a learned model
        takes (unused by the sinusoidal encoding).

    Shape
    -----
    - Input: ``(B, T, D)``, with ``T <= max_len`` for learned positions.
    - Output: ``(B,)``, one logit per sequence (positive means "A before B").

    where ``B`` is the batch size, ``T`` the sequence length and ``D`` the width.

    Raises
    ------
    TypeError
        If a size is not an integer, ``use_pos_enc`` not a bool or
        ``pos_kind`` not a string.
    ValueError
        If a size is smaller than 1, ``num_heads`` does not divide
        ``d_model``, ``pos_kind`` is not one of the two kinds, or it is
        ``"learned"`` without ``use_pos_enc``.

    Examples
    --------
    >>> model = OrderClassifier(d_model=16, use_pos_enc=True)
    >>> model(torch.randn(10, 8, 16)).shape
    torch.Size([10])
    >>> learned = OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=32)
    >>> learned.positions.weight.shape, learned(torch.randn(10, 32, 16)).shape
    (torch.Size([32, 16]), torch.Size([10]))
    """

    def __init__(
        self,
        d_model: int = 16,
        num_heads: int = 4,
        hidden: int = 16,
        use_pos_enc: bool = False,
        *,
        pos_kind: str = "sinusoidal",
        max_len: int = 32,
    ) -> None:
        super().__init__()
        hidden = check_int(hidden, "hidden", minimum=1)
        use_pos_enc = check_bool(use_pos_enc, "use_pos_enc")
        pos_kind = _check_pos_kind(pos_kind, use_pos_enc)
        max_len = check_int(max_len, "max_len", minimum=1)
        self.use_pos_enc = use_pos_enc
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.d_model = self.attention.d_model
        self.head = nn.Sequential(
            nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )
        # learned positions: one trained vector per position, (max_len, D)
        self.positions: nn.Embedding | None = None
        if pos_kind == "learned":
            self.positions = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return one logit per sequence.

        Parameters
        ----------
        x
            A batch of sequences ``(B, T, D)``.

        Returns
        -------
        torch.Tensor
            Logits ``(B,)``.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype.
        ValueError
            If ``x`` is not ``(B, T, D)``, or has more positions than a
            learned table has rows.
        """
        x = self._check_input(x)
        x = self._add_positions(x)  # (B, T, D)
        h = self.attention(x, x, x)  # (B, T, D)
        # (B, D): the order of the positions is lost here
        pooled = h.mean(dim=1)
        return self.head(pooled).squeeze(-1)  # (B,)

    def _check_input(self, x: object) -> torch.Tensor:
        """``x`` as a checked ``(B, T, D)`` tensor of the parameters' dtype."""
        x = check_tensor(x, "x", ndim=3, last_dim=self.d_model)
        check_like(
            x,
            "x",
            like=self.attention.out_proj.weight,
            like_name="the module's parameters",
        )
        if (
            self.positions is not None
            and x.shape[1] > self.positions.num_embeddings
        ):
            raise ValueError(
                f"x must have at most {self.positions.num_embeddings} positions "
                f"(the rows of the learned table), got {x.shape[1]}"
            )
        return x

    def _add_positions(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` plus the model's position vectors, if it uses any."""
        _, T, D = x.shape  # (B, T, D)
        if not self.use_pos_enc:
            return x
        if self.positions is None:
            # the fixed sinusoidal table: (B, T, D) + (T, D)
            return x + positional_encoding(
                T, D, dtype=x.dtype, device=x.device
            )
        # the first T rows of the learned table: (B, T, D) + (T, D)
        return x + self.positions.weight[:T]

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """Return the per-head attention weights of the model's attention layer for ``x``.

        The same computation as the first steps of :meth:`forward` (the
        position vectors are added first if the model uses them), stopped at
        the attention weights. Call it under ``torch.no_grad()`` to look at them.

        Parameters
        ----------
        x
            A batch of sequences ``(B, T, D)``.

        Returns
        -------
        torch.Tensor
            Weights ``(B, H, T, T)``: ``weights[b, h, i, j]`` is how much
            query position ``i`` of sequence ``b`` attends to key position
            ``j`` in head ``h`` (head 1 of the book is index 0); every row
            sums to 1.

        Shape
        -----
        - ``x``: ``(B, T, D)``.
        - Output: ``(B, H, T, T)``.

        where ``B`` is the batch size, ``T`` the sequence length, ``D`` the
        width and ``H`` the number of heads.

        Raises
        ------
        TypeError
            If ``x`` is not a floating-point tensor of the parameters' dtype.
        ValueError
            If ``x`` is not ``(B, T, D)``, or has more positions than a
            learned table has rows.

        Examples
        --------
        >>> _ = torch.manual_seed(0)
        >>> model = OrderClassifier(d_model=16, num_heads=4, use_pos_enc=True)
        >>> with torch.no_grad():
        ...     weights = model.attention_weights(torch.randn(3, 8, 16))
        >>> weights.shape
        torch.Size([3, 4, 8, 8])
        >>> bool(torch.allclose(weights.sum(dim=-1), torch.ones(3, 4, 8)))
        True
        """
        x = self._check_input(x)
        x = self._add_positions(x)  # (B, T, D)
        # (B, H, T, T)
        _, weights = self.attention(x, x, x, return_weights=True)
        return weights


@dataclass
class OrderRun:
    """The record of one training run of the order task.

    Attributes
    ----------
    use_pos_enc
        Whether the positional encoding was added.
    seed
        The torch seed of the model's initialisation.
    seq_len
        Sequence length ``T``.
    losses
        Training loss (binary cross-entropy) before each epoch's update.
    train_accuracy, test_accuracy
        Accuracies in ``[0, 1]`` after training.
    seconds
        Wall-clock time of the training loop.
    model_state
        The trained model's ``state_dict``, on the CPU;
        :meth:`trained_model` rebuilds the model from it.
    pos_kind
        The kind of position vectors added, ``"sinusoidal"`` or
        ``"learned"`` (see :class:`OrderClassifier`).
    """

    use_pos_enc: bool
    seed: int
    seq_len: int
    losses: list[float] = field(repr=False)
    train_accuracy: float
    test_accuracy: float
    seconds: float
    model_state: dict[str, torch.Tensor] = field(
        repr=False, compare=False
    )
    pos_kind: str = "sinusoidal"

    def trained_model(self) -> OrderClassifier:
        """Rebuild the trained :class:`OrderClassifier` of this run, in eval mode.

        Returns
        -------
        OrderClassifier
            A new model on the CPU holding a copy of the trained weights
            (``use_pos_enc``, ``pos_kind`` and a learned table's rows as in
            the run), so it gives the run's test predictions again without
            training.

        Raises
        ------
        ValueError
            If the record holds no trained weights.

        Examples
        --------
        >>> run = run_order_experiment(use_pos_enc=True, seed=0, epochs=5)
        >>> model = run.trained_model()
        >>> data = make_order_splits()
        >>> with torch.no_grad():
        ...     accuracy = float(((model(data.x_test) > 0).float() == data.y_test).float().mean())
        >>> accuracy == run.test_accuracy
        True
        """
        if not self.model_state:
            raise ValueError(
                "model_state must hold the trained weights, got an empty dict"
            )
        # Linear(D, hidden): (hidden, D)
        d_model = self.model_state["head.0.weight"].shape[1]
        table = self.model_state.get("positions.weight")  # (max_len, D)
        model = OrderClassifier(
            d_model=d_model,
            use_pos_enc=self.use_pos_enc,
            pos_kind=self.pos_kind,
            max_len=32 if table is None else table.shape[0],
        )
        model.load_state_dict(self.model_state)
        return model.eval()


def run_order_experiment(
    use_pos_enc: bool,
    seed: int,
    *,
    seq_len: int = 8,
    epochs: int = 300,
    lr: float = 0.01,
    device: torch.device | str | None = None,
    pos_kind: str = "sinusoidal",
    max_len: int = 32,
) -> OrderRun:
    """Train an :class:`OrderClassifier` on the order task and evaluate it.

    The data come from :func:`make_order_splits` (NumPy ``default_rng(3)``,
    ``D = 16``, 400 training and 150 test sequences); ``seed`` seeds only the
    model's initialisation, inside ``torch.random.fork_rng``, so the
    global random state is left as it was. Training is full-batch Adam on
    ``BCEWithLogitsLoss`` and has no other randomness, so on the CPU a run is
    reproducible for a given seed (on the same machine and number of threads:
    the thread count can change the rounding of reductions, and so the last
    digits of a run).

    Parameters
    ----------
    use_pos_enc
        Add position vectors to the input.
    seed
        Seed for the model's initial weights.
    seq_len
        Sequence length ``T``, at least 2.
    epochs
        Number of full-batch updates.
    lr
        Adam's learning rate.
    device
        Where to train (default: the CPU).
    pos_kind
        ``"sinusoidal"`` (the fixed encoding) or ``"learned"`` (a trained
        table of ``max_len`` rows, of which training reaches only the first
        ``seq_len``); see :class:`OrderClassifier`.
    max_len
        Rows of the learned table, at least ``seq_len`` (unused by the
        sinusoidal encoding).

    Returns
    -------
    OrderRun
        The loss curve, the final accuracies and the trained weights.

    Shape
    -----
    Training inputs ``(400, T, 16)``, test inputs ``(150, T, 16)``, where ``T``
    is the sequence length.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``seq_len < 2``, ``epochs < 1``, ``lr <= 0`` or ``seed < 0``,
        ``pos_kind`` is not a kind :class:`OrderClassifier` knows, or a
        learned table has fewer than ``seq_len`` rows.

    Examples
    --------
    >>> run = run_order_experiment(use_pos_enc=True, seed=0, epochs=5)
    >>> len(run.losses), 0.0 <= run.test_accuracy <= 1.0
    (5, True)
    >>> learned = run_order_experiment(True, 0, epochs=5, pos_kind="learned")
    >>> learned.pos_kind, learned.trained_model().positions.weight.shape
    ('learned', torch.Size([32, 16]))
    """
    use_pos_enc = check_bool(use_pos_enc, "use_pos_enc")
    seed = check_int(seed, "seed", minimum=0)
    seq_len = check_int(seq_len, "seq_len", minimum=2)
    epochs = check_int(epochs, "epochs", minimum=1)
    lr = check_real(lr, "lr", strict=True)
    device = check_device(device, "device")
    pos_kind = _check_pos_kind(pos_kind, use_pos_enc)
    max_len = check_int(max_len, "max_len", minimum=1)
    if pos_kind == "learned" and max_len < seq_len:
        raise ValueError(
            f"max_len must be at least seq_len ({seq_len}) for learned "
            f"positions, got {max_len}"
        )

    data = make_order_splits(seq_len).to(device)
    x_train, y_train = data.x_train, data.y_train
    x_test, y_test = data.x_test, data.y_test
    d_model = x_train.shape[-1]
    model = seeded(
        seed,
        lambda: OrderClassifier(
            d_model=d_model,
            use_pos_enc=use_pos_enc,
            pos_kind=pos_kind,
            max_len=max_len,
        ),
    )
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()

    losses: list[float] = []
    start = time.perf_counter()
    model.train()
    for _ in range(epochs):
        optimizer.zero_grad()
        loss = loss_fn(model(x_train), y_train)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().item())
    seconds = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        train_accuracy = accuracy(model(x_train), y_train)
        test_accuracy = accuracy(model(x_test), y_test)
    return OrderRun(
        use_pos_enc=use_pos_enc,
        seed=seed,
        seq_len=seq_len,
        losses=losses,
        train_accuracy=train_accuracy,
        test_accuracy=test_accuracy,
        seconds=seconds,
        model_state={
            name: t.detach().cpu().clone()
            for name, t in model.state_dict().items()
        },
        pos_kind=pos_kind,
    )


@stored
def run_order_grid(
    seq_lens: Iterable[int] = (8,),
    seeds: Iterable[int] = range(5),
    *,
    epochs: int = 300,
    lr: float = 0.01,
    device: torch.device | str | None = None,
    workers: int | None = None,
) -> list[OrderRun]:
    """Train the order task for every sequence length, seed, without and with encoding.

    Each combination is one :func:`run_order_experiment`. The runs share
    nothing, so ``workers`` threads train them side by side: PyTorch releases
    Python's global interpreter lock inside its kernels, so on a machine with
    several cores the threads really run at the same time. Every run gives
    exactly what it gives alone (its seeding is done under a lock and training
    draws no random numbers), so the grid is as reproducible as a single run.

    On the CPU the models are so small that PyTorch's own intra-op threads
    mostly wait for each other; ``torch.set_num_threads(1)`` before the call
    leaves the cores to the workers, which is faster.

    With the environment variable ``LESSONS_CODE_RESULTS`` naming a folder,
    the result is saved there and reused by a later identical call (see
    :mod:`lessons_code.results`).

    Parameters
    ----------
    seq_lens
        Sequence lengths ``T`` (each at least 2).
    seeds
        Model seeds (each at least 0).
    epochs, lr, device
        As for :func:`run_order_experiment`.
    workers
        Number of threads (default: the number of CPU cores, at most one per
        run).

    Returns
    -------
    list of OrderRun
        One record per run, ordered by sequence length, then without before
        with the encoding, then seed.

    Shape
    -----
    As for :func:`run_order_experiment`, at every sequence length.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``seq_lens`` or ``seeds`` is empty, a sequence length is below 2,
        a seed below 0, or ``workers`` below 1 (and as for
        :func:`run_order_experiment`).

    Examples
    --------
    >>> runs = run_order_grid(seq_lens=(8,), seeds=(0, 1), epochs=3, workers=2)
    >>> [(run.seq_len, run.use_pos_enc, run.seed) for run in runs]
    [(8, False, 0), (8, False, 1), (8, True, 0), (8, True, 1)]
    """
    seq_lens = check_int_list(seq_lens, "seq_lens", minimum=2)
    seeds = check_int_list(seeds, "seeds", minimum=0)
    epochs = check_int(epochs, "epochs", minimum=1)
    lr = check_real(lr, "lr", strict=True)
    settings = [
        (use_pos_enc, seed, seq_len)
        for seq_len in seq_lens
        for use_pos_enc in (False, True)
        for seed in seeds
    ]

    def run(setting: tuple[bool, int, int]) -> OrderRun:
        use_pos_enc, seed, seq_len = setting
        return run_order_experiment(
            use_pos_enc,
            seed,
            seq_len=seq_len,
            epochs=epochs,
            lr=lr,
            device=device,
        )

    return map_in_threads(run, settings, workers=workers)


def train_and_evaluate(
    use_pos_enc: bool,
    seed: int,
    *,
    seq_len: int = 8,
    epochs: int = 300,
    lr: float = 0.01,
    device: torch.device | str | None = None,
) -> float:
    """Train on the order task and return the test accuracy.

    A shortcut for ``run_order_experiment(...).test_accuracy``; see
    :func:`run_order_experiment` for the settings.

    Parameters
    ----------
    use_pos_enc
        Add the sinusoidal positional encoding to the input.
    seed
        Seed for the model's initial weights.
    seq_len
        Sequence length ``T``, at least 2.
    epochs
        Number of full-batch updates.
    lr
        Adam's learning rate.
    device
        Where to train (default: the CPU).

    Returns
    -------
    float
        Test accuracy in ``[0, 1]``.

    Shape
    -----
    Training inputs ``(400, T, 16)``, test inputs ``(150, T, 16)``, where ``T``
    is the sequence length.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``seq_len < 2``, ``epochs < 1``, ``lr <= 0`` or ``seed < 0``.

    Examples
    --------
    >>> acc = train_and_evaluate(use_pos_enc=False, seed=0, epochs=5)
    >>> 0.0 <= acc <= 1.0
    True
    """
    run = run_order_experiment(
        use_pos_enc,
        seed,
        seq_len=seq_len,
        epochs=epochs,
        lr=lr,
        device=device,
    )
    return run.test_accuracy
