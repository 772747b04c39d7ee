"""search_summary: each page's description is its opening paragraph; search gets its fix."""

from __future__ import annotations

import html as html_module
import re

from book.config import DEFAULTS
from book.html import DESCRIPTION_CHARS
from ext_support import Book, warnings

BOOK_SUMMARY = DEFAULTS["book_summary"][0]

INDEX = """\
Attention
=========

.. note:: A note is not the page's opening.

Each query scores every key: the scores form an :math:`n \\times d` matrix
with entries in :math:`\\mathbb{R}`, scaled by :math:`1/\\sqrt{d_k}`.

A second paragraph.

.. toctree::

   long
   own
"""
LONG = "Long\n====\n\n" + " ".join(f"word{i}" for i in range(60)) + "\n"
OWN = "Own\n===\n\n.. meta::\n   :description: The page's own words.\n\nIts first paragraph.\n"


def _meta(html: str, attribute: str, name: str) -> list[str]:
    """The content of each ``<meta>`` whose ``attribute`` is ``name``, whatever the order."""
    found = []
    for tag in re.findall(r"<meta\b[^>]*>", html):
        attributes = dict(re.findall(r'([\w:-]+)="([^"]*)"', tag))
        if attributes.get(attribute) == name:
            found.append(html_module.unescape(attributes["content"]))
    return found


def test_the_description_is_the_opening_paragraph_with_formulas_as_text(book: Book) -> None:
    app = book("summary", {"index.rst": INDEX, "long.rst": LONG, "own.rst": OWN})
    assert warnings(app) == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    text = (
        "Each query scores every key: the scores form an n \N{MULTIPLICATION SIGN} d matrix "
        "with entries in \N{DOUBLE-STRUCK CAPITAL R}, scaled by 1/dk."
    )
    assert _meta(html, "name", "description") == [text]
    assert _meta(html, "property", "og:description") == [text]
    assert _meta(html, "property", "og:title") == ["Attention"]


def test_a_long_paragraph_is_cut_at_a_word(book: Book) -> None:
    app = book("summary", {"index.rst": INDEX, "long.rst": LONG, "own.rst": OWN})
    html = (app.outdir / "long.html").read_text(encoding="utf-8")
    (description,) = _meta(html, "name", "description")
    assert len(description) <= DESCRIPTION_CHARS
    assert description.endswith("…")
    assert re.fullmatch(r"(word\d+ )+word\d+…", description), description
    assert LONG.split("\n")[3].startswith(description[:-1])


def test_a_page_with_its_own_description_keeps_it_and_search_gets_the_books(book: Book) -> None:
    app = book("summary", {"index.rst": INDEX, "long.rst": LONG, "own.rst": OWN})
    own = (app.outdir / "own.html").read_text(encoding="utf-8")
    assert _meta(own, "name", "description") == ["The page's own words."]
    assert _meta(own, "property", "og:description") == []
    search = (app.outdir / "search.html").read_text(encoding="utf-8")
    assert _meta(search, "name", "description") == [BOOK_SUMMARY]
    assert re.search(r'<script defer="defer" src="_static/search_summary\.js', search)
    assert "search_summary.js" not in (app.outdir / "index.html").read_text(encoding="utf-8")
