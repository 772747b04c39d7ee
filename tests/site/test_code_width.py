"""Code on the pages fits the text column: no block scrolls sideways at 1280 px.

At a 1280 px wide window the book's text column is 688 px. A code block of the
14 px monospace font shows 77 characters there, 74 inside a tab set (where the
package's listings sit) and 69 inside a solution's dropdown. Source checks
(fast, no build): every line of a visible code cell of a lesson page fits its
place (76 characters, 69 in a solution), and every line a ``listing`` shows of
the package fits a tab set (74; ``lessons_code/ruff.toml`` formats the package
at that width). Site check (Chromium at 1280 x 720): on every lesson page, with
its solutions opened, and on every gallery page, no code block and no printed
cell output is wider than its box.
"""

from __future__ import annotations

import sys

import pytest
from site_support import (
    DOCS,
    LESSON_PAGES,
    LESSON_SOURCES,
    PageVisit,
    code_cells,
    listed_objects,
    settle,
)

sys.path.insert(0, str(DOCS / "_ext"))
from book.listing import listing_lines

#: Characters of the 14 px monospace font that a block shows at 1280 px, by place.
CODE_COLUMN = 76  # a code cell in the text column (room for 77)
LISTING_COLUMN = 74  # a listing, which may sit in a tab set (room for 74.7)
SOLUTION_COLUMN = 69  # a code cell inside a solution's dropdown (room for 69.4)


def _too_long(lines: list[str], column: int) -> list[str]:
    return [line for line in lines if len(line) > column]


@pytest.mark.parametrize("page", LESSON_SOURCES, ids=lambda p: p.stem)
def test_visible_code_cells_fit_the_column(page) -> None:
    cells = [cell for cell in code_cells(page) if cell.visible]
    assert cells, f"{page.name} has no visible code"
    long = [
        line
        for cell in cells
        for line in _too_long(
            cell.source.splitlines(), SOLUTION_COLUMN if cell.in_solution else CODE_COLUMN
        )
    ]
    assert long == [], f"{page.name}: lines too long for their place"


def test_solution_cells_were_found() -> None:
    in_solutions = [
        cell
        for page in LESSON_SOURCES
        for cell in code_cells(page)
        if cell.visible and cell.in_solution
    ]
    assert len(in_solutions) >= 5


LISTINGS = sorted(
    {name for page in LESSON_SOURCES for name in listed_objects(page.read_text(encoding="utf-8"))}
)


def test_listings_were_found() -> None:
    assert len(LISTINGS) >= 15


@pytest.mark.parametrize("qualname", LISTINGS)
def test_listings_fit_the_column(qualname: str) -> None:
    _, shown = listing_lines(qualname)
    long = _too_long(shown, LISTING_COLUMN)
    assert long == [], f"{qualname}: lines over {LISTING_COLUMN} characters"


GALLERY_PAGES = sorted(
    f"auto_examples/{path.stem}.html" for path in (DOCS.parent / "gallery").glob("plot_*.py")
)
SOLUTION_BUTTONS = "div.solution button.toggle-button"
CLIPPED_JS = """
() => Array.from(document.querySelectorAll("div.highlight pre, div.cell_output pre"))
  .filter((pre) => pre.checkVisibility() && pre.scrollWidth > pre.clientWidth)
  .map((pre) => pre.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a)))
"""


def clipped_blocks(browser, site_url: str, page: str) -> tuple[int, list[str]]:
    """(code blocks shown, longest line of each block that scrolls) on ``page`` at 1280 px."""
    visit = PageVisit(browser, site_url, page)
    try:
        visit.page.set_viewport_size({"width": 1280, "height": 720})
        buttons = visit.page.locator(SOLUTION_BUTTONS)
        for index in range(buttons.count()):
            buttons.nth(index).click()
        if buttons.count():
            settle(visit.page)  # the toggle's transition
        shown = visit.page.locator("div.highlight pre, div.cell_output pre").count()
        return shown, visit.page.evaluate(CLIPPED_JS)
    finally:
        visit.close()


@pytest.mark.parametrize("page", LESSON_PAGES + GALLERY_PAGES)
def test_no_code_block_scrolls_sideways_at_1280px(browser, site_url: str, page: str) -> None:
    shown, clipped = clipped_blocks(browser, site_url, page)
    assert shown > 0, f"{page}: no code block found"
    assert clipped == [], f"{page}: {len(clipped)} code blocks scroll sideways"
