"""Tests for :mod:`lessons_code.text_lm`: the help text, the two measures and the model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lessons_code.modern import generate
from lessons_code.text_lm import (
    help_text,
    repeated_fraction,
    train_text_model,
    unknown_word_fraction,
    words,
)

# A model small enough to train a few steps in well under a second.
TINY = {
    "steps": 6,
    "seq_len": 24,
    "batch_size": 4,
    "d_model": 16,
    "num_heads": 2,
    "num_kv_heads": 1,
    "d_ff": 16,
    "warmup_steps": 2,
}


def test_help_text_is_prose_without_code_or_headings() -> None:
    paragraphs = help_text()
    assert len(paragraphs) > 500
    for paragraph in paragraphs:
        assert paragraph == paragraph.strip()
        assert "\n" not in paragraph
        assert all(" " <= char <= "~" for char in paragraph)
        assert not set(paragraph) <= set("*=-~^ ")  # not an underline
    # the grammar rules of the reference are indented, so none is kept
    assert not any("::=" in paragraph for paragraph in paragraphs)


def test_words_are_lowercased_runs_of_letters() -> None:
    assert words("Don't x2 y") == ["don", "t", "x", "y"]
    with pytest.raises(TypeError, match="text must be a string"):
        words(3)  # type: ignore[arg-type]


def test_repeated_fraction_counts_windows_seen_before() -> None:
    # windows "ab", "ba", "ab", "ba", "ab": the last three were seen
    assert repeated_fraction("ababab", n=2) == pytest.approx(3 / 5)
    assert repeated_fraction("abcdef", n=2) == 0.0
    assert repeated_fraction("the same " * 20) > 0.9
    assert repeated_fraction("abc", n=5) == 0.0  # no window at all


def test_repeated_fraction_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="text must be a string"):
        repeated_fraction(b"abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be"):
        repeated_fraction("abc", n=0)


def test_unknown_word_fraction_leaves_out_the_first_and_last_word() -> None:
    known = {"the", "cat"}
    assert unknown_word_fraction("zz the cat zz", known) == 0.0
    assert unknown_word_fraction("zz the dgo cat zz", known) == pytest.approx(1 / 3)
    assert unknown_word_fraction("one two", known) == 0.0  # nothing counted


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    return train_text_model(0, **TINY)


def test_train_text_model_holds_out_every_tenth_paragraph(run) -> None:  # type: ignore[no-untyped-def]
    paragraphs = help_text()
    assert run.held_out_text.split("\n") == list(paragraphs[9::10])
    assert len(run.train_text.split("\n")) == len(paragraphs) - len(paragraphs[9::10])
    assert run.losses.shape == (TINY["steps"],)
    assert np.isfinite(run.losses).all()
    assert np.isfinite(run.held_out_loss)
    assert run.model.max_len == TINY["seq_len"]
    assert not run.model.training


def test_train_text_model_is_deterministic(run) -> None:  # type: ignore[no-untyped-def]
    again = train_text_model(0, **TINY)
    np.testing.assert_array_equal(run.losses, again.losses)
    other = train_text_model(1, **TINY)
    assert not np.array_equal(run.losses, other.losses)


def test_the_trained_model_continues_within_its_length(run) -> None:  # type: ignore[no-untyped-def]
    prompt = torch.tensor([run.vocab.encode("The ")])
    out = generate(run.model, prompt, TINY["seq_len"] - 3, temperature=0.0)
    assert out.shape == (1, TINY["seq_len"] - 3)
    with pytest.raises(ValueError, match="max_len"):
        generate(run.model, prompt, TINY["seq_len"], temperature=0.0)


@pytest.mark.parametrize(
    ("argument", "value", "error", "match"),
    [
        ("seed", -1, ValueError, "seed"),
        ("steps", 0, ValueError, "steps"),
        ("seq_len", 1.5, TypeError, "seq_len"),
        ("peak_lr", 0.0, ValueError, "peak_lr"),
        ("warmup_steps", 7, ValueError, "warmup_steps must be at most steps"),
        ("num_heads", 3, ValueError, "num_heads"),
        ("device", 3, TypeError, "device"),
    ],
)
def test_train_text_model_rejects_bad_input(
    argument: str, value: object, error: type[Exception], match: str
) -> None:
    settings: dict[str, object] = {"seed": 0, **TINY, argument: value}
    with pytest.raises(error, match=match):
        train_text_model(**settings)  # type: ignore[arg-type]
