"""listing: a package object's computation, without its docstrings and input checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from book.listing import listing_lines, unbound_names
from ext_support import Book, warnings

SCALED = """\
def scaled(x, factor):
    # The computation itself.
    return x * factor"""


@pytest.fixture(autouse=True)
def _listed_importable(rootdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module ``listed`` (roots/test-listing/listed.py) for the tests without a build."""
    monkeypatch.syspath_prepend(str(rootdir / "test-listing"))


def test_a_listing_shows_the_computation_with_its_caption(book: Book) -> None:
    page = "# Listing\n\n```{listing} listed.scaled\n:caption: Scaling, *simply*\n```\n"
    app = book("listing", {"index.md": page})
    assert warnings(app) == ""
    doctree = app.env.get_doctree("index")
    (block,) = doctree.findall(lambda node: node.tagname == "literal_block")
    assert block.astext() == SCALED
    assert block["language"] == "python"
    assert "lesson-listing" in block["classes"]
    caption = block.parent.children[0]
    assert caption.tagname == "caption"
    assert caption.astext() == "Scaling, simply"
    assert caption.children[1].tagname == "emphasis"


def test_a_class_keeps_its_methods_and_private_helpers_but_no_checks() -> None:
    _, lines = listing_lines("listed.Counter")
    assert "\n".join(lines) == (
        "class Counter:\n"
        "    def __init__(self, start):\n"
        "        self.count = start\n"
        "\n"
        "    def _step(self):\n"
        "        return 1\n"
        "\n"
        "    def tick(self):\n"
        "        self.count += self._step()"
    )


def test_a_method_is_listed_dedented() -> None:
    path, lines = listing_lines("listed.Counter.tick")
    assert path.name == "listed.py"
    assert lines == ["def tick(self):", "    self.count += self._step()"]


def test_a_listing_that_still_calls_a_check_fails_at_its_line(book: Book) -> None:
    page = "# Listing\n\nSome prose.\n\n```{listing} listed.keeps_a_check\n```\n"
    app = book("listing", {"index.md": page})
    assert re.search(
        r"index\.md:5: ERROR: listing: listed\.keeps_a_check still shows a check of its "
        r"arguments, line 2 of the listing: 'y = check_positive\(x, \"x\"\)'",
        warnings(app),
    ), warnings(app)


def test_an_unknown_object_is_named() -> None:
    with pytest.raises(ValueError, match=r"listing: no function or class 'listed\.missing' found"):
        listing_lines("listed.missing")


LESSON = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  name: python3
---
# Lesson
{cells}
```{{listing}} listed.rooted
```
"""


def cell(code: str, tags: str = "") -> str:
    options = f":tags: [{tags}]\n" if tags else ""
    return f"\n```{{code-cell}} ipython3\n{options}{code}\n```\n"


def test_a_listing_may_read_only_what_a_visible_cell_or_listing_defines() -> None:
    code = "\n".join(listing_lines("listed.rooted")[1])
    assert unbound_names(LESSON.format(cells=cell("import math")), code) == []
    assert (
        unbound_names(LESSON.format(cells=cell("from math import sqrt as s\nmath = 1")), code) == []
    )
    # A removed cell is not in the reader's notebook; builtins need nothing.
    assert unbound_names(LESSON.format(cells=cell("import math", "remove-cell")), code) == ["math"]
    assert unbound_names(LESSON.format(cells=""), "def f(x):\n    return abs(len(x))") == []
    # Another listing of the page defines its name: a method calls a listed helper.
    assert unbound_names(LESSON.format(cells=""), "def g(x):\n    return rooted(x)") == []


def test_a_listing_that_reads_an_undefined_name_fails_at_its_line(book: Book) -> None:
    app = book("listing", {"index.md": LESSON.format(cells="")})
    assert re.search(
        r"index\.md:10: ERROR: listing: listed\.rooted reads math, which no cell the reader "
        r"sees defines",
        warnings(app),
    ), warnings(app)
