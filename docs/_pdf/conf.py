"""Sphinx configuration of the book as one PDF (``nox -s pdf``; see book_pdf.py).

The HTML book's configuration (``docs/conf.py``, read as it is), narrowed to
what the PDF holds: the lessons, the glossary and the bibliography, on one
page (Sphinx's ``singlehtml`` builder), without the gallery and the API pages.
Its outputs go to ``docs/_build/pdf/`` so that the HTML build's environment,
its execution report and the gallery's stamps are left alone; the notebooks'
saved outputs are read from the HTML build's execution cache, so a build
after ``nox -s docs`` executes nothing.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from docutils.parsers.rst import Directive

_DOCS = Path(__file__).resolve().parents[1]
# The site's configuration, run with this build's tags (it sets one, book_pdf).
_HTML_CONF = runpy.run_path(str(_DOCS / "conf.py"), init_globals={"tags": tags})  # noqa: F821
globals().update({k: v for k, v in _HTML_CONF.items() if not k.startswith("__")})
from book.config import FEATURES  # noqa: E402 (docs/_ext is on the path from here on)
from book.pages import myst_directives, myst_headings  # noqa: E402

# No gallery: its extension is not loaded, and the book's dependency tracking
# (which drops the stamps of examples whose dependencies changed) is given no
# examples. No lesson notebooks either: they are the HTML site's downloads.
extensions = [e for e in _HTML_CONF["extensions"] if e != "sphinx_gallery.gen_gallery"]
book_features = [f for f in FEATURES if f != "notebooks"]
sphinx_gallery_conf: dict[str, Any] = {"examples_dirs": [], "gallery_dirs": []}
exclude_patterns = [
    *_HTML_CONF["exclude_patterns"],
    "_pdf",
    "api.md",
    "api",
    "maintainers.md",  # the maintainers' page, not a chapter
    "auto_examples",
    "gen_modules",
    "_generated",
    "_templates",
]
# Paths the HTML configuration gives relative to its own folder.
html_static_path = [str(_DOCS / "_static")]
templates_path = [str(_DOCS / "_templates")]
html_favicon = str(_DOCS / "_static" / "favicon.svg")
bibtex_bibfiles = [str(_DOCS / name) for name in _HTML_CONF["bibtex_bibfiles"]]
# The HTML build's saved notebook outputs (MyST-NB keeps them next to its
# output folder by default, which here is another one).
nb_execution_cache_path = str(_HTML_CONF["book_tools"].build_folder(_DOCS) / ".jupyter_cache")
# API pages are left out: references to their objects are printed as plain text.
nitpicky = False
# ... and references to the gallery's and the API's pages too (a missing
# target of the book's own pages is an error of the HTML build, -W).
suppress_warnings = ["ref.doc", "ref.ref"]
html_theme_options = {**_HTML_CONF["html_theme_options"], "use_download_button": False}


def _front_page(text: str) -> str:
    """The landing page as the book's front page: its title, introduction and the parts.

    The sections from "Running the examples yourself" on (downloads, the
    PDF itself) and the maintainers' page are left out; "What you will learn"
    and "Prerequisites" become headings that are not sections, so that every
    lesson is a chapter of the book, not a subsection of the landing page's
    last section. The page is read with the book's reader of MyST.
    """
    lines = text.split("\n")
    sections = [(line, title) for level, line, title in myst_headings(text) if level == 2]
    cut = next((line for line, title in sections if title == "Running the examples yourself"), 0)
    head = lines[: cut - 1] if cut else list(lines)
    for line, title in sections:
        if line <= len(head):
            head[line - 1] = f"```{{rubric}} {title}\n```"
    entries = [
        entry.strip()
        for toctree in myst_directives(text, "toctree")
        for entry in toctree.body.splitlines()
    ]
    left_out = {"", "api", "auto_examples/index", "maintainers"}
    pages = [entry for entry in entries if entry not in left_out]
    toctree = "\n".join(pages)
    return "\n".join(head) + f"\n```{{toctree}}\n:maxdepth: 2\n\n{toctree}\n```\n"


def _on_source_read(app: Any, docname: str, source: list[str]) -> None:
    if docname == app.config.root_doc:
        source[0] = _front_page(source[0])


def _html_handlers_for_singlehtml(app: Any) -> None:
    """Give the ``singlehtml`` builder every node's HTML handlers.

    Sphinx looks a node's handlers up under the builder's name first, and
    only without any under its format ("html"). sphinx-exercise registers
    its nodes under "singlehtml" too, which hides every other extension's
    HTML handlers (sphinx-design's tabs, for one) from that builder.
    """
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, pair in handlers.get("html", {}).items():
        single.setdefault(node, pair)


class _NoMiniGallery(Directive):
    """The gallery's ``minigallery`` (links to examples), which the PDF leaves out."""

    has_content = True
    optional_arguments = 99
    final_argument_whitespace = True
    option_spec = None

    def run(self) -> list[Any]:
        return []


def setup(app: Any) -> None:
    """The gallery's setting (read by the book's dependency tracking) and the front page."""
    app.add_config_value("sphinx_gallery_conf", {}, "html")
    app.add_directive("minigallery", _NoMiniGallery)
    app.connect("source-read", _on_source_read)
    app.connect("builder-inited", _html_handlers_for_singlehtml)
