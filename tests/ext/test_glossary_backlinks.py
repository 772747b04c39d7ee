"""glossary_backlinks: under each glossary entry, the sections of the book that use the term."""

from __future__ import annotations

import re
from collections.abc import Callable

from ext_support import Book, warnings
from sphinx.testing.util import SphinxTestApp

INDEX = "Book\n====\n\n.. toctree::\n\n   lesson\n   glossary\n"
LESSON = """\
Lesson
======

The page's top uses :term:`softmax`.

Scores
------

Each score is an :term:`Attention` weight.
"""
GLOSSARY = """\
Glossary
========

.. glossary::

   attention
      Weighting values by scores; see also :term:`softmax`.

   softmax
      Exponentials scaled to sum to one.

   unused
      No page names it.
"""


def _entries(html: str) -> dict[str, str]:
    """Each glossary term -> the HTML of its definition."""
    found = re.findall(r'<dt id="term-([\w-]+)">.*?</dt>\s*<dd>(.*?)</dd>', html, re.DOTALL)
    return dict(found)


def test_each_used_term_lists_the_sections_that_use_it(book: Book) -> None:
    app = book("glossary", {"index.rst": INDEX, "lesson.rst": LESSON, "glossary.rst": GLOSSARY})
    assert warnings(app) == ""
    entries = _entries((app.outdir / "glossary.html").read_text(encoding="utf-8"))
    assert set(entries) == {"attention", "softmax", "unused"}
    used_in = '<p class="glossary-used-in"><strong>Used in: </strong>'
    link = '<a class="reference internal" href="{}">{}</a>'
    # A use in a section links to it, named "page title > section title";
    # the term is matched whatever its case.
    scores = "Lesson \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} Scores"
    assert used_in + link.format("lesson.html#scores", scores) + "</p>" in entries["attention"]
    # A use at the page's top links to the page; the glossary's own use is left out.
    assert used_in + link.format("lesson.html", "Lesson") + "</p>" in entries["softmax"]
    assert "Used in" not in entries["unused"]


def test_the_lists_follow_an_incremental_build(
    book: Book, make_app: Callable[..., SphinxTestApp]
) -> None:
    """The lesson no longer names a term: the glossary, not read again, drops the link."""
    app = book("glossary", {"index.rst": INDEX, "lesson.rst": LESSON, "glossary.rst": GLOSSARY})
    (app.srcdir / "lesson.rst").write_text(LESSON.replace(":term:`Attention`", "attention"))
    again = make_app("html", srcdir=app.srcdir)
    again.build()
    entries = _entries((again.outdir / "glossary.html").read_text(encoding="utf-8"))
    assert "Used in" not in entries["attention"]
    assert "lesson.html" in entries["softmax"]
