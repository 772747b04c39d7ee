"""Tests for :mod:`lessons_code.order_task`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from lessons_code.multihead import MultiHeadAttention
from lessons_code.order_task import (
    OrderClassifier,
    make_order_dataset,
    make_order_splits,
    run_order_experiment,
    run_order_grid,
    train_and_evaluate,
)
from lessons_code.positional import positional_encoding
from lessons_code.training import seeded

A, B = torch.full((4,), 5.0), torch.full((4,), -5.0)


def positions_of(x: torch.Tensor, vec: torch.Tensor) -> torch.Tensor:
    """Index of the token equal to ``vec`` in every sequence (exactly one is)."""
    hits = (x == vec).all(dim=-1)  # (n, T)
    assert (hits.sum(dim=1) == 1).all()
    return hits.float().argmax(dim=1)


# -- data -------------------------------------------------------------------


def test_dataset_places_a_and_b_once_and_labels_their_order() -> None:
    x, y = make_order_dataset(np.random.default_rng(0), 500, A, B, seq_len=6, noise=0.1)
    assert x.shape == (500, 6, 4)
    assert y.shape == (500,)
    assert x.dtype == y.dtype == torch.float32
    pos_a, pos_b = positions_of(x, A), positions_of(x, B)
    assert (pos_a != pos_b).all()
    torch.testing.assert_close(y, (pos_a < pos_b).float())
    assert 0.4 < float(y.mean()) < 0.6  # both orders about equally likely
    # Every ordered pair of distinct positions occurs.
    assert len({(int(a), int(b)) for a, b in zip(pos_a, pos_b, strict=True)}) == 6 * 5


def test_dataset_background_is_scaled_noise() -> None:
    x, _ = make_order_dataset(np.random.default_rng(1), 2000, A, B, seq_len=8, noise=0.1)
    background = x[(x.abs() < 4.0).all(dim=-1)]  # the tokens that are neither A nor B
    assert background.shape == (2000 * 6, 4)
    assert abs(float(background.std()) - 0.1) < 0.005
    assert abs(float(background.mean())) < 0.005


def test_dataset_is_reproducible_and_advances_the_generator() -> None:
    rng1, rng2 = np.random.default_rng(7), np.random.default_rng(7)
    first = make_order_dataset(rng1, 10, A, B)
    torch.testing.assert_close(first, make_order_dataset(rng2, 10, A, B))
    second = make_order_dataset(rng1, 10, A, B)
    assert not torch.equal(first[0], second[0])


def test_splits_have_the_sizes_of_the_lesson() -> None:
    data = make_order_splits()
    assert data.x_train.shape == (400, 8, 16)
    assert data.y_train.shape == (400,)
    assert data.x_test.shape == (150, 8, 16)
    assert data.y_test.shape == (150,)
    rng = np.random.default_rng(3)  # A and B are the first draws of default_rng(3)
    np.testing.assert_allclose(data.vec_a.numpy(), rng.standard_normal(16), rtol=1e-6)
    np.testing.assert_allclose(data.vec_b.numpy(), rng.standard_normal(16), rtol=1e-6)
    again = make_order_splits()
    assert torch.equal(again.x_test, data.x_test)
    assert make_order_splits(32).x_train.shape == (400, 32, 16)


def test_dataset_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        make_order_dataset(np.random.RandomState(0), 5, A, B)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        make_order_dataset(rng, 0, A, B)
    with pytest.raises(ValueError, match="seq_len must be an integer >= 2"):
        make_order_dataset(rng, 5, A, B, seq_len=1)
    with pytest.raises(ValueError, match=r"vec_b must have the width of vec_a \(4\), got width 3"):
        make_order_dataset(rng, 5, A, B[:3])
    with pytest.raises(ValueError, match="vec_a must have 1 dimensions"):
        make_order_dataset(rng, 5, A[None], B)
    with pytest.raises(TypeError, match="vec_b must have a floating-point dtype"):
        make_order_dataset(rng, 5, A, torch.ones(4, dtype=torch.long))
    with pytest.raises(ValueError, match="noise must be a finite real number >= 0"):
        make_order_dataset(rng, 5, A, B, noise=-0.1)
    with pytest.raises(ValueError, match="seq_len must be an integer >= 2"):
        make_order_splits(1)
    with pytest.raises(ValueError, match="n_test must be an integer >= 1"):
        make_order_splits(n_test=0)


# -- model ------------------------------------------------------------------


def test_without_positional_encoding_the_model_is_blind_to_order() -> None:
    torch.manual_seed(0)
    model = OrderClassifier(use_pos_enc=False).double()
    x = torch.randn(5, 8, 16, dtype=torch.float64)
    perm = torch.randperm(8)
    torch.testing.assert_close(model(x[:, perm]), model(x))
    model.use_pos_enc = True
    assert not torch.allclose(model(x[:, perm]), model(x))


def test_classifier_shapes_and_errors() -> None:
    model = OrderClassifier()
    assert model(torch.randn(3, 8, 16)).shape == (3,)
    assert model(torch.randn(1, 32, 16)).shape == (1,)
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        model(torch.randn(3, 8, 12))
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        model(torch.randn(8, 16))
    with pytest.raises(TypeError, match="use_pos_enc must be a bool"):
        OrderClassifier(use_pos_enc=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        OrderClassifier(d_model=10)


def test_attention_weights_match_pytorch_on_the_encoded_input() -> None:
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    model = OrderClassifier(use_pos_enc=True).eval()
    model.attention = MultiHeadAttention.from_torch(mha)
    x = torch.randn(3, 8, 16)
    with torch.no_grad():
        ours = model.attention_weights(x)  # (B, H, T, T)
        encoded = x + positional_encoding(8, 16)
        _, theirs = mha(encoded, encoded, encoded, average_attn_weights=False)
    assert ours.shape == (3, 4, 8, 8)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(ours.sum(dim=-1), torch.ones(3, 4, 8))
    model.use_pos_enc = False  # without the encoding the raw input is attended
    with torch.no_grad():
        _, raw = mha(x, x, x, average_attn_weights=False)
        torch.testing.assert_close(model.attention_weights(x), raw)


def test_attention_weights_errors() -> None:
    model = OrderClassifier()
    with pytest.raises(ValueError, match="x must have last dimension 16"):
        model.attention_weights(torch.randn(3, 8, 12))
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        model.attention_weights(torch.randn(8, 16))
    with pytest.raises(TypeError, match="x must have the dtype of the module's parameters"):
        model.attention_weights(torch.randn(3, 8, 16, dtype=torch.float64))


# -- the experiment -----------------------------------------------------------


# The book's full experiment, 300 epochs a run (about 3 s of CPU each): seed 0
# in the quick loop, a second seed in the whole suite only. That the model
# without encoding cannot see order is checked directly above.
SEEDS = [0, pytest.param(1, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
def test_positional_encoding_solves_the_task(seed: int) -> None:
    assert train_and_evaluate(use_pos_enc=True, seed=seed) >= 0.95


@pytest.mark.parametrize("seed", SEEDS)
def test_without_positional_encoding_accuracy_is_chance(seed: int) -> None:
    run = run_order_experiment(use_pos_enc=False, seed=seed)
    assert 0.3 <= run.test_accuracy <= 0.7
    assert len(run.losses) == 300
    assert run.seq_len == 8


def test_runs_are_deterministic_and_leave_the_global_seed_alone() -> None:
    state = torch.random.get_rng_state()
    first = run_order_experiment(use_pos_enc=True, seed=3, epochs=15)
    assert torch.equal(torch.random.get_rng_state(), state)
    second = run_order_experiment(use_pos_enc=True, seed=3, epochs=15)
    assert first.losses == second.losses
    other = run_order_experiment(use_pos_enc=True, seed=4, epochs=15)
    assert other.losses != first.losses
    assert first.losses[-1] < first.losses[0]


def test_run_keeps_the_trained_weights() -> None:
    run = run_order_experiment(use_pos_enc=True, seed=1, epochs=20)
    assert all(t.device.type == "cpu" for t in run.model_state.values())
    model = run.trained_model()
    assert not model.training
    assert model.use_pos_enc
    data = make_order_splits()
    with torch.no_grad():
        logits = model(data.x_test)
    assert ((logits > 0).float() == data.y_test).float().mean().item() == run.test_accuracy
    # A fresh model with the run's seed is not the trained one.
    torch.manual_seed(1)
    fresh = OrderClassifier(use_pos_enc=True)
    assert not torch.equal(fresh.head[0].weight, model.head[0].weight)
    assert "model_state" not in repr(run)
    empty = dataclasses.replace(run, model_state={})
    with pytest.raises(ValueError, match="model_state must hold the trained weights"):
        empty.trained_model()


def test_longer_sequences_run() -> None:
    run = run_order_experiment(use_pos_enc=True, seed=0, seq_len=32, epochs=3)
    assert run.seq_len == 32
    assert len(run.losses) == 3
    assert 0.0 <= run.test_accuracy <= 1.0


def test_experiment_errors() -> None:
    with pytest.raises(ValueError, match="seq_len must be an integer >= 2"):
        train_and_evaluate(True, 0, seq_len=1)
    with pytest.raises(ValueError, match="lr must be a finite real number > 0"):
        train_and_evaluate(True, 0, lr=0.0)
    with pytest.raises(ValueError, match="epochs must be an integer >= 1"):
        train_and_evaluate(True, 0, epochs=0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        train_and_evaluate(True, -1)
    with pytest.raises(TypeError, match="use_pos_enc must be a bool"):
        train_and_evaluate("yes", 0)  # type: ignore[arg-type]


# -- several runs at once -------------------------------------------------------


def test_grid_runs_every_setting_in_order_and_matches_single_runs() -> None:
    runs = run_order_grid(seq_lens=(8, 5), seeds=(2, 0), epochs=6, workers=4)
    settings = [(run.seq_len, run.use_pos_enc, run.seed) for run in runs]
    assert settings == [
        (8, False, 2), (8, False, 0), (8, True, 2), (8, True, 0),
        (5, False, 2), (5, False, 0), (5, True, 2), (5, True, 0),
    ]  # fmt: skip
    for run in runs:
        alone = run_order_experiment(run.use_pos_enc, run.seed, seq_len=run.seq_len, epochs=6)
        assert run.losses == alone.losses  # bit for bit: threads change nothing
        assert run.test_accuracy == alone.test_accuracy


def test_grid_threads_do_not_mix_up_the_seeding() -> None:
    # Eight runs of the same setting on eight threads start together; if their
    # seeding interleaved, some would start from another seed's weights.
    state = torch.random.get_rng_state()
    runs = run_order_grid(seq_lens=(4,), seeds=[1] * 4, epochs=2, workers=8)
    assert torch.equal(torch.random.get_rng_state(), state)
    first_losses = {run.use_pos_enc: run.losses for run in runs}
    for run in runs:
        assert run.losses == first_losses[run.use_pos_enc]


def test_grid_with_one_worker_passes_the_settings_on() -> None:
    (run_without, run_with) = run_order_grid(seq_lens=(6,), seeds=(3,), epochs=4, workers=1)
    assert (run_without.use_pos_enc, run_with.use_pos_enc) == (False, True)
    assert (len(run_with.losses), run_with.seq_len, run_with.seed) == (4, 6, 3)


def test_grid_errors() -> None:
    with pytest.raises(ValueError, match="seq_lens must not be empty"):
        run_order_grid(seq_lens=())
    with pytest.raises(ValueError, match=r"seq_lens\[1\] must be an integer >= 2, got 1"):
        run_order_grid(seq_lens=(8, 1))
    with pytest.raises(ValueError, match=r"seeds\[0\] must be an integer >= 0, got -1"):
        run_order_grid(seeds=[-1])
    with pytest.raises(TypeError, match="seeds must be an iterable of integers, got int"):
        run_order_grid(seeds=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"seq_lens\[0\] must be an integer"):
        run_order_grid(seq_lens=(8.0,))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers must be an integer >= 1, got 0"):
        run_order_grid(workers=0)
    with pytest.raises(ValueError, match="epochs must be an integer >= 1"):
        run_order_grid(epochs=0)
    with pytest.raises(TypeError, match="seeds must be an iterable of integers, got str"):
        run_order_grid(seeds="01")  # type: ignore[arg-type]


def test_order_data_to_moves_every_tensor_and_keeps_the_values() -> None:
    data = make_order_splits(4, d_model=4, n_train=3, n_test=2)
    moved = data.to("meta")
    for field in dataclasses.fields(data):
        assert getattr(moved, field.name).device == torch.device("meta")
        assert getattr(data, field.name).device == torch.device("cpu")  # unchanged
    again = data.to(None)
    for field in dataclasses.fields(data):
        assert torch.equal(getattr(again, field.name), getattr(data, field.name))
    with pytest.raises(TypeError, match="device must be None"):
        data.to(0)  # type: ignore[arg-type]


# -- learned positions and longer test sequences -----------------------------------


def test_longer_splits_share_the_markers_of_training() -> None:
    train = make_order_splits(8)
    for seq_len in (16, 32):
        longer = make_order_splits(seq_len, n_test=300)
        assert torch.equal(longer.vec_a, train.vec_a)
        assert torch.equal(longer.vec_b, train.vec_b)
        assert longer.x_test.shape == (300, seq_len, 16)
        pos_a, pos_b = (
            positions_of(longer.x_test, train.vec_a),
            positions_of(longer.x_test, train.vec_b),
        )
        torch.testing.assert_close(longer.y_test, (pos_a < pos_b).float())
        assert int(pos_a.max()) >= 8 or int(pos_b.max()) >= 8  # markers beyond the trained range


def test_learned_positions_shapes_and_table() -> None:
    torch.manual_seed(0)
    model = OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=12)
    assert model.positions is not None
    assert model.positions.weight.shape == (12, 16)
    for seq_len in (2, 8, 12):
        assert model(torch.randn(3, seq_len, 16)).shape == (3,)
        with torch.no_grad():
            weights = model.attention_weights(torch.randn(3, seq_len, 16))
        assert weights.shape == (3, 4, seq_len, seq_len)
    assert OrderClassifier(use_pos_enc=True).positions is None
    assert "positions.weight" not in OrderClassifier(use_pos_enc=True).state_dict()


def test_learned_positions_add_the_first_rows_of_the_table() -> None:
    torch.manual_seed(0)
    model = OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=10).double()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    table = model.positions.weight  # type: ignore[union-attr]
    with torch.no_grad():
        ours = model.attention_weights(x)
        model.use_pos_enc = False  # the same attention on the input plus rows 0-5
        model.positions = None
        by_hand = model.attention_weights(x + table[:6])
    torch.testing.assert_close(ours, by_hand)


def test_learned_and_sinusoidal_share_the_initial_weights() -> None:
    sinusoidal = seeded(2, lambda: OrderClassifier(use_pos_enc=True))
    learned = seeded(2, lambda: OrderClassifier(use_pos_enc=True, pos_kind="learned"))
    for name, tensor in sinusoidal.state_dict().items():
        assert torch.equal(tensor, learned.state_dict()[name]), name


def test_learned_positions_errors() -> None:
    with pytest.raises(ValueError, match="pos_kind must be one of"):
        OrderClassifier(use_pos_enc=True, pos_kind="rotary")
    with pytest.raises(TypeError, match=r"pos_kind must be one of .* of type int"):
        OrderClassifier(use_pos_enc=True, pos_kind=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pos_kind='learned' needs use_pos_enc=True"):
        OrderClassifier(pos_kind="learned")
    with pytest.raises(ValueError, match="max_len must be an integer >= 1, got 0"):
        OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=0)
    model = OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=8)
    with pytest.raises(ValueError, match=r"x must have at most 8 positions .*got 9"):
        model(torch.randn(2, 9, 16))
    with pytest.raises(ValueError, match=r"x must have at most 8 positions"):
        model.attention_weights(torch.randn(2, 9, 16))
    with pytest.raises(ValueError, match=r"max_len must be at least seq_len \(8\).*got 4"):
        run_order_experiment(True, 0, pos_kind="learned", max_len=4)
    with pytest.raises(ValueError, match="pos_kind='learned' needs use_pos_enc=True"):
        run_order_experiment(False, 0, pos_kind="learned")
    # The sinusoidal encoding takes any length, whatever max_len says.
    assert OrderClassifier(use_pos_enc=True, max_len=4)(torch.randn(1, 9, 16)).shape == (1,)


def test_training_leaves_the_unused_rows_of_the_table_alone() -> None:
    run = run_order_experiment(True, 1, epochs=10, pos_kind="learned", max_len=20)
    assert run.pos_kind == "learned"
    start = seeded(1, lambda: OrderClassifier(use_pos_enc=True, pos_kind="learned", max_len=20))
    trained = run.model_state["positions.weight"]  # (20, 16)
    assert torch.equal(trained[8:], start.positions.weight[8:])  # type: ignore[union-attr]
    assert not torch.equal(trained[:8], start.positions.weight[:8])  # type: ignore[union-attr]
    model = run.trained_model()
    assert model.positions is not None
    assert model.positions.num_embeddings == 20
    data = make_order_splits()
    with torch.no_grad():
        accuracy = ((model(data.x_test) > 0).float() == data.y_test).float().mean().item()
    assert accuracy == run.test_accuracy
    assert model(make_order_splits(20, n_train=1, n_test=3).x_test).shape == (3,)


def test_default_runs_are_sinusoidal() -> None:
    run = run_order_experiment(True, 0, epochs=2)
    assert run.pos_kind == "sinusoidal"
    assert "positions.weight" not in run.model_state
    assert run.trained_model().positions is None
