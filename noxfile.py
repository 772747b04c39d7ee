"""Maintainer sessions: build the book, test it, lint it, preview it, package it.

Every session installs ``torch==2.13.0`` first, explicitly: the project's own
requirement is a range, and an unpinned install would pull a multi-GB CUDA
build where a CPU wheel is all the book needs.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox

nox.needs_version = ">=2024.10"
nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).resolve().parent
# The book's settings, paths and build entry (standard library only).
sys.path.insert(0, str(ROOT))
import book_tools  # noqa: E402

DOCS, HTML = book_tools.DOCS, book_tools.HTML
TORCH = "torch==2.13.0"
PROJECT = nox.project.load_toml(ROOT / "pyproject.toml")["project"]
EXTRAS = PROJECT["optional-dependencies"]
AXE_CORE = "axe-core@4.14.1"
# For the bench's page figures; 12.x is the last line that runs on Node 18/20.
LIGHTHOUSE = "lighthouse@12.8.2"
# The interpreter nox itself runs on (any Python 3.11+).
PYTHON: str | None = None
# The test run computes with the build's arithmetic settings (one thread, ...).
BUILD_ENV = book_tools.BUILD_ENV


def _install(session: nox.Session, *extras: str) -> None:
    """Install torch first (pinned), then the project with ``extras``."""
    session.install(TORCH)
    spec = f".[{','.join(extras)}]" if extras else "."
    session.install("-e", spec)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the HTML site into docs/_build/html (every page and example executed)."""
    _install(session, "docs")
    session.run("python", "book_tools.py", "build", *session.posargs)
    session.log("Or run `nox -s serve` for a preview that rebuilds on every change.")


@nox.session(python=PYTHON, default=False)
def site(session: nox.Session) -> None:
    """Build the site to publish: the HTML (as ``docs``), then the PDF, which the site links.

    Not part of the cold-build budget: printing the PDF takes a browser and
    about half a minute more. ``nox -s docs`` stays the one-command build.
    """
    _install(session, "docs", "test")  # Playwright and pypdf are in `test`
    session.run("python", "book_tools.py", "build", *session.posargs)
    session.run("python", "book_pdf.py")
    session.log(f"The site, with its PDF, is in {HTML}.")


@nox.session(python=PYTHON, default=False)
def pdf(session: nox.Session) -> None:
    """Build the book as one PDF into docs/_build/pdf/transformer-book.pdf (book_pdf.py).

    The lessons, the glossary, the bibliography and the exercises' solutions
    (in an appendix) on one HTML page, printed by headless Chromium. Run
    after ``nox -s docs``: the pages' saved outputs are reused, nothing runs.
    """
    _install(session, "docs", "test")  # Playwright and pypdf are in `test`
    session.run("python", "book_pdf.py")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the whole test suite: package, site build, and the site in headless Chromium."""
    _install(session, "docs", "test")
    _install_axe(session)
    session.run("pytest", *session.posargs, env=BUILD_ENV)


@nox.session(python=PYTHON, default=False)
def quick(session: nox.Session) -> None:
    """The quick loop: package tests, docstring examples and the extensions' unit tests.

    No site and nothing marked slow: tests/ext builds tiny books with Sphinx
    (hence the ``docs`` extra), one extension at a time, and executes no notebook.
    ``nox -R -s quick`` skips the install step once the environment exists.
    """
    _install(session, "examples", "test", "docs")
    session.run("pytest", "--ignore=tests/site", "-m", "not slow", *session.posargs, env=BUILD_ENV)


def _install_axe(session: nox.Session) -> None:
    """axe-core, for the accessibility tests (skipped without npm: a failure under CI)."""
    _install_npm(session, ".axe", AXE_CORE, "axe-core")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff, and types with mypy (strict; see pyproject.toml)."""
    # One pip call: the linters (the `lint` extra) and what mypy reads the
    # types of -- the package's dependencies and the `docs` extra (Sphinx,
    # Matplotlib). The package itself is not installed: mypy reads its source.
    session.install(*EXTRAS["lint"], TORCH, *PROJECT["dependencies"], *EXTRAS["docs"])
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def serve(session: nox.Session) -> None:
    """Live preview: rebuild on every change and reload the browser (sphinx-autobuild)."""
    _install(session, "docs")
    session.install("sphinx-autobuild>=2024.10")
    session.run(
        "sphinx-autobuild",
        "--watch",
        str(ROOT / "lessons_code"),
        "--watch",
        str(ROOT / "gallery"),
        "--ignore",
        str(DOCS / "auto_examples"),
        "--ignore",
        str(DOCS / "gen_modules"),
        *book_tools.sphinx_arguments(DOCS, HTML, *session.posargs),
    )


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Time cold and incremental builds in a scratch copy; print what each page transfers.

    Figures are printed, never asserted (see benchmarks/build_bench.py);
    ``nox -s bench -- --repeats 1`` gives a quicker, rougher run, and
    ``nox -s bench -- --pages-only`` only weighs the pages of the site already
    built in docs/_build/html and runs Lighthouse on it (a minute or two).
    A full run then trains the capstone's date model for three seeds and
    prints their held-out accuracy and training time
    (benchmarks/capstone_bench.py, about a minute).
    """
    _install(session, "docs", "test")
    _install_npm(session, ".lighthouse", LIGHTHOUSE, "lighthouse")
    session.run("python", str(ROOT / "benchmarks" / "build_bench.py"), *session.posargs)
    if "--pages-only" not in session.posargs:
        session.run("python", str(ROOT / "benchmarks" / "capstone_bench.py"))


def _install_npm(session: nox.Session, folder: str, spec: str, package: str) -> None:
    """``spec`` from the npm registry into ``folder`` (ignored by git), unless it is there."""
    if (ROOT / folder / "node_modules" / package / "package.json").is_file():
        return
    if shutil.which("npm") is None:
        session.warn(f"npm not found: {package} is not installed")
        return
    session.run(
        "npm",
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(ROOT / folder),
        spec,
        external=True,
    )


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build the wheel and sdist of lessons_code into dist/ (as the site's reader wheel)."""
    session.install("setuptools>=77")  # the project's build backend (pyproject.toml)
    shutil.rmtree(ROOT / "dist", ignore_errors=True)
    session.run("python", "book_tools.py", "dist", str(ROOT / "dist"))
