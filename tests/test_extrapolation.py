"""Tests for :mod:`lessons_code.extrapolation`: rotary against sinusoidal positions, longer."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from lessons_code.decoder_dates import IGNORE_INDEX
from lessons_code.extrapolation import (
    PreviousTokenExperiment,
    previous_token_sequences,
    score_by_offset,
    train_previous_token,
)
from lessons_code.modern import DecoderOnlyLM, apply_rope, rope_tables
from lessons_code.results import ENV_VAR

# A model small enough to train a few steps in well under a second.
TINY = {
    "train_len": 6,
    "test_len": 14,
    "steps": 20,
    "batch_size": 8,
    "vocab_size": 5,
    "d_model": 16,
    "num_heads": 2,
    "num_layers": 1,
    "d_ff": 16,
    "peak_lr": 0.01,
    "warmup_steps": 4,
    "num_test": 32,
}


@pytest.fixture(scope="module")
def run() -> PreviousTokenExperiment:
    return train_previous_token(0, **TINY)


@pytest.fixture(scope="module")
def book() -> dict[str, PreviousTokenExperiment]:
    """The book's runs: the default settings, both schemes."""
    return {p: train_previous_token(0, positions=p) for p in ("rope", "sinusoidal")}


# -- the sequences -------------------------------------------------------------------


def test_labels_are_the_previous_tokens() -> None:
    tokens, labels = previous_token_sequences(50, 9, 7, generator=torch.Generator().manual_seed(3))
    assert tokens.shape == labels.shape == (50, 9)
    assert tokens.dtype == labels.dtype == torch.int64
    assert (labels[:, 0] == IGNORE_INDEX).all()
    for row in range(50):
        for t in range(1, 9):
            assert int(labels[row, t]) == int(tokens[row, t - 1])
    assert int(tokens.min()) >= 0
    assert int(tokens.max()) < 7
    assert set(tokens.unique().tolist()) == set(range(7))  # every symbol drawn


def test_sequences_follow_the_generator() -> None:
    first = previous_token_sequences(4, 5, generator=torch.Generator().manual_seed(1))
    second = previous_token_sequences(4, 5, generator=torch.Generator().manual_seed(1))
    other = previous_token_sequences(4, 5, generator=torch.Generator().manual_seed(2))
    assert torch.equal(first[0], second[0])
    assert not torch.equal(first[0], other[0])
    assert int(first[0].max()) < 16  # the default vocabulary


def test_sequence_errors() -> None:
    with pytest.raises(ValueError, match="num_sequences must be an integer >= 1"):
        previous_token_sequences(0, 5)
    with pytest.raises(ValueError, match="length must be an integer >= 2"):
        previous_token_sequences(3, 1)
    with pytest.raises(ValueError, match="vocab_size must be an integer >= 2"):
        previous_token_sequences(3, 5, 1)
    with pytest.raises(TypeError, match="length must be an integer"):
        previous_token_sequences(3, 5.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"generator must be a torch\.Generator or None"):
        previous_token_sequences(3, 5, generator=0)  # type: ignore[arg-type]


# -- training ------------------------------------------------------------------------


def test_result_shapes_and_settings(run: PreviousTokenExperiment) -> None:
    assert run.seed == 0
    assert run.settings == {**TINY, "positions": "rope", "device": "cpu", "rope_base": 10000.0}
    assert run.losses.shape == run.learning_rates.shape == (20,)
    assert run.accuracy.shape == (14,)
    assert np.isnan(run.accuracy[0])
    assert ((run.accuracy[1:] >= 0) & (run.accuracy[1:] <= 1)).all()
    # each position's accuracy is a count out of the 32 held-out sequences
    np.testing.assert_allclose(run.accuracy[1:] * 32, np.round(run.accuracy[1:] * 32), atol=1e-9)
    assert isinstance(run.model, DecoderOnlyLM)
    assert not run.model.training
    assert run.model.positions == "rope"
    assert run.model.max_len == 14
    assert run.model.final_norm.weight.device.type == "cpu"
    assert run.learning_rates.argmax() == TINY["warmup_steps"] - 1
    assert run.learning_rates.max() == pytest.approx(TINY["peak_lr"])
    assert run.train_seconds > 0
    again = pickle.loads(pickle.dumps(run))  # results.stored pickles it
    np.testing.assert_array_equal(again.accuracy, run.accuracy)


@pytest.mark.parametrize("positions", ["rope", "sinusoidal"])
def test_accuracy_is_scored_on_the_held_out_sequences(
    positions: str, run: PreviousTokenExperiment
) -> None:
    if positions != "rope":
        run = train_previous_token(0, **TINY, positions=positions)
    assert run.model.positions == positions
    # the held-out sequences are the first draw of the seed's generator,
    # whatever the positions: both schemes are scored on the same sequences
    data = torch.Generator().manual_seed(0)
    tokens, labels = previous_token_sequences(32, 14, 5, generator=data)
    with torch.no_grad():
        predicted = run.model(tokens).argmax(dim=-1)
    expected = (predicted == labels).double().mean(dim=0).numpy()
    np.testing.assert_array_equal(run.accuracy[1:], expected[1:])


def test_block_accuracy_averages_the_scored_positions(run: PreviousTokenExperiment) -> None:
    accuracy = run.accuracy
    blocks = run.block_accuracy()  # blocks of train_len = 6: 1-5, 6-11, 12-13
    assert blocks.shape == (3,)
    assert blocks[0] == pytest.approx(accuracy[1:6].mean())
    assert blocks[1] == pytest.approx(accuracy[6:12].mean())
    assert blocks[2] == pytest.approx(accuracy[12:14].mean())
    np.testing.assert_allclose(run.block_accuracy(7), [accuracy[1:7].mean(), accuracy[7:14].mean()])
    with pytest.raises(ValueError, match="size must be an integer >= 2"):
        run.block_accuracy(1)
    with pytest.raises(TypeError, match="size must be an integer"):
        run.block_accuracy(2.0)  # type: ignore[arg-type]


def test_training_is_deterministic_per_seed_and_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: PreviousTokenExperiment
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    state = torch.random.get_rng_state()
    again = train_previous_token(0, **TINY, device="cpu")  # trained anew, and saved
    assert torch.equal(torch.random.get_rng_state(), state)  # the caller's random state
    assert again is not run
    np.testing.assert_array_equal(again.losses, run.losses)
    np.testing.assert_array_equal(again.accuracy, run.accuracy)
    for name, value in run.model.state_dict().items():
        assert torch.equal(value, again.model.state_dict()[name]), name
    read = train_previous_token(0, **TINY)  # read back, not trained
    assert len(list(tmp_path.glob("*.pkl"))) == 1
    assert read is not again
    assert read.train_seconds == again.train_seconds
    np.testing.assert_array_equal(read.accuracy, run.accuracy)
    other = train_previous_token(1, **TINY)  # another seed: another run
    assert len(list(tmp_path.glob("*.pkl"))) == 2
    assert not np.array_equal(other.losses, run.losses)


def test_training_errors() -> None:
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        train_previous_token(-1, **TINY)
    with pytest.raises(ValueError, match="test_len must be an integer >= 6"):
        train_previous_token(0, **{**TINY, "test_len": 5})
    with pytest.raises(ValueError, match="train_len must be an integer >= 2"):
        train_previous_token(0, **{**TINY, "train_len": 1})
    with pytest.raises(ValueError, match="positions must be one of"):
        train_previous_token(0, **TINY, positions="alibi")
    with pytest.raises(TypeError, match="positions must be a string"):
        train_previous_token(0, **TINY, positions=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="warmup_steps must be at most steps = 20"):
        train_previous_token(0, **{**TINY, "warmup_steps": 21})
    with pytest.raises(ValueError, match="peak_lr must be a finite real number > 0"):
        train_previous_token(0, **{**TINY, "peak_lr": 0.0})
    with pytest.raises(ValueError, match="vocab_size must be an integer >= 2"):
        train_previous_token(0, **{**TINY, "vocab_size": 1})
    with pytest.raises(ValueError, match="num_test must be an integer >= 1"):
        train_previous_token(0, **{**TINY, "num_test": 0})
    with pytest.raises(TypeError, match="steps must be an integer"):
        train_previous_token(0, **{**TINY, "steps": 2.5})
    with pytest.raises(ValueError, match="num_heads must divide d_model"):
        train_previous_token(0, **{**TINY, "num_heads": 3})
    with pytest.raises(TypeError, match="device must be"):
        train_previous_token(0, **TINY, device=3)  # type: ignore[arg-type]


# -- what the book shows -------------------------------------------------------------


def test_both_learn_the_trained_length_and_rope_extrapolates(
    book: dict[str, PreviousTokenExperiment],
) -> None:
    rope, sinusoidal = book["rope"], book["sinusoidal"]
    train_len = int(rope.settings["train_len"])
    assert rope.settings["test_len"] == 64
    assert train_len == 16
    for run in (rope, sinusoidal):
        assert run.accuracy[1:train_len].mean() >= 0.99
    beyond = slice(train_len, 2 * train_len)
    assert rope.accuracy[beyond].mean() > sinusoidal.accuracy[beyond].mean() + 0.3


def test_score_by_offset_splits_each_heads_mean_score_into_its_pairs() -> None:
    torch.manual_seed(0)
    model = DecoderOnlyLM(7, 16, 2, 4, 2, 32, 12, rope_base=100.0).eval()  # GQA, 2 blocks
    tokens = torch.randint(0, 7, (5, 9))
    by_pair = score_by_offset(model, tokens)  # (H, pairs, T)
    assert by_pair.shape == (4, 2, 9)
    # Independently: the first block's full scores, q k^T / sqrt(d), by offset.
    attention = model.blocks[0].self_attn
    with torch.no_grad():
        x = model.blocks[0].norm1(model.embedding(tokens))  # (B, T, D)
        q = attention.q_proj(x).view(5, 9, 4, 4).transpose(1, 2)  # (B, H, T, d)
        k = attention.k_proj(x).view(5, 9, 2, 4).transpose(1, 2)
        k = k.repeat_interleave(2, dim=1)
        cos, sin = rope_tables(9, 4, base=100.0)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        scores = q @ k.transpose(-1, -2) / 2.0  # (B, H, T, T)
    for offset in (0, 1, 5, 8):
        expected = torch.diagonal(scores, offset=-offset, dim1=-2, dim2=-1).mean(dim=(0, -1))
        torch.testing.assert_close(by_pair[:, :, offset].sum(dim=1), expected)
    # Another base turns the pairs differently: the slow pair's parts change.
    model.blocks[0].self_attn.rope_base = 10000.0
    assert not torch.allclose(score_by_offset(model, tokens)[:, 1], by_pair[:, 1])


def test_score_by_offset_errors() -> None:
    tokens = torch.zeros(1, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="model"):
        score_by_offset(torch.nn.Linear(2, 2), tokens)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rotary"):
        score_by_offset(DecoderOnlyLM(4, 8, 1, 2, 2, 8, 8, positions="sinusoidal"), tokens)
    with pytest.raises(ValueError, match="tokens"):
        score_by_offset(DecoderOnlyLM(4, 8, 1, 2, 2, 8, 8), torch.full((1, 3), 9))


def test_a_larger_rope_base_is_passed_to_every_block() -> None:
    run = train_previous_token(0, **{**TINY, "steps": 4}, rope_base=500_000.0)
    assert run.settings["rope_base"] == 500_000.0
    assert all(block.self_attn.rope_base == 500_000.0 for block in run.model.blocks)
    with pytest.raises(ValueError, match="rope_base"):
        DecoderOnlyLM(4, 8, 1, 2, 2, 8, 8, rope_base=1.0)
    with pytest.raises(TypeError, match="rope_base"):
        train_previous_token(0, **TINY, rope_base="big")  # type: ignore[arg-type]
