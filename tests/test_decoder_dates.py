"""Tests for :mod:`lessons_code.decoder_dates`: the dates as one sequence, decoder-only."""

from __future__ import annotations

import datetime
import inspect
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from lessons_code.dates import (
    DATE_VOCAB,
    FORMATS,
    UNSEEN_FORMATS,
    date_pairs,
    split_dates,
    train_date_model,
)
from lessons_code.decoder_dates import (
    IGNORE_INDEX,
    MAX_LEN,
    DecoderDateExperiment,
    date_sequences,
    decoder_translate,
    target_loss,
    train_decoder_dates,
)
from lessons_code.modern import DecoderOnlyLM, generate
from lessons_code.results import ENV_VAR
from lessons_code.training import seeded
from lessons_code.transformer import Transformer

# A model small enough to train a few steps in well under a second.
TINY = {
    "steps": 30,
    "batch_size": 16,
    "d_model": 16,
    "num_heads": 4,
    "num_kv_heads": 2,
    "num_layers": 1,
    "d_ff": 16,
    "peak_lr": 0.01,
    "warmup_steps": 5,
    "num_test_dates": 5,
}

# Dates of every length of source, in every format.
DAYS = [datetime.date(1999, 3, 7), datetime.date(2026, 11, 30), datetime.date(1950, 9, 10)]


def tiny_model(seed: int = 0) -> DecoderOnlyLM:
    return seeded(seed, lambda: DecoderOnlyLM(len(DATE_VOCAB), 16, 2, 4, 2, 24, MAX_LEN))


@pytest.fixture(scope="module")
def run() -> DecoderDateExperiment:
    return train_decoder_dates(0, **TINY)


# -- the sequences -------------------------------------------------------------------


def test_sequences_are_source_separator_target_end_padded() -> None:
    pairs = date_pairs(DAYS)
    inputs, labels = date_sequences(pairs)
    sequences = [
        [*DATE_VOCAB.encode(source), DATE_VOCAB.start_id, *DATE_VOCAB.encode(target, end=True)]
        for source, target in pairs
    ]
    width = max(map(len, sequences))
    assert inputs.shape == labels.shape == (len(pairs), width - 1)
    assert inputs.dtype == labels.dtype == torch.int64
    for row, ids in enumerate(sequences):
        padded = ids + [DATE_VOCAB.pad_id] * (width - len(ids))
        assert inputs[row].tolist() == padded[:-1]
        # the label of t is the token at t + 1, where that token is the target's
        start = len(ids) - 11  # 10 characters and </s>
        expected = [
            token if t + 1 >= start and t + 1 < len(ids) else IGNORE_INDEX
            for t, token in enumerate(padded[1:])
        ]
        assert labels[row].tolist() == expected


def test_max_len_holds_every_sequence_of_the_task() -> None:
    # the years all have 4 digits: one year holds every length of source
    year = [datetime.date(2026, 1, 1) + datetime.timedelta(days=i) for i in range(365)]
    pairs = date_pairs(year, styles=[*FORMATS, *UNSEEN_FORMATS])
    inputs, _ = date_sequences(pairs)
    longest = max(len(source) for source, _ in pairs)
    assert inputs.shape[1] + 1 == longest + 12 <= MAX_LEN  # + <s>, 10 characters, </s>


def test_labels_score_the_target_and_its_end_only() -> None:
    pairs = date_pairs(DAYS)
    inputs, labels = date_sequences(pairs)
    scored = labels != IGNORE_INDEX
    assert scored.sum(dim=1).tolist() == [11] * len(pairs)
    for row, (source, target) in enumerate(pairs):
        # the separator's position predicts the first character of the target
        first = int(scored[row].nonzero()[0])
        assert first == len(source)
        assert int(inputs[row, first]) == DATE_VOCAB.start_id
        assert DATE_VOCAB.decode(labels[row, scored[row]]) == target
        assert int(labels[row, scored[row]][-1]) == DATE_VOCAB.end_id
    # a longer target than every other, and a shorter one
    inputs, labels = date_sequences([("ab", "1-2"), ("1/2/3", "")])
    assert (labels != IGNORE_INDEX).sum(dim=1).tolist() == [4, 1]
    assert inputs.shape == (2, 6)  # the longest sequence: a b <s> 1 - 2 </s>


def test_target_loss_is_the_mean_over_the_scored_positions() -> None:
    inputs, labels = date_sequences(date_pairs(DAYS))
    logits = torch.randn(*inputs.shape, len(DATE_VOCAB), generator=torch.Generator().manual_seed(0))
    scored = labels != IGNORE_INDEX
    log_p = logits.log_softmax(dim=-1)
    by_hand = -log_p[scored].gather(1, labels[scored][:, None]).mean()
    assert float(target_loss(logits, labels)) == pytest.approx(float(by_hand), rel=1e-6)


def test_target_loss_ignores_source_and_padding_positions() -> None:
    inputs, labels = date_sequences(date_pairs(DAYS))
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(*inputs.shape, len(DATE_VOCAB), generator=gen, requires_grad=True)
    loss = target_loss(logits, labels)
    loss.backward()
    assert logits.grad is not None
    scored = labels != IGNORE_INDEX
    source = torch.ones_like(scored)  # the positions before the separator
    for row in range(len(labels)):
        source[row, int(scored[row].nonzero()[0]) :] = False
    padding = ~scored & ~source
    assert source.any()
    assert padding.any()
    assert logits.grad[~scored].abs().max() == 0  # no gradient where not scored
    assert (logits.grad[scored].abs().sum(dim=-1) > 0).all()
    # other logits at the ignored positions: the same loss
    with torch.no_grad():
        changed = logits.clone()
        changed[~scored] = torch.randn(int((~scored).sum()), len(DATE_VOCAB), generator=gen)
    assert torch.equal(target_loss(changed, labels), loss.detach())


def test_padding_changes_no_loss_and_no_gradient() -> None:
    # The padding comes after </s>: no scored position sees it (causal attention).
    inputs, labels = date_sequences(date_pairs(DAYS))
    padding = (inputs == DATE_VOCAB.pad_id) & (labels == IGNORE_INDEX)
    assert padding.any()
    other = inputs.masked_fill(padding, DATE_VOCAB.encode("7")[0])
    grads = []
    for tokens in (inputs, other):
        model = tiny_model()
        loss = target_loss(model(tokens), labels)
        loss.backward()
        grads.append((loss.detach(), [p.grad for p in model.parameters()]))
    (loss, grad), (other_loss, other_grad) = grads
    torch.testing.assert_close(other_loss, loss, rtol=0, atol=1e-6)
    for ours, theirs in zip(grad, other_grad, strict=True):
        torch.testing.assert_close(theirs, ours, rtol=0, atol=1e-6)
    # the source, unlike the padding, is read: another source, another loss
    source = (labels == IGNORE_INDEX) & ~padding
    changed = inputs.masked_fill(source & (inputs > DATE_VOCAB.end_id), DATE_VOCAB.encode("7")[0])
    with torch.no_grad():
        changed_loss = target_loss(tiny_model()(changed), labels)
    assert abs(float(changed_loss) - float(loss)) > 1e-4


def test_sequence_errors() -> None:
    with pytest.raises(TypeError, match="pairs must be a sequence of"):
        date_sequences("3/7/1999")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pairs must hold at least one pair"):
        date_sequences([])
    with pytest.raises(TypeError, match=r"pairs\[1\] must be a \(source, target\) pair"):
        date_sequences([("3/7/1999", "1999-03-07"), ("3/7/1999",)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"pairs\[0\] must be a \(source, target\) pair"):
        date_sequences([("3/7/1999", 1999)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"pairs\[0\] must have a source"):
        date_sequences([("", "1999-03-07")])
    with pytest.raises(ValueError, match="characters of the vocabulary"):
        date_sequences([("3/7/1999", "1999_03_07")])
    logits = torch.zeros(2, 3, 5)
    with pytest.raises(TypeError, match="labels must be an int64 tensor"):
        target_loss(logits, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"labels must have shape \(B, T\) = \(2, 3\)"):
        target_loss(logits, torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="labels must score at least one position"):
        target_loss(logits, torch.full((2, 3), IGNORE_INDEX))
    with pytest.raises(TypeError, match="logits must have a floating-point dtype"):
        target_loss(torch.zeros(2, 3, 5, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))


# -- translation ---------------------------------------------------------------------


def test_translation_is_the_greedy_continuation_of_source_and_separator() -> None:
    model = tiny_model().eval()
    sources = [source for source, _ in date_pairs(DAYS[1:2])]  # every format
    outputs = decoder_translate(model, sources)
    for source, output in zip(sources, outputs, strict=True):
        tokens = [*DATE_VOCAB.encode(source), DATE_VOCAB.start_id]
        with torch.no_grad():
            for _ in range(11):  # the whole sequence at every step: no cache
                logits = model(torch.tensor([tokens]))
                tokens.append(int(logits[0, -1].argmax()))
        assert output == DATE_VOCAB.decode(tokens[len(source) + 1 :])


def test_cached_and_uncached_translations_are_equal(run: DecoderDateExperiment) -> None:
    sources = [source for source, _, _ in run.held_out]
    # the held-out outputs were generated with the cache
    assert decoder_translate(run.model, sources, use_cache=False) == [o for _, _, o in run.held_out]
    model = tiny_model()
    cached = decoder_translate(model, sources[:8])
    assert decoder_translate(model, sources[:8], use_cache=False) == cached
    # token by token, with the logits each token was chosen from
    european = sources[list(FORMATS).index("european") :: len(FORMATS)]  # all of length 10
    prompts = torch.tensor([[*DATE_VOCAB.encode(s), DATE_VOCAB.start_id] for s in european])
    for model in (run.model, tiny_model()):
        ids, logits = generate(model, prompts, 11, temperature=0, return_logits=True)
        plain = generate(model, prompts, 11, temperature=0, use_cache=False, return_logits=True)
        assert torch.equal(ids, plain[0])
        torch.testing.assert_close(logits, plain[1], rtol=0, atol=1e-6)


def test_translation_errors() -> None:
    model = tiny_model()
    with pytest.raises(TypeError, match=r"model must be a lessons_code\.modern\.DecoderOnlyLM"):
        decoder_translate(Transformer(39, 39, 16, 2, 1, 1, 16), ["3/7/1999"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model must have DATE_VOCAB's 39 tokens"):
        decoder_translate(DecoderOnlyLM(12, 16, 1, 2, 2, 16, MAX_LEN), ["3/7/1999"])
    with pytest.raises(TypeError, match="sources must be a sequence of strings"):
        decoder_translate(model, "3/7/1999")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sources must hold at least one date"):
        decoder_translate(model, [])
    with pytest.raises(TypeError, match=r"sources\[1\] must be a string"):
        decoder_translate(model, ["3/7/1999", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="characters of the vocabulary"):
        decoder_translate(model, ["3/7/1999!"])
    with pytest.raises(TypeError, match="use_cache must be a bool"):
        decoder_translate(model, ["3/7/1999"], use_cache=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_len"):
        decoder_translate(model, ["1" * MAX_LEN])


# -- training ------------------------------------------------------------------------


def test_training_is_deterministic_per_seed_and_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: DecoderDateExperiment
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    state = torch.random.get_rng_state()
    again = train_decoder_dates(0, **TINY, device="cpu")  # trained anew, and saved
    assert torch.equal(torch.random.get_rng_state(), state)  # the caller's random state
    assert again is not run
    np.testing.assert_array_equal(again.losses, run.losses)
    assert again.held_out == run.held_out
    for name, value in run.model.state_dict().items():
        assert torch.equal(value, again.model.state_dict()[name]), name
    read = train_decoder_dates(0, **TINY)  # read back, not trained
    assert len(list(tmp_path.glob("*.pkl"))) == 1
    assert read is not again
    assert read.train_seconds == again.train_seconds
    assert read.held_out == run.held_out


def test_training_result(run: DecoderDateExperiment) -> None:
    assert run.seed == 0
    assert run.settings == {**TINY, "positions": "rope", "device": "cpu", "recipe": "2017"}
    _, test = split_dates(5, seed=0)  # the capstone's split and held-out pairs
    assert [pair[:2] for pair in run.held_out] == date_pairs(test)
    correct = [target == predicted for _, target, predicted in run.held_out]
    assert run.accuracy == pytest.approx(np.mean(correct))
    by_format = np.reshape(correct, (5, len(FORMATS))).mean(axis=0)
    assert run.accuracy_by_format == pytest.approx(dict(zip(FORMATS, by_format, strict=True)))
    assert isinstance(run.model, DecoderOnlyLM)
    assert not run.model.training
    assert run.model.final_norm.weight.device.type == "cpu"
    assert run.losses.shape == run.learning_rates.shape == (30,)
    # the capstone's schedule: warm-up, then a linear decay to (almost) zero
    assert run.learning_rates.argmax() == TINY["warmup_steps"] - 1
    assert run.learning_rates.max() == pytest.approx(TINY["peak_lr"])
    assert run.learning_rates[-1] < 0.05 * run.learning_rates.max()
    assert run.train_seconds > 0
    again = pickle.loads(pickle.dumps(run))  # results.stored pickles it
    np.testing.assert_array_equal(again.losses, run.losses)


def test_training_learns_from_a_uniform_guess(run: DecoderDateExperiment) -> None:
    assert abs(run.losses[0] - np.log(len(DATE_VOCAB))) < 0.5
    assert run.losses[-5:].mean() < 0.8 * run.losses[:5].mean()


def test_default_model_has_the_capstones_parameter_count_within_one_percent() -> None:
    ours = {k: p.default for k, p in inspect.signature(train_decoder_dates).parameters.items()}
    theirs = {k: p.default for k, p in inspect.signature(train_date_model).parameters.items()}
    V = len(DATE_VOCAB)
    decoder = DecoderOnlyLM(
        V,
        ours["d_model"],
        ours["num_layers"],
        ours["num_heads"],
        ours["num_kv_heads"],
        ours["d_ff"],
        MAX_LEN,
    )
    layers = theirs["num_layers"]
    capstone = Transformer(
        V, V, theirs["d_model"], theirs["num_heads"], layers, layers, theirs["d_ff"]
    )
    count = sum(p.numel() for p in decoder.parameters())
    capstone_count = sum(p.numel() for p in capstone.parameters())
    assert abs(count / capstone_count - 1) < 0.01


def test_training_errors() -> None:
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        train_decoder_dates(-1, **TINY)
    with pytest.raises(ValueError, match="warmup_steps must be at most steps = 30"):
        train_decoder_dates(0, **{**TINY, "warmup_steps": 31})
    with pytest.raises(ValueError, match="peak_lr must be a finite real number > 0"):
        train_decoder_dates(0, **{**TINY, "peak_lr": 0.0})
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        train_decoder_dates(0, **{**TINY, "batch_size": 0})
    with pytest.raises(TypeError, match="steps must be an integer"):
        train_decoder_dates(0, **{**TINY, "steps": 2.5})
    with pytest.raises(ValueError, match="num_kv_heads must divide num_heads"):
        train_decoder_dates(0, **{**TINY, "num_kv_heads": 3})
    with pytest.raises(ValueError, match="num_heads must divide d_model"):
        train_decoder_dates(0, **{**TINY, "num_heads": 3, "num_kv_heads": 1})
    with pytest.raises(TypeError, match="d_model must be an integer"):
        train_decoder_dates(0, **{**TINY, "d_model": "16"})
    with pytest.raises(ValueError, match="positions must be one of"):
        train_decoder_dates(0, **TINY, positions="alibi")
    with pytest.raises(TypeError, match="device must be"):
        train_decoder_dates(0, **TINY, device=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recipe must be '2017' or 'llama'"):
        train_decoder_dates(0, **TINY, recipe="adam")
    with pytest.raises(ValueError, match="warmup_steps must be below steps = 30"):
        train_decoder_dates(0, **{**TINY, "warmup_steps": 30}, recipe="llama")


def test_llamas_recipe_trains_the_same_model_on_the_same_batches_differently(
    run: DecoderDateExperiment,
) -> None:
    llama = train_decoder_dates(0, **TINY, recipe="llama")
    assert llama.settings["recipe"] == "llama"
    assert run.settings["recipe"] == "2017"
    # the same first batch from the same weights: the same first loss
    assert llama.losses[0] == run.losses[0]
    assert not np.array_equal(llama.losses, run.losses)
    # the cosine ends at a tenth of the peak, the linear decay near zero
    assert llama.learning_rates[-1] == pytest.approx(0.1 * TINY["peak_lr"])
    assert run.learning_rates[-1] < 0.05 * TINY["peak_lr"]
