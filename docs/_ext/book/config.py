"""The book extension's settings: the ``book_*`` values of ``conf.py``, checked once.

:data:`DEFAULTS` names every value, its default and what it means (in the
manner of sphinx-gallery's ``DEFAULT_GALLERY_CONF``). Sphinx registers them
(:func:`register`); when the configuration has been read, :func:`validated`
checks their types and makes one :class:`BookConfig` of them, which every
handler reads through :func:`book_config`. The names the build writes or
reads in more than one place (the API pages' folder, the search summary)
are fields here too, so that each is written once.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

#: Every job of the extension (see ``HANDLERS`` in ``book/__init__.py``). A
#: test book turns on only the one it tests with ``book_features``.
FEATURES = (
    "api_layout",  # the API pages' field lists and headings (html.py)
    "cell_errors",  # a failing cell reported at its page and line (execution.py)
    "claims",  # every glued number checked against the page's claims file (checks.py)
    "dependencies",  # what a page's code depends on; stale pages run again (execution.py)
    "gallery_images",  # the gallery's PNGs made palette PNGs (figures.py)
    "glossary",  # each glossary term's uses, and each API object's lessons (collectors.py)
    "head",  # deferred scripts, one bundled stylesheet, lazy images (html.py)
    "notebooks",  # the readers' notebooks, their zip and the PDF link (downloads.py)
    "prose",  # notation, units and words the lessons' prose may use (checks.py)
    "provenance",  # the versions a page was built with (execution.py)
    "reader_wheel",  # the wheel readers install, and its substitutions (downloads.py)
    "summary",  # page descriptions and the search page's summary (html.py)
    "zips",  # the downloads' zips dated SOURCE_DATE_EPOCH (downloads.py)
)

#: The book's settings: name -> (default, rebuild, meaning). ``rebuild`` is
#: Sphinx's: "env" reads every page again when the value changes, "html"
#: writes them again.
DEFAULTS: dict[str, tuple[Any, Literal["env", "html"], str]] = {
    "book_features": (FEATURES, "env", "the jobs that run (all of them in the book)"),
    "book_claims": ("claims", "env", "the folder of the claims files, one TOML per page"),
    "book_notation_page": ("notation", "env", "the page whose table lists every symbol"),
    "book_notebooks_folder": (
        "_downloads/notebooks",
        "html",
        "where the readers' notebooks go, in the HTML output",
    ),
    "book_notebooks_archive": ("lessons-notebooks.zip", "html", "their zip, in that folder"),
    "book_pdf": ("", "env", "the book as one PDF, relative to the sources ('' for none)"),
    "book_api_folder": ("api/", "env", "the folder of the API pages (a docname prefix)"),
    "book_summary": (
        "An executable textbook on how a Transformer works: attention, multi-head "
        "attention, positional encoding, the encoder block and a trained model.",
        "html",
        "the description of a page that has no text of its own",
    ),
    "book_extensions_digest": (
        "",
        "env",
        "a digest of the extension's files (conf.py sets it: an edit reads every page again)",
    ),
}


@dataclass(frozen=True)
class BookConfig:
    """The ``book_*`` settings of one build, checked (see :data:`DEFAULTS`)."""

    features: frozenset[str]
    claims: str
    notation_page: str
    notebooks_folder: str
    notebooks_archive: str
    pdf: str
    api_folder: str
    summary: str
    extensions_digest: str


def register(app: Sphinx) -> None:
    """Register every value of :data:`DEFAULTS` with Sphinx."""
    for name, (default, rebuild, _) in DEFAULTS.items():
        types = [tuple, list, frozenset, set] if name == "book_features" else [str]
        app.add_config_value(name, default, rebuild, types=types)


def validated(config: Config) -> BookConfig:
    """The settings of ``config`` as a :class:`BookConfig`; ``ValueError`` names a bad one."""
    values: dict[str, Any] = {}
    for field in fields(BookConfig):
        name = f"book_{field.name}"
        value = getattr(config, name)
        if field.name == "features":
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{name}: expected a list of feature names, got {value!r}")
            unknown = sorted(set(value) - set(FEATURES))
            if unknown:
                raise ValueError(f"{name}: unknown features {unknown}; known: {list(FEATURES)}")
            value = frozenset(value)
        elif not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
        values[field.name] = value
    return BookConfig(**values)


def on_config_inited(app: Sphinx, config: Config) -> None:
    """Check the settings as soon as they are read, before any page is."""
    validated(config)


def book_config(app: Sphinx) -> BookConfig:
    """The checked settings of ``app``'s build."""
    return validated(app.config)


def enabled(app: Sphinx, feature: str) -> bool:
    """Whether ``feature`` is among the build's ``book_features``."""
    return feature in app.config.book_features
