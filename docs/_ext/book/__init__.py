"""The book's Sphinx extension: every job the build does beyond Sphinx and its extensions.

``conf.py`` loads it as ``"book"``, after the third-party extensions it works
with. Its :func:`setup` is the one place that says what runs when:
:data:`HANDLERS` lists every event handler with its priority and why it runs
there; the directives, roles, nodes, transforms and files are registered
below it. The settings are ``book_*`` values (``config.py``: their defaults,
meanings and the checked :class:`~book.config.BookConfig`).

The modules, by concern:

========================  ==========================================================
``config``                the settings
``pages``                 the page model: a lesson's cells, its headings and their ids
``mystnb``                the one adapter to MyST-NB's internals (its reader, renderer,
                          cache and saved notebooks)
``execution``             what a page's code depends on, a failing cell's line, the
                          versions a page was built with
``checks``                the claims (glued numbers against their ranges) and the prose
``downloads``             the readers' notebooks, the wheel, pointers to the site, zips
``figures``               the gallery's order, scraper and palette PNGs
``mathml``                LaTeX to MathML at build time
``listing``               a page's listing of the package's source
``html``                  the API pages' layout, self-checks, page heads and summaries
``collectors``            per-document state: glossary uses and API objects' lessons
========================  ==========================================================

Two modules next to this package are imported by the lesson pages' kernels,
not by Sphinx: ``bounds`` (the claims' rounding) and ``book_figures`` (the
figure settings, shared with the gallery's examples).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from . import (
    checks,
    collectors,
    config,
    downloads,
    execution,
    figures,
    html,
    listing,
    mathml,
    mystnb,
)

if TYPE_CHECKING:
    from sphinx.application import Sphinx


class Handler(NamedTuple):
    """One event handler: what it listens to, at which priority, for which job."""

    event: str
    handler: Callable[..., Any]
    priority: int
    feature: str | None  # None: always (see config.FEATURES)
    why: str


#: Sphinx's default priority; a lower one runs earlier.
DEFAULT = 500

#: Every event handler of the book, in the order each event runs them. Where
#: two handlers share an event and a priority, Sphinx runs them in this order.
HANDLERS: tuple[Handler, ...] = (
    Handler(
        "config-inited",
        config.on_config_inited,
        DEFAULT,
        None,
        "a bad book_* setting stops the build before anything is read",
    ),
    Handler(
        "config-inited",
        downloads.on_config_inited,
        DEFAULT,
        "reader_wheel",
        "the wheel is built once, before its file name is substituted into pages",
    ),
    Handler(
        "builder-inited",
        execution.on_builder_inited,
        100,
        "dependencies",
        "before sphinx-gallery's handler (500) runs the examples: stale stamps go first",
    ),
    Handler(
        "builder-inited",
        figures.quantise_gallery_images,
        600,
        "gallery_images",
        "after sphinx-gallery's handler (500) has written the examples' PNGs",
    ),
    Handler(
        "env-before-read-docs",
        execution.spread_notebooks,
        DEFAULT,
        "dependencies",
        "orders the pages to read so that a parallel build spreads the notebooks",
    ),
    Handler(
        "source-read",
        execution.on_source_read,
        DEFAULT,
        "dependencies",
        "appends the digest cell after MyST-NB's reader has nothing to add",
    ),
    Handler(
        "env-get-outdated",
        downloads.relink_pdf,
        DEFAULT,
        "notebooks",
        "the landing page links the PDF: read again when the PDF appears or goes",
    ),
    Handler(
        "doctree-read",
        execution.report_failed_cell,
        DEFAULT,
        "cell_errors",
        "MyST-NB has executed the page and put the outputs in its doctree",
    ),
    Handler(
        "doctree-resolved",
        execution.fill_provenance,
        DEFAULT,
        "provenance",
        "the versions are filled in each time the page is written",
    ),
    Handler(
        "doctree-resolved",
        collectors.fill_backlinks,
        DEFAULT,
        "glossary",
        "every page has been read: the glossary lists its terms' uses",
    ),
    Handler(
        "doctree-resolved",
        collectors.fill_usage,
        DEFAULT,
        "glossary",
        "every page has been read: an API page lists the lessons using its objects",
    ),
    Handler(
        "object-description-transform",
        html.shape_as_field,
        400,
        "api_layout",
        "before autodoc's type hints merge (500): the Shape section is a field by then",
    ),
    Handler(
        "object-description-transform",
        html.return_type_after_returns,
        600,
        "api_layout",
        "after autodoc's merge (500) has added the return type",
    ),
    Handler(
        "html-page-context",
        html.add_to_search_page,
        DEFAULT,
        "summary",
        "the search page's snippet script",
    ),
    Handler(
        "html-page-context", html.add_description, DEFAULT, "summary", "the description meta tags"
    ),
    Handler(
        "html-page-context",
        html.defer_scripts,
        DEFAULT,
        "head",
        "every script file deferred, once the extensions have added theirs",
    ),
    Handler(
        "html-page-context",
        html.light_head,
        DEFAULT,
        "head",
        "one bundled stylesheet and lazy images: after the page's body is final",
    ),
    Handler(
        "html-page-context",
        downloads.offer_notebook,
        600,
        "notebooks",
        "after the theme's own handler (500), which fills the download menu",
    ),
    Handler(
        "build-finished",
        execution.write_report,
        DEFAULT,
        "dependencies",
        "the execution report first: the checks below read what ran",
    ),
    Handler(
        "build-finished",
        checks.check_claims,
        501,
        "claims",
        "every page's glued values against its claims file",
    ),
    Handler(
        "build-finished",
        checks.check_every_page,
        502,
        "prose",
        "the prose of every page, from the doctrees the build wrote",
    ),
    Handler(
        "build-finished",
        downloads.date_zips,
        503,
        "zips",
        "sphinx-gallery's zips were written during the build: dated here",
    ),
    Handler(
        "build-finished",
        downloads.write_notebooks,
        504,
        "notebooks",
        "the readers' notebooks and their zip, from the executed pages",
    ),
    Handler(
        "build-finished",
        html.trim_theme_css,
        505,
        "head",
        "the theme's stylesheet is in the output folder by now",
    ),
    Handler(
        "build-finished",
        html.write_styles,
        506,
        "head",
        "the bundle of stylesheets, after every one of them is in the output folder",
    ),
)

#: What an event's handlers must return when their job is turned off.
_NOTHING: dict[str, Any] = {"env-get-outdated": [], "env-get-updated": []}


def _gated(entry: Handler) -> Callable[..., Any]:
    """``entry.handler``, run only where ``book_features`` has its feature."""
    handler, feature = entry.handler, entry.feature
    if feature is None:
        return handler
    nothing = _NOTHING.get(entry.event)

    @functools.wraps(handler)
    def run(app: Sphinx, *args: Any) -> Any:
        if config.enabled(app, feature):
            return handler(app, *args)
        return nothing

    return run


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the book's settings, handlers, markup and files with Sphinx."""
    config.register(app)
    for entry in HANDLERS:
        app.connect(entry.event, _gated(entry), priority=entry.priority)
    collectors.register(app)
    # MyST-NB: a cell's Markdown lines, and its output's stream chunks.
    mystnb.patch()
    # Markup: the lessons' directives and roles, and the nodes they make.
    app.add_directive("listing", listing.Listing)
    app.add_node(execution.provenance_node)
    app.add_directive("provenance", execution.ProvenanceDirective)
    app.add_role("book-pdf", downloads.book_pdf_role)
    app.add_role("site-pointer", downloads.site_pointer_role)
    # Transforms: the API pages' example headings, the self-checks' names.
    app.add_transform(html.ExamplesHeadingAsRubric)
    app.setup_extension("sphinx_exercise")
    app.add_post_transform(html.NameSelfChecks)
    # Math as MathML, written at build time.
    app.add_html_math_renderer(
        "tex_mathml", (mathml.visit_inline, None), (mathml.visit_display, None)
    )
    # Files the pages load.
    app.add_css_file("math.css")
    app.add_css_file(html.CSS)
    app.add_css_file("provenance.css")
    # Copying a formula copies its TeX (the annotation), not MathML's characters.
    app.add_js_file("math_copy.js", loading_method="defer")
    return {
        "version": "2.0",
        "env_version": 2,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
