"""Accessibility fixes for markup that the theme and sphinx-gallery generate.

axe-core finds these on every page of an unmodified sphinx-book-theme site
with a sphinx-gallery; the fixes live here so that they can be removed one by
one when the upstream projects fix them:

* a gallery thumbnail's link keeps its accessible name, the example's title
  (sphinx-gallery hides the link text with ``display: none``; ``_static/a11y.css``
  hides it visually only); the thumbnail itself is decorative (empty ``alt``),
  since that name and the visible title already say which example it shows;
* the sidebar's expand/collapse toggles get a name, a citation list loses a
  ``role="list"`` that has no list items, and display formulas wider than the
  column become focusable so a keyboard can scroll them (``_static/a11y.js``);
* a solution's show/hide button is named by its visible hint and shows its
  focus (``_static/a11y.js``, ``_static/a11y.css``);
* the search field's accessible name is its visible text ("Search Ctrl+K"),
  not a shorter ``aria-label`` (``_static/a11y.js``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    """Add the CSS and JS fixes."""
    app.add_css_file("a11y.css")
    app.add_js_file("a11y.js")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
