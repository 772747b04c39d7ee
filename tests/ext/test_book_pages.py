"""The page model (book_pages), what code_deps reads from it and how cell_errors locates a cell."""

from __future__ import annotations

from pathlib import Path

from book.execution import code_of, imported_modules
from book.pages import image_sources, is_lesson, lesson_pages, read_page

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
"""

PAGE = HEADER + (
    "# A lesson\n"
    "\n"
    "Some prose.\n"
    "\n"
    "```{code-cell} ipython3\n"
    ":tags: [remove-cell]\n"
    "\n"
    "from lessons_code.order_task import make_order_splits\n"
    "```\n"
    "\n"
    "```{code-cell} ipython3\n"
    "---\n"
    "mystnb:\n"
    "  figure:\n"
    "    caption: A figure.\n"
    "---\n"
    "import lessons_code.positional\n"
    "```\n"
    "\n"
    "```{code-cell} ipython3\n"
    "x = 1\n"
    "```\n"
)


def test_cells_keep_their_kind_tags_options_and_lines() -> None:
    cells = read_page(PAGE).cells
    assert [cell.kind for cell in cells] == ["markdown", "code", "code", "code"]
    lines = PAGE.splitlines()
    assert lines[cells[0].line - 1] == "# A lesson"
    for cell in cells[1:]:
        assert lines[cell.line - 1] == "```{code-cell} ipython3"
    hidden, figure, plain = cells[1:]
    assert hidden.tags == {"remove-cell"}
    assert not hidden.shown
    assert hidden.source == "from lessons_code.order_task import make_order_splits"
    assert figure.options["mystnb"]["figure"]["caption"] == "A figure."
    assert figure.shown
    assert plain.shown
    assert plain.source == "x = 1"


def test_imports_in_cells_with_options_are_seen() -> None:
    names = imported_modules(code_of(PAGE))
    assert "lessons_code.order_task.make_order_splits" in names
    assert "lessons_code.positional" in names


def test_each_code_cell_knows_the_page_line_of_its_code() -> None:
    lines = PAGE.split("\n")
    for cell in read_page(PAGE).code_cells:
        assert lines[cell.body_line - 1 :][: cell.source.count("\n") + 1] == cell.source.split("\n")
    page = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n---\n# T\n\n"
    page += "```{code-cell} ipython3\n:tags: [remove-cell]\n\n\nx = 1\n```\n"
    (cell,) = read_page(page).code_cells
    assert cell.source == "\nx = 1"  # MyST-NB keeps the blank line after the options'
    assert cell.body_line == 11


def test_lessons_are_the_myst_notebooks(tmp_path: Path) -> None:
    (tmp_path / "lesson.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "prose.md").write_text("# Prose\n\n```{code-cell}\nx\n```\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text(PAGE, encoding="utf-8")
    assert lesson_pages(tmp_path) == [tmp_path / "lesson.md"]
    assert not is_lesson(tmp_path / "missing.md")


def test_image_sources_are_read_as_jupyter_reads_them() -> None:
    cell = (
        "![a plot](attachment:fig-1.png) and `![not](code.png)`, [a link](x.png)\n\n![$x$](b.png)"
    )
    assert image_sources(cell) == ["attachment:fig-1.png", "b.png"]
