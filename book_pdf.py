"""The book as one PDF: ``nox -s pdf``, and the fixture of tests/site/test_pdf.py.

Route: Sphinx's ``singlehtml`` builder writes the lessons, the glossary and
the bibliography as one HTML page (configuration: ``docs/_pdf/conf.py``,
the HTML book's narrowed), and the Debian Chromium that the browser tests
already drive prints it (Playwright's ``page.pdf``): the book's print
stylesheet lays it out, the formulas are MathML and print as on screen,
the headings give the PDF's outline (bookmarks) and the links within the
page become links within the PDF. Nothing beyond the ``docs`` and ``test``
extras is installed. pypdf then dates the file SOURCE_DATE_EPOCH and
derives its identifier from its content, so that the same sources give the
same bytes.

Run ``python book_pdf.py`` (after ``nox -s docs``, nothing is executed
again); the PDF is written to ``docs/_build/pdf/transformer-book.pdf``, its
page count to ``transformer-book.json`` next to it, and the HTML site, where
one was built, is brought up to date so that its landing page links the PDF
(the ``{book-pdf}`` role of docs/_ext/lesson_notebooks.py; nothing executes).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, ByteStringObject, NameObject, TextStringObject

from book_tools import _BOOK, BUILD_ENV, CHROMIUM_ARGS, SPHINX_FLAGS, SPHINX_JOBS, find_chromium

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "docs"
OUT = DOCS / "_build" / "pdf"
SINGLEHTML = OUT / "singlehtml"
DOCTREES = OUT / "doctrees"
PDF = OUT / "transformer-book.pdf"
FACTS = OUT / "transformer-book.json"
#: The HTML site and its doctrees, as ``nox -s docs`` builds them.
HTML = DOCS / "_build" / "html"
HTML_DOCTREES = DOCS / "_build" / "doctrees"

#: Page number at the foot of every page (Chromium fills in the spans).
FOOTER = (
    '<div style="width:100%;font-size:8pt;text-align:center;color:#444;">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)

#: Before printing: links within the page that Sphinx's ``singlehtml`` left
#: with two anchors (``#document-page#label``: references resolved after it
#: joined the pages) point at their target; every exercise's solution moves
#: into an appendix at the end of the book, under a heading naming its lesson
#: and exercise, with links both ways; every chapter (lesson, glossary,
#: bibliography, appendix) starts a page. Returns how many solutions moved.
PREPARE_JS = r"""
() => {
  document.querySelectorAll('a[href^="#"]').forEach((a) => {
    const parts = a.getAttribute("href").split("#");
    if (parts.length > 2) {
      const id = parts[parts.length - 1];
      a.setAttribute("href", "#" + (document.getElementById(id) ? id : parts[1]));
    }
  });
  const solutions = Array.from(document.querySelectorAll("div.solution"));
  if (!solutions.length) return 0;
  const style = document.createElement("style");
  style.textContent = [
    "main section:has(> h2), #appendix-solutions { break-before: page; }",
    ".pdf-appendix .admonition { break-inside: auto !important; }",
  ].join("\n");
  document.head.appendChild(style);
  const main = document.querySelector("main article") || document.querySelector("main");
  const appendix = document.createElement("section");
  appendix.id = "appendix-solutions";
  appendix.className = "pdf-appendix";
  const title = document.createElement("h2");
  title.textContent = "Appendix: solutions to the exercises";
  appendix.appendChild(title);
  solutions.forEach((solution, index) => {
    const label = solution.querySelector(".admonition-title");
    const exercise = label ? label.querySelector("a") : null;
    let lesson = solution.parentElement;
    while (lesson && !(lesson.tagName === "SECTION" && lesson.querySelector(":scope > h2"))) {
      lesson = lesson.parentElement;
    }
    const lessonHeading = lesson ? lesson.querySelector(":scope > h2") : null;
    const lessonTitle = lessonHeading ? lessonHeading.innerText.replace("#", "").trim() : "";
    const name = (label ? label.innerText : "Solution").replace(/\s+/g, " ").trim();
    const item = document.createElement("section");
    item.id = `appendix-solution-${index + 1}`;
    const heading = document.createElement("h3");
    heading.textContent = lessonTitle ? `${lessonTitle}: ${name}` : name;
    item.appendChild(heading);
    const stub = document.createElement("p");
    const forward = document.createElement("a");
    forward.href = `#${item.id}`;
    forward.textContent = `${name}: see the appendix`;
    stub.appendChild(forward);
    solution.replaceWith(stub);
    solution.classList.remove("toggle-hidden", "dropdown");
    if (label) label.remove();
    item.appendChild(solution);
    if (exercise) {
      const back = document.createElement("p");
      const link = document.createElement("a");
      link.href = exercise.getAttribute("href");
      link.textContent = `Back to ${exercise.innerText.trim()}`;
      back.appendChild(link);
      item.appendChild(back);
    }
    appendix.appendChild(item);
  });
  main.appendChild(appendix);
  return solutions.length;
}
"""

#: The text of every heading as printed (print media), in document order:
#: Chromium's outline joins a heading's wrapped lines without a space, so the
#: outline's titles are written again from these.
HEADINGS_JS = r"""
() => Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6"))
  .filter((h) => h.getClientRects().length > 0)
  .map((h) => h.innerText.replace(/#$/, "").replace(/\s+/g, " ").trim())
"""


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH from the environment, else the book's (pyproject's [tool.book])."""
    return int(os.environ.get("SOURCE_DATE_EPOCH", _BOOK["source-date-epoch"]))


def _sphinx_env() -> dict[str, str]:
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, **BUILD_ENV, "PYTHONPATH": pythonpath}


def link_in_site() -> bool:
    """Bring the HTML site up to date, so that its landing page links the PDF.

    Only where ``nox -s docs`` built one (else there is nothing to link from):
    Sphinx re-reads the landing page and copies the PDF into ``_downloads/``;
    every other page is as it was, and nothing executes. Returns whether it did.
    """
    if not (HTML / "index.html").is_file():
        return False
    flags = [*SPHINX_FLAGS, *SPHINX_JOBS, "-q", "-d", str(HTML_DOCTREES)]
    command = [sys.executable, "-m", "sphinx", *flags, str(DOCS), str(HTML)]
    subprocess.run(command, cwd=ROOT, env=_sphinx_env(), check=True)
    return True


def build_singlehtml() -> Path:
    """Write the book as one HTML page into ``docs/_build/pdf/singlehtml``; returns the page."""
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "singlehtml",
        "-T",
        "-q",
        *SPHINX_JOBS,
        "-c",
        str(DOCS / "_pdf"),
        "-d",
        str(DOCTREES),
        str(DOCS),
        str(SINGLEHTML),
    ]
    subprocess.run(command, cwd=ROOT, env=_sphinx_env(), check=True)
    return SINGLEHTML / "index.html"


def print_pdf(page: Path, target: Path) -> tuple[int, list[str]]:
    """Print ``page`` to ``target`` with headless Chromium.

    Returns how many solutions moved to the appendix, and the headings' text.
    """
    executable = find_chromium()
    if executable is None:
        raise RuntimeError("Chromium not found (install Debian's 'chromium' or set CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page()
            tab.goto(page.as_uri(), wait_until="load")
            moved = int(tab.evaluate(PREPARE_JS))
            tab.emulate_media(media="print")
            headings = [str(text) for text in tab.evaluate(HEADINGS_JS)]
            tab.pdf(
                path=str(target),
                prefer_css_page_size=True,
                print_background=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                outline=True,
                tagged=True,
            )
        finally:
            browser.close()
    return moved, headings


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _fix_outline(writer: Any, headings: list[str]) -> int:
    """Write the outline's titles again from ``headings``; returns how many changed.

    The outline's items and the headings are both in document order; an item
    takes the text of the next heading whose text, without white space, it
    starts with (Chromium's titles lack the spaces at line breaks).
    """
    changed, position = 0, 0
    root = writer._root_object.get("/Outlines")
    root = root.get_object() if root is not None else {}
    stack = [root["/First"]] if "/First" in root else []
    items = []
    while stack:  # depth first, in document order
        node = stack.pop().get_object()
        items.append(node)
        if "/Next" in node:
            stack.append(node["/Next"])
        if "/First" in node:
            stack.append(node["/First"])
    for node in items:
        title = str(node["/Title"])
        for index in range(position, len(headings)):
            wanted = _squeeze(headings[index])
            if wanted and _squeeze(title).startswith(wanted):
                if title != headings[index]:
                    node[NameObject("/Title")] = TextStringObject(headings[index])
                    changed += 1
                position = index + 1
                break
    return changed


def finish(path: Path, epoch: int, headings: list[str]) -> int:
    """Fix the outline's titles, date ``path`` ``epoch`` and derive its /ID from its content.

    The same sources then give the same bytes. Returns the number of pages.
    """
    stamp = datetime.fromtimestamp(epoch, UTC).strftime("D:%Y%m%d%H%M%SZ")
    writer = PdfWriter(clone_from=PdfReader(path))
    _fix_outline(writer, headings)
    info = {
        NameObject("/Title"): TextStringObject("The Transformer Architecture"),
        NameObject("/CreationDate"): TextStringObject(stamp),
        NameObject("/ModDate"): TextStringObject(stamp),
    }
    writer.add_metadata(info)
    writer._ID = None  # first pass without an identifier: the digest below is of the rest
    buffer = io.BytesIO()
    writer.write(buffer)
    digest = hashlib.md5(buffer.getvalue(), usedforsecurity=False).digest()
    writer._ID = ArrayObject([ByteStringObject(digest), ByteStringObject(digest)])
    with path.open("wb") as handle:
        writer.write(handle)
    return len(writer.pages)


def build_pdf() -> Path:
    """Build the PDF: one HTML page, printed, made reproducible; returns the PDF's path."""
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    page = build_singlehtml()
    built = time.perf_counter()
    moved, headings = print_pdf(page, PDF)
    pages = finish(PDF, source_date_epoch(), headings)
    FACTS.write_text(json.dumps({"pages": pages}) + "\n", encoding="utf-8")
    done = time.perf_counter()
    linked = link_in_site()
    size = PDF.stat().st_size / 1e6
    where = f"linked from {HTML / 'index.html'}" if linked else "no site to link it from yet"
    print(  # noqa: T201 (the nox session's report)
        f"[pdf] {PDF} ({pages} pages, {size:.1f} MB, {moved} solutions in the appendix; "
        f"{where}): singlehtml {built - start:.1f} s, print {done - built:.1f} s, "
        f"site {time.perf_counter() - done:.1f} s"
    )
    return PDF


if __name__ == "__main__":
    build_pdf()
