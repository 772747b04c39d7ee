"""Post-norm versus pre-norm at depth: loss curves and per-layer gradient norms.

A stack of many post-norm blocks passes every residual sum through a
LayerNorm, so the gradient that reaches an early block has gone through every
later LayerNorm; in a pre-norm stack each block adds to an untouched residual
stream, a direct path from the loss to every block, like the skip connections
of a ResNet (Xiong et al., 2020). This module trains both kinds of stack on
the same small, seeded task and records what the book plots.

The task is the order-detection task of :mod:`lessons_code.order_task` with
the positional encoding added: is ``A`` before ``B``? The model is the
positional encoding, an :class:`~lessons_code.blocks.Encoder` of
``num_layers`` blocks (pre-norm stacks end with a final LayerNorm, as usual),
a mean over positions and ``Linear(D, 1)``. Training is full-batch Adam with
``BCEWithLogitsLoss``, at a constant learning rate or after a linear warm-up.
:func:`run_depth_grid` trains every configuration of ``DEPTH_CONFIGS`` from
several seeds: both kinds of stack at the same settings, at Adam's rates
0.001 and 0.01, and at 0.01 after a warm-up. :func:`first_relapse` finds
where a run that had learned lost it again.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap

from lessons_code._checks import (
    check_bool,
    check_device,
    check_int,
    check_int_list,
    check_like,
    check_optimizer_and_scheduler,
    check_real,
    check_tensor,
)
from lessons_code.blocks import Encoder
from lessons_code.order_task import make_order_splits
from lessons_code.positional import positional_encoding
from lessons_code.results import stored
from lessons_code.training import accuracy, map_in_threads, seeded

__all__ = [
    "DEPTH_CONFIGS",
    "DEPTH_WARMUP",
    "DeepOrderClassifier",
    "DepthConfig",
    "DepthRun",
    "block_grad_norms",
    "first_relapse",
    "full_batch_step",
    "run_depth_grid",
    "train_deep_stack",
]


class DeepOrderClassifier(nn.Module):
    """Positional encoding -> ``num_layers`` encoder blocks -> mean -> ``Linear(D, 1)``.

    Parameters
    ----------
    num_layers
        Number of encoder blocks ``N``.
    norm_first
        Pre-norm blocks (and a final LayerNorm) if ``True``, post-norm blocks
        if ``False``.
    d_model
        Model width ``D``.
    num_heads
        Number of heads ``H``; it must divide ``D``.
    d_ff
        Hidden width of the feed-forward networks.

    Shape
    -----
    - Input: ``(B, T, D)``.
    - Output: ``(B,)``, one logit per sequence.

    where ``B`` is the batch size, ``T`` the sequence length and ``D`` the width.

    Raises
    ------
    TypeError
        If a size is not an integer or ``norm_first`` not a bool.
    ValueError
        If a size is smaller than 1 or ``num_heads`` does not divide ``d_model``.

    Examples
    --------
    >>> model = DeepOrderClassifier(num_layers=10, norm_first=True)
    >>> model(torch.randn(3, 8, 16)).shape
    torch.Size([3])
    >>> len(model.encoder.layers)
    10
    """

    def __init__(
        self,
        num_layers: int = 10,
        norm_first: bool = False,
        *,
        d_model: int = 16,
        num_heads: int = 4,
        d_ff: int = 32,
    ) -> None:
        super().__init__()
        self.encoder = Encoder(
            num_layers,
            d_model,
            num_heads,
            d_ff,
            norm_first,
            final_norm=norm_first,
        )
        self.d_model = d_model
        self.head = nn.Linear(d_model, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return one logit per sequence ``(B,)`` for inputs ``(B, T, D)``."""
        x = check_tensor(x, "x", ndim=3, last_dim=self.d_model)
        check_like(
            x,
            "x",
            like=self.head.weight,
            like_name="the module's parameters",
        )
        T, D = x.shape[1:]
        x = x + positional_encoding(
            T, D, dtype=x.dtype, device=x.device
        )  # (B, T, D)
        h = self.encoder(x)  # (B, T, D)
        return self.head(h.mean(dim=1)).squeeze(-1)  # (B,)


def block_grad_norms(encoder: Encoder) -> list[float]:
    """Gradient norm of each block of ``encoder``, input side first.

    The norm of block ``l`` is the Euclidean norm of the gradients of all its
    parameters taken together, ``sqrt(sum of squared entries)``. Call it after
    ``loss.backward()``.

    Parameters
    ----------
    encoder
        An :class:`~lessons_code.blocks.Encoder` whose gradients have been
        computed; parameters without a gradient count as 0.

    Returns
    -------
    list of float
        One norm per block, ``encoder.layers[0]`` first.

    Shape
    -----
    Output: a list of length ``N``, the number of blocks.

    Raises
    ------
    TypeError
        If ``encoder`` is not an :class:`~lessons_code.blocks.Encoder`.

    Examples
    --------
    >>> model = DeepOrderClassifier(num_layers=3, norm_first=True)
    >>> model(torch.randn(4, 8, 16)).sum().backward()
    >>> len(block_grad_norms(model.encoder))
    3
    """
    if not isinstance(encoder, Encoder):
        raise TypeError(
            f"encoder must be a lessons_code.blocks.Encoder, got {type(encoder).__name__}"
        )
    norms = []
    for block in encoder.layers:
        squares = [
            p.grad.pow(2).sum()
            for p in block.parameters()
            if p.grad is not None
        ]
        norms.append(
            float(torch.stack(squares).sum().sqrt()) if squares else 0.0
        )
    return norms


def full_batch_step(
    model: DeepOrderClassifier,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    record_norms: bool = True,
) -> tuple[float, list[float]]:
    """Take one training step of the depth study, recording each block's gradient norm.

    Clear the old gradients, compute the binary cross-entropy of the
    logits ``model(x)`` against the labels ``y``, backpropagate, record
    :func:`block_grad_norms` (the gradients the update is about to use),
    then one update of ``optimizer`` and one step of ``scheduler``. This
    is the body of the training loop of :func:`train_deep_stack`.

    Parameters
    ----------
    model
        The classifier, in training mode.
    optimizer
        The optimiser of ``model``'s parameters.
    scheduler
        The learning-rate schedule of ``optimizer``; it is stepped after
        the update.
    x
        Input sequences.
    y
        Labels, 0.0 or 1.0, of the dtype of ``x``.
    record_norms
        Compute the gradient norms; ``False`` returns an empty list instead.

    Returns
    -------
    loss : float
        The loss of the batch, computed before the update.
    norms : list of float
        The gradient norm of each block, block 1 (next to the input) first,
        before the update.

    Shape
    -----
    - ``x``: ``(B, T, D)``.
    - ``y``: ``(B,)``.

    where ``B`` is the batch size, ``T`` the sequence length and ``D`` the
    model's width.

    Raises
    ------
    TypeError
        If ``model`` is not a :class:`DeepOrderClassifier`, ``optimizer``
        not an optimiser, ``scheduler`` not a learning-rate scheduler,
        ``x`` or ``y`` not a floating-point tensor, or ``record_norms`` not
        a bool.
    ValueError
        If ``scheduler`` schedules another optimiser, ``x`` is not
        ``(B, T, D)`` or ``y`` not ``(B,)``.

    Examples
    --------
    >>> model = seeded(0, lambda: DeepOrderClassifier(num_layers=3))
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    >>> scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    >>> x = torch.randn(8, 5, 16, generator=torch.Generator().manual_seed(0))
    >>> y = torch.tensor([0.0, 1.0] * 4)
    >>> loss, norms = full_batch_step(model, optimizer, scheduler, x, y)
    >>> len(norms), all(norm > 0 for norm in norms)
    (3, True)
    """
    if not isinstance(model, DeepOrderClassifier):
        raise TypeError(
            "model must be a DeepOrderClassifier, got "
            f"{type(model).__name__}"
        )
    check_optimizer_and_scheduler(optimizer, scheduler)
    x = check_tensor(x, "x", ndim=3, last_dim=model.d_model)
    y = check_tensor(y, "y", ndim=1)
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"y must have shape ({x.shape[0]},), one label per sequence "
            f"of x, got shape {tuple(y.shape)}"
        )
    check_like(y, "y", like=x, like_name="x")
    record_norms = check_bool(record_norms, "record_norms")
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(model(x), y)
    loss.backward()
    norms = block_grad_norms(model.encoder) if record_norms else []
    optimizer.step()
    scheduler.step()  # the learning rate of the next update
    return loss.detach().item(), norms


@dataclass
class DepthRun:
    """The record of one run of the depth study, alone or in a batched grid.

    Attributes
    ----------
    norm_first
        ``True`` for the pre-norm stack, ``False`` for post-norm.
    num_layers
        Number of blocks ``N``.
    seed
        Seed of the model's initial weights.
    lr
        Adam's (peak) learning rate.
    warmup_steps
        Length of the linear warm-up (0: none).
    losses
        Training loss before each update (``steps`` values).
    learning_rates
        The learning rate of each update (``steps`` values).
    grad_norm_steps
        The steps at which gradient norms were recorded (0 = initialisation).
    grad_norms
        ``grad_norms[i][l]`` is the gradient norm of block ``l + 1`` (block 1
        is next to the input) at step ``grad_norm_steps[i]``.
    train_accuracy, test_accuracy
        Accuracies in ``[0, 1]`` after training.
    test_positive_share
        Share of the test sequences the trained model answers 1 ("``A``
        before ``B``"); 0 or 1 means it gives one answer for every sequence.
    seconds
        Wall-clock time of the training loop; for runs trained together
        (:func:`run_depth_grid`), the loop's time divided by their number.
    """

    norm_first: bool
    num_layers: int
    seed: int
    lr: float
    warmup_steps: int
    losses: list[float] = field(repr=False)
    learning_rates: list[float] = field(repr=False)
    grad_norm_steps: list[int] = field(repr=False)
    grad_norms: list[list[float]] = field(repr=False)
    train_accuracy: float
    test_accuracy: float
    test_positive_share: float
    seconds: float

    @property
    def first_last_ratios(self) -> list[float]:
        """Gradient norm of block 1 divided by that of block ``N``, at each recorded step.

        1 means the block next to the input gets as large a gradient as the
        block next to the loss; a value far below 1 means the gradient has
        shrunk on its way down the stack.
        """
        return [norms[0] / norms[-1] for norms in self.grad_norms]


def _check_depth_sizes(**sizes: object) -> dict[str, int]:
    """Check the sizes the depth study's trainers share; return them as integers.

    Every size is an integer of at least 1 (``seq_len`` at least 2), and
    ``num_heads`` must divide ``d_model``; a wrong one raises ``TypeError``
    or ``ValueError`` naming it.
    """
    checked = {
        name: check_int(
            value, name, minimum=2 if name == "seq_len" else 1
        )
        for name, value in sizes.items()
    }
    if checked["d_model"] % checked["num_heads"]:
        raise ValueError(
            f"num_heads must divide d_model = {checked['d_model']}, "
            f"got {checked['num_heads']}"
        )
    return checked


def _warmup_factor(warmup_steps: int) -> Callable[[int], float]:
    """Return the factor of update ``s`` (from 0) in a linear warm-up of ``warmup_steps``."""

    def factor(s: int) -> float:
        return min(1.0, (s + 1) / warmup_steps) if warmup_steps else 1.0

    return factor


def train_deep_stack(
    norm_first: bool,
    num_layers: int = 10,
    *,
    seed: int = 0,
    steps: int = 300,
    lr: float = 0.01,
    warmup_steps: int = 0,
    record_every: int = 10,
    n_train: int = 32,
    seq_len: int = 4,
    d_model: int = 8,
    num_heads: int = 2,
    d_ff: int = 16,
    device: torch.device | str | None = None,
) -> DepthRun:
    """Train a deep post-norm or pre-norm stack on the order task.

    The data come from :func:`lessons_code.order_task.make_order_splits`
    (``default_rng(3)``, tokens of width ``d_model``; ``n_train`` training
    and 150 test sequences). The model is :class:`DeepOrderClassifier`,
    initialised with torch seed ``seed`` inside ``torch.random.fork_rng``
    (the global random state is left as it was). Training is full-batch
    Adam (PyTorch's fused implementation), no gradient clipping. With
    ``warmup_steps = W > 0`` the learning rate rises linearly: update ``s``
    (counted from 0) uses ``lr * min(1, (s + 1) / W)``, so update ``W - 1``
    is the first at the full rate; with ``W = 0`` it is ``lr`` throughout.
    Gradient norms per block are recorded at step 0 (the initialisation,
    before any update) and every ``record_every`` steps. Each update is one
    :func:`full_batch_step`.

    Parameters
    ----------
    norm_first
        Pre-norm if ``True``, post-norm if ``False``.
    num_layers
        Number of blocks.
    seed
        Seed of the model's initial weights.
    steps
        Number of full-batch updates.
    lr
        Adam's learning rate (the peak rate after a warm-up).
    warmup_steps
        Number of updates of the linear warm-up; 0 for none.
    record_every
        Record the gradient norms every this many steps.
    n_train
        Number of training sequences.
    seq_len
        Sequence length ``T``, at least 2.
    d_model, num_heads, d_ff
        Width ``D``, number of heads ``H`` (it must divide ``D``) and
        feed-forward width of every block.
    device
        Where to train (default: the CPU).

    Returns
    -------
    DepthRun
        The loss curve, the gradient norms and the final accuracies.

    Shape
    -----
    Training inputs ``(n_train, T, D)``, test inputs ``(150, T, D)``, where
    ``T`` is the sequence length and ``D`` the width.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size is smaller than 1 (``seq_len`` smaller than 2),
        ``num_heads`` does not divide ``d_model``, ``warmup_steps`` or
        ``seed`` is negative, or ``lr <= 0``.

    Examples
    --------
    >>> run = train_deep_stack(True, num_layers=2, steps=3, warmup_steps=2, record_every=1)
    >>> len(run.losses), run.grad_norm_steps, len(run.grad_norms[0])
    (3, [0, 1, 2], 2)
    """
    norm_first = check_bool(norm_first, "norm_first")
    seed = check_int(seed, "seed", minimum=0)
    lr = check_real(lr, "lr", strict=True)
    warmup_steps = check_int(warmup_steps, "warmup_steps", minimum=0)
    (
        num_layers,
        steps,
        record_every,
        n_train,
        seq_len,
        d_model,
        num_heads,
        d_ff,
    ) = _check_depth_sizes(
        num_layers=num_layers,
        steps=steps,
        record_every=record_every,
        n_train=n_train,
        seq_len=seq_len,
        d_model=d_model,
        num_heads=num_heads,
        d_ff=d_ff,
    ).values()
    device = check_device(device, "device")

    data = make_order_splits(seq_len, d_model=d_model, n_train=n_train)
    data = data.to(device)
    x_train, y_train = data.x_train, data.y_train
    x_test, y_test = data.x_test, data.y_test
    model = seeded(
        seed,
        lambda: DeepOrderClassifier(
            num_layers,
            norm_first,
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
        ),
    ).to(device)
    # fused: one kernel updates every parameter, not a loop over them.
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)

    # Update s (counted from 0) uses lr * factor(s).
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, _warmup_factor(warmup_steps)
    )

    losses: list[float] = []
    learning_rates: list[float] = []
    grad_norm_steps: list[int] = []
    grad_norms: list[list[float]] = []
    start = time.perf_counter()
    model.train()
    for step in range(steps):
        record = step % record_every == 0
        learning_rates.append(optimizer.param_groups[0]["lr"])
        loss, norms = full_batch_step(
            model,
            optimizer,
            schedule,
            x_train,
            y_train,
            record_norms=record,
        )
        losses.append(loss)
        if record:
            grad_norm_steps.append(step)
            grad_norms.append(norms)
    seconds = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        train_accuracy = accuracy(model(x_train), y_train)
        test_logits = model(x_test)  # (150,)
        test_accuracy = accuracy(test_logits, y_test)
        positive_share = float((test_logits > 0).float().mean())
    return DepthRun(
        norm_first=norm_first,
        num_layers=num_layers,
        seed=seed,
        lr=lr,
        warmup_steps=warmup_steps,
        losses=losses,
        learning_rates=learning_rates,
        grad_norm_steps=grad_norm_steps,
        grad_norms=grad_norms,
        train_accuracy=train_accuracy,
        test_accuracy=test_accuracy,
        test_positive_share=positive_share,
        seconds=seconds,
    )


def _train_stacks_together(
    norm_first: bool,
    configs: Sequence[DepthConfig],
    seeds: Sequence[int],
    *,
    num_layers: int,
    steps: int,
    record_every: int,
    n_train: int,
    seq_len: int,
    d_model: int,
    num_heads: int,
    d_ff: int,
    device: torch.device,
) -> list[DepthRun]:
    """Train every ``(config, seed)`` run of one kind of stack as one batched computation.

    The runs have models of one shape, so their parameters are stacked: a
    ``(runs, P)`` tensor per configuration, row ``r`` holding run ``r``'s
    ``P`` parameters flattened in ``named_parameters`` order. ``vmap`` calls
    the model once per row in one batched call (the "model ensembling"
    recipe of ``torch.func``); the summed losses give every run the
    gradient of its own loss, since the runs share no parameter. One fused
    Adam takes the step, with a parameter group (and a learning-rate factor)
    per configuration: every run gets the update :func:`full_batch_step`
    gives it alone, computed in a different order (batched kernels), so a
    run agrees with its one-run loop to rounding, not bit for bit.
    Returns the runs config-major, seeds in the order given.
    """
    data = make_order_splits(seq_len, d_model=d_model, n_train=n_train)
    data = data.to(device)

    def build() -> DeepOrderClassifier:
        return DeepOrderClassifier(
            num_layers,
            norm_first,
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
        )

    # The same initial weights as train_deep_stack: seed by seed.
    models = [seeded(seed, build) for seed in seeds]
    names, shapes = zip(
        *((name, p.shape) for name, p in models[0].named_parameters()),
        strict=True,
    )
    sizes = [math.prod(shape) for shape in shapes]
    initial = torch.stack(
        [
            torch.cat(
                [p.detach().reshape(-1) for p in model.parameters()]
            )
            for model in models
        ]
    ).to(device)  # (seeds, P)
    # One leaf per configuration, so that each is a parameter group.
    stacks = [
        initial.clone().requires_grad_(True) for _ in configs
    ]  # each (seeds, P)
    template = copy.deepcopy(models[0]).to("meta")  # shapes, no storage

    def one_run(flat: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        params = {
            name: part.view(shape)
            for name, part, shape in zip(
                names, torch.split(flat, sizes), shapes, strict=True
            )
        }
        return functional_call(template, params, (x,))  # (B,)

    every_run = vmap(
        one_run, in_dims=(0, None)
    )  # (runs, P), x -> (runs, B)

    # The parameters of block l: one contiguous range of a row.
    bounds = [0, *itertools.accumulate(sizes)]
    block_ranges = []
    for layer in range(num_layers):
        prefix = f"encoder.layers.{layer}."
        inside = [
            i for i, name in enumerate(names) if name.startswith(prefix)
        ]
        block_ranges.append((bounds[inside[0]], bounds[inside[-1] + 1]))

    optimizer = torch.optim.Adam(
        [
            {"params": [stack], "lr": config.lr}
            for stack, config in zip(stacks, configs, strict=True)
        ],
        fused=True,
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        [_warmup_factor(config.warmup_steps) for config in configs],
    )
    n_runs = len(configs) * len(seeds)
    y_all = data.y_train.expand(n_runs, -1)  # (runs, B)
    losses: list[list[float]] = []
    learning_rates: list[list[float]] = []
    grad_norm_steps: list[int] = []
    grad_norms: list[list[list[float]]] = []
    start = time.perf_counter()
    for step in range(steps):
        learning_rates.append(
            [
                group["lr"]
                for group in optimizer.param_groups
                for _ in seeds
            ]
        )
        optimizer.zero_grad()
        logits = every_run(torch.cat(stacks), data.x_train)  # (runs, B)
        loss = F.binary_cross_entropy_with_logits(
            logits, y_all, reduction="none"
        ).mean(dim=1)  # (runs,)
        loss.sum().backward()  # each run: the gradient of its own loss
        losses.append(loss.detach().tolist())
        if step % record_every == 0:
            grads = torch.cat(
                [stack.grad for stack in stacks if stack.grad is not None]
            )
            norms = torch.stack(
                [
                    grads[:, a:b].pow(2).sum(dim=1)
                    for a, b in block_ranges
                ],
                dim=1,
            ).sqrt()  # (runs, N)
            grad_norm_steps.append(step)
            grad_norms.append(norms.tolist())
        optimizer.step()
        schedule.step()
    seconds = time.perf_counter() - start

    with torch.no_grad():
        final = torch.cat(stacks)
        train_logits = every_run(final, data.x_train)  # (runs, n_train)
        test_logits = every_run(final, data.x_test)  # (runs, 150)
    runs = []
    for r in range(n_runs):
        config = configs[r // len(seeds)]
        runs.append(
            DepthRun(
                norm_first=norm_first,
                num_layers=num_layers,
                seed=seeds[r % len(seeds)],
                lr=config.lr,
                warmup_steps=config.warmup_steps,
                losses=[row[r] for row in losses],
                learning_rates=[row[r] for row in learning_rates],
                grad_norm_steps=list(grad_norm_steps),
                grad_norms=[record[r] for record in grad_norms],
                train_accuracy=accuracy(train_logits[r], data.y_train),
                test_accuracy=accuracy(test_logits[r], data.y_test),
                test_positive_share=float(
                    (test_logits[r] > 0).float().mean()
                ),
                seconds=seconds / n_runs,
            )
        )
    return runs


def first_relapse(
    losses: Sequence[float],
    *,
    learned: float = 0.5 * math.log(2),
    relapsed: float = math.log(2),
) -> int | None:
    """Return the first step at which a run that had learned lost it again.

    A run has *learned* once its loss falls below ``learned``; it
    *relapses* at the first later step whose loss is ``relapsed`` or more.
    The defaults are half of ln 2 and ln 2 itself, the loss of answering
    50 % for every sequence: a relapse undoes at least half of what the run
    had gained over that constant answer.

    Parameters
    ----------
    losses
        The loss before each update, ``DepthRun.losses``.
    learned
        The loss below which the run counts as having learned.
    relapsed
        The loss at or above which a run that had learned counts as
        relapsed; greater than ``learned``.

    Returns
    -------
    int or None
        The step (index into ``losses``) of the relapse, or ``None`` if the
        run never learned or never relapsed.

    Raises
    ------
    TypeError
        If ``losses`` is not a sequence of real numbers, or a threshold not
        a real number.
    ValueError
        If a loss is negative or not finite, a threshold is not a finite
        number above 0, or ``relapsed <= learned``.

    Examples
    --------
    >>> first_relapse([0.69, 0.3, 0.1, 0.5, 0.9, 0.2])
    4
    >>> first_relapse([0.69, 0.5, 0.9]) is None  # never below ln 2 / 2
    True
    """
    if isinstance(losses, str | bytes) or not isinstance(
        losses, Sequence
    ):
        raise TypeError(
            f"losses must be a sequence of real numbers, got {type(losses).__name__}"
        )
    values = [
        check_real(loss, f"losses[{i}]") for i, loss in enumerate(losses)
    ]
    learned = check_real(learned, "learned", strict=True)
    relapsed = check_real(relapsed, "relapsed", strict=True)
    if relapsed <= learned:
        raise ValueError(
            f"relapsed must be greater than learned = {learned}, got {relapsed}"
        )
    has_learned = False
    for step, loss in enumerate(values):
        if has_learned and loss >= relapsed:
            return step
        has_learned = has_learned or loss < learned
    return None


@dataclass(frozen=True)
class DepthConfig:
    """One configuration of the depth study: where the norms go and how fast it learns.

    Parameters
    ----------
    label
        A name for tables and legends, e.g. ``"pre-norm"``.
    norm_first
        Pre-norm if ``True``, post-norm if ``False``.
    lr
        Adam's (peak) learning rate.
    warmup_steps
        Length of the linear warm-up; 0 for none.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``label`` is empty, ``lr <= 0`` or ``warmup_steps < 0``.

    Examples
    --------
    >>> DepthConfig("post-norm, warm-up", norm_first=False, lr=0.01, warmup_steps=40)
    DepthConfig(label='post-norm, warm-up', norm_first=False, lr=0.01, warmup_steps=40)
    """

    label: str
    norm_first: bool
    lr: float
    warmup_steps: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise TypeError(
                f"label must be a non-empty str, got {self.label!r}"
            )
        check_bool(self.norm_first, "norm_first")
        object.__setattr__(
            self, "lr", check_real(self.lr, "lr", strict=True)
        )
        check_int(self.warmup_steps, "warmup_steps", minimum=0)


#: The length of the warm-up in :data:`DEPTH_CONFIGS`.
DEPTH_WARMUP = 50

#: The configurations of the book's depth study, in the order it shows them:
#: post-norm, then pre-norm, each at Adam's rates 0.001 and 0.01 and at 0.01
#: after a linear warm-up of :data:`DEPTH_WARMUP` updates.
DEPTH_CONFIGS: tuple[DepthConfig, ...] = tuple(
    DepthConfig(
        f"{kind}, lr {lr}" + (", warm-up" if warmup else ""),
        norm_first=norm_first,
        lr=lr,
        warmup_steps=warmup,
    )
    for kind, norm_first in (("post-norm", False), ("pre-norm", True))
    for lr, warmup in ((0.001, 0), (0.01, 0), (0.01, DEPTH_WARMUP))
)


@stored
def run_depth_grid(
    configs: Sequence[DepthConfig] = DEPTH_CONFIGS,
    seeds: Iterable[int] = range(5),
    *,
    num_layers: int = 10,
    steps: int = 300,
    n_train: int = 32,
    seq_len: int = 4,
    d_model: int = 8,
    num_heads: int = 2,
    d_ff: int = 16,
    record_every: int = 10,
    device: torch.device | str | None = None,
    workers: int | None = None,
    batched: bool = True,
) -> dict[str, list[DepthRun]]:
    """Train every configuration from every seed: the depth study.

    Every combination is a run like :func:`train_deep_stack`'s, on the same
    data, with the same initial weights for a given seed and kind of stack. The
    models are tiny, so a step of one run is mostly Python and kernel-launch
    overhead; with ``batched`` (the default) all the runs of one kind of
    stack train together as one batched computation (``torch.func.vmap``
    over stacked parameters, one fused Adam with a parameter group per
    configuration; ``nox -s bench`` times both ways). A batched run takes the same
    updates as its :func:`train_deep_stack` run, summed in another order, so
    the two agree to rounding, not bit for bit; a run that becomes unstable
    can then part ways with it, as it can under any other change of
    arithmetic. With ``batched=False`` every run is its own
    :func:`train_deep_stack` call, exactly what it gives alone.

    The runs (or the kinds' batches) share nothing, so ``workers`` threads
    train them side by side (PyTorch releases Python's global interpreter
    lock inside its kernels); the seeding is done under a lock and training
    draws no random numbers, so threads change no result. On the CPU,
    ``torch.set_num_threads(1)`` before the call leaves the cores to the
    workers, which is faster for models this small.

    With the environment variable ``LESSONS_CODE_RESULTS`` naming a folder,
    the result is saved there and reused by a later identical call (see
    :mod:`lessons_code.results`).

    Parameters
    ----------
    configs
        The configurations (distinct labels).
    seeds
        Model seeds (each at least 0).
    num_layers, steps, n_train, seq_len, d_model, num_heads, d_ff, record_every, device
        As for :func:`train_deep_stack`, the same for every run.
    workers
        Number of threads (default: the number of CPU cores, at most one per
        run, or per kind of stack if ``batched``).
    batched
        Train the runs of each kind of stack together (the default), or
        each run on its own.

    Returns
    -------
    dict of str to list of DepthRun
        For each configuration's label, in the order of ``configs``, its runs
        in the order of ``seeds``.

    Shape
    -----
    As for :func:`train_deep_stack`.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If ``configs`` or ``seeds`` is empty, two labels are equal, a seed is
        negative, or ``workers`` is below 1 (and as for
        :func:`train_deep_stack`).

    Examples
    --------
    >>> grid = run_depth_grid(DEPTH_CONFIGS[-2:], seeds=(0, 1), num_layers=2, steps=3)
    >>> {label: [run.seed for run in runs] for label, runs in grid.items()}
    {'pre-norm, lr 0.01': [0, 1], 'pre-norm, lr 0.01, warm-up': [0, 1]}
    """
    if isinstance(configs, DepthConfig) or not isinstance(
        configs, Sequence
    ):
        raise TypeError(
            f"configs must be a sequence of DepthConfig, got {type(configs).__name__}"
        )
    for i, config in enumerate(configs):
        if not isinstance(config, DepthConfig):
            raise TypeError(
                f"configs[{i}] must be a DepthConfig, got {type(config).__name__}"
            )
    if not configs:
        raise ValueError("configs must not be empty")
    labels = [config.label for config in configs]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"configs must have distinct labels, got {labels}"
        )
    seeds = check_int_list(seeds, "seeds", minimum=0)
    batched = check_bool(batched, "batched")
    sizes = _check_depth_sizes(
        num_layers=num_layers,
        steps=steps,
        record_every=record_every,
        n_train=n_train,
        seq_len=seq_len,
        d_model=d_model,
        num_heads=num_heads,
        d_ff=d_ff,
    )
    device = check_device(device, "device")
    if batched:
        kinds = list(
            dict.fromkeys(config.norm_first for config in configs)
        )

        def train_kind(norm_first: bool) -> list[DepthRun]:
            return _train_stacks_together(
                norm_first,
                [c for c in configs if c.norm_first == norm_first],
                seeds,
                device=device,
                **sizes,
            )

        by_kind = dict(
            zip(
                kinds,
                map_in_threads(train_kind, kinds, workers=workers),
                strict=True,
            )
        )
        taken = {kind: iter(runs) for kind, runs in by_kind.items()}
        return {
            config.label: [next(taken[config.norm_first]) for _ in seeds]
            for config in configs
        }
    settings = [(config, seed) for config in configs for seed in seeds]

    def run(setting: tuple[DepthConfig, int]) -> DepthRun:
        config, seed = setting
        return train_deep_stack(
            config.norm_first,
            num_layers,
            seed=seed,
            steps=steps,
            lr=config.lr,
            warmup_steps=config.warmup_steps,
            record_every=record_every,
            n_train=n_train,
            seq_len=seq_len,
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
            device=device,
        )

    runs = map_in_threads(run, settings, workers=workers)
    return {
        label: runs[i * len(seeds) : (i + 1) * len(seeds)]
        for i, label in enumerate(labels)
    }
