"""Fixtures for the unit tests of the book's Sphinx extensions (docs/_ext).

Each test builds a tiny book: a ``conf.py`` from ``roots/test-<name>/`` that
loads only the extension under test, and the pages the test writes. Sphinx's
own fixtures (``make_app``, registered in tests/conftest.py) run the build in
a temporary folder; no notebook is executed and nothing is read from the
book's own sources, so these tests take seconds and run in ``nox -s quick``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ext_support import Book
from sphinx.testing.util import SphinxTestApp

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "docs" / "_ext"
# The extensions import each other by module name, as docs/conf.py arranges.
if str(EXT) not in sys.path:
    sys.path.insert(0, str(EXT))


@pytest.fixture(scope="session")
def rootdir() -> Path:
    """Where the test books' configurations live (``roots/test-<name>``)."""
    return Path(__file__).resolve().parent / "roots"


@pytest.fixture
def book(make_app: Callable[..., SphinxTestApp], rootdir: Path, tmp_path: Path) -> Book:
    """``book(name, pages, build=True)``: a copy of ``roots/test-<name>`` with ``pages``.

    ``pages`` maps a file name to its text (written into the copy, in UTF-8)
    or its bytes.
    The HTML build runs unless ``build=False``; its warnings are in
    ``app.warning`` and its output in ``app.outdir``.
    """

    def make(name: str, pages: dict[str, str | bytes], *, build: bool = True) -> SphinxTestApp:
        srcdir = tmp_path / name
        shutil.copytree(rootdir / f"test-{name}", srcdir, dirs_exist_ok=True)
        for page, text in pages.items():
            path = srcdir / page
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
        app = make_app("html", srcdir=srcdir)
        if build:
            app.build()
        return app

    return make
