"""Render LaTeX math to MathML while the book is built.

Every ``$...$``, ``$$...$$``, ``{math}`` role and ``math`` directive is run
through KaTeX (embedded in the ``pykatex`` wheel, executed by QuickJS inside
the Python process) with ``output="mathml"``. The HTML then carries native
MathML, which browsers typeset themselves: the site ships no math JavaScript,
no math fonts and no math stylesheet, and reaches no other host.

A formula that KaTeX cannot parse fails the build with the document and line
of the offending math and KaTeX's own message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pykatex
from docutils import nodes
from sphinx.errors import SphinxError
from sphinx.locale import _
from sphinx.util.math import get_node_equation_number

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.writers.html5 import HTML5Translator


class MathError(SphinxError):
    """A formula in the sources is not valid LaTeX math."""

    category = "Math error"


def _where(node: nodes.Node) -> str:
    source = node.source or (node.parent.source if node.parent is not None else None)
    line = node.line or (node.parent.line if node.parent is not None else None)
    return f"{source or '<unknown file>'}:{line or '?'}"


def render(latex: str, *, display: bool, node: nodes.Node | None = None) -> str:
    """Return the MathML (wrapped by KaTeX in a ``span.katex``) for ``latex``."""
    try:
        html = pykatex.renderToString(
            latex, displayMode=display, output="mathml", throwOnError=True, strict="error"
        )
    except Exception as exc:  # pykatex raises its own ParseError
        where = _where(node) if node is not None else "<unknown location>"
        raise MathError(f"{where}: cannot typeset {latex!r}: {exc}") from exc
    return html


def visit_inline(self: HTML5Translator, node: nodes.math) -> None:
    """Write an inline formula."""
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(render(node.astext(), display=False, node=node))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_display(self: HTML5Translator, node: nodes.math_block) -> None:
    """Write a display formula, with its equation number and permalink."""
    self.body.append(self.starttag(node, "div", CLASS="math notranslate display-math"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    latex = node.astext()
    parts = [part for part in latex.split("\n\n") if part.strip()]
    if len(parts) > 1:  # several equations in one block: align them like amsmath does
        latex = r"\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}"
    self.body.append(render(latex, display=True, node=node))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the renderer under the name ``katex_mathml``."""
    app.add_html_math_renderer("katex_mathml", (visit_inline, None), (visit_display, None))
    app.add_css_file("math.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
