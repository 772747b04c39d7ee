"""Name the page *and line* of a lesson cell that raised during the build.

MyST-NB stops the build when a cell raises (``nb_execution_raise_on_error``)
and names the notebook, but not where in it the failing cell stands. When the
build ends with such an error, this extension finds the failing cell's source
in the page and reports ``<page>:<line>: a code cell raised <error>``, the
line being the cell's first line of code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx

_FAILED_CELL = re.compile(
    r"An error occurred while executing the following cell:\n-+\n(.*?)\n-+\n", re.DOTALL
)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _chain(error: BaseException | None) -> list[BaseException]:
    """``error`` and the errors it was raised from, outermost first."""
    seen: list[BaseException] = []
    while error is not None and error not in seen:
        seen.append(error)
        error = error.__cause__ or error.__context__
    return seen


def cell_line(page: Path, source: str) -> int | None:
    """Line (1-based) of the first code line of the cell whose code is ``source``."""
    text = page.read_text(encoding="utf-8")
    for match in _CELL.finditer(text):
        body_start = match.end()
        body = text[body_start : text.find("\n```", body_start)]
        lines = body.split("\n")
        # Skip the cell's options (":tags: ..." lines, or a "---" YAML block).
        skip = 0
        if lines and lines[0].strip() == "---":
            skip = lines.index("---", 1) + 1 if "---" in lines[1:] else 0
        while skip < len(lines) and lines[skip].startswith(":"):
            skip += 1
        code = "\n".join(lines[skip:]).strip()
        if code == source.strip():
            return text.count("\n", 0, body_start) + skip + 1
    return None


_PAGE_IN_TRACEBACK = re.compile(r"ExecutionError: (\S+\.md)\s*$", re.MULTILINE)
_ERROR_LINE = re.compile(r"^(\w+(?:Error|Exception|Interrupt|Exit)\w*): (.*)$", re.MULTILINE)


def _from_exceptions(errors: list[BaseException]) -> tuple[Path, str, str, str] | None:
    """(page, cell source, error name, message) from the exception objects themselves."""
    page = next((e for e in errors if type(e).__name__ == "ExecutionError"), None)
    cell = next((e for e in errors if type(e).__name__ == "CellExecutionError"), None)
    if page is None or cell is None or not page.args:
        return None
    found = _FAILED_CELL.search(str(cell))
    if found is None:
        return None
    name = getattr(cell, "ename", "an error")
    value = str(getattr(cell, "evalue", ""))
    return Path(str(page.args[0])), found.group(1), name, value


def _from_parallel_traceback(errors: list[BaseException]) -> tuple[Path, str, str, str] | None:
    """The same, read from the text a parallel reader sent back (``sphinx-build -j``)."""
    text = _ANSI.sub("", "\n".join(str(getattr(e, "traceback", "") or "") for e in errors))
    page = _PAGE_IN_TRACEBACK.search(text)
    found = _FAILED_CELL.search(text)
    if page is None or found is None:
        return None
    after_cell = text[found.end() :]
    error = _ERROR_LINE.search(after_cell)
    name, value = (error.group(1), error.group(2)) if error else ("an error", "")
    return Path(page.group(1)), found.group(1), name, value


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Report the failing cell's location when the build ends on a cell error."""
    errors = _chain(exception)
    failure = _from_exceptions(errors) or _from_parallel_traceback(errors)
    if failure is None:
        return
    path, source, name, value = failure
    if not path.is_file():
        return
    line = cell_line(path, source)
    value = _ANSI.sub("", value)
    where = f"{path}:{line}" if line else str(path)
    sys.stderr.write(f"\n{where}: a code cell raised {name}: {value}\n\n")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hook."""
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
