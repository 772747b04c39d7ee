"""What the tests of tests/ext share besides fixtures."""

from __future__ import annotations

from collections.abc import Callable

from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_escape_sequences

#: The ``book`` fixture: ``book(name, pages, build=True)`` -> the built app.
Book = Callable[..., SphinxTestApp]


def warnings(app: SphinxTestApp) -> str:
    """What the build warned, without the terminal's colours."""
    return strip_escape_sequences(app.warning.getvalue())
