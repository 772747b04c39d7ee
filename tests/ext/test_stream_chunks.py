"""stream_chunks: a printout that arrived in pieces renders as one printout."""

from __future__ import annotations

from book.mystnb import join_chunks, patched
from myst_nb.core import render
from nbformat import NotebookNode


def stream(text: str, name: str = "stdout") -> NotebookNode:
    return NotebookNode(output_type="stream", name=name, text=text)


def test_a_split_printout_renders_as_the_whole_one() -> None:
    before = render.coalesce_streams
    with patched(), patched():  # the join goes before MyST-NB's merge once, however often
        whole = render.coalesce_streams([stream("row sums: [1. 1.]\n")])
        split = render.coalesce_streams([stream("row sums:"), stream(" [1. 1.]\n")])
        assert split[0]["text"] == whole[0]["text"] == "row sums: [1. 1.]\n"
    assert render.coalesce_streams is before  # MyST-NB as it was, for the other tests


def test_only_consecutive_chunks_of_one_stream_are_joined() -> None:
    figure = NotebookNode(output_type="display_data", data={}, metadata={})
    chunks = [stream("a"), stream("b", "stderr"), stream("c"), figure, stream("d")]
    assert [o.get("text") for o in join_chunks(chunks)] == ["a", "b", "c", None, "d"]
    first = stream("x")
    assert join_chunks([first, stream("y\n")])[0]["text"] == "xy\n"
    assert first["text"] == "x"  # the executed notebook's output is not changed
