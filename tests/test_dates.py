"""Tests for :mod:`lessons_code.dates`."""

from __future__ import annotations

import datetime
import functools
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from lessons_code.dates import (
    DATE_VOCAB,
    FIRST_DATE,
    FORMATS,
    FUTURE_FIRST,
    FUTURE_LAST,
    LAST_DATE,
    UNSEEN_FORMATS,
    CharVocab,
    DateExperiment,
    date_pairs,
    format_date,
    split_dates,
    stress_pairs,
    teacher_forcing_step,
    train_date_model,
    translate,
)
from lessons_code.results import ENV_VAR
from lessons_code.training import seeded, warmup_linear_decay
from lessons_code.transformer import Transformer, greedy_decode

# A model small enough to train a few steps in well under a second.
TINY = {
    "steps": 30,
    "batch_size": 16,
    "d_model": 16,
    "num_heads": 2,
    "d_ff": 16,
    "num_layers": 1,
    "warmup_steps": 5,
    "num_test_dates": 5,
}


# -- formats and split ------------------------------------------------------------


def test_formats_write_their_example() -> None:
    day = datetime.date(2026, 11, 30)
    for style, example in FORMATS.items():
        assert format_date(day, style) == example
    assert format_date(day, "iso") == "2026-11-30"
    assert format_date(datetime.date(1950, 1, 5), "long") == "january 5, 1950"
    assert format_date(datetime.date(1950, 1, 5), "short") == "5 jan 1950"
    assert format_date(datetime.date(1950, 1, 5), "us") == "1/5/1950"
    assert format_date(datetime.date(1950, 1, 5), "european") == "05.01.1950"


def test_year_month_and_day_sit_at_different_places() -> None:
    texts = {style: format_date(datetime.date(2026, 11, 30), style) for style in FORMATS}
    assert texts["us"].split("/")[0] == "11"  # month first
    assert texts["european"].split(".")[0] == "30"  # day first
    assert len({text.index("2026") for text in texts.values()}) == 3
    assert len({text.index("30") for text in texts.values()}) == 3


def test_format_date_errors() -> None:
    with pytest.raises(ValueError, match="style must be one of 'long'"):
        format_date(FIRST_DATE, "french")
    with pytest.raises(TypeError, match="style must be a string"):
        format_date(FIRST_DATE, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"date must be a datetime\.date"):
        format_date("2026-11-30", "long")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"date must be a datetime\.date"):
        format_date(datetime.datetime(2026, 11, 30), "long")


def test_split_is_by_date_disjoint_complete_and_reproducible() -> None:
    train, test = split_dates(300, seed=4)
    assert len(test) == 300
    assert not set(train) & set(test)
    assert len(train) + len(test) == (LAST_DATE - FIRST_DATE).days + 1
    assert train == sorted(train)
    assert (train, test) == split_dates(300, seed=4)
    assert test != split_dates(300, seed=5)[1]
    # no held-out date reaches training in any format
    seen = {source for source, _ in date_pairs(train)}
    assert not seen & {source for source, _ in date_pairs(test)}


def test_split_of_a_short_range() -> None:
    first = datetime.date(2000, 1, 1)
    train, test = split_dates(2, seed=0, first=first, last=datetime.date(2000, 1, 5))
    assert sorted(train + test) == [first + datetime.timedelta(days=i) for i in range(5)]


def test_split_errors() -> None:
    with pytest.raises(ValueError, match="num_test must be smaller than the 5 dates"):
        split_dates(5, 0, first=datetime.date(2000, 1, 1), last=datetime.date(2000, 1, 5))
    with pytest.raises(ValueError, match="num_test must be an integer >= 1"):
        split_dates(0, 0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        split_dates(10, -1)
    with pytest.raises(TypeError, match=r"last must be a datetime\.date"):
        split_dates(10, 0, last="2049-12-31")  # type: ignore[arg-type]


def test_date_pairs() -> None:
    day = datetime.date(1999, 3, 7)
    pairs = date_pairs([day, LAST_DATE])
    assert len(pairs) == 2 * len(FORMATS)
    assert pairs[0] == ("march 7, 1999", "1999-03-07")
    assert pairs[-1] == ("31.12.2049", "2049-12-31")
    with pytest.raises(ValueError, match="styles must hold names among"):
        date_pairs([day], styles=["iso"])
    with pytest.raises(ValueError, match="styles must name at least one format"):
        date_pairs([day], styles=[])
    with pytest.raises(TypeError, match="styles must be a sequence of format names"):
        date_pairs([day], styles="long")
    with pytest.raises(TypeError, match=r"date must be a datetime\.date"):
        date_pairs(["1999-03-07"])  # type: ignore[list-item]


def test_the_unseen_format_is_never_a_training_format() -> None:
    assert not set(UNSEEN_FORMATS) & set(FORMATS)
    day = datetime.date(2026, 11, 30)
    for style, example in UNSEEN_FORMATS.items():
        assert format_date(day, style) == example
    assert date_pairs([day], styles=["british"]) == [("30 november 2026", "2026-11-30")]
    # every date of the task: no unseen-format text is a training text
    train, test = split_dates(500, seed=0)
    training = {source for source, _ in date_pairs(train)}
    unseen = {source for source, _ in date_pairs(train + test, styles=tuple(UNSEEN_FORMATS))}
    assert len(unseen) == len(train) + len(test)
    # May is its own abbreviation: "2 may 1950" is also the short format
    alike = training & unseen
    assert alike
    assert all(" may " in text for text in alike)
    # stress_pairs leaves those out: none of its unseen-format texts is a training text
    unseen_case = stress_pairs(500, seed=0)["unseen format"]
    assert not {source for source, _ in unseen_case} & training
    trained_texts = {source for source, _ in date_pairs(train + test)}
    assert not {source for source, _ in unseen_case} & trained_texts
    assert {target[5:7] for _, target in unseen_case} == {f"{m:02d}" for m in range(1, 13)} - {"05"}
    # and train_date_model's held-out pairs use the training formats only
    run = train_date_model(0, **TINY)
    held = {source for source, _, _ in run.held_out}
    assert held == {source for source, _ in date_pairs(split_dates(5, seed=0)[1])}


def test_stress_pairs() -> None:
    cases = stress_pairs(40, seed=3)
    assert list(cases) == ["future years", "unseen format"]
    future = cases["future years"]
    assert len(future) == 40 * len(FORMATS)
    years = {int(target[:4]) for _, target in future}
    assert min(years) >= FUTURE_FIRST.year > LAST_DATE.year
    assert max(years) <= FUTURE_LAST.year == 2099
    dates = sorted({target for _, target in future})
    assert future == date_pairs([datetime.date.fromisoformat(d) for d in dates])
    _, held_out = split_dates(40, seed=3)
    expected = date_pairs([d for d in held_out if d.month != 5], styles=["british"])
    assert cases["unseen format"] == expected
    assert stress_pairs(40, seed=3) == cases
    assert stress_pairs(40, seed=4) != cases
    with pytest.raises(ValueError, match="num_test_dates must be an integer >= 1"):
        stress_pairs(0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        stress_pairs(5, seed=1.0)  # type: ignore[arg-type]


# -- vocabulary -----------------------------------------------------------------


def test_every_text_of_the_task_round_trips() -> None:
    train, test = split_dates(1000, seed=0)
    texts = {text for pair in date_pairs(train[::7] + test) for text in pair}
    for text in texts:
        ids = DATE_VOCAB.encode(text, start=True, end=True)
        assert ids[0] == DATE_VOCAB.start_id
        assert ids[-1] == DATE_VOCAB.end_id
        assert DATE_VOCAB.decode(ids) == text
    assert max(len(text) for text in texts) == len("september 30, 2000")


def test_vocab_ids_and_symbols() -> None:
    vocab = CharVocab("xyz")
    assert len(vocab) == 6
    assert (vocab.pad_id, vocab.start_id, vocab.end_id) == (0, 1, 2)
    assert vocab.encode("zx") == [5, 3]
    assert vocab.encode("", start=True, end=True) == [1, 2]
    assert vocab.decode([1, 5, 0, 3, 2, 4]) == "zx"  # stops at the end token
    assert vocab.decode(torch.tensor([3, 4])) == "xy"
    assert vocab.symbols(torch.tensor([1, 3, 2, 0])) == ["<s>", "x", "</s>", "<pad>"]
    assert vocab == CharVocab("xyz")


def test_encode_batch_pads_at_the_end() -> None:
    batch = DATE_VOCAB.encode_batch(["1/5/1950", "30 nov 2026"], start=True)
    assert batch.dtype == torch.long
    assert batch.shape == (2, 12)
    assert batch[0, 9:].tolist() == [DATE_VOCAB.pad_id] * 3
    assert DATE_VOCAB.decode(batch[1]) == "30 nov 2026"


def test_encode_batch_equals_encode_text_by_text() -> None:
    texts = ["march 7, 1999", "", "3/7/1999", "07.03.1999", "7 mar 1999"]
    for start in (False, True):
        for end in (False, True):
            batch = DATE_VOCAB.encode_batch(texts, start=start, end=end)
            width = batch.shape[1]
            for row, text in zip(batch.tolist(), texts, strict=True):
                ids = DATE_VOCAB.encode(text, start=start, end=end)
                assert row == ids + [DATE_VOCAB.pad_id] * (width - len(ids))


def test_vocab_errors() -> None:
    with pytest.raises(ValueError, match="characters must not repeat a character"):
        CharVocab("abca")
    with pytest.raises(ValueError, match="characters must not be empty"):
        CharVocab("")
    with pytest.raises(TypeError, match="characters must be a string"):
        CharVocab(["a", "b"])  # type: ignore[arg-type]
    vocab = CharVocab("ab")
    with pytest.raises(ValueError, match="text must hold characters of the vocabulary, got 'c'"):
        vocab.encode("abc")
    with pytest.raises(TypeError, match="text must be a string"):
        vocab.encode(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="start must be a bool"):
        vocab.encode("ab", start=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"ids\[1\] must be a token id below 5"):
        vocab.decode([3, 5])
    with pytest.raises(TypeError, match=r"ids\[0\] must be an integer"):
        vocab.symbols([3.0])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="ids must be an iterable of token ids"):
        vocab.decode("ab")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="texts must hold at least one text"):
        vocab.encode_batch([])
    with pytest.raises(ValueError, match="texts must encode to at least one token"):
        vocab.encode_batch([""])
    with pytest.raises(TypeError, match="texts must be a sequence of strings"):
        vocab.encode_batch("ab")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a string"):
        vocab.encode_batch(["ab", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="got 'c' in 'bc'"):
        vocab.encode_batch(["ab", "bc"], end=True)
    with pytest.raises(ValueError, match=r"got '\\x00'"):
        vocab.encode_batch(["a\0"])


# -- training ------------------------------------------------------------------------


def test_training_is_deterministic_and_learns() -> None:
    first = train_date_model(3, **TINY)
    second = train_date_model(3, **TINY)
    assert isinstance(first, DateExperiment)
    np.testing.assert_array_equal(first.losses, second.losses)
    assert first.held_out == second.held_out
    for name, value in first.model.state_dict().items():
        assert torch.equal(value, second.model.state_dict()[name]), name
    assert first.losses.shape == (30,)
    assert first.losses[-5:].mean() < 0.8 * first.losses[:5].mean()  # it learns
    other = train_date_model(4, **TINY)
    assert not np.array_equal(first.losses, other.losses)


def test_training_result() -> None:
    run = train_date_model(0, **TINY)
    assert run.seed == 0
    assert run.settings["steps"] == 30
    assert run.settings["schedule"] == "linear"
    assert len(run.held_out) == 5 * len(FORMATS)
    sources = [source for source, _, _ in run.held_out]
    _, test = split_dates(5, seed=0)
    assert [target for _, target, _ in run.held_out] == [target for _, target in date_pairs(test)]
    assert sources == [source for source, _ in date_pairs(test)]
    correct = [target == predicted for _, target, predicted in run.held_out]
    assert run.accuracy == pytest.approx(np.mean(correct))
    assert set(run.accuracy_by_format) == set(FORMATS)
    assert isinstance(run.model, Transformer)
    assert not run.model.training
    # warm-up, then a linear decay to (almost) zero
    assert run.learning_rates.argmax() == TINY["warmup_steps"] - 1
    assert run.learning_rates.max() == pytest.approx(3e-3)
    assert run.learning_rates[-1] < 0.05 * run.learning_rates.max()
    assert run.train_seconds > 0
    again = pickle.loads(pickle.dumps(run))  # results.stored pickles it
    np.testing.assert_array_equal(again.losses, run.losses)


def test_translate_is_greedy_decoding() -> None:
    run = train_date_model(0, **TINY)
    sources = [source for source, _, _ in run.held_out]
    assert translate(run.model, sources) == [output for _, _, output in run.held_out]
    ids = greedy_decode(
        run.model,
        DATE_VOCAB.encode_batch(sources[:3]),
        start_id=1,
        end_id=2,
        max_len=11,
        causal=False,
    )
    unmasked = translate(run.model, sources[:3], causal=False)
    assert unmasked == [DATE_VOCAB.decode(row) for row in ids]
    with pytest.raises(TypeError, match="causal must be a bool"):
        translate(run.model, sources, causal="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="texts must hold at least one text"):
        translate(run.model, [])


def test_training_without_the_causal_mask() -> None:
    masked = train_date_model(0, **TINY)
    unmasked = train_date_model(0, **TINY, causal=False)
    assert masked.settings["causal"] is True
    assert unmasked.settings == {**masked.settings, "causal": False}
    np.testing.assert_array_equal(unmasked.learning_rates, masked.learning_rates)
    assert not np.array_equal(unmasked.losses, masked.losses)
    # the held-out outputs are the unmasked model's greedy decodings, unmasked
    sources = [source for source, _, _ in unmasked.held_out]
    assert [o for _, _, o in unmasked.held_out] == translate(unmasked.model, sources, causal=False)
    with pytest.raises(TypeError, match="causal must be a bool"):
        train_date_model(0, **TINY, causal=1)  # type: ignore[arg-type]


def test_stored_training_reads_back_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    first = train_date_model(1, **TINY)
    assert len(list(tmp_path.glob("*.pkl"))) == 1
    second = train_date_model(1, **TINY)  # read back, not trained
    assert second is not first
    assert second.train_seconds == first.train_seconds  # the training's own time
    np.testing.assert_array_equal(second.losses, first.losses)
    assert second.held_out == first.held_out
    for name, value in first.model.state_dict().items():
        assert torch.equal(value, second.model.state_dict()[name]), name
    assert translate(second.model, ["3/7/1999"]) == translate(first.model, ["3/7/1999"])
    train_date_model(1, **TINY, causal=False)  # another argument: another result
    assert len(list(tmp_path.glob("*.pkl"))) == 2


def test_teacher_forcing_step_without_the_mask() -> None:
    model = _tiny_model()
    optimizer, scheduler = _constant_schedule(model)
    src, tgt = _batch(["2001-02-03", "2001-02-03"])
    with torch.no_grad():
        log_p = model(src, tgt[:, :-1], causal=False).log_softmax(dim=-1)
    expected = -log_p.gather(-1, tgt[:, 1:, None]).mean()
    loss = teacher_forcing_step(
        model, optimizer, scheduler, src, tgt, pad_id=DATE_VOCAB.pad_id, causal=False
    )
    assert loss == pytest.approx(float(expected), rel=1e-6)
    with pytest.raises(TypeError, match="causal must be a bool"):
        teacher_forcing_step(model, optimizer, scheduler, src, tgt, pad_id=0, causal=None)  # type: ignore[arg-type]


def test_training_with_the_papers_schedule() -> None:
    run = train_date_model(0, **{**TINY, "steps": 12}, schedule="inverse_sqrt")
    rates = run.learning_rates
    assert rates.argmax() == 4
    assert rates[-1] == pytest.approx(3e-3 * np.sqrt(5 / 12))


def test_training_errors() -> None:
    with pytest.raises(ValueError, match="schedule must be 'linear' or 'inverse_sqrt'"):
        train_date_model(0, **TINY, schedule="cosine")
    with pytest.raises(ValueError, match="warmup_steps must be at most steps = 30"):
        train_date_model(0, **{**TINY, "warmup_steps": 31})
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        train_date_model(0, **{**TINY, "num_heads": 3})
    with pytest.raises(ValueError, match="peak_lr must be a finite real number > 0"):
        train_date_model(0, **TINY, peak_lr=0.0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        train_date_model(-1, **TINY)
    with pytest.raises(TypeError, match="positional must be a bool"):
        train_date_model(0, **TINY, positional=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        train_date_model(0, **{**TINY, "batch_size": 0})


# -- one training step --------------------------------------------------------------


def _tiny_model(seed: int = 0) -> Transformer:
    V = len(DATE_VOCAB)
    return seeded(seed, lambda: Transformer(V, V, 16, 2, 1, 1, 16, pad_id=DATE_VOCAB.pad_id))


def _constant_schedule(
    model: torch.nn.Module, lr: float = 0.01
) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)


def _batch(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    pairs = date_pairs([datetime.date(2001, 2, 3)], styles=["us", "long"])
    src = DATE_VOCAB.encode_batch([source for source, _ in pairs])
    tgt = DATE_VOCAB.encode_batch(texts, start=True, end=True)
    return src, tgt


def test_train_date_model_is_a_loop_of_teacher_forcing_steps() -> None:
    # The same run by hand: split, data, model, optimiser, schedule and
    # batches as train_date_model makes them, every step one call.
    run = train_date_model(2, **TINY)
    train_dates, _ = split_dates(TINY["num_test_dates"], 2)
    pairs = date_pairs(train_dates)
    sources = DATE_VOCAB.encode_batch([src for src, _ in pairs])
    targets = DATE_VOCAB.encode_batch([tgt for _, tgt in pairs], start=True, end=True)
    V, sizes = len(DATE_VOCAB), (16, 2, 1, 1, 16)
    model = seeded(2, lambda: Transformer(V, V, *sizes, pad_id=DATE_VOCAB.pad_id))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: warmup_linear_decay(s, warmup_steps=5, total_steps=30)
    )
    batches = torch.Generator().manual_seed(2)
    losses = []
    model.train()
    for _ in range(TINY["steps"]):
        rows = torch.randint(len(pairs), (TINY["batch_size"],), generator=batches)
        losses.append(
            teacher_forcing_step(
                model, optimizer, scheduler, sources[rows], targets[rows], pad_id=0
            )
        )
    np.testing.assert_array_equal(run.losses, np.array(losses))  # bit for bit
    for name, value in run.model.state_dict().items():
        assert torch.equal(value, model.state_dict()[name]), name


def test_teacher_forcing_step_is_the_shifted_cross_entropy_without_padding() -> None:
    model = _tiny_model()
    optimizer, scheduler = _constant_schedule(model)
    # the second target is shorter: its last column is padding
    src, tgt = _batch(["2001-02-03", "2001-02-3"])
    assert tgt[1, -1] == DATE_VOCAB.pad_id
    before = {name: value.clone() for name, value in model.state_dict().items()}
    with torch.no_grad():
        log_p = model(src, tgt[:, :-1]).log_softmax(dim=-1)  # (2, 11, V)
    picked = log_p.gather(-1, tgt[:, 1:, None])[..., 0]  # (2, 11)
    real = tgt[:, 1:] != DATE_VOCAB.pad_id
    expected = -picked[real].mean()

    loss = teacher_forcing_step(model, optimizer, scheduler, src, tgt, pad_id=DATE_VOCAB.pad_id)
    assert isinstance(loss, float)
    assert loss == pytest.approx(float(expected), rel=1e-6)
    assert real.sum() == 21  # 11 + 10 predictions count, the padding does not
    assert scheduler.last_epoch == 1  # the schedule moved on
    changed = [not torch.equal(value, before[name]) for name, value in model.state_dict().items()]
    assert any(changed)  # the update happened


def test_teacher_forcing_step_errors() -> None:
    model = _tiny_model()
    optimizer, scheduler = _constant_schedule(model)
    src, tgt = _batch(["2001-02-03", "2001-02-03"])
    _, other_scheduler = _constant_schedule(_tiny_model(1))

    step = functools.partial(
        teacher_forcing_step,
        model=model,
        optimizer=optimizer,
        scheduler=scheduler,
        src=src,
        tgt=tgt,
        pad_id=0,
    )  # each check below replaces one argument

    with pytest.raises(TypeError, match=r"model must be a torch\.nn\.Module"):
        step(model=lambda src, tgt: src)
    with pytest.raises(TypeError, match=r"optimizer must be a torch\.optim\.Optimizer"):
        step(optimizer="adam")
    with pytest.raises(TypeError, match=r"scheduler must be a torch\.optim\.lr_scheduler"):
        step(scheduler=None)
    with pytest.raises(ValueError, match="scheduler must schedule the optimizer"):
        step(scheduler=other_scheduler)
    with pytest.raises(TypeError, match=r"src must be a torch\.Tensor of token ids"):
        step(src=src.tolist())
    with pytest.raises(TypeError, match="tgt must have an integer dtype"):
        step(tgt=tgt.float())
    with pytest.raises(ValueError, match=r"tgt must have shape \(B, T\)"):
        step(tgt=tgt[0])
    with pytest.raises(ValueError, match="tgt must have at least 2 columns"):
        step(tgt=tgt[:, :1])
    with pytest.raises(ValueError, match=r"tgt must have the batch size of src \(2\)"):
        step(tgt=tgt[:1])
    with pytest.raises(ValueError, match="pad_id must be an integer >= 0"):
        step(pad_id=-1)
    with pytest.raises(TypeError, match="pad_id must be an integer"):
        step(pad_id=0.0)
