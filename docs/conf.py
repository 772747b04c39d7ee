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

DOCS = Path(__file__).resolve().parent
# The book's extensions, and its settings (book_tools.py, next to pyproject.toml).
sys.path[:0] = [str(DOCS / "_ext"), str(DOCS.parent)]
from book.pages import MYST_EXTENSIONS  # noqa: E402

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
# digest, a book_* setting of docs/_ext/book), so an edited extension re-reads every
# page and writes what it writes now. Nothing is executed again for it:
# executions are keyed by a page's code and the package (docs/_ext/book/execution.py).
book_extensions_digest = hashlib.sha256(
    b"".join(
        path.relative_to(DOCS / "_ext").as_posix().encode() + b"\0" + path.read_bytes()
        for path in sorted((DOCS / "_ext").rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
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
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.autosummary",
    "sphinx_gallery.gen_gallery",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinxcontrib.bibtex",
    "sphinx_exercise",
    "sphinx_togglebutton",
    # The book's own: its settings are the book_* values below, its handlers
    # and their order are listed in docs/_ext/book/__init__.py.
    "book",
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
# The MyST syntax of the pages, which the book's own reader of MyST reads too.
myst_enable_extensions = sorted(MYST_EXTENSIONS)
myst_heading_anchors = 3
myst_update_mathjax = False  # MathJax is not used
nb_execution_mode = "cache"
# A cell that raises is reported with its page and line (docs/_ext/book/execution.py);
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
# "Shape" section becomes a field of the same list (docs/_ext/book/html.py).
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
    "image_scrapers": ("book.figures.scraper",),
    "reset_modules": ("matplotlib", "book.figures.reset_for_gallery"),
    "matplotlib_animations": False,
    "plot_gallery": "True",
    # The examples in the order of the book's sections (docs/_ext/book/figures.py);
    # an example missing from that list comes last instead of failing the build.
    "within_subsection_order": "book.figures.BookOrder",
    # A cell's last expression is shown: DataFrames as HTML tables.
    "capture_repr": ("_repr_html_", "__repr__"),
    # Report every example's run time on its page.
    "min_reported_time": 0,
    # Which examples ran, and for how long, for the build's execution report
    # (docs/_ext/book/execution.py writes docs/_build/execution.json from it).
    "junit": "../gallery-junit.xml",
    # Notebook readers install the package first (a comment: nothing runs).
    "first_notebook_cell": (
        "# To run this notebook, download the book's package from the example's page and\n"
        "# install it with the plotting libraries, in the folder you saved it in:\n"
        f"#     pip install lessons_code-{release}-py3-none-any.whl matplotlib pandas"
    ),
}

# -- The readers' downloads (docs/_ext/book/downloads.py) -------------------
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
