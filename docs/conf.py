"""Sphinx configuration for *The Transformer Architecture*."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as _dist_version
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

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
    "katex_mathml",
    "code_deps",
    "provenance",
    "claims",
    "reader_wheel",
    "reproducible",
    "a11y",
    "cell_errors",
]

nitpicky = True
# Names from third-party packages that autodoc meets in signatures and that
# cannot be resolved without intersphinx (the build never uses the network).
nitpick_ignore_regex = [
    ("py:.*", r"(torch|numpy|np|nn|F|matplotlib|pandas|collections|typing)\..*"),
    ("py:class", r"(Tensor|Generator|Axes|AxesImage|Module|Figure|DataFrame|Callable)"),
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
html_math_renderer = "katex_mathml"
math_numfig = True
numfig = True

# -- MyST / MyST-NB -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3
myst_update_mathjax = False  # MathJax is not used
nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
nb_ipywidgets_js: dict[str, dict[str, str]] = {}  # nothing from a CDN
nb_execution_excludepatterns = ["auto_examples/*"]

# -- autodoc ------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_custom_sections = ["Shape"]
napoleon_use_rtype = False
autosummary_generate = True
autosummary_ignore_module_all = False  # document exactly each module's __all__

# -- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../gallery"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r".*\.py$",  # execute every example
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
    "image_scrapers": ("matplotlib",),
    # Build only: slow deterministic results are shared with the lesson pages
    # (docs/_ext/result_cache.py); readers' downloads run the real functions.
    "reset_modules": ("matplotlib", "result_cache.install_for_gallery"),
    "matplotlib_animations": False,
    "plot_gallery": "True",
    # The examples in the order of the book's sections (docs/_ext/gallery_order.py);
    # an example missing from that list comes last instead of failing the build.
    "within_subsection_order": "gallery_order.BookOrder",
    # A cell's last expression is shown: DataFrames as HTML tables.
    "capture_repr": ("_repr_html_", "__repr__"),
    # Report every example's run time on its page.
    "min_reported_time": 0,
    # Notebook readers install the package first (a comment: nothing runs).
    "first_notebook_cell": (
        "# To run this notebook, download the book's package from the example's page and\n"
        "# install it with the plotting libraries, in the folder you saved it in:\n"
        f"#     pip install lessons_code-{release}-py3-none-any.whl matplotlib pandas"
    ),
}

# -- Bibliography -------------------------------------------------------------
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"

# -- HTML ---------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"
html_last_updated_fmt = None
html_copy_source = True  # the theme's download button offers the page source
html_show_sourcelink = False
html_context = {"default_mode": "light"}
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
}

# Reproducible output: the same sources give the same bytes.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01
