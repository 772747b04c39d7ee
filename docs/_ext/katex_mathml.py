"""Render LaTeX math to MathML while the book is built.

Every ``$...$``, ``$$...$$``, ``{math}`` role and ``math`` directive is run
through KaTeX (embedded in the ``pykatex`` wheel, executed by QuickJS inside
the Python process) with ``output="mathml"``. The HTML then carries native
MathML, which browsers typeset themselves: the site ships no math JavaScript,
no math fonts and no math stylesheet, and reaches no other host.

A formula that KaTeX cannot parse fails the build with the document and line
of the offending math and KaTeX's own message.

Browsers that implement MathML Core ignore every ``mathvariant`` but
``normal``, so ``\\mathbb{R}`` would show a plain R. The styled letters are
therefore written as the characters of Unicode's Mathematical Alphanumeric
Symbols block (double-struck R, bold x, script L, ...), which every browser
draws, and a run
of upright one-letter identifiers (``\\mathrm{FF}``) becomes one identifier,
which MathML draws upright as a unit.
"""

from __future__ import annotations

import re
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


# First code point of A, a and 0 for each variant in the Mathematical Alphanumeric
# Symbols block (U+1D400-U+1D7FF); None where Unicode has no such digits.
_ALPHANUMERIC_STARTS: dict[str, tuple[int, int, int | None]] = {
    "bold": (0x1D400, 0x1D41A, 0x1D7CE),
    "italic": (0x1D434, 0x1D44E, None),
    "bold-italic": (0x1D468, 0x1D482, None),
    "script": (0x1D49C, 0x1D4B6, None),
    "bold-script": (0x1D4D0, 0x1D4EA, None),
    "fraktur": (0x1D504, 0x1D51E, None),
    "double-struck": (0x1D538, 0x1D552, 0x1D7D8),
    "bold-fraktur": (0x1D56C, 0x1D586, None),
    "sans-serif": (0x1D5A0, 0x1D5BA, 0x1D7E2),
    "bold-sans-serif": (0x1D5D4, 0x1D5EE, 0x1D7EC),
    "sans-serif-italic": (0x1D608, 0x1D622, None),
    "sans-serif-bold-italic": (0x1D63C, 0x1D656, None),
    "monospace": (0x1D670, 0x1D68A, 0x1D7F6),
}
# Greek capitals and small letters in bold and bold italic.
_GREEK_STARTS = {"bold": (0x1D6A8, 0x1D6C2), "bold-italic": (0x1D71C, 0x1D736)}
# Letters that Unicode had encoded before the block: its slots for them are empty.
_LETTERLIKE = {
    "italic": {"h": "\N{PLANCK CONSTANT}"},
    "script": dict(
        zip(
            "BEFHILMRego",
            (
                "\N{SCRIPT CAPITAL B}",
                "\N{SCRIPT CAPITAL E}",
                "\N{SCRIPT CAPITAL F}",
                "\N{SCRIPT CAPITAL H}",
                "\N{SCRIPT CAPITAL I}",
                "\N{SCRIPT CAPITAL L}",
                "\N{SCRIPT CAPITAL M}",
                "\N{SCRIPT CAPITAL R}",
                "\N{SCRIPT SMALL E}",
                "\N{SCRIPT SMALL G}",
                "\N{SCRIPT SMALL O}",
            ),
            strict=True,
        )
    ),
    "fraktur": dict(
        zip(
            "CHIRZ",
            (
                "\N{BLACK-LETTER CAPITAL C}",
                "\N{BLACK-LETTER CAPITAL H}",
                "\N{BLACK-LETTER CAPITAL I}",
                "\N{BLACK-LETTER CAPITAL R}",
                "\N{BLACK-LETTER CAPITAL Z}",
            ),
            strict=True,
        )
    ),
    "double-struck": dict(
        zip(
            "CHNPQRZ",
            (
                "\N{DOUBLE-STRUCK CAPITAL C}",
                "\N{DOUBLE-STRUCK CAPITAL H}",
                "\N{DOUBLE-STRUCK CAPITAL N}",
                "\N{DOUBLE-STRUCK CAPITAL P}",
                "\N{DOUBLE-STRUCK CAPITAL Q}",
                "\N{DOUBLE-STRUCK CAPITAL R}",
                "\N{DOUBLE-STRUCK CAPITAL Z}",
            ),
            strict=True,
        )
    ),
}


def styled(text: str, variant: str) -> str | None:
    """``text`` in the Unicode letters of ``variant``, or None if one has none."""
    starts = _ALPHANUMERIC_STARTS.get(variant)
    if starts is None:
        return None
    capital, small, digit = starts
    greek = _GREEK_STARTS.get(variant)
    out = []
    for char in text:
        if char in _LETTERLIKE.get(variant, {}):
            out.append(_LETTERLIKE[variant][char])
        elif "A" <= char <= "Z":
            out.append(chr(capital + ord(char) - ord("A")))
        elif "a" <= char <= "z":
            out.append(chr(small + ord(char) - ord("a")))
        elif "0" <= char <= "9" and digit is not None:
            out.append(chr(digit + ord(char) - ord("0")))
        elif greek and "\u0391" <= char <= "\u03a9":
            out.append(chr(greek[0] + ord(char) - 0x391))
        elif greek and "\u03b1" <= char <= "\u03c9":
            out.append(chr(greek[1] + ord(char) - 0x3B1))
        else:
            return None
    return "".join(out)


_STYLED_TOKEN = re.compile(r'<(mi|mn|mo|mtext) mathvariant="([a-z-]+)">([^<]*)</\1>')
_UPRIGHT_RUN = re.compile(r'(?:<mi mathvariant="normal">[^<]</mi>){2,}')


def _restyle(match: re.Match[str]) -> str:
    tag, variant, text = match.groups()
    letters = styled(text, variant) if variant != "normal" else None
    return match.group(0) if letters is None else f"<{tag}>{letters}</{tag}>"


def _join_upright(match: re.Match[str]) -> str:
    letters = re.findall(r">([^<])</mi>", match.group(0))
    return f"<mi>{''.join(letters)}</mi>"


#: KaTeX follows an operator name (``\max``, ``\log``) with an invisible
#: "function application" even where it is a script, as in ``\eta_{\max}``:
#: ``<msub><mi>η</mi><mi>max</mi><mo>\u2061</mo></msub>`` has three parts, and
#: Chromium draws no such subscript (it wrote "η max" on one line). Nothing
#: follows a script to apply it to, so it goes.
_FUNCTION_APPLIED_IN_SCRIPT = re.compile(
    "<mo>\u2061</mo>(?=</m(?:sub|sup|subsup|under|over|underover)>)"
)


#: An operator name applied to a plain argument, ``\\log p``: TeX puts a thin
#: space between them, MathML Core none (the invisible "function application"
#: is spaced by its own attributes), so Chromium wrote "logp". Before a bracket
#: (``\\log(x)``, ``\\sin\\!\\left(``) TeX puts none either.
_FUNCTION_APPLIED_TO_ATOM = re.compile("<mo>\u2061</mo>(?=<(?:mi|mn|msub|msup|msubsup)\\b)")


def core_mathml(mathml: str) -> str:
    """KaTeX's MathML made MathML Core (see the module docstring and the patterns)."""
    mathml = _FUNCTION_APPLIED_IN_SCRIPT.sub("", mathml)
    mathml = _FUNCTION_APPLIED_TO_ATOM.sub('<mo rspace="0.1667em">\u2061</mo>', mathml)
    mathml = _STYLED_TOKEN.sub(_restyle, mathml)
    return _UPRIGHT_RUN.sub(_join_upright, mathml)


def render(latex: str, *, display: bool, node: nodes.Node | None = None) -> str:
    """Return the MathML (wrapped by KaTeX in a ``span.katex``) for ``latex``."""
    try:
        html = pykatex.renderToString(
            latex, displayMode=display, output="mathml", throwOnError=True, strict="error"
        )
    except Exception as exc:  # pykatex raises its own ParseError
        where = _where(node) if node is not None else "<unknown location>"
        raise MathError(f"{where}: cannot typeset {latex!r}: {exc}") from exc
    return core_mathml(html)


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
