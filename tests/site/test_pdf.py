"""The book as one PDF (``nox -s pdf``; book_pdf.py): what a reader of it must find.

The PDF is built once, after the site (whose execution cache it reads), by
the same function as the nox session; its page count, size and build time go
to ``test-artifacts/pdf.json``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from pypdf import PdfReader
from site_support import DOCS, HTML, BuildResult, skip_or_fail

import book_pdf
from book_tools import ROOT, find_chromium

# Chromium prints the PDF (not through the browser fixture, which the
# conftest marks by): marked here, so that `-m "not browser"` leaves it out.
# Serial: building the PDF rebuilds the shared site to link it, under the
# feet of any test reading the site beside it.
pytestmark = [pytest.mark.browser, pytest.mark.serial]

#: Pages of the book that are not lessons, and the toctree entries the PDF leaves out.
NOT_LESSONS = {"glossary", "bibliography", "api", "auto_examples/index", "maintainers"}
#: Formulas whose text must come out of the PDF (white space removed, NFKC):
#: scaled dot-product attention (Q K-transposed over the root of d_k) and
#: the sinusoidal encoding.
FORMULAS = ["softmax", "QK\N{DOWN TACK}\N{SQUARE ROOT}dk", "PE(pos,2i)=sin(pos"]
#: LaTeX that would mean a formula was printed as its source.
RAW_TEX = re.compile(r"\$\$|\\(frac|sqrt|mathrm|operatorname|left|right|cdot|top)\b")
#: A PDF of the whole book is longer than this; a lost chapter would show.
MIN_PAGES = 80
#: Small enough to hand out: eight lessons with all their figures print to about
#: 15.4 MB (270-odd pages; each figure a palette PNG at twice its shown size).
MAX_BYTES = 20_000_000


@dataclass(frozen=True)
class Book:
    """The built PDF, read back."""

    path: Path
    reader: PdfReader
    text: str  # every page's text, NFKC, white space removed
    seconds: float
    landing_before: str | None  # the landing page's text before it, when there was no PDF


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _lessons() -> list[str]:
    """The lesson pages, in the landing page's order (every toctree entry but the rest)."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    entries = [
        line.strip()
        for block in re.findall(r"```\{toctree\}\n(.*?)```", index, re.DOTALL)
        for line in block.splitlines()
        if line.strip() and not line.startswith(":")
    ]
    return [entry for entry in entries if entry not in NOT_LESSONS]


def _headings(page: str, level: int) -> list[str]:
    """The text of the ``<h{level}>`` headings of a built page (without the "#" link)."""
    html = (HTML / f"{page}.html").read_text(encoding="utf-8")
    found = re.findall(rf"<h{level}[^>]*>(.*?)</h{level}>", html, re.DOTALL)
    # Without the link and a formula's TeX source (its MathML annotation, not shown).
    drop = r"<a class=\"headerlink\".*?</a>|<annotation.*?</annotation>|<[^>]+>"
    texts = [re.sub(drop, "", h, flags=re.DOTALL) for h in found]
    return [unicodedata.normalize("NFKC", " ".join(t.split())) for t in texts]


def _figures(page: str) -> list[str]:
    """The alt text of every figure of a built page (not the gallery's thumbnails)."""
    html = (HTML / f"{page}.html").read_text(encoding="utf-8")
    images = re.findall(r"<img [^>]*>", html)
    kept = [i for i in images if "sphx_glr_" not in i or "_thumb" not in i]
    return [re.search(r'alt="([^"]*)"', i).group(1) for i in kept]  # type: ignore[union-attr]


def _outline_titles(reader: PdfReader) -> list[str]:
    titles: list[str] = []

    def walk(items: list) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                titles.append(item.title)

    walk(reader.outline)
    return titles


def _alt_texts(reader: PdfReader) -> list[str]:
    """Every /Alt of the tagged PDF's structure tree (one per printed figure)."""
    root = reader.trailer["/Root"]["/StructTreeRoot"].get_object()
    return [str(node["/Alt"]) for node in book_pdf._structure_elements(root) if "/Alt" in node]


def _build_pdf() -> Path:
    """Run book_pdf.py as ``nox -s pdf`` does, in a process of its own.

    Playwright's synchronous API cannot start while the browser fixture's
    event loop runs in this process.
    """
    subprocess.run([sys.executable, str(ROOT / "book_pdf.py")], check=True)
    return book_pdf.PDF


@pytest.fixture(scope="session")
def book(built_site: BuildResult, artifacts: Path) -> Book:
    """The PDF, built by book_pdf.build_pdf after the site; its figures saved for a maintainer."""
    if find_chromium() is None:
        skip_or_fail("NO BROWSER: Chromium not found (it prints the PDF); PDF tests skipped")
    before = None if book_pdf.PDF.is_file() else _landing_article()
    start = time.perf_counter()
    path = _build_pdf()
    seconds = time.perf_counter() - start
    reader = PdfReader(path)
    text = _squeeze("\n".join(page.extract_text() for page in reader.pages))
    report = {"pages": len(reader.pages), "bytes": path.stat().st_size, "seconds": seconds}
    (artifacts / "pdf.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return Book(path, reader, text, seconds, before)


def _landing_article() -> str:
    """The HTML of the landing page's article (its text, without the theme's menus)."""
    html = (HTML / "index.html").read_text(encoding="utf-8")
    found = re.search(r"<article\b.*?</article>", html, re.DOTALL)
    assert found, "the landing page has no <article>"
    return found.group(0)


def _landing_paragraph() -> str:
    """The HTML of the landing page's paragraph about the PDF."""
    html = (HTML / "index.html").read_text(encoding="utf-8")
    found = re.search(r"<p><strong>Reading offline\.</strong>.*?</p>", html, re.DOTALL)
    assert found, "the landing page has no paragraph 'Reading offline.'"
    return found.group(0)


def test_landing_page_links_the_pdf(book: Book) -> None:
    """Once built, the PDF is a download on the landing page, with its pages and size."""
    paragraph = _landing_paragraph()
    links = re.findall(r'<a class="reference download[^"]*" download="" href="([^"]+)"', paragraph)
    assert len(links) == 1, paragraph
    assert links[0].endswith("/transformer-book.pdf")
    assert (HTML / links[0]).read_bytes() == book.path.read_bytes()
    size = book.path.stat().st_size / 1e6
    assert f"({len(book.reader.pages)} pages, {size:.1f} MB)" in paragraph


def test_landing_page_without_the_pdf_says_nothing_of_it(book: Book) -> None:
    """A site built before the PDF (``nox -s docs`` alone) neither links nor mentions one."""
    before = book.landing_before
    if before is None:
        pytest.skip("a PDF was already built when the session started (a fresh clone has none)")
    assert "transformer-book.pdf" not in before
    assert "Reading offline" not in before
    text = " ".join(re.sub(r"<[^>]+>", "", before).split())
    assert "PDF" not in text, text[:2000]
    assert "nox" not in text, text[:2000]


def test_pdf_size_and_pages(book: Book) -> None:
    """The whole book is there, numbered, and the file stays small enough to hand out."""
    assert len(book.reader.pages) > MIN_PAGES
    assert book.path.stat().st_size <= MAX_BYTES
    # Page numbers at the foot of the pages ("3 / 119").
    total = len(book.reader.pages)
    assert f"3/{total}" in _squeeze(book.reader.pages[2].extract_text())


def test_pdf_outline_has_every_lesson_and_the_appendix(book: Book) -> None:
    """A bookmark per lesson (its title, spaces and all), the glossary, bibliography, appendix."""
    titles = _outline_titles(book.reader)
    wanted = [_headings(page, 1)[0] for page in _lessons()]
    wanted += ["Glossary", "Bibliography", "Appendix: solutions and answers"]
    missing = [title for title in wanted if title not in titles]
    assert not missing, f"no bookmark for {missing}"
    solutions = [title for title in titles if "Solution to Exercise" in title]
    assert solutions, "no bookmark for any solution in the appendix"


def test_pdf_has_every_section_title(book: Book) -> None:
    """The text of every lesson's section titles (its <h2>) is in the PDF."""
    missing = [
        f"{page}: {title}"
        for page in _lessons()
        for title in _headings(page, 2)
        if _squeeze(title) not in book.text
    ]
    assert not missing


def test_pdf_formulas_are_typeset(book: Book) -> None:
    """Key formulas come out as their symbols, and no LaTeX source is printed."""
    missing = [formula for formula in FORMULAS if _squeeze(formula) not in book.text]
    assert not missing
    assert not RAW_TEX.findall(book.text)


def test_pdf_has_every_figure(book: Book) -> None:
    """Every figure of the lessons is printed, as a figure with its alt text."""
    alts = {_squeeze(alt) for alt in _alt_texts(book.reader)}
    figures = [(page, alt) for page in _lessons() for alt in _figures(page)]
    assert figures
    missing = [f"{page}: {alt[:60]}" for page, alt in figures if _squeeze(alt) not in alts]
    assert not missing


def test_pdf_internal_links_resolve(book: Book) -> None:
    """Every link within the book lands on a page of it (no dangling named destination)."""
    names = set(book.reader.named_destinations)
    dangling, internal = [], 0
    for page in book.reader.pages:
        for annotation in page.get("/Annots", []) or []:
            annotation = annotation.get_object()
            destination = annotation.get("/Dest")
            if destination is None and "/A" in annotation:
                destination = annotation["/A"].get("/D")
            if destination is None:
                continue
            internal += 1
            if isinstance(destination, str) and destination not in names:
                dangling.append(destination)
    assert internal > 0
    assert not dangling


#: One more print of the same page, in a process of its own, unlike the
#: first in every way a print can be: after the page has run for three
#: seconds more and DevTools has asked for its whole DOM. Chromium numbers DOM
#: nodes as anything first asks for them (that request numbers every node, as
#: a busier browser's scripts or tools would) and named the PDF's structure
#: elements by those numbers; a difference of any other origin (a clock, a
#: random seed) shows in this print as well.
REPRINT = """
import sys
from pathlib import Path
import book_pdf as b

def busier(tab):
    tab.context.new_cdp_session(tab).send("DOM.getDocument", {"depth": -1})

path = Path(sys.argv[1])
_, headings = b.print_pdf(b.SINGLEHTML / "index.html", path, wait_ms=3000, before=busier)
b.finish(path, b.source_date_epoch(), headings)
"""


def test_pdf_is_reproducible(book: Book, tmp_path: Path) -> None:
    """A second print of the same page gives the same bytes, however long the page ran first.

    Fixed dates, the /ID from the content, the structure elements named by
    their place in the document (Chromium names them by DOM node numbers).
    """
    prints = [tmp_path / "later.pdf"]
    command = [sys.executable, "-c", REPRINT, *map(str, prints)]
    subprocess.run(command, check=True, cwd=ROOT)
    first = book.path.read_bytes()
    differ = [path.name for path in prints if path.read_bytes() != first]
    assert not differ, f"{differ} differ from {book.path.name}"
    assert book.reader.metadata is not None
    assert book.reader.metadata["/CreationDate"].startswith("D:20")


def test_pdf_structure_ids_follow_the_document(book: Book) -> None:
    """The structure elements are named in document order, and the /IDTree finds each one."""
    root = book.reader.trailer["/Root"]["/StructTreeRoot"].get_object()
    elements = book_pdf._structure_elements(root)
    ids = [str(element["/ID"]) for element in elements if "/ID" in element]
    assert ids, "the tagged PDF names no structure element"
    assert ids == [f"node{n:08d}" for n in range(1, len(ids) + 1)]
    pairs = book_pdf._name_tree_pairs(root["/IDTree"])
    keys = [str(key) for key, _ in pairs]
    assert keys == sorted(keys) == ids
    found = {str(key): value.get_object() for key, value in pairs}
    named = {str(element["/ID"]): element for element in elements if "/ID" in element}
    assert all(found[key] is named[key] or found[key] == named[key] for key in ids)
