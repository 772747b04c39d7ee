"""What a page says about itself to search: result snippets and its description.

* The search page gets ``_static/search_summary.js`` (deferred, so that it runs
  after Sphinx's ``searchtools.js``); the file explains the cause and the fix.
* Every page gets a ``<meta name="description">`` (and the same text as its
  link preview, ``og:description``, with ``og:title``): the page's opening
  paragraph, cut at a word to at most :data:`DESCRIPTION_CHARS` characters,
  its formulas as plain text. A page that sets its own description
  (``html_meta`` in its front matter) keeps it; a page without a document
  (the index, the search page) gets the book's one-line summary.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The longest description: about what search engines show.
DESCRIPTION_CHARS = 160
#: Said of the whole book, on pages that have no text of their own.
BOOK_SUMMARY = (
    "An executable textbook on how a Transformer works: attention, multi-head "
    "attention, positional encoding, the encoder block and a trained model."
)
#: A LaTeX command name, or a grouping character, in a formula.
_LATEX_NOISE = re.compile(r"\\(?:left|right|[a-zA-Z]+)\s*|[{}]")


def _plain(node: nodes.Node) -> str:
    """The text of ``node``, each formula without its LaTeX commands."""
    if isinstance(node, nodes.math):
        latex = node.astext().replace(r"\times", "\N{MULTIPLICATION SIGN}")
        latex = re.sub(r"\\in(?![a-zA-Z])", "\N{ELEMENT OF}", latex)
        return _LATEX_NOISE.sub("", latex).replace("^", "").replace("_", "")
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_plain(child) for child in node.children)


def opening_paragraph(doctree: nodes.document) -> str:
    """The first paragraph of the page's own text (not a caption, note or table)."""
    for paragraph in doctree.findall(nodes.paragraph):
        if isinstance(paragraph.parent, (nodes.section, nodes.document)):
            text = " ".join(_plain(paragraph).split())
            if text:
                return text
    return ""


def shorten(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text`` cut at a word so that it has at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def add_description(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Put the page's description and link-preview title in its ``<head>``."""
    tags = context.get("metatags", "")
    if 'name="description"' in tags:
        return
    text = opening_paragraph(doctree) if doctree is not None else ""
    description = html.escape(shorten(text or BOOK_SUMMARY))
    title = html.escape(
        html.unescape(re.sub(r"<[^>]+>", "", context.get("title", ""))) or app.config.project
    )
    context["metatags"] = (
        f'{tags}\n<meta name="description" content="{description}" />'
        f'\n<meta property="og:title" content="{title}" />'
        f'\n<meta property="og:description" content="{description}" />'
    )


def add_to_search_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load the snippet fix on the search page only."""
    if pagename == "search":
        app.add_js_file("search_summary.js", loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hooks."""
    app.connect("html-page-context", add_to_search_page)
    app.connect("html-page-context", add_description)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
