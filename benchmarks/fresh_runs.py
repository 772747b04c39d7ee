"""What the training benchmarks share: one run in a fresh process, and a spread over seeds.

Each run is a child process started cold, as a lesson page or a gallery
example of the build starts, with the settings the build trains with (the
variables of ``[tool.book.build-env]``, the package importable from the
working tree) and without ``LESSONS_CODE_RESULTS``, so that every run
trains. Used by ``capstone_bench.py`` and ``vision_bench.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The book's settings (standard library only): book_tools.py, next to pyproject.toml.
sys.path.insert(0, str(ROOT))
from book_tools import BUILD_ENV, THREADS  # noqa: E402

__all__ = ["ROOT", "THREADS", "fresh_run", "spread"]


def fresh_run(code: str, *arguments: str) -> dict[str, Any]:
    """Run the Python ``code`` with ``arguments`` in a fresh process; its last line as JSON."""
    env = {**os.environ, **BUILD_ENV, "PYTHONPATH": str(ROOT)}
    env.pop("LESSONS_CODE_RESULTS", None)  # every run trains
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def spread(values: list[float], fmt: str) -> str:
    """``mean (sample std s)`` formatted with ``fmt``, or the mean alone for one value."""
    text = format(statistics.mean(values), fmt)
    if len(values) > 1:
        text += f" (sample std {format(statistics.stdev(values), fmt)})"
    return text
