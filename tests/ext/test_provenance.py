"""provenance: one line naming the versions, the machine, the seeds and the runtime."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest
from book.execution import processor_name
from ext_support import Book, warnings

PAGE = """\
Results
=======

Text.

.. provenance::
   :seeds: 0, 1 and 2

.. provenance::
"""


def test_the_placeholder_becomes_the_provenance_line(
    book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    monkeypatch.delenv("MKL_CBWR", raising=False)
    app = book("provenance", {"index.rst": PAGE})
    assert warnings(app) == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    lines = re.findall(r'<p class="provenance">(.*?)</p>', html, re.DOTALL)
    machine = (
        f"Produced by the build with lessons_code {version('lessons-code')}, "
        f"PyTorch {version('torch')} and NumPy {version('numpy')} on the CPU "
        f"({processor_name()}, "
    )
    # Nothing was executed (no MyST-NB): the runtime is said to be unknown.
    ending = (
        "1 PyTorch thread, ATEN_CPU_CAPABILITY=default); seeds: {}; "
        "the page's execution time was not recorded."
    )
    assert len(lines) == 2
    for line, seeds in zip(lines, ["0, 1 and 2", "none (no randomness)"], strict=True):
        assert line.startswith(machine), line
        assert line.endswith(ending.format(seeds)), line
        assert re.search(r", \d+ cores, ", line), line
