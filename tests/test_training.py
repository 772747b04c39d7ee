"""Tests for :mod:`lessons_code.training`, the helpers the experiments share."""

from __future__ import annotations

import itertools
import threading

import pytest
import torch
from torch import nn

from lessons_code.training import (
    accuracy,
    adam_with_warmup,
    adamw_cosine,
    map_in_threads,
    seeded,
    warmup_cosine,
    warmup_inverse_sqrt,
    warmup_linear_decay,
)

# -- accuracy ---------------------------------------------------------------


def test_accuracy_counts_positive_logits_as_label_one() -> None:
    logits = torch.tensor([3.0, -2.0, 0.0, 0.1])  # 0.0 is not > 0: label 0
    assert accuracy(logits, torch.tensor([1.0, 0.0, 0.0, 1.0])) == 1.0
    assert accuracy(logits, torch.tensor([0.0, 1.0, 1.0, 0.0])) == 0.0
    assert accuracy(logits, torch.tensor([1.0, 1.0, 0.0, 0.0])) == 0.5


def test_accuracy_matches_a_direct_count() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(1000, generator=gen)
    y = (torch.rand(1000, generator=gen) < 0.5).float()
    expected = sum(int((z > 0) == (t == 1)) for z, t in zip(logits, y, strict=True)) / 1000
    assert accuracy(logits, y) == pytest.approx(expected)


def test_accuracy_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"y must have the shape of logits \(3,\)"):
        accuracy(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError, match="logits must have 1 dimensions"):
        accuracy(torch.zeros(3, 1), torch.zeros(3))
    with pytest.raises(ValueError, match="at least one example"):
        accuracy(torch.zeros(0), torch.zeros(0))
    with pytest.raises(TypeError, match="y must have a floating-point dtype"):
        accuracy(torch.zeros(3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(TypeError, match="y must have the dtype of logits"):
        accuracy(torch.zeros(3), torch.zeros(3, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"logits must be a torch\.Tensor"):
        accuracy([1.0, -1.0], torch.zeros(2))  # type: ignore[arg-type]


# -- seeded -----------------------------------------------------------------


def test_seeded_gives_the_same_weights_as_manual_seed() -> None:
    torch.manual_seed(5)
    expected = nn.Linear(4, 3)
    model = seeded(5, lambda: nn.Linear(4, 3))
    torch.testing.assert_close(model.weight, expected.weight)
    torch.testing.assert_close(model.bias, expected.bias)


def test_seeded_leaves_the_global_random_state_as_it_was() -> None:
    torch.manual_seed(123)
    state = torch.get_rng_state()
    seeded(0, lambda: nn.Linear(8, 8))
    assert torch.equal(torch.get_rng_state(), state)


def test_seeded_is_reproducible_across_threads() -> None:
    alone = seeded(7, lambda: nn.Linear(16, 16)).weight.detach()
    barrier = threading.Barrier(4)

    def build(seed: int) -> torch.Tensor:
        barrier.wait()  # all four threads draw at the same moment
        return seeded(seed, lambda: nn.Linear(16, 16)).weight.detach()

    weights = map_in_threads(build, [7, 8, 7, 8], workers=4)
    assert torch.equal(weights[0], alone)
    assert torch.equal(weights[2], alone)
    assert not torch.equal(weights[1], alone)


def test_seeded_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        seeded(-1, lambda: nn.Linear(2, 2))
    with pytest.raises(TypeError, match="seed must be an integer"):
        seeded(0.5, lambda: nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="build must be a function"):
        seeded(0, "nn.Linear")  # type: ignore[arg-type]


# -- map_in_threads ---------------------------------------------------------


@pytest.mark.parametrize("workers", [None, 1, 2, 5])
def test_map_in_threads_keeps_the_order_of_the_items(workers: int | None) -> None:
    items = list(range(20))
    assert map_in_threads(lambda n: n * n, items, workers=workers) == [n * n for n in items]


def test_map_in_threads_uses_the_calling_thread_for_one_worker() -> None:
    names = map_in_threads(lambda _: threading.current_thread().name, [0, 1], workers=1)
    assert names == [threading.current_thread().name] * 2


def test_map_in_threads_of_nothing_is_empty() -> None:
    assert map_in_threads(str, []) == []


def test_map_in_threads_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        map_in_threads(str, [1], workers=0)
    with pytest.raises(TypeError, match="workers must be an integer"):
        map_in_threads(str, [1], workers=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="items must be a sequence"):
        map_in_threads(str, "abc")
    with pytest.raises(TypeError, match="items must be a sequence"):
        map_in_threads(str, iter([1, 2]))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="function must be callable"):
        map_in_threads(3, [1])  # type: ignore[arg-type]


def test_warmup_inverse_sqrt_is_the_papers_schedule() -> None:
    d_model, warmup = 512, 4000
    peak = (d_model * warmup) ** -0.5  # the paper's rate at step n = warmup
    for step in [0, 1, 999, 3999, 4000, 20000]:
        n = step + 1
        paper = d_model**-0.5 * min(n**-0.5, n * warmup**-1.5)
        assert warmup_inverse_sqrt(step, warmup) * peak == pytest.approx(paper)
    assert warmup_inverse_sqrt(warmup - 1, warmup) == 1.0


def test_warmup_linear_decay_rises_then_falls_to_zero() -> None:
    factors = [warmup_linear_decay(s, 4, 20) for s in range(20)]
    assert factors[:4] == [0.25, 0.5, 0.75, 1.0]
    assert all(a > b for a, b in itertools.pairwise(factors[3:]))
    assert factors[-1] == pytest.approx(1 / 17)
    assert warmup_linear_decay(20, 4, 20) == 0.0  # past the end: nothing
    assert warmup_linear_decay(0, 1, 1) == 1.0


def test_schedules_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="warmup_steps must be an integer >= 1"):
        warmup_inverse_sqrt(0, 0)
    with pytest.raises(ValueError, match="step must be an integer >= 0"):
        warmup_linear_decay(-1, 2, 10)
    with pytest.raises(ValueError, match="total_steps must be an integer >= 5"):
        warmup_linear_decay(0, 5, 4)
    with pytest.raises(TypeError, match="step must be an integer"):
        warmup_inverse_sqrt(1.5, 2)  # type: ignore[arg-type]


def test_adam_with_warmup_follows_its_schedule() -> None:
    layer = torch.nn.Linear(2, 2)
    optimizer, scheduler = adam_with_warmup(layer.parameters(), 1e-2, 2, 6)
    assert optimizer.defaults["betas"] == (0.9, 0.98)
    assert optimizer.defaults["eps"] == 1e-9
    rates = []
    for _step in range(6):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    expected = [1e-2 * warmup_linear_decay(step, 2, 6) for step in range(6)]
    assert rates == pytest.approx(expected)
    _, inverse = adam_with_warmup(
        torch.nn.Linear(2, 2).parameters(), 1e-2, 4, 10, decay="inverse_sqrt"
    )
    assert inverse.get_last_lr()[0] == pytest.approx(1e-2 * warmup_inverse_sqrt(0, 4))


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ((0.0, 2, 6), ValueError, "peak_lr"),
        ((1e-3, 0, 6), ValueError, "warmup_steps"),
        ((1e-3, 4, 3), ValueError, "total_steps"),
        ((1e-3, 2.0, 6), TypeError, "warmup_steps"),
    ],
)
def test_adam_with_warmup_rejects_bad_input(
    arguments: tuple[float, int, int], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        adam_with_warmup(torch.nn.Linear(2, 2).parameters(), *arguments)
    with pytest.raises(ValueError, match="decay must be"):
        adam_with_warmup(torch.nn.Linear(2, 2).parameters(), 1e-3, 2, 6, decay="cosine")


def test_warmup_cosine_rises_then_falls_to_its_final_factor() -> None:
    factors = [warmup_cosine(step, 4, 20) for step in range(20)]
    assert factors[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert all(a >= b for a, b in itertools.pairwise(factors[3:]))  # never rises again
    assert factors[-1] == pytest.approx(0.1)
    assert warmup_cosine(19, 4, 20, final=0.0) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="final must be in"):
        warmup_cosine(0, 4, 20, final=1.5)
    with pytest.raises(ValueError, match="total_steps"):
        warmup_cosine(0, 4, 4)


def test_adamw_cosine_is_llamas_recipe() -> None:
    optimizer, scheduler = adamw_cosine(torch.nn.Linear(2, 2).parameters(), 1e-2, 2, 6)
    assert isinstance(optimizer, torch.optim.AdamW)
    assert optimizer.defaults["betas"] == (0.9, 0.95)
    assert optimizer.defaults["weight_decay"] == 0.1
    assert scheduler.get_last_lr()[0] == pytest.approx(1e-2 * warmup_cosine(0, 2, 6))
    with pytest.raises(ValueError, match="peak_lr"):
        adamw_cosine(torch.nn.Linear(2, 2).parameters(), -1.0, 2, 6)
