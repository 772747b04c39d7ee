"""The book's pages as the build executes them: which pages are lessons, and their cells.

A *lesson page* is a page MyST-NB executes: a MyST Markdown notebook, which
MyST-NB recognises by its front matter (``jupytext`` with ``format_name:
myst``, or ``file_format: mystnb``). Its cells are read by MyST-NB's own
reader, so they are split, and their options and tags parsed, exactly as
the build executes them; each cell also knows the line of the page it
starts on.

Every part of the build that needs a lesson's cells reads them here: the
dependency tracking (``code_deps``), the reader's notebooks
(``lesson_notebooks``), the location of a failing cell (``cell_errors``),
the site tests and the bench. Nothing else parses a page's cells.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

__all__ = [
    "HIDDEN_TAGS",
    "Cell",
    "Page",
    "executed_folder",
    "is_lesson",
    "is_lesson_text",
    "lesson_pages",
    "read_page",
    "saved_notebook",
]

#: Tags that keep a code cell's code off the page (``remove-cell`` also its
#: output): glue, checks, and data for the explorers.
HIDDEN_TAGS = frozenset({"remove-cell", "remove-input"})


@dataclass(frozen=True)
class Cell:
    """One cell of a lesson page."""

    kind: Literal["code", "markdown", "raw"]
    #: The cell's text, without its fence and options.
    source: str
    #: Its ``:tags:``.
    tags: frozenset[str]
    #: The page line (1-based) the cell starts on: a code cell's fence, a
    #: Markdown cell's first line.
    line: int
    #: Its options (``mystnb`` figure settings, ...), tags included.
    options: Mapping[str, Any]

    @property
    def shown(self) -> bool:
        """Whether a reader sees the cell's code on the page."""
        return not self.tags & HIDDEN_TAGS


@dataclass(frozen=True)
class Page:
    """A lesson page's cells, in order."""

    cells: tuple[Cell, ...]

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        """The code cells, shown or hidden."""
        return tuple(cell for cell in self.cells if cell.kind == "code")


def is_lesson(path: Path) -> bool:
    """Whether the page at ``path`` is a lesson: a MyST notebook that the build executes."""
    if path.suffix != ".md" or not path.is_file():
        return False
    return is_lesson_text(path.read_text(encoding="utf-8"))


def is_lesson_text(text: str) -> bool:
    """Whether a Markdown page whose text is ``text`` is a lesson (see :func:`is_lesson`)."""
    return bool(is_myst_markdown_notebook(text))


def lesson_pages(docs: Path) -> list[Path]:
    """The lesson pages of the book whose sources are in ``docs``, by file name.

    Every lesson is a top-level page of ``docs``; the extensions ask
    :func:`is_lesson` of every page Sphinx finds.
    """
    return sorted(path for path in docs.glob("*.md") if is_lesson(path))


@functools.lru_cache(maxsize=64)
def read_page(text: str) -> Page:
    """The cells of the MyST notebook whose text is ``text``."""
    notebook = read_myst_markdown_notebook(text, add_source_map=True)
    lines = text.split("\n")  # as markdown-it counts them
    cells = []
    for cell, start in zip(notebook.cells, notebook.metadata["source_map"], strict=True):
        # A code cell's start is its fence's line (1-based); a Markdown cell's
        # is the index of the line after what precedes it, blank lines first.
        line = start
        if cell.cell_type == "markdown":
            while line < len(lines) and not lines[line].strip():
                line += 1
            line += 1
        tags = frozenset(cell.metadata.get("tags", ()))
        options = MappingProxyType(dict(cell.metadata))  # the cached page is shared
        cells.append(Cell(cell.cell_type, cell.source, tags, line, options))
    return Page(tuple(cells))


def executed_folder(outdir: Path) -> Path:
    """Where MyST-NB saves what it executed (notebooks, glue) for a build into ``outdir``."""
    return outdir.parent / "jupyter_execute"


def saved_notebook(outdir: Path, docname: str) -> Path:
    """The notebook MyST-NB saved for the page ``docname``: its cells as executed."""
    return executed_folder(outdir) / f"{docname}.ipynb"
