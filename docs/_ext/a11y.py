"""Accessibility fixes for markup that the theme and sphinx-gallery generate.

axe-core finds these on every page of an unmodified sphinx-book-theme site
with a sphinx-gallery; the fixes live here so that they can be removed one by
one when the upstream projects fix them:

* gallery thumbnails get an alt text naming their example (sphinx-gallery
  writes an empty ``:alt:``), and their links keep an accessible name
  (``_static/a11y.css``);
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

from sphinx_gallery import backreferences

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def _with_alt(template: str) -> str:
    return template.replace("    :alt:\n", '    :alt: Thumbnail of the example "{title}"\n', 1)


def setup(app: Sphinx) -> dict[str, Any]:
    """Patch sphinx-gallery's thumbnail templates; add the CSS and JS fixes."""
    backreferences.THUMBNAIL_TEMPLATE = _with_alt(backreferences.THUMBNAIL_TEMPLATE)
    backreferences.BACKREF_THUMBNAIL_TEMPLATE = _with_alt(backreferences.BACKREF_THUMBNAIL_TEMPLATE)
    app.add_css_file("a11y.css")
    app.add_js_file("a11y.js")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
