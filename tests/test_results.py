"""lessons_code.results: a saved result is reused exactly when nothing that decides it changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from lessons_code import results
from lessons_code.results import ENV_VAR, package_digest, result_key, stored


def make_counted() -> tuple[list[int], Callable[..., dict[str, int]]]:
    calls: list[int] = []

    @stored
    def square(x: int, *, device: torch.device | str | None = None) -> dict[str, int]:
        calls.append(x)
        return {"square": x * x}

    return calls, square


def test_without_the_variable_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    calls, square = make_counted()
    assert square(3) == square(3) == {"square": 9}
    assert calls == [3, 3]
    assert list(tmp_path.iterdir()) == []


def test_a_second_identical_call_reads_the_saved_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "store"))
    calls, square = make_counted()
    assert square(3) == {"square": 9}
    assert square(3, device="cpu") == {"square": 9}
    assert square(4) == {"square": 16}
    assert calls == [3, 4]  # device None and "cpu" are one device
    saved = sorted(p.suffix for p in (tmp_path / "store").iterdir())
    assert saved == [".pkl", ".pkl"]  # no partial files left behind


def test_a_package_edit_gives_new_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    def f(a: int, b: int = 2) -> int:
        return a + b

    before = result_key(f, 1)
    assert before == result_key(f, 1, b=2) == result_key(f, a=1)
    assert before != result_key(f, 1, b=3)
    monkeypatch.setattr(results, "package_digest", lambda: "0" * 64)
    assert result_key(f, 1) != before


def test_the_thread_count_is_part_of_the_key() -> None:
    def f(a: int) -> int:
        return a

    threads = torch.get_num_threads()
    before = result_key(f, 1)
    try:
        torch.set_num_threads(threads + 1)
        assert result_key(f, 1) != before
    finally:
        torch.set_num_threads(threads)


def test_arguments_that_do_not_fit_raise_type_error() -> None:
    def f(a: int) -> int:
        return a

    with pytest.raises(TypeError):
        result_key(f, 1, 2)


def test_package_digest_is_a_stable_sha256() -> None:
    digest = package_digest()
    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")
    assert package_digest() == digest
