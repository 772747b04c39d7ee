"""A printout that reached the notebook in pieces is shown as one printout.

The kernel sends what a cell prints in chunks, flushed on a timer: under load
``print("row sums:", row_sums)`` can arrive as ``"row sums:"`` and
``" [1. 1. 1.]\\n"``. MyST-NB's ``nb_merge_streams`` then joins the chunks
with a line break after each (it strips and ends every chunk), so the page
showed ``row sums:`` and the array on two lines in one build and on one line
in the next, and a clean build was not the same site. Consecutive chunks of
one stream are joined here first, exactly as they were printed; MyST-NB's
merge then sees one chunk per printout, as it does when nothing was split.
"""

from __future__ import annotations

import copy
from typing import Any

from myst_nb.core import render


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


def setup(app: Any) -> dict[str, Any]:
    """Put :func:`join_chunks` before MyST-NB's merge of a cell's streams."""
    merge = render.coalesce_streams
    if not getattr(merge, "joins_chunks", False):

        def coalesce(outputs: list[Any]) -> list[Any]:
            merged: list[Any] = merge(join_chunks(outputs))
            return merged

        coalesce.joins_chunks = True  # type: ignore[attr-defined]
        render.coalesce_streams = coalesce
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
