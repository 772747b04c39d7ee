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


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Report the failing cell's location when the build ends on a cell error."""
    errors = _chain(exception)
    page = next((e for e in errors if type(e).__name__ == "ExecutionError"), None)
    cell = next((e for e in errors if type(e).__name__ == "CellExecutionError"), None)
    if page is None or cell is None:
        return
    path = Path(str(page.args[0])) if page.args else None
    found = _FAILED_CELL.search(str(cell))
    if path is None or not path.is_file() or found is None:
        return
    line = cell_line(path, found.group(1))
    name = getattr(cell, "ename", "an error")
    value = _ANSI.sub("", str(getattr(cell, "evalue", "")))
    where = f"{path}:{line}" if line else str(path)
    sys.stderr.write(f"\n{where}: a code cell raised {name}: {value}\n\n")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hook."""
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
