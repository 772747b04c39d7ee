"""Tests for :mod:`lessons_code.depth`."""

from __future__ import annotations

import pytest
import torch

from lessons_code.blocks import Encoder
from lessons_code.depth import DeepOrderClassifier, block_grad_norms, train_deep_stack


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
        assert run.num_layers == 10
        assert len(run.losses) == 21
        assert run.grad_norm_steps == [0, 10, 20]
        assert len(run.grad_norms) == 3
        assert all(len(norms) == 10 for norms in run.grad_norms)
        assert 0.0 <= run.test_accuracy <= 1.0


def test_post_norm_gradients_vanish_towards_the_input(runs: dict) -> None:
    post, pre = runs[False], runs[True]
    post_ratio = post.grad_norms[-1][-1] / post.grad_norms[-1][0]  # last block / first block
    pre_ratio = pre.grad_norms[-1][-1] / pre.grad_norms[-1][0]
    assert post_ratio > 100
    assert 0.1 < pre_ratio < 10


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
    with pytest.raises(TypeError, match=r"encoder must be a lessons_code\.blocks\.Encoder"):
        block_grad_norms(torch.nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        DeepOrderClassifier(2)(torch.randn(2, 8, 8))
