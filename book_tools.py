"""The book's settings, its build entry and what its maintainer tools share.

Everything that builds the book goes through here: ``nox`` (``python
book_tools.py build``), the tests, the bench and the PDF call
:func:`sphinx_build`, which runs Sphinx with the book's settings
(:func:`sphinx_arguments`, which ``nox -s serve`` gives sphinx-autobuild). Those are
defined once, in the ``[tool.book]`` table of ``pyproject.toml``, and read by
:func:`settings` alone; ``docs/conf.py`` applies :func:`build_environment` to
every build (also one started by hand or by ``sphinx-autobuild``). The paths
of the build's outputs are named once, below.

The other helpers are what the tests and the bench both need: finding
Chromium, serving a built site, and reading what a build executed (the
build's own report, ``execution.json``). Only the standard library is
imported, so that ``noxfile.py`` can use this module before any session
environment exists; the package and the book's pages never import it.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "docs"
#: Everything a build writes that is not a source: the site, its doctrees,
#: the execution caches and report, the saved experiment results, the PDF.
BUILD = DOCS / "_build"  # build_folder(DOCS)
HTML = BUILD / "html"
PDF_DIR = BUILD / "pdf"
#: The book as one PDF (book_pdf.py), and its facts (page count) next to it.
PDF = PDF_DIR / "transformer-book.pdf"
PDF_FACTS = PDF.with_suffix(".json")
#: lessons_code.results.ENV_VAR (not imported: that module needs PyTorch): the
#: variable naming the folder where the build saves the experiments' grids.
RESULTS_VAR = "LESSONS_CODE_RESULTS"


@dataclass(frozen=True)
class Settings:
    """The ``[tool.book]`` table of ``pyproject.toml`` (its comments explain each)."""

    sphinx_flags: tuple[str, ...]
    sphinx_jobs: str
    source_date_epoch: int
    chromium: tuple[str, ...]
    chromium_args: tuple[str, ...]
    build_env: Mapping[str, str]
    #: Other arithmetic by name: variables that change ``build_env`` ("" removes one).
    arithmetic: Mapping[str, Mapping[str, str]]
    #: Each lock file's name (``locks/NAME.txt``) and the extras it holds.
    locks: Mapping[str, tuple[str, ...]]


@functools.cache
def settings(root: Path = ROOT) -> Settings:
    """Read the book's settings from ``root/pyproject.toml``."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    book = tomllib.loads(text)["tool"]["book"]
    return Settings(
        sphinx_flags=tuple(book["sphinx-flags"]),
        sphinx_jobs=str(book["sphinx-jobs"]),
        source_date_epoch=int(book["source-date-epoch"]),
        chromium=tuple(book["chromium"]),
        chromium_args=tuple(book["chromium-args"]),
        build_env=dict(book["build-env"]),
        arithmetic={name: dict(change) for name, change in book["arithmetic"].items()},
        locks={name: tuple(extras) for name, extras in book["locks"].items()},
    )


#: The lock files of the environments nox installs (``nox -s lock`` writes them).
LOCKS = ROOT / "locks"
#: Installed first, pinned, by every nox session, and never in a lock file:
#: a lock resolved on the package index would pin a CUDA build's packages.
UNLOCKED = "torch"


def requirement_name(requirement: str) -> str:
    """Return the normalized name (PEP 503) of a requirement such as ``"Sphinx>=8,<10"``."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if name is None:
        raise ValueError(f"requirement: no package name at the start of {requirement!r}")
    return re.sub(r"[-_.]+", "-", name.group(1)).lower()


def lock_input(name: str, root: Path = ROOT) -> list[str]:
    """Return what ``locks/NAME.txt`` pins: the project's dependencies and the lock's extras.

    The requirements of ``pyproject.toml``, in its order, each once, without
    :data:`UNLOCKED` (torch).
    """
    locks = settings(root).locks
    if name not in locks:
        raise ValueError(f"name: no lock {name!r} in [tool.book.locks] (there are {sorted(locks)})")
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    project = tomllib.loads(text)["project"]
    extras = project["optional-dependencies"]
    wanted = [*project["dependencies"], *(r for extra in locks[name] for r in extras[extra])]
    return [r for r in dict.fromkeys(wanted) if requirement_name(r) != UNLOCKED]


def build_folder(docs: Path) -> Path:
    """Where a build of the book whose sources are in ``docs`` writes (``_build``)."""
    return docs / "_build"


#: Names one of ``[tool.book.arithmetic]``'s settings for a build to use
#: instead of the book's own arithmetic (``nox -s arithmetic`` sets it).
ARITHMETIC_VAR = "BOOK_ARITHMETIC"


def arithmetic(name: str, root: Path = ROOT) -> dict[str, str]:
    """Return the changes to ``[tool.book.build-env]`` of the arithmetic setting ``name``.

    A value of ``""`` means the variable is not set (see :func:`apply_environment`).
    """
    named = settings(root).arithmetic
    if name not in named:
        raise ValueError(
            f"name: no arithmetic {name!r} in [tool.book.arithmetic] (there are {sorted(named)})"
        )
    return dict(named[name])


def build_environment(docs: Path = DOCS, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the variables every build, and everything it runs, gets.

    The arithmetic settings of ``[tool.book.build-env]`` (they always win),
    changed by the setting that ``BOOK_ARITHMETIC`` in ``base`` names, if
    any (a value of ``""`` there: the variable is removed, see
    :func:`apply_environment`); ``SOURCE_DATE_EPOCH``, the date of every
    archive the build writes, and the folder of saved results, each unless
    ``base`` (default: this process's environment) already sets it.
    """
    base = os.environ if base is None else base
    found = settings(docs.parent)
    name = base.get(ARITHMETIC_VAR, "")
    change = arithmetic(name, docs.parent) if name else {}
    return {
        "SOURCE_DATE_EPOCH": base.get("SOURCE_DATE_EPOCH", str(found.source_date_epoch)),
        RESULTS_VAR: base.get(RESULTS_VAR, str(build_folder(docs) / "results")),
        **found.build_env,
        **change,
    }


def apply_environment(env: MutableMapping[str, str], changes: Mapping[str, str]) -> None:
    """Set each of ``changes`` in ``env``; a value of ``""`` removes the variable."""
    for key, value in changes.items():
        if value:
            env[key] = value
        else:
            env.pop(key, None)


#: Environment for everything the build and the tests run (one thread).
BUILD_ENV: dict[str, str] = dict(settings().build_env)
#: The same setting as a thread count, for ``torch.set_num_threads``.
THREADS = int(BUILD_ENV["OMP_NUM_THREADS"])
#: Command-line arguments for headless Chromium.
CHROMIUM_ARGS: list[str] = list(settings().chromium_args)


@dataclass(frozen=True)
class BuildResult:
    """What one Sphinx run returned (``output`` is empty when it was not captured)."""

    returncode: int
    output: str
    html: Path


#: The flag of ``[tool.book]`` that makes every reference a must (nitpicky):
#: the PDF leaves the gallery and the API pages out, so references to them
#: cannot resolve there; its warnings are errors all the same.
NITPICKY = "-n"


def sphinx_arguments(
    docs: Path,
    out: Path,
    *extra: str,
    builder: str = "html",
    jobs: bool = True,
    nitpicky: bool = True,
) -> list[str]:
    """sphinx-build's arguments for building ``docs`` into ``out`` with the book's settings.

    The doctrees go next to ``out``, not into it (they are not published).
    ``jobs=False`` builds in one process (the bench compares the two);
    ``nitpicky=False`` leaves out :data:`NITPICKY` (the PDF's build).
    """
    book = settings(docs.parent)
    flags = [flag for flag in book.sphinx_flags if nitpicky or flag != NITPICKY]
    parallel = ["-j", book.sphinx_jobs] if jobs else []
    doctrees = ["-d", str(out.parent / "doctrees")]
    return [*flags, "-b", builder, *parallel, *doctrees, *extra, str(docs), str(out)]


def sphinx_build(
    *extra: str,
    docs: Path = DOCS,
    out: Path | None = None,
    builder: str = "html",
    jobs: bool = True,
    nitpicky: bool = True,
    capture: bool = True,
    timeout: float = 1800,
    env: Mapping[str, str] | None = None,
) -> BuildResult:
    """Build the book whose sources are in ``docs`` (default: this one) into ``out``.

    The one way the book is built: by ``nox``, the tests, the bench and the
    PDF. ``extra`` are further sphinx-build arguments. The book's own copy of
    ``lessons_code`` comes first on the path (for a copy of the book, the
    copy's package, not the one installed from here), for the notebook
    kernels (``PYTHONPATH``) and for the examples Sphinx runs itself. With
    ``capture`` the output is returned, else it goes to the terminal. A
    failed build does not raise (see the return code); one that runs longer
    than ``timeout`` seconds does (a hung kernel). ``env`` adds variables to
    the build's environment (``BOOK_ARITHMETIC`` among them).
    """
    out = out or build_folder(docs) / builder
    root = docs.parent
    arguments = sphinx_arguments(docs, out, *extra, builder=builder, jobs=jobs, nitpicky=nitpicky)
    pythonpath = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    variables = {**os.environ, **(env or {})}
    apply_environment(variables, build_environment(docs, variables))
    variables["PYTHONPATH"] = pythonpath
    command = [sys.executable, "-m", "sphinx", *arguments]
    done = subprocess.run(
        command,
        cwd=root,
        env=variables,
        capture_output=capture,
        text=True,
        check=False,
        timeout=timeout,
    )
    output = (done.stdout or "") + (done.stderr or "") if capture else ""
    return BuildResult(done.returncode, output, out)


#: Builds one distribution with the project's own backend: argv = kind, out folder.
_BUILD_BACKEND = (
    "import sys; from setuptools import build_meta; "
    "getattr(build_meta, f'build_{sys.argv[1]}')(sys.argv[2])"
)


def build_package(out_dir: Path, *, sdist: bool = False, root: Path = ROOT) -> list[Path]:
    """Build the wheel of ``lessons_code`` (and its sdist) into ``out_dir``; return them.

    The one way the package is built: for the readers' download on the site
    (docs/_ext/book/downloads.py) and by ``nox -s build``. The project's own
    backend (setuptools, as pyproject.toml names it) runs in this
    environment, its entries dated ``SOURCE_DATE_EPOCH`` (the same bytes on
    every build), its build and egg-info folders in a temporary folder
    (distutils reads the file ``DIST_EXTRA_CONFIG`` names), so that nothing
    is written to the working tree and no stale ``build/lib`` can put a
    deleted module into the wheel.
    """
    import tempfile

    out_dir.mkdir(parents=True, exist_ok=True)
    before = set(out_dir.iterdir())
    for kind in ("sdist", "wheel") if sdist else ("wheel",):  # one process each
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp, "setup.cfg")
            config.write_text(f"[build]\nbuild_base = {tmp}\n[egg_info]\negg_base = {tmp}\n")
            env = {
                **os.environ,
                "DIST_EXTRA_CONFIG": str(config),
                "SOURCE_DATE_EPOCH": build_environment(root / "docs")["SOURCE_DATE_EPOCH"],
            }
            command = [sys.executable, "-c", _BUILD_BACKEND, kind, str(out_dir)]
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"setuptools could not build the {kind}:\n{done.stderr}")
    return sorted(set(out_dir.iterdir()) - before)


def find_chromium() -> str | None:
    """Path of a Chromium executable (``CHROMIUM``, then the settings, then PATH), or None."""
    configured = os.environ.get("CHROMIUM")
    for candidate in ([configured] if configured else []) + list(settings().chromium):
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


#: Sent gzip-compressed: everything else (PNG, WOFF2, ...) is compressed already.
TEXT_SUFFIXES = frozenset({".html", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".xml", ".map"})


class StaticHost:
    """A built site served as a static host serves it, on a free port of 127.0.0.1.

    Text is sent gzip-compressed (level 9) to a browser that accepts it, and
    every file with ``Cache-Control: max-age=600`` (GitHub Pages' setting), so
    a second page of a visit fetches only what it does not share with the
    first. ``url`` is the site's address; ``sent`` lists (path, status) of
    every response, in order. The tests and the bench use this one server.
    """

    def __init__(self, site: Path) -> None:
        self.sent: list[tuple[str, int]] = []
        handler = functools.partial(_Handler, self.sent, directory=str(site))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


class _Handler(http.server.SimpleHTTPRequestHandler):
    packed: dict[tuple[Path, int, int], bytes] = {}  # noqa: RUF012 (shared by every request)

    def __init__(self, sent: list[tuple[str, int]], *args: Any, **kwargs: Any) -> None:
        self.sent = sent
        super().__init__(*args, **kwargs)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.is_file() and path.suffix in TEXT_SUFFIXES):
            super().do_GET()
            return
        data = path.read_bytes()
        key = (path, len(data), hash(data))
        if key not in self.packed:
            self.packed[key] = gzip.compress(data, 9, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(self.packed[key])))
        self.end_headers()
        self.wfile.write(self.packed[key])

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        relative = unquote(urlsplit(self.path).path).lstrip("/")
        if relative == "" or relative.endswith("/"):
            relative += "index.html"
        self.sent.append((relative, int(code)))

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_folder(folder: Path) -> Iterator[StaticHost]:
    """Serve ``folder`` like a static host (:class:`StaticHost`) while the block runs."""
    host = StaticHost(folder)
    threading.Thread(target=host.server.serve_forever, daemon=True).start()
    try:
        yield host
    finally:
        host.server.shutdown()
        host.server.server_close()


def execution_report(out: Path = HTML) -> dict[str, dict[str, object]]:
    """Read the report of what the last build into ``out`` executed, and why.

    docs/_ext/book/execution.py writes it next to the output folder, as
    ``execution.json``.
    """
    report: dict[str, dict[str, object]] = json.loads(
        (out.parent / "execution.json").read_text(encoding="utf-8")
    )
    return report


def executed(out: Path = HTML) -> tuple[dict[str, float], dict[str, float]]:
    """Pages (``x.md``) and examples (``plot_x.py``) the last build into ``out`` executed.

    Each with its seconds.
    """
    report = execution_report(out)
    seconds: dict[str, float] = report["seconds"]  # type: ignore[assignment]
    pages: dict[str, float] = {}
    examples: dict[str, float] = {}
    for name in report["executed"]:
        if name.endswith(".py"):
            examples[Path(name).name] = seconds[name]
        else:
            pages[f"{name}.md"] = seconds[name]
    return pages, examples


def main(argv: list[str]) -> int:
    """``build [sphinx-build arguments]``: the HTML site; ``dist FOLDER``: sdist and wheel."""
    if argv[:1] == ["dist"] and len(argv) == 2:
        for path in build_package(Path(argv[1]), sdist=True):
            sys.stdout.write(f"{path}\n")
        return 0
    if argv[:1] != ["build"]:
        sys.stderr.write(
            "usage: python book_tools.py build [sphinx-build arguments]\n"
            "       python book_tools.py dist FOLDER\n"
        )
        return 2
    result = sphinx_build(*argv[1:], capture=False)
    if result.returncode == 0:
        sys.stdout.write(f"The site is in {result.html}; open {result.html / 'index.html'}.\n")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
