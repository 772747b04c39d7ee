"""Sphinx configuration for *The Transformer Architecture*."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
import tomllib
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
# The book's extensions, and its settings (book_tools.py, next to pyproject.toml).
sys.path[:0] = [str(DOCS / "_ext"), str(DOCS.parent)]
import book_tools  # noqa: E402

# The landing page's paragraph on the book as one PDF is shown only where the
# PDF has been built (`nox -s site`, or `nox -s pdf` after `nox -s docs`).
if book_tools.PDF.is_file():
    tags.add("book_pdf")  # noqa: F821 (Sphinx puts `tags` in this file's namespace)

# The build's environment, for everything it runs (the examples, in this
# process or its workers, and the notebook kernels), from pyproject's
# [tool.book] (book_tools.build_environment): one intra-op thread for PyTorch
# and BLAS (the book's figures are computed that way, tiny models run fastest
# so, and no thread pool is alive when a parallel build forks its readers and
# writers); the date of every zip (SOURCE_DATE_EPOCH, for reproducible
# output); and the folder where lessons_code.results saves the order-task and
# depth grids, which a lesson page and a gallery example show with the same
# arguments (the example trains, the page reads the result back). A value
# already set by the caller wins, except the arithmetic settings (which
# BOOK_ARITHMETIC may name another of: `nox -s arithmetic`).
book_tools.apply_environment(os.environ, book_tools.build_environment(DOCS))
if hasattr(time, "tzset"):  # TZ is among them (Windows has no tzset)
    time.tzset()

# Sphinx reads a page again when the page or a setting changes, not when an
# extension's code does: the extensions' files are made a setting here (their
# digest, registered in setup() below), so an edited extension re-reads every
# page and writes what it writes now. Nothing is executed again for it:
# executions are keyed by a page's code and the package (docs/_ext/code_deps.py).
book_extensions_digest = hashlib.sha256(
    b"".join(
        path.name.encode() + b"\0" + path.read_bytes()
        for path in sorted((DOCS / "_ext").iterdir())
        if path.is_file()
    )
).hexdigest()

# -- Project ------------------------------------------------------------------
project = "The Transformer Architecture"
author = "The Transformer Architecture authors"
copyright = "2026, " + author
release = _dist_version("lessons-code")
version = ".".join(release.split(".")[:2])

# -- General ------------------------------------------------------------------
extensions = [
    "myst_nb",
    "stream_chunks",
    "source_lines",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.autosummary",
    "sphinx_gallery.gen_gallery",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinxcontrib.bibtex",
    "sphinx_exercise",
    "self_check",
    "sphinx_togglebutton",
    "tex_mathml",
    "listing",
    "code_deps",
    "api_layout",
    "provenance",
    "claims",
    "prose_checks",
    "reader_wheel",
    "reproducible",
    "lesson_notebooks",
    "site_pointers",
    "cell_errors",
    "glossary_backlinks",
    "search_summary",
    "book_figures",
]

nitpicky = True
# Names from third-party packages that autodoc meets in signatures and that
# cannot be resolved without intersphinx (the build never uses the network).
nitpick_ignore_regex = [
    ("py:.*", r"(torch|numpy|np|nn|F|matplotlib|pandas|collections|typing|datetime)\..*"),
    ("py:class", r"(Tensor|Generator|Axes|AxesImage|Module|Figure|DataFrame|Callable)"),
    # The type variables of lessons_code.results.stored (same signature in, out).
    ("py:class", r"(~P|lessons_code\.results\.R)"),
    # The private base of Encoder and Decoder, named by their "Bases:" line.
    ("py:class", r"lessons_code\.blocks\._Stack"),
]
exclude_patterns = [
    "_build",
    "jupyter_execute",
    # sphinx-gallery writes a notebook next to every example's page; those
    # are downloads for readers, never pages for MyST-NB to read again.
    "auto_examples/*.ipynb",
    "auto_examples/**/*.ipynb",
]
templates_path = ["_templates"]

# -- Math: LaTeX -> MathML at build time, no JavaScript ------------------------
html_math_renderer = "tex_mathml"
math_numfig = True
numfig = True

# -- MyST / MyST-NB -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
myst_update_mathjax = False  # MathJax is not used
nb_execution_mode = "cache"
# A cell that raises is reported with its page and line (docs/_ext/cell_errors.py);
# the build goes on and fails at the end, naming every failing page (-W).
nb_execution_raise_on_error = False
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
nb_ipywidgets_js: dict[str, dict[str, str]] = {}  # nothing from a CDN
nb_execution_excludepatterns = ["auto_examples/*"]

# -- autodoc ------------------------------------------------------------------
autodoc_member_order = "bysource"
# One field list per object: the signature's types go into the description,
# only for what the docstring documents (so each parameter and the return
# value get their type once), and napoleon gives the documented return type
# its own "Return type" field, which autodoc then leaves alone. The custom
# "Shape" section becomes a field of the same list (docs/_ext/api_layout.py).
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_custom_sections = ["Shape"]
napoleon_use_param = True
napoleon_use_rtype = True
# One stub page per module (docs/api/, ignored by git), from the template in
# _templates/autosummary; a stub whose text is unchanged is not written again,
# so a no-change rebuild reads no API page.
autosummary_generate = True
autosummary_ignore_module_all = False  # document exactly each module's __all__

# -- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../gallery"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r".*\.py$",  # execute every example
    # Examples run side by side, as many as sphinx-build's -j (one thread each);
    # two of them asking for one stored result compute it once (lessons_code.results).
    "parallel": True,
    "ignore_pattern": r"__init__\.py",
    "doc_module": ("lessons_code",),
    "reference_url": {"lessons_code": None},
    "backreferences_dir": "gen_modules/backreferences",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "download_all_examples": True,
    # The execution-times pages pull jQuery and DataTables from CDNs.
    "write_computation_times": False,
    "show_memory": False,
    # Figures saved at 2x and shown at half their width (docs/_ext/book_figures.py).
    "image_scrapers": ("book_figures.scraper",),
    "reset_modules": ("matplotlib", "book_figures.reset_for_gallery"),
    "matplotlib_animations": False,
    "plot_gallery": "True",
    # The examples in the order of the book's sections (docs/_ext/gallery_order.py);
    # an example missing from that list comes last instead of failing the build.
    "within_subsection_order": "gallery_order.BookOrder",
    # A cell's last expression is shown: DataFrames as HTML tables.
    "capture_repr": ("_repr_html_", "__repr__"),
    # Report every example's run time on its page.
    "min_reported_time": 0,
    # Which examples ran, and for how long, for the build's execution report
    # (docs/_ext/code_deps.py writes docs/_build/execution.json from it).
    "junit": "../gallery-junit.xml",
    # Notebook readers install the package first (a comment: nothing runs).
    "first_notebook_cell": (
        "# To run this notebook, download the book's package from the example's page and\n"
        "# install it with the plotting libraries, in the folder you saved it in:\n"
        f"#     pip install lessons_code-{release}-py3-none-any.whl matplotlib pandas"
    ),
}

# -- The readers' downloads (docs/_ext/lesson_notebooks.py) -------------------
# The book as one PDF, where book_pdf.py writes it (book_tools names the path).
book_pdf = book_tools.PDF.relative_to(DOCS).as_posix()


def export_line(env: dict[str, str], width: int = 76) -> str:
    """A bash ``export`` of ``env``, wrapped with ``\\`` to lines of at most ``width``."""
    lines = ["export"]
    for name, value in env.items():
        if len(lines[-1]) + 1 + len(f"{name}={value}") + 2 > width:
            lines[-1] += " \\"
            lines.append("      ")
        lines[-1] += f" {name}={value}"
    return "\n".join(lines)


# The landing page's setup for readers ("Running the examples yourself"):
# the Python the package requires, PyTorch's CPU build, and the line that
# gives the pages' digits: the PyTorch this build ran and the arithmetic
# settings of [tool.book.build-env] (TZ left out: it dates the execution
# cache's records and changes no number). The code blocks are substitutions
# of their own: MyST substitutes nothing inside a code fence. reader_wheel
# adds the wheel's substitutions to these.
_requires_python = tomllib.loads((DOCS.parent / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]["requires-python"]
if not re.fullmatch(r">=\d+\.\d+", _requires_python):
    raise ValueError(f"requires-python: the landing page reads '>=X.Y', not {_requires_python!r}")
_torch_version = _dist_version("torch").split("+")[0]
_torch_cpu = "--index-url https://download.pytorch.org/whl/cpu"
myst_substitutions = {
    "python_version": _requires_python.removeprefix(">="),
    "torch_version": _torch_version,
    "torch_install": f"```bash\npip install torch {_torch_cpu}\n```",
    "build_arithmetic": f"```bash\npip install torch=={_torch_version} {_torch_cpu}\n"
    + export_line({k: v for k, v in book_tools.settings().build_env.items() if k != "TZ"})
    + "\n```",
}

# -- Solutions ------------------------------------------------------------------
# sphinx-exercise marks a solution ``dropdown``; sphinx-togglebutton collapses
# every such block on load behind a button in its title (keyboard operable,
# aria-expanded). Only solutions are dropdowns in this book.
togglebutton_hint = "Show solution"
togglebutton_hint_hide = "Hide solution"

# -- Bibliography -------------------------------------------------------------
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- HTML ---------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
# How a lesson prints (A4): no chrome, solutions open, code wrapped, no figure
# split across pages (checked by tests/site/test_print.py). How a page fits a
# narrow window: nothing scrolls the page sideways (tests/site/test_narrow.py).
# The theme's icons, drawn without its icon font or script (icons.css, with the
# template docs/_templates/static/webpack-macros.html; tests/site/test_icons.py).
# Accessibility fixes for markup that the theme and sphinx-gallery generate,
# each named in the file that makes it (a11y.css, a11y.js).
html_css_files = [
    ("print.css", {"media": "print"}),
    ("narrow.css", {"media": "screen"}),
    "icons.css",
    "a11y.css",
    "figures.css",
]
html_js_files = ["a11y.js"]
html_last_updated_fmt = None
html_copy_source = True  # the theme's download button offers the page source
html_show_sourcelink = False
# The reader's system colour scheme until they pick one with the theme's switch
# (the head script in _templates/layout.html applies it before the page draws).
html_context = {"default_mode": "auto"}
# Search: lessons rank before examples, examples before reference pages
# (read by Sphinx from the current directory, hence the absolute path).
html_search_scorer = str(DOCS / "_ext" / "search_scorer.js")
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
    # Dark code: comments grey, quieter than the code (the theme's default dark
    # style draws them bright yellow, the loudest text on the page).
    "pygments_dark_style": "github-dark",
}


def _defer_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Let a page draw before its scripts run: every script file is ``defer``.

    Deferred scripts still run in their order, before ``DOMContentLoaded``.
    ``documentation_options.js`` stays as it is (inline scripts of the page set
    fields of the object it defines while the page is read), and so does the
    search page, whose search script runs while the page is read.
    """
    if pagename == "search":
        return
    deferred = []
    for script in context.get("script_files", []):
        name = str(getattr(script, "filename", "") or "")
        attributes = dict(getattr(script, "attributes", {}))
        if name and not name.endswith("documentation_options.js") and "async" not in attributes:
            attributes.setdefault("defer", "defer")
            script = type(script)(script.filename, priority=script.priority, **attributes)
        deferred.append(script)
    context["script_files"] = deferred


#: A rule of the theme's stylesheet that only names the Font Awesome glyph of
#: icon classes (``.fa-bars{--fa:"\f0c9"}``): about 2,000 of them.
_FA_GLYPH = re.compile(
    r'(?<=[}/])(?:\.fa-[\w-]+,)*\.fa-[\w-]+\{--fa:"[^"]*"(?:;--fa--fa:"[^"]*")?\}'
)
#: The stylesheet's own declarations of the icon font's webfonts. Without them a
#: browser that styles the page before icons.css arrives can still fetch the font
#: (it did, for one load in six, on the search page without JavaScript).
_FA_FONT_FACE = re.compile(r"@font-face\{[^}]*vendor/fontawesome/webfonts/[^}]*\}")
_SOURCE_MAP = "/*# sourceMappingURL=pydata-sphinx-theme.css.map*/"


def _trim_theme_css(app: Any, exception: Exception | None) -> None:
    """Drop the Font Awesome glyph and font rules from the built copy of the theme's stylesheet.

    The book draws its icons with icons.css and never loads the icon font, so
    the glyphs are never shown; they were 19 kB of the stylesheet's 64 kB
    (gzip), which every page waits for before it draws. The comment naming the
    source map goes too (the map is of the whole file), and so do the three
    ``@font-face`` rules, so that no load can fetch the font; nothing else changes.
    """
    css = Path(app.outdir) / "_static" / "styles" / "pydata-sphinx-theme.css"
    if exception is None and app.builder.format == "html" and css.is_file():
        text = css.read_text(encoding="utf-8")
        trimmed = _FA_GLYPH.sub("", _FA_FONT_FACE.sub("", text)).replace(_SOURCE_MAP, "")
        if trimmed != text:
            css.write_text(trimmed, encoding="utf-8")


#: The file that holds the stylesheets a page would otherwise load one by one.
_STYLES = "_static/book-styles.css"
_IMG = re.compile(r"<img (?!fetchpriority)")


def _bundled(sheets: list[Any]) -> tuple[list[Any], list[str]]:
    """Split a page's stylesheets: ``pygments.css`` if first, and the run to bundle.

    The run is the leading plain stylesheets after it (up to the first one
    with a media attribute, from another host or not CSS), by file name; it is
    empty if fewer than two would be bundled.
    """
    sheets = sorted(sheets, key=lambda sheet: sheet.priority)
    lead = [s for s in sheets[:1] if os.fspath(s.filename) == "_static/pygments.css"]
    run = []
    for sheet in sheets[len(lead) :]:
        name = os.fspath(sheet.filename)
        if "media" in sheet.attributes or "://" in name or not name.endswith(".css"):
            break
        run.append(name)
    return lead, run if len(run) > 1 else []


def _site_sheets(app: Any) -> list[Any]:
    """The stylesheets the HTML builder links on every page (none if it keeps no list).

    Sphinx holds them in a private attribute; were it renamed, nothing would
    be bundled and every page would link its stylesheets one by one.
    """
    return list(getattr(app.builder, "_css_files", []))


def _light_head(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Fewer requests before a page can draw, and figures after its text.

    A page waits for every stylesheet in its head before it draws, and on a
    slow connection each file costs a round trip. The leading run of plain
    stylesheets (the extensions' and the book's, in the order they are
    linked, up to the first one with a media attribute) is linked as one
    file, which ``_write_styles`` writes when the build ends (only then are
    all of them in the output folder); print.css, narrow.css and those after
    them are linked as before. The theme's own two stylesheets come from its
    template, not this list, and stay as they are, and so does pygments.css,
    which the theme writes again once the pages are written
    (``overwrite_pygments_css``): it is linked on its own, first. A page
    whose stylesheets differ from every other page's keeps its own links.
    Every image after the first one of a page is fetched at low priority and
    only when the reader scrolls near it (``fetchpriority="low"``,
    ``loading="lazy"``): a first visit downloads the text, the styles and the
    figures in view, not every figure of a long lesson (browsers load lazy
    images before they print). Each PNG gets the height its width implies
    (:func:`_with_heights`), so a figure holds its place before it loads and
    the text below it does not jump.
    """
    sheets = sorted(context.get("css_files", []), key=lambda sheet: sheet.priority)
    lead, run = _bundled(sheets)
    if run and run == _bundled(_site_sheets(app))[1]:
        rest = sheets[len(lead) + len(run) :]
        merged = type(sheets[0])(_STYLES, priority=sheets[len(lead)].priority)
        context["css_files"] = [*lead, merged, *rest]
    if "body" in context:
        first = context["body"].find("<img ") + len("<img ")
        if first >= len("<img "):
            body = context["body"]
            later = _IMG.sub('<img fetchpriority="low" loading="lazy" ', body[first:])
            context["body"] = _with_heights(app, body[:first] + later)


_SIZED_IMG = re.compile(r'<img ([^>]*?)src="_images/([^"]+\.png)"([^>]*?)width="(\d+)"([^>]*)>')


def _png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG's header, or None if ``path`` is no PNG."""
    try:
        with path.open("rb") as handle:
            head = handle.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _with_heights(app: Any, body: str) -> str:
    """Give every ``_images/*.png`` with a width and no height the height its aspect implies.

    The file is found through the builder's image table (source path -> name
    in ``_images``). A browser scales the image with its width (``height:
    auto`` in figures.css) and keeps its box's aspect before the pixels arrive.
    """
    sources = {name: Path(app.srcdir, source) for source, name in app.builder.images.items()}

    def sized(match: re.Match[str]) -> str:
        tag = match.group(0)
        if " height=" in tag or match.group(2) not in sources:
            return tag
        size = _png_size(sources[match.group(2)])
        if size is None or size[0] == 0:
            return tag
        width = int(match.group(4))
        height = round(width * size[1] / size[0])
        return tag.replace(f'width="{width}"', f'width="{width}" height="{height}"', 1)

    return _SIZED_IMG.sub(sized, body)


def _write_styles(app: Any, exception: Exception | None) -> None:
    """Write the bundle the pages link: the stylesheets it stands for, in their order."""
    run = _bundled(_site_sheets(app))[1] if app.builder.format == "html" else []
    if exception is None and run:
        outdir = Path(app.outdir)
        text = "".join(
            f"/* {name} */\n{(outdir / name).read_text(encoding='utf-8')}\n" for name in run
        )
        bundle = outdir / _STYLES
        if not bundle.is_file() or bundle.read_text(encoding="utf-8") != text:
            bundle.write_text(text, encoding="utf-8")


def setup(app: Any) -> None:
    """Hooks of this book's configuration (the rest lives in docs/_ext)."""
    app.add_config_value("book_extensions_digest", "", "env", types=[str])
    app.connect("html-page-context", _defer_scripts)
    app.connect("html-page-context", _light_head)
    app.connect("build-finished", _trim_theme_css)
    app.connect("build-finished", _write_styles)
