"""Tests for :mod:`lessons_code.heads`."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lessons_code.heads import (
    HeadsRun,
    TwoRelationModel,
    head_focus,
    make_two_relation_data,
    make_two_relation_splits,
    run_heads_grid,
    train_two_relation,
)
from lessons_code.multihead import MultiHeadAttention

# -- data -------------------------------------------------------------------


def test_data_shapes_dtypes_and_ranges() -> None:
    data = make_two_relation_data(np.random.default_rng(0), 300, seq_len=7, vocab_size=5)
    assert data.tokens.shape == (300, 7)
    assert data.marked.shape == (300,)
    assert data.labels.shape == (300, 6)
    assert data.tokens.dtype == data.marked.dtype == data.labels.dtype == torch.int64
    assert data.vocab_size == 5
    assert int(data.tokens.min()) == 0
    assert int(data.tokens.max()) == 4
    assert set(data.marked.tolist()) == set(range(7))  # every position gets marked
    assert int(data.labels.min()) >= 0
    assert int(data.labels.max()) < 25


def test_labels_are_previous_and_marked_token_by_a_plain_loop() -> None:
    V = 4
    data = make_two_relation_data(np.random.default_rng(1), 20, seq_len=6, vocab_size=V)
    for tokens, m, labels in zip(data.tokens, data.marked, data.labels, strict=True):
        for t in range(1, 6):
            previous, marked = divmod(int(labels[t - 1]), V)
            assert previous == int(tokens[t - 1])
            assert marked == int(tokens[int(m)])


def test_data_is_reproducible_and_advances_the_generator() -> None:
    first = make_two_relation_data(np.random.default_rng(3), 10)
    again = make_two_relation_data(np.random.default_rng(3), 10)
    assert torch.equal(first.tokens, again.tokens)
    assert torch.equal(first.marked, again.marked)
    rng = np.random.default_rng(3)
    make_two_relation_data(rng, 10)
    assert not torch.equal(make_two_relation_data(rng, 10).tokens, first.tokens)


def test_splits_are_the_two_consecutive_draws() -> None:
    train, test = make_two_relation_splits(n_train=8, n_test=5, data_seed=2)
    rng = np.random.default_rng(2)
    assert torch.equal(train.tokens, make_two_relation_data(rng, 8).tokens)
    assert torch.equal(test.labels, make_two_relation_data(rng, 5).labels)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"rng": 0}, TypeError, "rng"),
        ({"n": 0}, ValueError, "n must"),
        ({"n": 2.0}, TypeError, "n must"),
        ({"seq_len": 1}, ValueError, "seq_len"),
        ({"vocab_size": 1}, ValueError, "vocab_size"),
    ],
)
def test_data_rejects_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    arguments = {"rng": np.random.default_rng(0), "n": 4} | kwargs
    with pytest.raises(error, match=match):
        make_two_relation_data(**arguments)


def test_splits_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="n_test"):
        make_two_relation_splits(n_test=0)
    with pytest.raises(ValueError, match="data_seed"):
        make_two_relation_splits(data_seed=-1)


# -- model ------------------------------------------------------------------


def test_model_shapes_and_equal_width_for_every_head_count() -> None:
    data = make_two_relation_data(np.random.default_rng(0), 3, seq_len=10, vocab_size=6)
    counts = set()
    for heads in (1, 2, 4):
        torch.manual_seed(0)
        model = TwoRelationModel(vocab_size=6, seq_len=10, d_model=16, num_heads=heads)
        assert isinstance(model.attention, MultiHeadAttention)
        logits, weights = model(data.tokens, data.marked, return_weights=True)
        assert logits.shape == (3, 10, 36)
        assert weights.shape == (3, heads, 10, 10)
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, heads, 10))
        assert torch.equal(model(data.tokens, data.marked), logits)
        counts.add(sum(p.numel() for p in model.parameters()))
    assert len(counts) == 1  # the number of heads changes no parameter count


def test_model_input_is_token_plus_position_plus_marker() -> None:
    torch.manual_seed(0)
    model = TwoRelationModel(vocab_size=3, seq_len=4, d_model=8, num_heads=2)
    tokens, marked = torch.tensor([[2, 0, 1, 1]]), torch.tensor([2])
    seen = {}
    model.attention.register_forward_hook(lambda _m, args, _out: seen.update(x=args[0]))
    model(tokens, marked)
    expected = model.token.weight[tokens[0]] + model.position.weight
    expected = expected + model.marker.weight[torch.tensor([0, 0, 1, 0])]
    torch.testing.assert_close(seen["x"][0], expected)


def test_model_accepts_shorter_sequences() -> None:
    model = TwoRelationModel(vocab_size=6, seq_len=10)
    logits = model(torch.zeros(2, 5, dtype=torch.long), torch.tensor([0, 4]))
    assert logits.shape == (2, 5, 36)


@pytest.mark.parametrize(
    ("tokens", "marked", "error", "match"),
    [
        (torch.zeros(2, 5), torch.tensor([0, 1]), TypeError, "tokens must be a torch.int64"),
        (torch.zeros(5, dtype=torch.long), torch.tensor([0]), ValueError, "tokens must have 2"),
        (torch.full((2, 5), 6), torch.tensor([0, 1]), ValueError, "tokens must hold"),
        (torch.full((2, 5), -1), torch.tensor([0, 1]), ValueError, "tokens must hold"),
        (torch.zeros(2, 11, dtype=torch.long), torch.tensor([0, 1]), ValueError, "seq_len"),
        (torch.zeros(2, 5, dtype=torch.long), [0, 1], TypeError, "marked"),
        (torch.zeros(2, 5, dtype=torch.long), torch.tensor([0, 5]), ValueError, "marked must hold"),
        (torch.zeros(2, 5, dtype=torch.long), torch.tensor([0]), ValueError, "one position"),
    ],
)
def test_model_rejects_bad_inputs(tokens: object, marked: object, error: type, match: str) -> None:
    model = TwoRelationModel(vocab_size=6, seq_len=10)
    with pytest.raises(error, match=match):
        model(tokens, marked)


def test_model_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="divisible"):
        TwoRelationModel(d_model=16, num_heads=3)
    with pytest.raises(ValueError, match="vocab_size"):
        TwoRelationModel(vocab_size=1)
    with pytest.raises(TypeError, match="return_weights"):
        TwoRelationModel()(torch.zeros(1, 3, dtype=torch.long), torch.tensor([0]), 1)


# -- head_focus ---------------------------------------------------------------


def test_head_focus_against_a_plain_loop() -> None:
    torch.manual_seed(0)
    B, H, T = 3, 2, 6
    weights = torch.softmax(torch.randn(B, H, T, T), dim=-1)
    marked = torch.tensor([0, 5, 2])
    previous, on_marked = head_focus(weights, marked)
    for h in range(H):
        want_previous = np.mean(
            [float(weights[b, h, t, t - 1]) for b in range(B) for t in range(1, T)]
        )
        want_marked = np.mean(
            [float(weights[b, h, t, int(marked[b])]) for b in range(B) for t in range(1, T)]
        )
        assert float(previous[h]) == pytest.approx(want_previous, rel=1e-6)
        assert float(on_marked[h]) == pytest.approx(want_marked, rel=1e-6)


def test_head_focus_rejects_bad_inputs() -> None:
    weights = torch.full((2, 1, 4, 4), 0.25)
    with pytest.raises(ValueError, match="weights must have shape"):
        head_focus(torch.full((2, 1, 4, 3), 0.25), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="weights must have 4"):
        head_focus(weights[0], torch.tensor([0, 1]))
    with pytest.raises(TypeError, match="marked"):
        head_focus(weights, torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="marked must hold"):
        head_focus(weights, torch.tensor([0, 4]))
    with pytest.raises(ValueError, match="one position"):
        head_focus(weights, torch.tensor([0]))


# -- training ---------------------------------------------------------------


def test_a_short_run_lowers_the_loss_and_is_reproducible() -> None:
    run = train_two_relation(num_heads=2, seed=0, steps=20)
    assert isinstance(run, HeadsRun)
    assert len(run.losses) == 20
    assert run.losses[-1] < run.losses[0] - 0.2
    assert run.losses[0] == pytest.approx(np.log(36), abs=0.5)  # about uniform at first
    again = train_two_relation(num_heads=2, seed=0, steps=20)
    assert again.losses == run.losses
    assert again.test_accuracy == run.test_accuracy
    other = train_two_relation(num_heads=2, seed=1, steps=20)
    assert other.losses != run.losses


def test_run_record_matches_its_rebuilt_model() -> None:
    run = train_two_relation(num_heads=2, seed=3, steps=10)
    model = run.trained_model()
    _, test = make_two_relation_splits()
    with torch.no_grad():
        logits, weights = model(test.tokens, test.marked, return_weights=True)
    accuracy = (logits[:, 1:].argmax(-1) == test.labels).float().mean().item()
    assert accuracy == run.test_accuracy
    previous, marked = head_focus(weights, test.marked)
    assert previous.tolist() == run.previous_focus
    assert marked.tolist() == run.marked_focus
    loss = F.cross_entropy(logits[:, 1:].flatten(0, 1), test.labels.flatten())
    assert torch.isfinite(loss)


def test_trained_model_needs_weights() -> None:
    run = train_two_relation(num_heads=1, seed=0, steps=1)
    run.model_state = {}
    with pytest.raises(ValueError, match="model_state"):
        run.trained_model()


def test_grid_order_and_runs_equal_single_runs() -> None:
    runs = run_heads_grid(head_counts=(1, 2), seeds=(0, 1), steps=3, workers=2)
    assert [(r.num_heads, r.seed) for r in runs] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    alone = train_two_relation(2, 1, steps=3)
    assert runs[3].losses == alone.losses


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_heads": 0}, ValueError, "num_heads"),
        ({"num_heads": 3}, ValueError, "divisible"),
        ({"seed": -1}, ValueError, "seed"),
        ({"steps": 0}, ValueError, "steps"),
        ({"lr": 0.0}, ValueError, "lr"),
        ({"device": 3}, TypeError, "device"),
    ],
)
def test_training_rejects_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    arguments = {"num_heads": 2, "seed": 0, "steps": 1} | kwargs
    with pytest.raises(error, match=match):
        train_two_relation(**arguments)


def test_grid_rejects_empty_lists() -> None:
    with pytest.raises(ValueError, match="seeds"):
        run_heads_grid(seeds=())
    with pytest.raises(ValueError, match="head_counts"):
        run_heads_grid(head_counts=[0])
