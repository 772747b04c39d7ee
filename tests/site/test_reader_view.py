"""What a learner sees of the code: the idea, not the build's plumbing.

Source checks (fast, no build): no visible code cell of a lesson page holds a
``glue(`` call or an ``assert``; the visible cells of a page, read in order,
define every name they use, so a cell copied into a notebook after the page's
first cell runs; every ``listing`` shows lines of the package's source, in
order, without a docstring or an argument check.

Site checks: no listing on a built lesson page shows a docstring; in Chromium,
no solution is visible when a page loads, and each opens by a click and by the
keyboard (Enter and Space on its focused button).
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from pathlib import Path

import pytest
from site_support import (
    DOCS,
    LESSON_PAGES,
    LESSON_SOURCES,
    ROOT,
    BuildResult,
    PageVisit,
    code_cells,
    settle,
)

sys.path.insert(0, str(DOCS / "_ext"))
from book.listing import listed_objects, listing_lines

PLUMBING = re.compile(r"^\s*(assert\b|glue\()|\bglue\(")


def _names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names a piece of code binds, and names it reads (scopes ignored)."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, read


def test_the_lesson_pages_were_found() -> None:
    names = {path.stem for path in LESSON_SOURCES}
    assert {"self_attention", "multihead_attention", "positional_encoding"} <= names


@pytest.mark.parametrize("page", LESSON_SOURCES, ids=lambda p: p.stem)
def test_no_glue_or_assert_in_visible_code(page: Path) -> None:
    offending = [
        line.strip()
        for cell in code_cells(page)
        if cell.visible
        for line in cell.source.splitlines()
        if PLUMBING.search(line)
    ]
    assert offending == [], f"{page.name}: build plumbing in visible cells"


@pytest.mark.parametrize("page", LESSON_SOURCES, ids=lambda p: p.stem)
def test_visible_cells_run_on_their_own(page: Path) -> None:
    """Every name a visible cell reads is bound by a visible cell (imports first)."""
    cells = [cell.source for cell in code_cells(page) if cell.visible]
    assert cells, f"{page.name} has no visible code"
    first = ast.parse(cells[0])
    assert any(isinstance(n, ast.Import | ast.ImportFrom) for n in first.body), (
        f"{page.name}: the first visible cell holds no imports"
    )
    bound: set[str] = set(dir(builtins))
    missing: dict[int, set[str]] = {}
    for number, source in enumerate(cells, start=1):
        cell_bound, cell_read = _names(ast.parse(source))
        bound |= cell_bound
        unknown = cell_read - bound
        if unknown:
            missing[number] = unknown
    assert missing == {}, f"{page.name}: visible cells read names no visible cell defines"


def _listings() -> list[tuple[str, str]]:
    return [
        (page.name, name)
        for page in sorted(DOCS.glob("*.md"))
        for name in listed_objects(page.read_text(encoding="utf-8"))
    ]


def test_pages_use_listings() -> None:
    assert len(_listings()) >= 15
    assert not any(
        "{literalinclude} ../lessons_code" in page.read_text(encoding="utf-8")
        for page in DOCS.glob("*.md")
    ), "package code is shown with a listing, not a literalinclude"


@pytest.mark.parametrize(("page", "qualname"), _listings())
def test_listing_is_package_code_without_paperwork(page: str, qualname: str) -> None:
    path, shown = listing_lines(qualname)
    source = path.read_text(encoding="utf-8").splitlines()
    assert path.is_relative_to(ROOT / "lessons_code")
    # Byte for byte: each shown line is a source line (minus the common indent), in order.
    position = 0
    for line in filter(str.strip, shown):
        position = next((i for i in range(position, len(source)) if source[i].endswith(line)), None)
        assert position is not None, f"{page}: {qualname}: {line!r} is not in {path.name}"
        position += 1
    text = "\n".join(shown)
    assert '"""' not in text, f"{page}: {qualname} shows a docstring"
    assert "Parameters\n" not in text, f"{page}: {qualname} shows a docstring"
    assert not re.search(r"^\s*raise\b", text, re.M), f"{page}: {qualname} shows a check"
    assert len(shown) >= 2


def test_listing_survives_docstring_and_comment_edits(tmp_path: Path, monkeypatch) -> None:
    """Listings find code by its syntax tree, so prose edits in the package cannot break them."""
    package = tmp_path / "lessons_code"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "demo.py").write_text(
        "def area(w: float, h: float) -> float:\n"
        '    """Area of a rectangle.\n\n    Parameters\n    ----------\n    w, h\n'
        '        Sides."""\n'
        "    w = check_real(w, 'w')\n"
        "    if h < 0:\n"
        "        raise ValueError('h must be >= 0')\n"
        "    # an edited comment\n"
        "    return w * h  # the maths\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in [m for m in sys.modules if m.startswith("lessons_code")]:
        monkeypatch.delitem(sys.modules, module)
    _, shown = listing_lines("lessons_code.demo.area")
    assert shown == [
        "def area(w: float, h: float) -> float:",
        "    # an edited comment",
        "    return w * h  # the maths",
    ]


LISTING_HTML = re.compile(r'<div class="lesson-listing[^"]*">(.*?)</pre>', re.S)


def test_no_listing_on_the_site_shows_a_docstring(built_site: BuildResult) -> None:
    pages = [built_site.html / page for page in LESSON_PAGES]
    blocks = [
        re.sub(r"<[^>]+>", "", block)
        for page in pages
        for block in LISTING_HTML.findall(page.read_text(encoding="utf-8"))
    ]
    assert len(blocks) >= 15
    assert [b for b in blocks if "&quot;&quot;&quot;" in b or '"""' in b] == []


SOLUTION_PAGES = [
    path.stem + ".html"
    for path in LESSON_SOURCES
    if "{solution-start}" in path.read_text(encoding="utf-8")
]
SOLUTIONS_JS = """
() => Array.from(document.querySelectorAll("div.solution")).map((solution) => {
  const body = Array.from(solution.children).filter((c) => !c.matches(".admonition-title"));
  return body.some((c) => c.checkVisibility({visibilityProperty: true}) &&
    c.getBoundingClientRect().height > 0);
})
"""


@pytest.mark.parametrize("page", SOLUTION_PAGES)
def test_solutions_closed_on_load_and_opened_by_click_and_keyboard(
    browser, site_url: str, page: str
) -> None:
    """Every solution is hidden on load; its button opens it and says what it opens.

    An exercise's button says "Show solution", a self-check question's
    "Show answer" (the page's first dropdown of each kind is tried).
    """
    for action in ("click", "Enter", "Space"):
        visit = PageVisit(browser, site_url, page)
        try:
            shown = visit.page.evaluate(SOLUTIONS_JS)
            assert shown, f"{page}: no solution found"
            assert not any(shown), f"{page}: a solution is visible on load"
            solutions = visit.page.locator("div.solution")
            answers = solutions.evaluate_all(
                "(all) => all.map((s) => s.matches('.self-check-answer'))"
            )
            for word, is_answer in (("solution", False), ("answer", True)):
                if is_answer not in answers:
                    continue
                index = answers.index(is_answer)
                button = solutions.nth(index).locator("button.toggle-button")
                assert button.get_attribute("aria-expanded") == "false"
                for name in ("data-toggle-hint", "aria-label"):
                    assert button.get_attribute(name) == f"Show {word}", (page, name)
                if action == "click":
                    button.click()  # the "Show solution" hint in the title
                else:
                    button.focus()
                    visit.page.keyboard.press(action)
                settle(visit.page)  # the toggle's transition
                opened = visit.page.evaluate(SOLUTIONS_JS)[index]
                assert opened, f"{page}: {action} did not open the {word}"
                assert button.get_attribute("aria-expanded") == "true"
                for name in ("data-toggle-hint", "aria-label"):
                    assert button.get_attribute(name) == f"Hide {word}", (page, name)
        finally:
            visit.close()
