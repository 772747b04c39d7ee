"""Tests for :mod:`lessons_code.depth`."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from lessons_code.blocks import Encoder
from lessons_code.depth import (
    DEPTH_CONFIGS,
    DEPTH_WARMUP,
    DeepOrderClassifier,
    DepthConfig,
    DepthRun,
    block_grad_norms,
    first_relapse,
    full_batch_step,
    run_depth_grid,
    train_deep_stack,
)
from lessons_code.order_task import make_order_splits
from lessons_code.training import seeded


def test_block_grad_norms_match_a_direct_computation() -> None:
    torch.manual_seed(0)
    model = DeepOrderClassifier(num_layers=3, norm_first=False)
    model(torch.randn(4, 8, 16)).pow(2).sum().backward()
    norms = block_grad_norms(model.encoder)
    assert len(norms) == 3
    for block, norm in zip(model.encoder.layers, norms, strict=True):
        flat = torch.cat([p.grad.flatten() for p in block.parameters()])
        assert norm == pytest.approx(float(flat.norm()), rel=1e-5)
    assert block_grad_norms(Encoder(2, 16, 4, 32)) == [0.0, 0.0]  # no backward yet


def test_deep_classifier_structure() -> None:
    pre = DeepOrderClassifier(num_layers=10, norm_first=True)
    post = DeepOrderClassifier(num_layers=10, norm_first=False)
    assert len(pre.encoder.layers) == len(post.encoder.layers) == 10
    assert all(block.norm_first for block in pre.encoder.layers)
    assert not any(block.norm_first for block in post.encoder.layers)
    assert pre.encoder.final_norm is not None
    assert post.encoder.final_norm is None
    assert pre(torch.randn(2, 8, 16)).shape == (2,)


# The sizes of the book's first depth study (D = 16, T = 8, 64 sequences), where
# post-norm at lr 0.01 collapses within a few updates.
WIDE = {"n_train": 64, "seq_len": 8, "d_model": 16, "num_heads": 4, "d_ff": 32}


@pytest.fixture(scope="module")
def runs() -> dict[bool, object]:
    """Ten-layer stacks, 21 updates each, gradient norms at steps 0, 10 and 20."""
    return {
        norm_first: train_deep_stack(norm_first, num_layers=10, steps=21, record_every=10, **WIDE)
        for norm_first in (False, True)
    }


def test_run_records(runs: dict) -> None:
    for norm_first, run in runs.items():
        assert run.norm_first is norm_first
        assert (run.num_layers, run.seed, run.lr, run.warmup_steps) == (10, 0, 0.01, 0)
        assert len(run.losses) == len(run.learning_rates) == 21
        assert run.grad_norm_steps == [0, 10, 20]
        assert len(run.grad_norms) == 3
        assert all(len(norms) == 10 for norms in run.grad_norms)
        assert 0.0 <= run.test_accuracy <= 1.0
        assert 0.0 <= run.test_positive_share <= 1.0
        first_last = [norms[0] / norms[-1] for norms in run.grad_norms]
        assert run.first_last_ratios == first_last


def test_post_norm_is_not_vanishing_at_initialisation_but_collapses_in_training(
    runs: dict,
) -> None:
    post, pre = runs[False], runs[True]
    # At initialisation both stacks hand block 1 a gradient of the order of block 10's.
    assert 0.1 < post.first_last_ratios[0] < 10
    assert 0.1 < pre.first_last_ratios[0] < 10
    # After the first updates at lr 0.01 the post-norm ratio has collapsed; pre-norm's has not.
    assert post.first_last_ratios[-1] < 1e-2
    assert 0.1 < pre.first_last_ratios[-1] < 10


def test_warmup_follows_pytorchs_linear_schedule() -> None:
    # Oracle: LinearLR from lr / W to lr over W - 1 steps gives lr * (s + 1) / W, then lr.
    run = train_deep_stack(False, num_layers=1, steps=7, lr=0.01, warmup_steps=4)
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.01)
    oracle = torch.optim.lr_scheduler.LinearLR(optimizer, 1 / 4, 1.0, total_iters=3)
    expected = []
    for _ in range(7):
        expected.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        oracle.step()
    assert run.learning_rates == pytest.approx(expected, rel=1e-12)
    assert run.learning_rates[0] == pytest.approx(0.0025)
    constant = train_deep_stack(False, num_layers=1, steps=3, lr=0.01)
    assert constant.learning_rates == [0.01] * 3
    # A one-step warm-up is no warm-up: the same run, bit for bit.
    one = train_deep_stack(False, num_layers=1, steps=3, lr=0.01, warmup_steps=1)
    assert one.losses == constant.losses


def _alone(config: DepthConfig, seed: int, steps: int, record_every: int = 10) -> DepthRun:
    return train_deep_stack(
        config.norm_first,
        2,
        seed=seed,
        steps=steps,
        record_every=record_every,
        lr=config.lr,
        warmup_steps=config.warmup_steps,
    )


def test_grid_runs_every_setting_in_order_and_matches_single_runs() -> None:
    configs = (DEPTH_CONFIGS[2], DEPTH_CONFIGS[4])
    state = torch.random.get_rng_state()
    grid = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=4, workers=4, batched=False)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert list(grid) == ["post-norm, lr 0.01, warm-up", "pre-norm, lr 0.01"]
    for config in configs:
        runs = grid[config.label]
        assert [run.seed for run in runs] == [2, 0]
        for run in runs:
            assert (run.norm_first, run.lr) == (config.norm_first, config.lr)
            assert run.warmup_steps == config.warmup_steps
            alone = _alone(config, run.seed, steps=4)
            assert run.losses == alone.losses  # bit for bit: threads change nothing
            assert run.grad_norms == alone.grad_norms
    serial = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=4, workers=1, batched=False)
    label = "pre-norm, lr 0.01"
    assert [r.losses for r in serial[label]] == [r.losses for r in grid[label]]


def test_batched_grid_takes_each_runs_own_updates() -> None:
    # Three configurations of one kind (three parameter groups, two with a
    # warm-up of their own) and one of the other kind, seeds out of order.
    configs = (
        DEPTH_CONFIGS[0],
        DepthConfig("post-norm, short warm-up", norm_first=False, lr=0.01, warmup_steps=3),
        DEPTH_CONFIGS[2],
        DEPTH_CONFIGS[3],
    )
    state = torch.random.get_rng_state()
    grid = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=6, record_every=2, workers=2)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert list(grid) == [config.label for config in configs]
    for config in configs:
        runs = grid[config.label]
        assert [run.seed for run in runs] == [2, 0]
        for run in runs:
            alone = _alone(config, run.seed, steps=6, record_every=2)
            assert (run.norm_first, run.lr, run.warmup_steps) == (
                alone.norm_first,
                alone.lr,
                alone.warmup_steps,
            )
            assert run.learning_rates == alone.learning_rates
            assert run.grad_norm_steps == [0, 2, 4]
            # The same updates in another order of summation: equal to rounding.
            assert run.losses == pytest.approx(alone.losses, rel=1e-4, abs=1e-6)
            assert run.grad_norms[0] == pytest.approx(alone.grad_norms[0], rel=1e-4)
            assert run.grad_norms[-1] == pytest.approx(alone.grad_norms[-1], rel=1e-3)
            assert run.test_positive_share == alone.test_positive_share
            assert run.losses != _alone(config, 1 - run.seed // 2, steps=6).losses
    # One thread or two: the same batches, the same numbers.
    serial = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=6, record_every=2, workers=1)
    assert [r.losses for r in serial[configs[1].label]] == [
        r.losses for r in grid[configs[1].label]
    ]


def test_grid_rejects_bad_batched_and_sizes() -> None:
    with pytest.raises(TypeError, match="batched"):
        run_depth_grid(DEPTH_CONFIGS[:1], seeds=(0,), steps=1, batched="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_heads"):
        run_depth_grid(DEPTH_CONFIGS[:1], seeds=(0,), steps=1, d_model=8, num_heads=3)
    with pytest.raises(ValueError, match="steps"):
        run_depth_grid(DEPTH_CONFIGS[:1], seeds=(0,), steps=0)


def test_depth_configs_of_the_book() -> None:
    labels = [config.label for config in DEPTH_CONFIGS]
    assert labels == [
        "post-norm, lr 0.001",
        "post-norm, lr 0.01",
        "post-norm, lr 0.01, warm-up",
        "pre-norm, lr 0.001",
        "pre-norm, lr 0.01",
        "pre-norm, lr 0.01, warm-up",
    ]
    # A controlled grid: both kinds of stack at exactly the same settings.
    post = [c for c in DEPTH_CONFIGS if not c.norm_first]
    pre = [c for c in DEPTH_CONFIGS if c.norm_first]
    assert [(c.lr, c.warmup_steps) for c in post] == [(c.lr, c.warmup_steps) for c in pre]
    assert [(c.lr, c.warmup_steps) for c in post] == [
        (0.001, 0),
        (0.01, 0),
        (0.01, DEPTH_WARMUP),
    ]
    assert DEPTH_WARMUP > 1


def test_deep_stack_is_deterministic() -> None:
    first = train_deep_stack(True, num_layers=2, steps=3)
    second = train_deep_stack(True, num_layers=2, steps=3)
    assert first.losses == second.losses
    assert first.grad_norms == second.grad_norms


def test_errors() -> None:
    with pytest.raises(TypeError, match="norm_first must be a bool"):
        train_deep_stack(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_layers must be an integer >= 1"):
        train_deep_stack(True, num_layers=0)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        train_deep_stack(True, steps=0)
    with pytest.raises(ValueError, match="lr must be a finite real number > 0"):
        train_deep_stack(True, lr=-1.0)
    with pytest.raises(ValueError, match="record_every must be an integer >= 1"):
        train_deep_stack(True, record_every=0)
    with pytest.raises(ValueError, match="warmup_steps must be an integer >= 0"):
        train_deep_stack(True, warmup_steps=-1)
    with pytest.raises(ValueError, match="n_train must be an integer >= 1"):
        train_deep_stack(True, n_train=0)
    with pytest.raises(ValueError, match="d_model must be an integer >= 1"):
        train_deep_stack(True, d_model=0)
    with pytest.raises(TypeError, match="d_ff must be an integer"):
        train_deep_stack(True, d_ff=16.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_heads must divide d_model = 8, got 3"):
        train_deep_stack(True, num_heads=3)
    with pytest.raises(TypeError, match=r"encoder must be a lessons_code\.blocks\.Encoder"):
        block_grad_norms(torch.nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        DeepOrderClassifier(2)(torch.randn(2, 8, 8))


def test_grid_and_config_errors() -> None:
    with pytest.raises(TypeError, match="configs must be a sequence of DepthConfig"):
        run_depth_grid(DEPTH_CONFIGS[0])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"configs\[0\] must be a DepthConfig"):
        run_depth_grid([("post-norm", False, 0.01)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="configs must not be empty"):
        run_depth_grid(())
    with pytest.raises(ValueError, match="configs must have distinct labels"):
        run_depth_grid((DEPTH_CONFIGS[0], DEPTH_CONFIGS[0]))
    with pytest.raises(ValueError, match="seeds must not be empty"):
        run_depth_grid(seeds=())
    with pytest.raises(ValueError, match=r"seeds\[1\] must be an integer >= 0"):
        run_depth_grid(seeds=(0, -1))
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        run_depth_grid(seeds=(0,), workers=0)
    with pytest.raises(TypeError, match="label must be a non-empty str"):
        DepthConfig("", norm_first=True, lr=0.01)
    with pytest.raises(TypeError, match="norm_first must be a bool"):
        DepthConfig("x", norm_first=1, lr=0.01)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lr must be a finite real number > 0"):
        DepthConfig("x", norm_first=True, lr=0.0)
    with pytest.raises(ValueError, match="warmup_steps must be an integer >= 0"):
        DepthConfig("x", norm_first=True, lr=0.01, warmup_steps=-2)


# -- one training step --------------------------------------------------------------


def test_train_deep_stack_is_a_loop_of_full_batch_steps() -> None:
    # The same run by hand, as train_deep_stack sets it up, every update one call.
    run = train_deep_stack(False, num_layers=3, seed=1, steps=12, warmup_steps=4, record_every=5)
    data = make_order_splits(4, d_model=8, n_train=32)
    model = seeded(1, lambda: DeepOrderClassifier(3, False, d_model=8, num_heads=2, d_ff=16))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, fused=True)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 4))
    losses, norms_at = [], {}
    model.train()
    for step in range(12):
        loss, norms = full_batch_step(
            model, optimizer, scheduler, data.x_train, data.y_train, record_norms=step % 5 == 0
        )
        losses.append(loss)
        if norms:
            norms_at[step] = norms
    assert run.losses == losses  # bit for bit
    assert run.grad_norm_steps == list(norms_at) == [0, 5, 10]
    assert run.grad_norms == list(norms_at.values())
    model.eval()
    with torch.no_grad():
        answers = model(data.x_test) > 0
    assert run.test_positive_share == float(answers.float().mean())


def test_full_batch_step_records_the_gradients_it_updates_with() -> None:
    model = seeded(0, lambda: DeepOrderClassifier(num_layers=2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5**s)
    x, y = torch.randn(6, 5, 16), torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    blocks = model.encoder.layers
    before = [[p.detach().clone() for p in block.parameters()] for block in blocks]
    with torch.no_grad():
        expected = torch.nn.BCEWithLogitsLoss()(model(x), y)
    loss, norms = full_batch_step(model, optimizer, scheduler, x, y)
    assert loss == pytest.approx(float(expected), rel=1e-6)
    # plain SGD moved each parameter by -0.1 times its gradient, the one recorded
    for block, start, norm in zip(blocks, before, norms, strict=True):
        steps = [(b - p.detach()).flatten() for p, b in zip(block.parameters(), start, strict=True)]
        assert norm == pytest.approx(float(torch.cat(steps).norm()) / 0.1, rel=1e-3)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.05)  # the schedule moved on
    _, none = full_batch_step(model, optimizer, scheduler, x, y, record_norms=False)
    assert none == []


def test_full_batch_step_errors() -> None:
    model = seeded(0, lambda: DeepOrderClassifier(num_layers=2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    other = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(4, 5, 16), torch.tensor([0.0, 1.0, 1.0, 0.0])

    step = functools.partial(
        full_batch_step, model=model, optimizer=optimizer, scheduler=scheduler, x=x, y=y
    )  # each check below replaces one argument

    with pytest.raises(TypeError, match="model must be a DeepOrderClassifier"):
        step(model=torch.nn.Linear(16, 1))
    with pytest.raises(TypeError, match=r"optimizer must be a torch\.optim\.Optimizer"):
        step(optimizer=None)
    with pytest.raises(TypeError, match=r"scheduler must be a torch\.optim\.lr_scheduler"):
        step(scheduler="linear")
    with pytest.raises(ValueError, match="scheduler must schedule the optimizer"):
        step(scheduler=torch.optim.lr_scheduler.LambdaLR(other, lambda s: 1.0))
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        step(x=x[0])
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        step(x=torch.randn(4, 5, 8))
    with pytest.raises(TypeError, match="y must have a floating-point dtype"):
        step(y=y.long())
    with pytest.raises(ValueError, match=r"y must have shape \(4,\)"):
        step(y=y[:3])
    with pytest.raises(TypeError, match="y must have the dtype of x"):
        step(y=y.double())
    with pytest.raises(TypeError, match="record_norms must be a bool"):
        step(record_norms=1)


# -- relapses -----------------------------------------------------------------------


def test_first_relapse_finds_the_first_return_after_learning() -> None:
    ln2 = math.log(2)
    # Defaults: learned below ln 2 / 2, relapsed at ln 2 or above.
    assert first_relapse([0.7, 0.3, 0.6, 0.2, ln2, 0.9]) == 4  # ln 2 itself counts
    assert first_relapse([0.7, 0.35, 0.6, 0.9]) is None  # 0.35 > ln 2 / 2: never learned
    assert first_relapse([0.9, 0.1, 0.05]) is None  # learned, never relapsed
    assert first_relapse([0.9, 0.1, 0.05, 0.69]) is None  # 0.69 < ln 2
    assert first_relapse([]) is None
    # The loss at the step that learns does not count as its own relapse.
    assert first_relapse([0.5, 0.9], learned=0.6, relapsed=0.8) == 1
    assert first_relapse((0.5, 0.7), learned=0.6, relapsed=0.7) == 1
    assert first_relapse([0.5, 0.7], learned=0.4, relapsed=0.6) is None


def test_first_relapse_agrees_with_a_vectorised_oracle() -> None:
    # Oracle: the first index after the first loss below `learned` whose loss is >= `relapsed`.
    rng = np.random.default_rng(0)
    for _ in range(200):
        losses = rng.uniform(0.0, 1.2, size=int(rng.integers(0, 30)))
        below = np.flatnonzero(losses < 0.4)
        later = np.flatnonzero(losses >= 0.8)
        later = later[later > below[0]] if below.size else later[:0]
        expected = int(later[0]) if later.size else None
        assert first_relapse(list(losses), learned=0.4, relapsed=0.8) == expected


def test_first_relapse_errors() -> None:
    with pytest.raises(TypeError, match="losses must be a sequence of real numbers"):
        first_relapse(0.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="losses must be a sequence of real numbers"):
        first_relapse("0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"losses\[1\] must be a real number"):
        first_relapse([0.5, "x"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"losses\[0\] must be a finite real number"):
        first_relapse([float("nan")])
    with pytest.raises(ValueError, match="learned must be a finite real number > 0"):
        first_relapse([0.5], learned=0.0)
    with pytest.raises(ValueError, match=r"relapsed must be greater than learned = 0\.5, got 0\.5"):
        first_relapse([0.5], learned=0.5, relapsed=0.5)
