"""lessons_code.results: a saved result is reused exactly when nothing that decides it changed."""

from __future__ import annotations

import subprocess
import sys
import time
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


@pytest.mark.parametrize("name", ["ATEN_CPU_CAPABILITY", "MKL_CBWR"])
def test_the_arithmetic_settings_are_part_of_the_key(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A result trained on one code path is not served to a build on another.
    def f(a: int) -> int:
        return a

    monkeypatch.setenv(name, "one")
    before = result_key(f, 1)
    monkeypatch.setenv(name, "another")
    assert result_key(f, 1) != before


def test_the_cpu_capability_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    def f(a: int) -> int:
        return a

    before = result_key(f, 1)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "another")
    assert result_key(f, 1) != before


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


#: A process that calls one stored function; its body logs each run, and the
#: first run waits for the test's go-ahead (a file) before it returns.
CALLER = """
import sys, time
from pathlib import Path
from lessons_code.results import stored

folder = Path(sys.argv[1])

@stored
def square(x):
    with (folder / "runs.log").open("a") as log:
        log.write("run\\n")
    while not (folder / "go").exists():
        time.sleep(0.02)
    return x * x

(folder / f"calling-{sys.argv[2]}").touch()
print(square(3))
"""


def test_two_processes_with_the_same_call_compute_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two gallery examples run side by side (sphinx-gallery's parallel option)
    # may ask for the same result at the same time: the second one waits for
    # the first one's result instead of computing it again.
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "store"))
    script = tmp_path / "caller.py"
    script.write_text(CALLER, encoding="utf-8")
    runs = tmp_path / "runs.log"

    def start(name: str) -> subprocess.Popen[str]:
        command = [sys.executable, str(script), str(tmp_path), name]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)

    def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    first = start("first")
    assert wait_for(runs.exists, 120), "the first process never ran the function"
    second = start("second")
    assert wait_for((tmp_path / "calling-second").exists, 120)
    # Give a second run the chance to start (it would within milliseconds).
    wait_for(lambda: runs.read_text().count("run") > 1, 2)
    (tmp_path / "go").touch()
    outputs = [process.communicate(timeout=120)[0] for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0]
    assert outputs == ["9\n", "9\n"]
    assert runs.read_text() == "run\n"  # computed once, read by the other
    assert sorted(p.suffix for p in (tmp_path / "store").iterdir()) == [".pkl"]
