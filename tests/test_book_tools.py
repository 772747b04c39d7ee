"""The build's environment: the book's arithmetic and the named alternatives."""

from __future__ import annotations

import pytest

import book_tools
from book_tools import (
    ARITHMETIC_VAR,
    DOCS,
    RESULTS_VAR,
    apply_environment,
    arithmetic,
    build_environment,
    settings,
)


def test_the_book_arithmetic_wins_over_the_caller() -> None:
    env = build_environment(DOCS, {"OMP_NUM_THREADS": "8", "MKL_CBWR": "AUTO"})
    for key, value in settings().build_env.items():
        assert env[key] == value


def test_a_named_arithmetic_changes_the_build_environment() -> None:
    env = build_environment(DOCS, {ARITHMETIC_VAR: "two-threads"})
    assert env["OMP_NUM_THREADS"] == "2"
    # "" in the setting: the variable is removed, so the processor chooses.
    assert env["ATEN_CPU_CAPABILITY"] == ""
    assert env["MKL_CBWR"] == ""
    applied = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "HOME": "/home/reader"}
    apply_environment(applied, env)
    assert "ATEN_CPU_CAPABILITY" not in applied
    assert "MKL_CBWR" not in applied
    assert applied["OMP_NUM_THREADS"] == "2"
    assert applied["HOME"] == "/home/reader"


def test_every_named_arithmetic_changes_only_what_the_build_sets() -> None:
    known = set(settings().build_env)
    for name, change in settings().arithmetic.items():
        assert change, f"{name}: changes nothing"
        assert set(change) <= known, f"{name}: sets {set(change) - known} the build never sets"


def test_an_unknown_arithmetic_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"no arithmetic 'fast'.*native"):
        arithmetic("fast")
    with pytest.raises(ValueError, match="no arithmetic"):
        build_environment(DOCS, {ARITHMETIC_VAR: "fast"})


def test_the_caller_chooses_the_date_and_the_results_folder() -> None:
    env = build_environment(DOCS, {"SOURCE_DATE_EPOCH": "1", RESULTS_VAR: "/tmp/r"})
    assert env["SOURCE_DATE_EPOCH"] == "1"
    assert env[RESULTS_VAR] == "/tmp/r"
    env = build_environment(DOCS, {})
    assert env["SOURCE_DATE_EPOCH"] == str(settings().source_date_epoch)
    assert env[RESULTS_VAR] == str(book_tools.BUILD / "results")
