"""The book's one adapter to MyST-NB's internals.

Everything the book reaches inside MyST-NB goes through here, so that an
upgrade of MyST-NB is checked against one file: its reader of Markdown
notebooks (:func:`read_notebook`), the folder where it saves what it
executed (:func:`saved_notebook`, :func:`glue_file`), its record of each
page's run (:func:`exec_data`), its execution cache (:func:`execution_cache`)
and its formatting of glued values (:func:`format_glued`). Two of its behaviours are
corrected, by :func:`patch` (which ``book.setup`` calls; :func:`patched`
undoes it, for tests):

* **A printout that reached the notebook in pieces is shown as one
  printout.** The kernel sends what a cell prints in chunks, flushed on a
  timer: under load ``print("row sums:", row_sums)`` can arrive as
  ``"row sums:"`` and ``" [1. 1. 1.]\\n"``. MyST-NB's ``nb_merge_streams``
  joins the chunks with a line break after each (it strips and ends every
  chunk), so a page showed the two on two lines in one build and on one line
  in the next. :func:`join_chunks` joins consecutive chunks of one stream
  first, exactly as they were printed, before MyST-NB's merge
  (``render.coalesce_streams``). Keep it while MyST-NB merges so (1.4).
* **A warning on a lesson page names the page's own line.** MyST-NB keeps,
  for each cell of a Markdown notebook, the line it starts on
  (``source_map``); a Markdown token's line is that start plus its line in
  the cell. MyST-NB 1.4 counts the start from 1 and MyST's renderer counts
  it once more, and it takes the line where the previous cell ended,
  although the cell's text starts at its first non-blank line. So ``{ref}``
  on line 12 was reported on line 13. :func:`corrected` sets each Markdown
  cell's start to its first non-blank line, less the line counted twice.
  Keep it while MyST-NB counts so: ``tests/site/test_build_faults`` checks
  the exact lines.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from myst_nb.core import read, render
from myst_nb.core.variables import format_plain_text
from myst_nb.sphinx_ import NbMetadataCollector


def is_notebook_text(text: str) -> bool:
    """Whether ``text`` is a MyST Markdown notebook (by its front matter), as MyST-NB reads it."""
    return bool(read.is_myst_markdown_notebook(text))


#: MyST-NB's own reader, as it is before :func:`patch` corrects its lines
#: (the page model counts a cell's lines itself).
_READER = getattr(read.read_myst_markdown_notebook, "__wrapped__", read.read_myst_markdown_notebook)


def read_notebook(text: str) -> Any:
    """MyST-NB's notebook of ``text``, with each cell's start line (``metadata.source_map``).

    The start lines are MyST-NB's own (see :func:`corrected`).
    """
    return _READER(text, add_source_map=True)


def executed_folder(outdir: Path) -> Path:
    """Where MyST-NB saves what it executed (notebooks, glue) for a build into ``outdir``."""
    return outdir.parent / "jupyter_execute"


def saved_notebook(outdir: Path, docname: str) -> Path:
    """The notebook MyST-NB saved for the page ``docname``: its cells as executed."""
    return executed_folder(outdir) / f"{docname}.ipynb"


def glue_file(folder: Path, docname: str) -> Path:
    """The file of the values page ``docname`` glued, in MyST-NB's ``folder`` of executed pages."""
    return folder / f"{docname}.glue.json"


def exec_data(env: Any, docname: str) -> dict[str, Any]:
    """MyST-NB's record of the page's last run (``mtime``, ``runtime``, ``succeeded``...)."""
    data: dict[str, Any] = NbMetadataCollector.get_exec_data(env, docname) or {}
    return data


def execution_cache(env: Any) -> Any:
    """MyST-NB's execution cache (jupyter-cache), or None if the build does not cache runs."""
    config = getattr(env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache" or not config.execution_cache_path:
        return None
    from jupyter_cache import get_cache

    return get_cache(str(config.execution_cache_path))


def format_glued(value: Any, spec: str) -> str:
    """A glued value as ``{glue:text}`key:spec``` shows it."""
    return str(format_plain_text(value, spec))


def join_chunks(outputs: list[Any]) -> list[Any]:
    """``outputs`` with each run of consecutive same-stream chunks joined."""
    joined: list[Any] = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (
            previous is not None
            and output.get("output_type") == previous.get("output_type") == "stream"
            and output.get("name") == previous.get("name")
        ):
            previous = joined[-1] = copy.copy(previous)  # the cache's output stays
            previous["text"] = previous["text"] + output["text"]
        else:
            joined.append(output)
    return joined


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


def patch() -> None:
    """Put :func:`join_chunks` and :func:`corrected` into MyST-NB (once, however often called)."""
    merge = render.coalesce_streams
    if not getattr(merge, "joins_chunks", False):

        def coalesce(outputs: list[Any]) -> list[Any]:
            merged: list[Any] = merge(join_chunks(outputs))
            return merged

        coalesce.joins_chunks = True  # type: ignore[attr-defined]
        coalesce.original = merge  # type: ignore[attr-defined]
        render.coalesce_streams = coalesce
    if not getattr(read.read_myst_markdown_notebook, "__book_corrected__", False):
        read.read_myst_markdown_notebook = corrected(read.read_myst_markdown_notebook)


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """MyST-NB as :func:`patch` leaves it, inside the block only; as it was after it."""
    before = render.coalesce_streams, read.read_myst_markdown_notebook
    patch()
    try:
        yield
    finally:
        render.coalesce_streams, read.read_myst_markdown_notebook = before
