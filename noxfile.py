"""Maintainer sessions: build the book, test it, lint it, preview it, package it.

Every session installs ``torch==2.13.0`` first, explicitly: the project's own
requirement is a range, and an unpinned install would pull a multi-GB CUDA
build where a CPU wheel is all the book needs. Everything else comes from a
lock file, ``locks/NAME.txt`` (every version pinned; ``nox -s lock`` writes
them from ``pyproject.toml``, see ``[tool.book.locks]``), and the project
itself is installed without its dependencies, so pip resolves nothing.
"""

from __future__ import annotations

import os
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
# The lock files: their names and extras ([tool.book.locks] in pyproject.toml).
LOCKS = book_tools.LOCKS
LOCKED = book_tools.settings().locks
# The resolver that writes them (`nox -s lock`), pinned: the same inputs
# then give the same files, in the same format.
UV = "uv==0.13.9"
# Every lock holds what any Python from 3.11 on needs, on any platform.
LOCK_PYTHON = "3.11"
# Where every locked version must install from a wheel, never from source
# (a maintainer without a C compiler, a stock Windows, a new CPython): `nox
# -s lock` checks each of these platforms with each of these Pythons.
WHEEL_PLATFORMS = (
    "x86_64-manylinux_2_28",
    "aarch64-manylinux_2_28",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
)
WHEEL_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
AXE_CORE = "axe-core@4.14.1"
# For the bench's page figures; 12.x is the last line that runs on Node 18/20.
LIGHTHOUSE = "lighthouse@12.8.2"
# The last test run's JUnit reports, one per stage, which `nox -s bench` reads
# (benchmarks/grid_bench.py).
JUNIT_STAGES = str(ROOT / ".nox" / "tests-junit-{stage}.xml")
# The interpreter nox itself runs on (any Python 3.11+).
PYTHON: str | None = None
# The test run computes with the build's arithmetic settings (one thread, ...).
BUILD_ENV = book_tools.BUILD_ENV


def _install(session: nox.Session, lock: str, *, project: bool = True) -> None:
    """Install torch first (pinned), then ``locks/<lock>.txt``, then the project.

    The project (editable) without its dependencies: the lock holds them all,
    torch aside, so nothing but the locked versions gets installed.
    """
    session.install(TORCH)
    session.install("-r", str(LOCKS / f"{lock}.txt"))
    if project:
        session.install("--no-deps", "-e", ".")


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
    _install(session, "tests")  # Playwright and pypdf are in `test`
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
    _install(session, "tests")  # Playwright and pypdf are in `test`
    session.run("python", "book_pdf.py")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the whole test suite: package, site build, and the site in headless Chromium.

    Two stages. Every test but the ``serial`` ones runs on all cores
    (pytest-xdist, one test file per worker at a time; the first worker to
    need the site builds it, behind a file lock, and the others wait for it).
    Then the ``serial`` tests, which rewrite or rebuild that shared site (the
    PDF and its link, the clean rebuild), in one process. Their JUnit reports
    give ``nox -s bench`` the seconds of each stage. A selection that leaves a
    stage empty (``nox -s tests -- tests/test_depth.py``) skips that stage.
    """
    _install(session, "tests")
    _install_axe(session)
    stages = {
        "parallel": ["-n", "auto", "--dist", "loadfile", "-m", "not serial"],
        "serial": ["-m", "serial"],
    }
    for stage, options in stages.items():
        report = f"--junitxml={JUNIT_STAGES.format(stage=stage)}"
        # Exit code 5: the selection left nothing in this stage.
        session.run(
            "pytest", *options, report, *session.posargs, env=BUILD_ENV, success_codes=[0, 5]
        )


@nox.session(python=PYTHON, default=False)
def quick(session: nox.Session) -> None:
    """The quick loop: package tests, docstring examples and the extensions' unit tests.

    No site and nothing marked slow: tests/ext builds tiny books with Sphinx
    (the ``tests`` lock has the ``docs`` extra), one extension at a time, and
    executes no notebook. ``nox -R -s quick`` skips the install step once the
    environment exists.
    """
    _install(session, "tests")
    session.run("pytest", "--ignore=tests/site", "-m", "not slow", *session.posargs, env=BUILD_ENV)


def _install_axe(session: nox.Session) -> None:
    """axe-core, for the accessibility tests (skipped without npm: a failure under CI)."""
    _install_npm(session, ".axe", AXE_CORE, "axe-core")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style and formatting with ruff, and types with mypy (strict; see pyproject.toml)."""
    # The linters (the `lint` extra) and what mypy reads the types of -- the
    # package's dependencies and the `docs` extra (Sphinx, Matplotlib): the
    # `lint` lock. The package itself is not installed: mypy reads its source.
    _install(session, "lint", project=False)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON, default=False)
def serve(session: nox.Session) -> None:
    """Live preview: rebuild on every change and reload the browser (sphinx-autobuild)."""
    _install(session, "serve")  # the `docs` lock and sphinx-autobuild (the `serve` extra)
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
    Either way, the prose of the lessons built there is measured
    (benchmarks/prose_stats.py: words per sentence, long sentences, numbers
    and hedge words per page).
    A full run then times every training grid the book runs (the depth
    study's runs alone and batched) and prints the stages of the last
    ``nox -s tests`` run (benchmarks/grid_bench.py, about three minutes),
    and trains the date task's two models, the capstone's encoder-decoder
    and the decoder-only model, for three seeds each and prints their
    held-out accuracy and training time side by side
    (benchmarks/capstone_bench.py, about two minutes), and the vision
    lesson's models, the ViT (with and without positions, and trained on
    shifted digits), the MLP and the CNN, for three seeds each: test
    accuracy, accuracy on shuffled patches, training time and parameter
    count (benchmarks/vision_bench.py, about two minutes).
    """
    _install(session, "tests")
    _install_npm(session, ".lighthouse", LIGHTHOUSE, "lighthouse")
    session.run("python", str(ROOT / "benchmarks" / "build_bench.py"), *session.posargs)
    if (ROOT / "docs" / "_build" / "html" / "index.html").is_file():
        # the lessons' prose: sentence length, numbers and hedges per page
        session.run("python", str(ROOT / "benchmarks" / "prose_stats.py"))
    if "--pages-only" not in session.posargs:
        session.run("python", str(ROOT / "benchmarks" / "grid_bench.py"))
        session.run("python", str(ROOT / "benchmarks" / "capstone_bench.py"))
        session.run("python", str(ROOT / "benchmarks" / "vision_bench.py"))


@nox.session(python=PYTHON, default=False)
def arithmetic(session: nox.Session) -> None:
    """Build under other arithmetic and list the claims that fail there.

    ``nox -s arithmetic -- native two-threads`` builds a scratch copy cold
    under each named setting of ``[tool.book.arithmetic]`` (``book``: the
    build's own) and prints the build times side by side and every claim
    that fails (benchmarks/arithmetic.py); with no names, under all of them.
    """
    _install(session, "tests")
    session.run("python", str(ROOT / "benchmarks" / "arithmetic.py"), *session.posargs)


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


@nox.session(python=PYTHON, default=False)
def lock(session: nox.Session) -> None:
    """Resolve the lock files, locks/NAME.txt, anew from pyproject.toml's ranges.

    uv resolves for every Python from 3.11 on, on Linux, macOS and Windows
    (``--universal``), with the newest versions the ranges allow for each
    Python: where those differ (a release that needs a newer Python, a
    package only Windows needs), the lock pins each under an environment
    marker. The extras of all the locks are resolved together first, and each
    lock keeps that resolution's versions: on one Python, a package has one
    version in every session.
    Torch is in no lock (see :func:`_install`). Arguments go to ``uv pip
    compile``, e.g. ``nox -s lock -- --exclude-newer 2026-06-01``.
    """
    session.install(UV)
    compile_ = ["uv", "pip", "compile", "--universal", "--python-version", LOCK_PYTHON]
    compile_ += ["--no-header", "--quiet", *session.posargs]
    # The inputs, written from pyproject.toml, and uv's outputs, in a scratch
    # folder of the session's; uv runs there and names them without a path.
    scratch = Path(session.create_tmp()).resolve() / "locks"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    inputs = {name: book_tools.lock_input(name) for name in LOCKED}
    union = "_all"  # every lock's requirements together (not a lock of its own)
    inputs[union] = list(dict.fromkeys(r for name in LOCKED for r in inputs[name]))
    for name, requirements in inputs.items():
        (scratch / f"{name}.in").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    session.chdir(scratch)
    session.run(*compile_, "--upgrade", f"{union}.in", "-o", f"{union}.txt")
    for name, extras in LOCKED.items():
        # uv keeps the versions of the file it writes over where it can: each
        # lock starts as the union's resolution, and keeps its versions.
        shutil.copyfile(scratch / f"{union}.txt", scratch / f"{name}.txt")
        session.run(*compile_, f"{name}.in", "-o", f"{name}.txt")
        # What the scratch input asked for, pyproject.toml asked for.
        body = (scratch / f"{name}.txt").read_text(encoding="utf-8")
        body = body.replace(f"-r {name}.in", "pyproject.toml")
        header = (
            f"# The `{name}` environment: the project's dependencies without torch, and\n"
            f"# the extras {', '.join(extras)}. Written by `nox -s lock` from pyproject.toml\n"
            f"# ({UV}: --universal --python-version {LOCK_PYTHON}); do not edit.\n"
        )
        LOCKS.mkdir(exist_ok=True)
        (LOCKS / f"{name}.txt").write_text(header + body, encoding="utf-8")
    # Every pin installs from a wheel everywhere: uv resolves the union's pins
    # for each platform and Python with building from source forbidden, and
    # names the package that has no wheel there.
    for platform in WHEEL_PLATFORMS:
        for python in WHEEL_PYTHONS:
            session.run(
                "uv",
                "pip",
                "compile",
                "--quiet",
                "--no-header",
                "--only-binary",
                ":all:",
                "--python-platform",
                platform,
                "--python-version",
                python,
                f"{union}.txt",
                "-o",
                os.devnull,
            )
    session.log(
        f"every locked version has a wheel on {len(WHEEL_PLATFORMS)} platforms "
        f"x CPython {', '.join(WHEEL_PYTHONS)}"
    )
    session.chdir(ROOT)
    for path in sorted(set(LOCKS.glob("*.txt")) - {LOCKS / f"{name}.txt" for name in LOCKED}):
        session.warn(f"removed {path.relative_to(ROOT)}: not a lock of [tool.book.locks]")
        path.unlink()
    if shutil.which("git"):
        session.run("git", "status", "--short", "--", str(LOCKS), external=True)
        session.run("git", "diff", "--stat", "--", str(LOCKS), external=True)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build the wheel and sdist of lessons_code into dist/ (as the site's reader wheel)."""
    session.install("setuptools>=77")  # the project's build backend (pyproject.toml)
    shutil.rmtree(ROOT / "dist", ignore_errors=True)
    session.run("python", "book_tools.py", "dist", str(ROOT / "dist"))
