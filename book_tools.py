"""What the tests and the bench share: the book's settings and the helpers both use.

The settings are defined once, in the ``[tool.book]`` table of
``pyproject.toml``; this module is how the tests (``tests/``) and the bench
(``benchmarks/build_bench.py``) read them. ``noxfile.py`` and ``docs/conf.py``
read the same table themselves: the ``nox`` command does not put the
noxfile's folder on the import path, and a copy of ``docs/`` with
``pyproject.toml`` beside it (as the site tests and the bench make) then
builds without this file.

The helpers are the ones both the tests and the bench need: finding Chromium,
serving a built site, and reading from a build's log what it executed. The
package and the book's pages never import this module.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent

_BOOK = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["book"]

#: sphinx-build's flags, without the parallel jobs.
SPHINX_FLAGS: list[str] = list(_BOOK["sphinx-flags"])
#: sphinx-build's parallel jobs, as flags.
SPHINX_JOBS: list[str] = ["-j", str(_BOOK["sphinx-jobs"])]
#: Environment for everything the build and the tests run (one thread).
BUILD_ENV: dict[str, str] = dict(_BOOK["build-env"])
#: The same setting as a thread count, for ``torch.set_num_threads``.
THREADS = int(BUILD_ENV["OMP_NUM_THREADS"])
#: Command-line arguments for headless Chromium.
CHROMIUM_ARGS: list[str] = list(_BOOK["chromium-args"])


def find_chromium() -> str | None:
    """Path of a Chromium executable (``CHROMIUM``, then the settings, then PATH), or None."""
    configured = os.environ.get("CHROMIUM")
    for candidate in ([configured] if configured else []) + list(_BOOK["chromium"]):
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on a free port of 127.0.0.1; yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# What a build executed, read from its log (until the build reports it itself).
_EXECUTED_NOTEBOOK = re.compile(
    r"^(?P<path>\S+?\.md): Executed notebook in (?P<s>[\d.]+) seconds", re.M
)
_EXAMPLE_TIME = re.compile(r"^\s+- (?P<path>\S+?\.py):\s+(?P<s>[\d.]+) sec", re.M)
_EXAMPLES_RUN = re.compile(r"Sphinx-Gallery successfully executed (\d+) out of")


def gallery_state(docs: Path) -> dict[str, int]:
    """Modification time of every generated example page (``plot_x.py`` -> ns)."""
    return {
        f"{page.stem}.py": page.stat().st_mtime_ns
        for page in (docs / "auto_examples").glob("*.rst")
        if page.name != "index.rst"
    }


def executed(
    output: str, docs: Path, before: dict[str, int]
) -> tuple[dict[str, float], dict[str, float]]:
    """Pages (``x.md``) and examples (``plot_x.py``) a build executed, with seconds.

    Pages come from MyST-NB's "Executed notebook" lines in the build's log.
    sphinx-gallery's time summary also lists examples it did not run (with
    their last times), so an example counts as executed when its generated
    page was written again (``before`` is :func:`gallery_state` before the
    build); the number is checked against sphinx-gallery's own count.
    """
    pages = {
        Path(m["path"]).resolve().relative_to(docs.resolve()).as_posix(): float(m["s"])
        for m in _EXECUTED_NOTEBOOK.finditer(output)
    }
    summary = output.partition("computation time summary:")[2]
    times = {Path(m["path"]).name: float(m["s"]) for m in _EXAMPLE_TIME.finditer(summary)}
    after = gallery_state(docs)
    rewritten = sorted(name for name, mtime in after.items() if before.get(name) != mtime)
    counted = _EXAMPLES_RUN.search(output)
    ran = int(counted.group(1)) if counted else 0
    if ran != len(rewritten):
        raise ValueError(f"{len(rewritten)} example pages were written but {ran} examples ran")
    return pages, {name: times.get(name, float("nan")) for name in rewritten}
