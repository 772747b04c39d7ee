"""A clean build gives the site the test session built, byte for byte.

The book is copied into a fresh folder and built there from scratch (every
page and every example executed again). Its output is compared file by file
with the site the session built (``built_site``): under CI that is a clean
build of its own, on a maintainer's machine an incremental one, so the test
also shows that building step by step ends where a clean build does.

Two kinds of content are *measurements of the build machine* and
legitimately differ from run to run; they are declared here, not hidden:

* the run times the build reports (a page's provenance line, an example's
  "Total running time"), which are masked before comparing (and the
  ``?v=`` query of an incremental build's links is dropped, see ``QUERY``);
* the timing experiments (RNN loop vs attention, attention speed, the
  key-value cache): their figures and tables are wall-clock measurements,
  so their pages, images and the recurrence lesson's notebook (which
  carries its timings, as does the zip of all lesson notebooks;
  test_downloads checks the zip holds each notebook byte for byte) are
  listed in ``MEASURED`` and left out of the byte comparison.

Every other difference fails the test, and the test lists all of them. Files
only the session's site has are not differences: Sphinx never deletes the
output of a page that was removed since an earlier build.

The slow experiments (order task, depth, date translation) are shared between
the two builds through the saved results of ``lessons_code.results``
(``LESSONS_CODE_RESULTS``): their determinism for a given seed is tested in
the package's tests.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest
from site_support import DOCS, ROOT, BuildResult

import book_pdf
from book_tools import RESULTS_VAR, build_environment, sphinx_build

# Serial: after test_pdf.py, in the same process, so that the site it rebuilds
# from scratch is the published one, linking the PDF.
pytestmark = pytest.mark.serial

#: Pages and images that show wall-clock measurements.
MEASURED = re.compile(
    r"(recurrence\.(html|ipynb)|lessons-notebooks\.zip"
    r"|plot_rnn_vs_attention|plot_attention_speed|plot_kv_cache|searchindex\.js)"
)
IMAGE_LINK = re.compile(r"_images/([0-9a-f]{64}\.png)")
#: Dropped before comparing: the ``?v=`` query Sphinx appends to a stylesheet
#: or script link only when an earlier build left that file in the output
#: folder (the file itself is compared).
QUERY = re.compile(rb"\?v=[0-9a-f]{8}\b")
#: Run times the build prints, masked before comparing.
TIMINGS = [
    re.compile(rb"executing this page took [0-9.]+ s"),
    re.compile(rb"\(\s*\d+\s*minutes\s*[0-9.]+\s*seconds\)"),
    re.compile(rb"[0-9.]+ s</p>"),
]


def clean_copy(target: Path) -> Path:
    """The sources of the book, as a fresh clone would have them."""
    ignore = shutil.ignore_patterns(
        "_build",
        "auto_examples",
        "gen_modules",
        "api",
        "_generated",
        "jupyter_execute",
        "__pycache__",
    )
    # The wheel's metadata, and the build's settings and entry.
    for name in ("pyproject.toml", "README.md", "book_tools.py"):
        shutil.copy(ROOT / name, target / name)
    for folder in ("docs", "gallery", "lessons_code"):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    # The book as one PDF, which the landing page links once `nox -s pdf` built
    # it (test_pdf does, before this test): an input of the site like the sources.
    for built in (book_pdf.PDF, book_pdf.FACTS):
        if built.is_file():
            copy = target / built.relative_to(ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(built, copy)
    return target / "docs"


def fingerprint(path: Path) -> str:
    data = QUERY.sub(b"", path.read_bytes())
    for pattern in TIMINGS:
        data = pattern.sub(b"<timing>", data)
    return hashlib.sha256(data).hexdigest()


def test_a_clean_build_gives_the_same_site(
    built_site: BuildResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first build's saved grids: the copy reads them instead of training.
    results = build_environment(DOCS)[RESULTS_VAR]
    monkeypatch.setenv(RESULTS_VAR, results)
    docs = clean_copy(tmp_path)
    result = sphinx_build(docs=docs)
    assert result.returncode == 0, result.output[-4000:]
    first, second = outputs = [built_site.html, docs / "_build" / "html"]
    files_1 = {p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file()}
    files_2 = {p.relative_to(second).as_posix() for p in second.rglob("*") if p.is_file()}
    # Images of measured figures get content-hashed names, so they differ by name.
    measured_images = {
        f"_images/{image}"
        for html in outputs
        for page in html.rglob("*.html")
        if MEASURED.search(page.relative_to(html).as_posix())
        for image in IMAGE_LINK.findall(page.read_text(encoding="utf-8"))
    }
    differences = [
        f"only in the clean build: {name}"
        for name in sorted(files_2 - files_1)
        if name not in measured_images
    ]
    measured = 0
    for name in sorted(files_1 & files_2):
        if fingerprint(first / name) == fingerprint(second / name):
            continue
        if MEASURED.search(name):
            measured += 1
            continue
        differences.append(f"differs: {name}")
    report = ROOT / "test-artifacts" / "reproducibility.txt"
    report.parent.mkdir(exist_ok=True)
    report.write_text(
        f"files compared: {len(files_1 & files_2)}\n"
        f"measured (timing) files that differ, as declared: {measured}\n"
        + "\n".join(differences)
        + "\n",
        encoding="utf-8",
    )
    assert differences == [], "\n".join(differences)
