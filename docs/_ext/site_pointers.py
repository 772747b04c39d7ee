"""Words that point to what only the web page holds: ``{site-pointer}`site text <offline text>```.

An explorer runs in the browser and a gallery's examples are pages of the
site; a lesson's notebook (docs/_ext/lesson_notebooks.py) holds neither. A
sentence that points to one says so with this role: the page shows the first
text ("the explorer below"), the notebook the second ("the explorer on this
lesson's web page"), linked to the page when ``html_baseurl`` says where the
site lives. ``tests/site/test_downloads.py`` checks that no notebook still
points "below" to an explorer or a gallery example.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from docutils.parsers.rst.states import Inliner
    from sphinx.application import Sphinx

_TEXTS = re.compile(r"^(?P<site>[^<>]*?)\s*<(?P<offline>[^<>]+)>$", re.S)


def texts(content: str) -> tuple[str, str] | None:
    """The role's two texts (the page's, the notebook's), or None if one is missing."""
    found = _TEXTS.match(content)
    if found is None or not found["site"].strip():
        return None
    return " ".join(found["site"].split()), " ".join(found["offline"].split())


def site_pointer_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """The page's text of the pointer; a role without both texts is an error."""
    both = texts(text)
    if both is None:
        message = inliner.reporter.error(
            f"{{{name}}} needs the page's text and the notebook's: `site text <offline text>`, "
            f"not {text!r}",
            line=lineno,
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    return [nodes.Text(both[0])], []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_role("site-pointer", site_pointer_role)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
