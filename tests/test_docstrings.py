"""Run the Examples sections of every module of :mod:`lessons_code` as doctests."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lessons_code

MODULES = sorted(info.name for info in pkgutil.iter_modules(lessons_code.__path__))


def test_modules_are_found() -> None:
    assert {"attention", "multihead", "blocks", "order_task", "positional"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"lessons_code.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if not name.startswith("_"):  # every public module shows how it is used
        assert result.attempted > 0
