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
(the ``{book-pdf}`` role of docs/_ext/book/downloads.py; nothing executes).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, ByteStringObject, NameObject, TextStringObject

import book_tools
from book_tools import (
    CHROMIUM_ARGS,
    DOCS,
    HTML,
    PDF_DIR,
    BuildResult,
    build_environment,
    find_chromium,
    sphinx_build,
)

OUT = PDF_DIR
SINGLEHTML = OUT / "singlehtml"
PDF, FACTS = book_tools.PDF, book_tools.PDF_FACTS

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
  title.textContent = "Appendix: solutions and answers";
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
    """Return the build's SOURCE_DATE_EPOCH (book_tools.build_environment)."""
    return int(build_environment()["SOURCE_DATE_EPOCH"])


def link_in_site() -> bool:
    """Bring the HTML site up to date, so that its landing page links the PDF.

    Only where ``nox -s docs`` built one (else there is nothing to link from):
    Sphinx re-reads the landing page and copies the PDF into ``_downloads/``;
    every other page is as it was, and nothing executes. Returns whether it did.
    """
    if not (HTML / "index.html").is_file():
        return False
    _check(sphinx_build("-q"))
    return True


def build_singlehtml() -> Path:
    """Write the book as one HTML page into ``docs/_build/pdf/singlehtml``; returns the page."""
    pdf_conf = ["-q", "-c", str(DOCS / "_pdf")]
    _check(sphinx_build(*pdf_conf, builder="singlehtml", out=SINGLEHTML, nitpicky=False))
    return SINGLEHTML / "index.html"


def _check(result: BuildResult) -> None:
    if result.returncode != 0:
        raise RuntimeError(f"sphinx-build failed (exit {result.returncode}):\n{result.output}")


#: Resolves once the page's fonts have loaded, after one more layout.
FONTS_READY_JS = """
() => document.fonts.ready.then(() => new Promise((done) =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(document.body.offsetHeight)))))
"""


def print_pdf(
    page: Path, target: Path, *, wait_ms: int = 0, before: Callable[[Any], None] | None = None
) -> tuple[int, list[str]]:
    """Print ``page`` to ``target`` with headless Chromium.

    ``wait_ms`` lets the page run its scripts that much longer before it is
    printed, and ``before`` is called with the Playwright page first: the
    reproducibility test prints with both, as a slower or busier browser
    would, and the bytes must not depend on them. Returns how many
    solutions moved to the appendix, and the headings' text.
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
            if wait_ms:
                tab.wait_for_timeout(wait_ms)
            if before is not None:
                before(tab)
            moved = int(tab.evaluate(PREPARE_JS))
            tab.emulate_media(media="print")
            # Every font the printed page uses is loaded and laid out before it
            # prints: a print that raced a font load set one formula's row
            # 0.4 pt lower than the next print did.
            tab.evaluate(FONTS_READY_JS)
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


def _id_string(old: Any, text: str) -> Any:
    """``text`` as a PDF string of the same kind as ``old`` (byte or text string)."""
    if isinstance(old, ByteStringObject):
        return ByteStringObject(text.encode("ascii"))
    return TextStringObject(text)


def _structure_elements(root: Any) -> list[Any]:
    """List the structure tree's elements under ``root``, depth first, in document order."""
    elements, seen = [], set()
    stack = [root.get("/K")]
    while stack:
        node = stack.pop()
        node = node.get_object() if hasattr(node, "get_object") else node
        if isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict) and id(node) not in seen and "/S" in node:
            seen.add(id(node))
            elements.append(node)
            if "/K" in node:
                stack.append(node["/K"])
    return elements


def _name_tree_leaves(node: Any) -> list[Any]:
    """List the leaves (nodes with ``/Names``) of a name tree, in key order."""
    node = node.get_object()
    if "/Names" in node:
        return [node]
    return [leaf for kid in node.get("/Kids", []) for leaf in _name_tree_leaves(kid)]


def _name_tree_pairs(node: Any) -> list[tuple[Any, Any]]:
    """List the (key, value) pairs of a name tree, in key order."""
    return [
        (names[i], names[i + 1])
        for leaf in _name_tree_leaves(node)
        for names in [leaf["/Names"]]
        for i in range(0, len(names), 2)
    ]


def _set_limits(node: Any) -> tuple[Any, Any]:
    """Write the ``/Limits`` of a name tree's nodes below the root; return its first, last key."""
    node = node.get_object()
    if "/Names" in node:
        names = node["/Names"]
        first, last = names[0], names[-2]
    else:
        spans = [_set_limits(kid) for kid in node["/Kids"]]
        first, last = spans[0][0], spans[-1][1]
    if "/Limits" in node:
        node[NameObject("/Limits")] = ArrayObject([first, last])
    return first, last


def renumber_structure_ids(writer: Any) -> int:
    """Name the tagged PDF's structure elements by their place in the document.

    Chromium gives each structure element the number of its DOM node
    (``/ID (node00000870)``), which depends on how many nodes the page had
    made by the time it printed (its scripts, timers and fonts), not on its
    content: two prints of the same page differed there and nowhere else.
    The elements are renamed ``node00000001``, ``node00000002``, ... in the
    structure tree's document order, everywhere a name appears: the
    elements' ``/ID``, a table cell's ``/Headers``, and the keys of the
    root's ``/IDTree``, whose leaves keep their sizes and are refilled in the
    new key order (``/Limits`` rewritten), so no object is added or dropped.
    Returns how many elements were renamed.
    """
    root = writer._root_object.get("/StructTreeRoot")
    if root is None:
        return 0
    root = root.get_object()
    renamed: dict[str, Any] = {}
    elements = _structure_elements(root)
    for element in elements:
        if "/ID" in element:
            old = element["/ID"]
            new = _id_string(old, f"node{len(renamed) + 1:08d}")
            renamed[str(old)] = new
            element[NameObject("/ID")] = new
    for element in elements:
        attributes = element.get("/A")
        attributes = attributes.get_object() if attributes is not None else None
        for owner in attributes if isinstance(attributes, list) else [attributes]:
            owner = owner.get_object() if hasattr(owner, "get_object") else owner
            if isinstance(owner, dict) and "/Headers" in owner:
                headers = [renamed.get(str(name), name) for name in owner["/Headers"]]
                owner[NameObject("/Headers")] = ArrayObject(headers)
    if "/IDTree" in root:
        leaves = _name_tree_leaves(root["/IDTree"])
        pairs = [
            (renamed.get(str(key), key), value) for key, value in _name_tree_pairs(root["/IDTree"])
        ]
        pairs.sort(key=lambda pair: str(pair[0]))
        for leaf in leaves:
            size = len(leaf["/Names"]) // 2
            taken, pairs = pairs[:size], pairs[size:]
            leaf[NameObject("/Names")] = ArrayObject([item for pair in taken for item in pair])
        _set_limits(root["/IDTree"])
    return len(renamed)


def finish(path: Path, epoch: int, headings: list[str]) -> int:
    """Make ``path`` the same bytes on every print of the same page.

    Fixes the outline's titles, names the structure elements by their place
    in the document (:func:`renumber_structure_ids`), dates the file
    ``epoch`` and derives its /ID from its content. Returns the number of pages.
    """
    stamp = datetime.fromtimestamp(epoch, UTC).strftime("D:%Y%m%d%H%M%SZ")
    writer = PdfWriter(clone_from=PdfReader(path))
    _fix_outline(writer, headings)
    renumber_structure_ids(writer)
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
