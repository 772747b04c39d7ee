"""Search result snippets from the page's text, not from the theme's buttons.

The search page gets ``_static/search_summary.js`` (deferred, so that it runs
after Sphinx's ``searchtools.js``); the file explains the cause and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def add_to_search_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load the snippet fix on the search page only."""
    if pagename == "search":
        app.add_js_file("search_summary.js", loading_method="defer")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hook."""
    app.connect("html-page-context", add_to_search_page)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
