"""Tests for :mod:`lessons_code.depth`."""

from __future__ import annotations

import pytest
import torch

from lessons_code.blocks import Encoder
from lessons_code.depth import (
    DEPTH_CONFIGS,
    DeepOrderClassifier,
    DepthConfig,
    block_grad_norms,
    run_depth_grid,
    train_deep_stack,
)


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


@pytest.fixture(scope="module")
def runs() -> dict[bool, object]:
    """Ten-layer stacks, 21 updates each, gradient norms at steps 0, 10 and 20."""
    return {
        norm_first: train_deep_stack(norm_first, num_layers=10, steps=21, record_every=10)
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


def test_grid_runs_every_setting_in_order_and_matches_single_runs() -> None:
    configs = (DEPTH_CONFIGS[1], DEPTH_CONFIGS[3])
    state = torch.random.get_rng_state()
    grid = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=4, workers=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert list(grid) == ["post-norm, warm-up", "pre-norm"]
    for config in configs:
        runs = grid[config.label]
        assert [run.seed for run in runs] == [2, 0]
        for run in runs:
            assert (run.norm_first, run.lr) == (config.norm_first, config.lr)
            assert run.warmup_steps == config.warmup_steps
            alone = train_deep_stack(
                config.norm_first,
                2,
                seed=run.seed,
                steps=4,
                lr=config.lr,
                warmup_steps=config.warmup_steps,
            )
            assert run.losses == alone.losses  # bit for bit: threads change nothing
            assert run.grad_norms == alone.grad_norms
    serial = run_depth_grid(configs, seeds=(2, 0), num_layers=2, steps=4, workers=1)
    assert [r.losses for r in serial["pre-norm"]] == [r.losses for r in grid["pre-norm"]]


def test_depth_configs_of_the_book() -> None:
    labels = [config.label for config in DEPTH_CONFIGS]
    assert labels == ["post-norm", "post-norm, warm-up", "post-norm, lr 0.001", "pre-norm"]
    assert [config.norm_first for config in DEPTH_CONFIGS] == [False, False, False, True]
    assert DEPTH_CONFIGS[1].warmup_steps > 0
    assert DEPTH_CONFIGS[2].lr < DEPTH_CONFIGS[0].lr


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
