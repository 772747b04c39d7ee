"""A lesson printed on A4 keeps its content and loses the screen's chrome.

Each lesson page is printed to PDF by Chromium (``page.pdf``, print media, as
the browser's own print does) and the PDF is read back with pypdf: its text
holds every section title, every solution and the longest line of every code
block, and none of the header's, sidebars' or buttons' words; every figure is
in it, and none is split across two pages. In the page itself, under print
media, nothing that scrolls on screen is cut (a code block, a formula, a table).
"""

from __future__ import annotations

import html
import io
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pypdf
import pytest
from site_support import LESSON_PAGES, BuildResult, PageVisit

#: Words only the screen's chrome carries: the skip link, the search button
#: (with its shortcut), the "back to top" button and the solutions' and answers' buttons.
CHROME = (
    "Skip to main content",
    "Search",
    "Ctrl+K",
    "Back to top",
    "Show solution",
    "Hide solution",
    "Show answer",
    "Hide answer",
)

A4_COLUMN_PX = round((210 - 2 * 14) / 25.4 * 96)

PAGE_JS = """
() => {
  const text = (node) => {
    const copy = node.cloneNode(true);
    copy.querySelectorAll(".headerlink, annotation, .eqno").forEach((n) => n.remove());
    return copy.textContent;
  };
  // the prose of a block, cut where a formula was (PDF text spells a formula
  // in its own order)
  const prose = (node) => {
    const copy = node.cloneNode(true);
    copy.querySelectorAll("math, .formula").forEach((n) => n.replaceWith("\u0000"));
    return copy.textContent;
  };
  const main = document.querySelector("main");
  const toc = document.querySelector("#jb-print-toc");
  return {
    headings: Array.from(main.querySelectorAll("h1, h2, h3"))
      .filter((h) => !h.closest("#jb-print-docs-body")).map(text),
    // only the entries printed (the theme hides the nested ones in print)
    tocEntries: toc ? Array.from(toc.querySelectorAll("a")).filter((a) => a.checkVisibility())
      .map(text) : [],
    solutions: Array.from(main.querySelectorAll("div.solution")).map((s) => ({
      text: Array.from(s.querySelectorAll(":scope > p, :scope > section > p"))
        .filter((p) => !p.matches(".admonition-title")).map(prose).join("\u0000"),
      shown: Array.from(s.children).filter((c) => !c.matches(".admonition-title"))
        .every((c) => c.checkVisibility({opacityProperty: true, visibilityProperty: true})
          && c.getBoundingClientRect().height > 0),
    })),
    codeLines: Array.from(main.querySelectorAll("pre")).filter((p) => p.checkVisibility())
      .map((p) => p.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), "")),
    images: Array.from(main.querySelectorAll("img")).map((img) => ({
      src: img.currentSrc || img.src,
      shown: img.checkVisibility() && img.complete && img.naturalWidth > 0
        && img.getBoundingClientRect().width > 0,
    })),
    // What scrolls on screen is cut on paper, and code, a table or a formula
    // spilling out of its box runs off the page: no visible box may hold
    // more than it shows. (Boxes 1px wide are text hidden for screen readers.)
    cut: Array.from(main.querySelectorAll("*"))
      .filter((e) => e.checkVisibility() && e.clientWidth > 1
        && (getComputedStyle(e).overflowX !== "visible" || e.matches("pre, table, math"))
        && e.scrollWidth > e.clientWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`),
    // Tabs: paper cannot be clicked, so every tab's content is printed.
    hiddenTabs: Array.from(main.querySelectorAll(".sd-tab-content"))
      .filter((c) => !c.checkVisibility()).length,
    tabs: main.querySelectorAll(".sd-tab-content").length,
    orphanable: Array.from(main.querySelectorAll("h1, h2, h3, figure"))
      .filter((e) => e.checkVisibility())
      .filter((e) => e.matches("figure") ? getComputedStyle(e).breakInside !== "avoid"
        : getComputedStyle(e).breakAfter !== "avoid").map(text),
  };
}
"""


@dataclass(frozen=True)
class Printed:
    """One lesson page printed to PDF, and what the page showed under print media."""

    pages: int
    text: str  # the PDF's text, NFKC-normalised (no ligatures)
    xobjects: dict[str, set[int]]  # "Image"/"Form" XObject id -> the PDF pages it is drawn on
    dom: dict


def _squash(text: str) -> str:
    """``text`` without whitespace, NFKC-normalised: PDF text breaks lines anywhere."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _xobjects(reader) -> dict[str, set[int]]:
    drawn: dict[str, set[int]] = {}
    for number, page in enumerate(reader.pages, start=1):
        resources = page.get("/Resources")
        xobjects = resources.get_object().get("/XObject") if resources else None
        if not xobjects:
            continue
        xobjects = xobjects.get_object()
        for name in xobjects:
            ref = xobjects.raw_get(name)
            kind = xobjects[name].get_object().get("/Subtype")
            key = f"{kind}:{getattr(ref, 'idnum', name)}"
            drawn.setdefault(key, set()).add(number)
    return drawn


@pytest.fixture(scope="module")
def printed(browser, site_url: str) -> Callable[[str], Printed]:
    """Print a lesson page to an A4 PDF (once per page) and read it back."""
    cache: dict[str, Printed] = {}

    def _print(page: str) -> Printed:
        if page not in cache:
            visit = PageVisit(browser, site_url, page)
            try:
                # The page laid out as on paper: print media, and the width of
                # A4 within print.css's margins (210 mm - 2 x 14 mm at 96 px/in).
                visit.page.set_viewport_size({"width": A4_COLUMN_PX, "height": 1123})
                visit.page.emulate_media(media="print")
                dom = visit.page.evaluate(PAGE_JS)
                # Printing runs sphinx-togglebutton's "beforeprint" and
                # "afterprint" clicks: the page is inspected before, untouched.
                pdf = visit.page.pdf(format="A4")
            finally:
                visit.close()
            reader = pypdf.PdfReader(io.BytesIO(pdf))
            text = "\n".join(p.extract_text() for p in reader.pages)
            cache[page] = Printed(
                len(reader.pages), unicodedata.normalize("NFKC", text), _xobjects(reader), dom
            )
        return cache[page]

    return _print


def test_the_lesson_pages_were_found() -> None:
    assert {"self_attention.html", "multihead_attention.html", "encoder_block.html"} <= set(
        LESSON_PAGES
    )


def test_the_print_stylesheet_is_print_only(built_site: BuildResult) -> None:
    html = (built_site.html / "self_attention.html").read_text(encoding="utf-8")
    links = re.findall(r"<link [^>]*print\.css[^>]*>", html)
    assert len(links) == 1, "print.css is not linked once"
    assert 'media="print"' in links[0]
    css = Path(built_site.html / "_static" / "print.css").read_text(encoding="utf-8")
    assert "size: A4" in css


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_has_every_section_title(printed, page: str) -> None:
    result = printed(page)
    titles = result.dom["headings"]
    assert len(titles) >= 3, f"{page}: headings not found"
    text = _squash(result.text)
    toc = [_squash(entry) for entry in result.dom["tocEntries"]]
    # The theme's printed contents list repeats the section titles: each
    # title must be in the PDF once more than it is in that list.
    missing = [t for t in titles if text.count(_squash(t)) < 1 + toc.count(_squash(t))]
    assert missing == [], f"{page}: section titles missing from the PDF"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_has_no_screen_chrome(printed, page: str) -> None:
    text = printed(page).text
    assert [word for word in CHROME if word in text] == [], f"{page}: chrome printed"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_shows_its_solutions(printed, page: str) -> None:
    result = printed(page)
    solutions = result.dom["solutions"]
    # Under print media, without the click sphinx-togglebutton makes on
    # "beforeprint", a solution is open.
    assert all(s["shown"] for s in solutions), f"{page}: a solution is closed in print"
    text = _squash(result.text)
    for solution in solutions:
        pieces = [_squash(piece) for piece in solution["text"].split("\0")]
        pieces = [piece for piece in pieces if len(piece) >= 12]
        assert pieces, f"{page}: a solution has no text"
        # The start and the end of every stretch of prose: Chromium may paint
        # a paragraph's lines around other boxes, so the PDF's text does not
        # always keep a long paragraph in one piece.
        missing = [p for p in pieces if p[:30] not in text or p[-30:] not in text]
        assert missing == [], f"{page}: parts of a solution missing from the PDF"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_shows_every_tab(printed, page: str) -> None:
    assert printed(page).dom["hiddenTabs"] == 0, f"{page}: a tab's content is not printed"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_cuts_no_code_formula_or_table(printed, page: str) -> None:
    result = printed(page)
    assert result.dom["cut"] == [], f"{page}: boxes cut in print"
    lines = [line for line in result.dom["codeLines"] if line.strip()]
    assert lines, f"{page}: no code found"
    text = _squash(result.text)
    missing = [line for line in lines if _squash(line) not in text]
    assert missing == [], f"{page}: the longest lines of these code blocks are not in the PDF"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_printed_lesson_has_every_figure_on_one_page(
    printed, built_site: BuildResult, page: str
) -> None:
    result = printed(page)
    images = result.dom["images"]
    assert images, f"{page}: no figure found"
    assert [i["src"] for i in images if not i["shown"]] == [], f"{page}: figures hidden in print"
    # Chromium draws a raster image as one Image XObject (one per distinct
    # file) and an SVG as vector paths and text.
    rasters = {i["src"] for i in images if not i["src"].endswith(".svg")}
    drawn = [key for key in result.xobjects if key.startswith("/Image")]
    assert len(drawn) >= len(rasters), f"{page}: {len(rasters)} raster figures, {len(drawn)} drawn"
    text = _squash(result.text)
    for src in (i["src"] for i in images if i["src"].endswith(".svg")):
        svg = (built_site.html / "_images" / src.rsplit("/", 1)[1]).read_text(encoding="utf-8")
        texts = re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)
        labels = [_squash(html.unescape(re.sub(r"<[^>]+>", "", t))) for t in texts]
        labels = [label for label in labels if label]
        assert labels, f"{src}: no text to find"
        absent = [label for label in labels if label not in text]
        assert absent == [], f"{page}: labels of {src} not in the PDF"
    split = {key: pages for key, pages in result.xobjects.items() if len(pages) > 1}
    assert split == {}, f"{page}: figures drawn on two pages"
    assert result.dom["orphanable"] == [], f"{page}: headings or figures may break badly"
