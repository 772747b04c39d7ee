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
``BCEWithLogitsLoss`` and no warm-up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import nn

from lessons_code._checks import (
    check_bool,
    check_like,
    check_positive_int,
    check_real,
    check_tensor,
)
from lessons_code.blocks import Encoder
from lessons_code.order_task import _accuracy, _seeded, _splits_on
from lessons_code.positional import positional_encoding

__all__ = ["DeepOrderClassifier", "DepthRun", "block_grad_norms", "train_deep_stack"]


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
            num_layers, d_model, num_heads, d_ff, norm_first, final_norm=norm_first
        )
        self.d_model = d_model
        self.head = nn.Linear(d_model, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return one logit per sequence ``(B,)`` for inputs ``(B, T, D)``."""
        x = check_tensor(x, "x", ndim=3, last_dim=self.d_model)
        check_like(x, "x", like=self.head.weight, like_name="the module's parameters")
        T, D = x.shape[1:]
        x = x + positional_encoding(T, D).to(x)  # (B, T, D)
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
        squares = [p.grad.pow(2).sum() for p in block.parameters() if p.grad is not None]
        norms.append(float(torch.stack(squares).sum().sqrt()) if squares else 0.0)
    return norms


@dataclass
class DepthRun:
    """The record of one :func:`train_deep_stack` run.

    Attributes
    ----------
    norm_first
        ``True`` for the pre-norm stack, ``False`` for post-norm.
    num_layers
        Number of blocks.
    losses
        Training loss before each update (``steps`` values).
    grad_norm_steps
        The steps at which gradient norms were recorded (0 = initialisation).
    grad_norms
        ``grad_norms[i][l]`` is the gradient norm of block ``l`` (input side
        first) at step ``grad_norm_steps[i]``.
    train_accuracy, test_accuracy
        Accuracies in ``[0, 1]`` after training.
    seconds
        Wall-clock time of the training loop.
    """

    norm_first: bool
    num_layers: int
    losses: list[float] = field(repr=False)
    grad_norm_steps: list[int] = field(repr=False)
    grad_norms: list[list[float]] = field(repr=False)
    train_accuracy: float
    test_accuracy: float
    seconds: float


def train_deep_stack(
    norm_first: bool,
    num_layers: int = 10,
    *,
    seed: int = 0,
    steps: int = 100,
    lr: float = 0.01,
    record_every: int = 20,
    n_train: int = 64,
    seq_len: int = 8,
    device: torch.device | str | None = None,
) -> DepthRun:
    """Train a deep post-norm or pre-norm stack on the order task.

    The data come from :func:`lessons_code.order_task.make_order_splits`
    (``default_rng(3)``, ``D = 16``; ``n_train`` training and 150 test
    sequences). The model is :class:`DeepOrderClassifier` (``D = 16``,
    ``H = 4``, ``FF = 32``), initialised with torch seed ``seed`` inside
    ``torch.random.fork_rng`` (the global random state is left as it
    was). Full-batch Adam with a constant learning rate, no warm-up, no
    gradient clipping. Gradient norms per block are recorded at step 0 (the
    initialisation) and every ``record_every`` steps.

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
        Adam's learning rate.
    record_every
        Record the gradient norms every this many steps.
    n_train
        Number of training sequences.
    seq_len
        Sequence length ``T``, at least 2.
    device
        Where to train (default: the CPU).

    Returns
    -------
    DepthRun
        The loss curve, the gradient norms and the final accuracies.

    Shape
    -----
    Training inputs ``(n_train, T, 16)``, test inputs ``(150, T, 16)``, where
    ``T`` is the sequence length.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If a size is smaller than 1 (``seq_len`` smaller than 2) or ``lr <= 0``.

    Examples
    --------
    >>> run = train_deep_stack(norm_first=True, num_layers=2, steps=3, record_every=1)
    >>> len(run.losses), run.grad_norm_steps, len(run.grad_norms[0])
    (3, [0, 1, 2], 2)
    """
    norm_first = check_bool(norm_first, "norm_first")
    num_layers = check_positive_int(num_layers, "num_layers")
    seed = check_positive_int(seed, "seed", minimum=0)
    steps = check_positive_int(steps, "steps")
    lr = check_real(lr, "lr", strict=True)
    record_every = check_positive_int(record_every, "record_every")
    device = torch.device("cpu") if device is None else torch.device(device)

    x_train, y_train, x_test, y_test = _splits_on(device, seq_len, n_train=n_train)
    model = _seeded(seed, lambda: DeepOrderClassifier(num_layers, norm_first)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()

    losses: list[float] = []
    grad_norm_steps: list[int] = []
    grad_norms: list[list[float]] = []
    start = time.perf_counter()
    model.train()
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x_train), y_train)
        loss.backward()
        if step % record_every == 0:
            grad_norm_steps.append(step)
            grad_norms.append(block_grad_norms(model.encoder))
        optimizer.step()
        losses.append(loss.detach().item())
    seconds = time.perf_counter() - start

    model.eval()
    with torch.no_grad():
        train_accuracy = _accuracy(model(x_train), y_train)
        test_accuracy = _accuracy(model(x_test), y_test)
    return DepthRun(
        norm_first=norm_first,
        num_layers=num_layers,
        losses=losses,
        grad_norm_steps=grad_norm_steps,
        grad_norms=grad_norms,
        train_accuracy=train_accuracy,
        test_accuracy=test_accuracy,
        seconds=seconds,
    )
