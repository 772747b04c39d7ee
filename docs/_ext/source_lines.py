"""A warning on a lesson page names the page's own line.

MyST-NB reads a Markdown notebook (a lesson page) into cells and keeps, for
each cell, the line it starts on (``source_map``); every Markdown token's line
is that start plus its line inside the cell. Two slips make the lines of
Markdown cells wrong (MyST-NB 1.4): the start is counted from 1 and then once
more by MyST's renderer, one line late, and it is the line where the previous
cell ended, although the cell's text, with its leading blank lines stripped,
begins on the first line that is not blank. So ``{ref}`` on line 12 of a page
was reported on line 13, and after a code cell the two slips happened to
cancel. Here the start of every Markdown cell is set to its first non-blank
line, less the one line counted twice, so that Sphinx's warnings, and the
book's own checks that read a node's line, name the line of the file.

Keep this module only while MyST-NB counts so; ``tests/site/test_build_faults``
checks the exact lines.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from myst_nb.core import read


def corrected(reader: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``reader`` (MyST-NB's ``read_myst_markdown_notebook``): fix cells' starts."""

    @functools.wraps(reader)
    def wrapper(text: str, *args: Any, **kwargs: Any) -> Any:
        notebook = reader(text, *args, **kwargs)
        starts = notebook.metadata.get("source_map")
        if not starts:
            return notebook
        lines = text.splitlines()
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "markdown":
                continue
            first = starts[index]
            while first < len(lines) and not lines[first].strip():
                first += 1
            starts[index] = first - 1  # MyST-NB adds 1, and MyST's renderer 1 more
        return notebook

    wrapper.__book_corrected__ = True  # type: ignore[attr-defined]
    return wrapper


def setup(app: Any) -> dict[str, Any]:
    """Wrap the reader MyST-NB picks for a Markdown notebook (once per process)."""
    if not getattr(read.read_myst_markdown_notebook, "__book_corrected__", False):
        read.read_myst_markdown_notebook = corrected(read.read_myst_markdown_notebook)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
