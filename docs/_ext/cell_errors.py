"""Name the page *and line* of a lesson cell that raised during the build.

MyST-NB reports a notebook whose execution failed, and names the page, not
where in it the failing cell stands (``nb_execution_raise_on_error`` is left
off: the build goes on, reports every failing page, and fails at the end,
as every warning does under ``-W``). The notebook MyST-NB saves for the page
holds the failing cell's error output, with the error's name and message;
the page model (``book_pages``) gives that cell's line in the page. This
extension reports ``<page>:<line>: a code cell raised <error>: <message>``,
the line being the cell's first line of code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from book_pages import read_page, saved_notebook
from code_deps import is_build_only
from docutils import nodes
from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)
_READ: Any = nbformat.read  # untyped


def first_code_line(text: str, fence: int, source: str) -> int:
    """The line (1-based) of ``source``'s first line in the cell fenced at line ``fence``."""
    first = source.lstrip("\n").split("\n", 1)[0]
    lines = text.split("\n")
    for number in range(fence, len(lines)):
        if lines[number] == first:
            return number + 1
    return fence


def report_failed_cell(app: Sphinx, doctree: nodes.document) -> None:
    """After a lesson page is read, report the cell whose execution raised, if one did.

    The page is also read (and executed) again on the next build: the failed
    run is saved nowhere, so a build that did not read the page again would
    show its traceback without a word.
    """
    from myst_nb.sphinx_ import NbMetadataCollector

    docname = app.env.docname
    data = NbMetadataCollector.get_exec_data(app.env, docname)
    if not data or data.get("succeeded", True):
        return
    app.env.note_reread()
    text = Path(app.env.doc2path(docname)).read_text(encoding="utf-8")
    where, message = _failed_cell(app, docname, text)
    if message is None:  # no cell holds an error: a timeout, a kernel that died
        message = f"the page's execution failed ({data.get('error') or 'no cell raised'})"
    logger.warning(message, location=(docname, where), type="cell_errors")


def _failed_cell(app: Sphinx, docname: str, text: str) -> tuple[int | None, str | None]:
    """(line, message) of the cell whose error the saved notebook holds, or (None, None)."""
    cells = _READ(saved_notebook(Path(app.outdir), docname), as_version=4).cells
    if cells and is_build_only(cells[-1]):
        if _errors(cells[-1]):
            error = _errors(cells[-1])[0]
            setup = "the build's last cell (code_deps.LAST_CELL)"
            return None, f"{setup} raised {error.ename}: {error.evalue}"
        cells = cells[:-1]
    page = read_page(text)
    for cell, ran in zip(page.cells, cells, strict=True):
        errors = _errors(ran)
        if errors:
            line = first_code_line(text, cell.line, cell.source)
            return line, f"a code cell raised {errors[0].ename}: {errors[0].evalue}"
    return None, None


def _errors(cell: Any) -> list[Any]:
    return [out for out in cell.get("outputs", []) if out.output_type == "error"]


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hook."""
    app.connect("doctree-read", report_failed_cell)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
