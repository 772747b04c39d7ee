"""LaTeX to MathML at build time: formulas without JavaScript.

**Tex mathml.** Render LaTeX math to MathML while the book is built.

Every ``$...$``, ``$$...$$``, ``{math}`` role and ``math`` directive is
converted by latex2mathml, a pure-Python converter. The HTML then carries
native MathML, which browsers typeset themselves: the site ships no math
typesetting script, no math fonts and no math stylesheet, and reaches no
other host. Each formula keeps its TeX as an ``application/x-tex``
annotation, which assistive technology can use and which a small copy
handler (``_static/math_copy.js``) puts on the clipboard when a selection
touches the formula.

latex2mathml writes MathML for every kind of reader; what Chromium, Firefox
and Safari draw alike is MathML Core, and TeX's conventions need a few more
touches. After converting, this module

* writes the letters of ``\\mathbb``, ``\\mathbf``, ``\boldsymbol``,
  ``\\mathcal``, ``\\mathit`` ... as the characters of Unicode's Mathematical
  Alphanumeric Symbols block (double-struck R, bold x, script L): MathML Core
  ignores every ``mathvariant`` but ``normal``, so ``\\mathbb{R}`` would show a
  plain R;
* makes a run of upright letters (``\\mathrm{FF}``) one identifier, which
  MathML draws upright as a unit, and keeps a single one upright
  (``\\mathrm{d}``);
* writes operator names (``\\log``, ``\\operatorname{softmax}``) as upright
  identifiers followed by an invisible function application, which carries
  TeX's thin space where the argument is an atom (``\\log p``) and none before
  a bracket (``\\log(x)``); a ``\\!`` right after a name cancels that space, as
  in TeX. Names with limits (``\\max``, ``\\operatorname*{arg\\,max}``) take
  their subscript under them in display style;
* gives TeX's ordinary symbols (``\\partial``, ``\\infty``, ``\top``) no
  operator spacing, and named spaces (``\\!``) a length;
* reads ``aligned`` as ``split`` (latex2mathml has no ``aligned``), and puts a
  matrix and its brackets in a row of their own, so that they grow with it.

A formula that latex2mathml cannot parse fails the build with the document and
line of the offending math. latex2mathml is lenient: it writes an unknown
command as its name, an unclosed brace as if closed, a stray ``&`` as a letter
and an unknown environment as a group. So the TeX's braces and environments
are checked first, and the MathML after: any backslash left in its text, a
letter ``&`` or brace, a line break outside an aligned environment, or an
``merror`` is a :class:`MathError` too.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import TYPE_CHECKING
from xml.etree.ElementTree import Element, SubElement, tostring

from docutils import nodes
from latex2mathml.converter import convert_to_element
from sphinx.errors import SphinxError
from sphinx.locale import _
from sphinx.util.math import get_node_equation_number

if TYPE_CHECKING:
    from sphinx.writers.html5 import HTML5Translator


# -- tex_mathml ------------------------------------------------------------


class MathError(SphinxError):
    """A formula in the sources is not valid LaTeX math."""

    category = "Math error"


class Unreadable(ValueError):
    """Why latex2mathml's reading of a formula cannot be trusted."""


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


#: The environments latex2mathml reads; ``aligned`` is handed to it as ``split``.
ENVIRONMENTS = frozenset(
    {
        "aligned",
        "split",
        "cases",
        "array",
        "matrix",
        "pmatrix",
        "bmatrix",
        "Bmatrix",
        "vmatrix",
        "Vmatrix",
    }
)
_TEX_TOKEN = re.compile(r"\\(?:[A-Za-z]+|.)|[{}]", re.DOTALL)
_ENVIRONMENT = re.compile(r"\\(begin|end)\s*\{([^{}]*)\}")
_OPERATOR_NAME = re.compile(r"(\\operatorname\*?\s*\{)([^{}]*)\}")


def _operator_name(match: re.Match[str]) -> str:
    """``\\operatorname{arg\\,max}`` as latex2mathml reads it: letters, a thin space kept."""
    head, name = match.groups()
    # latex2mathml takes letters and blanks only, and drops the ASCII blank.
    spaced = name.replace(r"\,", "\N{THIN SPACE}")
    if not re.fullmatch(r"[A-Za-z\N{THIN SPACE} ]+", spaced):
        raise Unreadable(f"operator name {name!r} is not letters (and \\, spaces)")
    return f"{head}{spaced}}}"


def for_converter(latex: str) -> str:
    """``latex`` checked for what latex2mathml would pass over, and put as it reads it."""
    depth = 0
    for token in _TEX_TOKEN.findall(latex):
        depth += {"{": 1, "}": -1}.get(token, 0)
        if depth < 0:
            raise Unreadable("a '}' closes no group")
    if depth:
        raise Unreadable(f"{depth} '{{' never closed")
    for match in _ENVIRONMENT.finditer(latex):
        if match.group(2) not in ENVIRONMENTS:
            raise Unreadable(f"unknown environment {match.group(2)!r}")
    latex = _ENVIRONMENT.sub(
        lambda m: rf"\{m.group(1)}{{split}}" if m.group(2) == "aligned" else m.group(0), latex
    )
    return _OPERATOR_NAME.sub(_operator_name, latex)


_TOKENS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
#: Elements whose children are read as one row (MathML's inferred mrow).
_ROWS = frozenset({"math", "mrow", "mtd", "msqrt", "mstyle", "mpadded", "mphantom", "menclose"})
_SCRIPTED = frozenset({"msub", "msup", "msubsup", "munder", "mover", "munderover"})
#: Characters that, written as a letter, show latex2mathml misread the TeX.
_STRAY = frozenset("&{}#^_$")
#: Operator names TeX sets with limits (under them in display style), besides
#: ``\operatorname*``, whose operator latex2mathml marks ``movablelimits``.
_WITH_LIMITS = frozenset({"max", "min", "lim", "sup", "inf"})
#: TeX's ordinary symbols that latex2mathml writes as operators (to it all of
#: U+2190-U+21FF and U+2200-U+22FF are, and the period and slash): as ``<mo>``
#: they would get an operator's spacing, ``D / H`` and ``-\infty`` gaps that
#: TeX does not put there.
ORDINARY = frozenset(
    "\N{PARTIAL DIFFERENTIAL}\N{INFINITY}\N{NABLA}\N{DOWN TACK}\N{UP TACK}"
    "\N{EMPTY SET}\N{FOR ALL}\N{THERE EXISTS}./"
)
_OPENING = frozenset("([{|\N{DOUBLE VERTICAL LINE}")
_CLOSING = frozenset(")]}|\N{DOUBLE VERTICAL LINE}")
_NAME = re.compile(r"[A-Za-z][A-Za-z\N{THIN SPACE}]*[A-Za-z]")
_FUNCTION_APPLICATION = "\N{FUNCTION APPLICATION}"
_THIN = 0.1667  # em: TeX's \, and the space between an operator name and an atom
#: MathML's named spaces, which MathML Core (and so Chromium) does not know.
_NAMED_SPACES = {
    f"{sign}{name}mathspace": f"{'-' if sign else ''}{eighteenths / 18:.4f}em"
    for sign in ("", "negative")
    for eighteenths, name in enumerate(
        ("veryverythin", "verythin", "thin", "medium", "thick", "verythick", "veryverythick"), 1
    )
}


def _decode(math: Element) -> None:
    """Text as characters (latex2mathml keeps character references in it).

    A letter of ``\\mathrm{d}`` comes as the reference ``&#x00064;`` where a
    plain ``d`` comes as itself; it is marked upright.
    """
    for element in math.iter():
        if element.text:
            text = html.unescape(element.text)
            if (
                element.tag == "mi"
                and element.text.startswith("&#")
                and len(text) == 1
                and text.isascii()
                and text.isalpha()
                and "mathvariant" not in element.attrib
            ):
                element.set("mathvariant", "normal")
            element.text = text


def check(math: Element) -> None:
    """Raise :class:`Unreadable` where the MathML shows TeX latex2mathml did not read."""
    for element in math.iter():
        text = element.text or ""
        if element.tag == "merror":
            raise Unreadable("the converter reported an error (merror)")
        if element.tag in _TOKENS and "\\" in text:
            raise Unreadable(f"unknown command {text.strip()}")
        if element.tag == "mi" and text in _STRAY:
            raise Unreadable(f"{text!r} where it has no meaning (an '&' outside aligned?)")
        if element.tag == "mspace" and element.get("linebreak"):
            raise Unreadable(r"'\\' outside an aligned environment")


def _limits(math: Element) -> set[Element]:
    """A name with limits and a subscript: under it in display style, beside it in text."""
    found = set()
    for element in math.iter():
        if element.tag not in ("msub", "msubsup") or len(element) < 2:
            continue
        base = element[0]
        name = base.text or ""
        limits = base.get("movablelimits") == "true" or name in _WITH_LIMITS
        if base.tag == "mo" and _NAME.fullmatch(name) and limits:
            element.tag = {"msub": "munder", "msubsup": "munderover"}[element.tag]
            base.attrib.update(movablelimits="true", lspace="0em", rspace="0em")
            found.add(element)
    return found


def _operator_names(math: Element, limits: set[Element]) -> set[Element]:
    """Operator names, as upright identifiers (the ones with limits stay operators)."""
    bases = {element[0] for element in limits}
    names = set(limits)
    for element in math.iter():
        text = element.text or ""
        if element.tag == "mo" and element not in bases and _NAME.fullmatch(text):
            element.tag = "mi"  # latex2mathml's <mo> would take an operator's spacing
            element.attrib.pop("movablelimits", None)
            names.add(element)
        elif element.tag == "mi" and "mathvariant" not in element.attrib and _NAME.fullmatch(text):
            names.add(element)  # \log, \sin, \tanh ...
    return names


def _join_runs(math: Element) -> None:
    """A run of one-letter identifiers of one style (``\\mathrm{FF}``) as one identifier."""
    for parent in math.iter():
        children = list(parent)
        kept: list[Element] = []
        for child in children:
            previous = kept[-1] if kept else None
            if (
                previous is not None
                and child.tag == previous.tag == "mi"
                and child.get("mathvariant") is not None
                and child.get("mathvariant") == previous.get("mathvariant")
                and len(child) == len(previous) == 0
                and len(child.text or "") == 1
            ):
                previous.text = (previous.text or "") + (child.text or "")
                parent.remove(child)
                continue
            kept.append(child)
        for child in kept:
            if (
                child.tag == "mi"
                and len(child.text or "") > 1
                and child.get("mathvariant") == "normal"
            ):
                del child.attrib["mathvariant"]  # several letters are upright anyway


def _restyle(math: Element) -> None:
    """Styled letters as Unicode characters; ``mathvariant`` only where Unicode has none."""
    for element in math.iter():
        variant = element.get("mathvariant")
        if element.tag in _TOKENS and variant and variant != "normal":
            letters = styled(element.text or "", variant)
            if letters is not None:
                element.text = letters
                del element.attrib["mathvariant"]


def _symbols(math: Element) -> None:
    """TeX's ordinary symbols as upright identifiers; ``\\cdot`` as the dot operator.

    latex2mathml writes ``\\cdot`` as the middle dot of text (U+00B7); TeX's
    is the math font's dot operator (U+22C5).
    """
    for element in math.iter("mo"):
        if element.text in ORDINARY and not element.attrib:
            element.tag = "mi"
            element.set("mathvariant", "normal")
        elif element.text == "\N{MIDDLE DOT}":
            element.text = "\N{DOT OPERATOR}"


#: Primes, which TeX writes as superscripts of its large prime glyph; a math
#: font's U+2032 is already drawn small and raised, and as a script it shrank
#: to a speck (``\delta_{jj'}`` read as ``\delta_{jj}``).
_PRIMES = frozenset("\N{PRIME}\N{DOUBLE PRIME}\N{TRIPLE PRIME}")
#: Signs that TeX sets as unary, without space, after an operator, a relation,
#: an opening bracket or punctuation, or first in a group: ``[-1, 1]``, ``= -x``.
_SIGNS = frozenset("\N{MINUS SIGN}+-\N{PLUS-MINUS SIGN}")
#: Ellipses, which TeX sets as ordinary symbols (``1, \dots, U``); as operators
#: they were spaced from their commas.
_ELLIPSES = frozenset("\N{HORIZONTAL ELLIPSIS}\N{MIDLINE HORIZONTAL ELLIPSIS}")


def _primes(math: Element) -> None:
    """``j'`` as ``j`` followed by the prime, not as ``j`` with the prime as its script."""
    for parent in list(math.iter()):
        for index, child in enumerate(list(parent)):
            if (
                child.tag == "msup"
                and len(child) == 2
                and child[1].tag in _TOKENS
                and child[1].text
                and set(child[1].text) <= _PRIMES
            ):
                base, prime = child[0], child[1]
                prime.tag = "mo"
                prime.attrib.clear()
                prime.set("lspace", "0em")
                prime.set("rspace", "0em")
                row = Element("mrow")
                row.extend([base, prime])
                parent.remove(child)
                parent.insert(index, row)


def _unary_signs(math: Element) -> None:
    """A sign with nothing to its left to add to or subtract from gets no space."""
    for parent in list(math.iter()):
        if parent.tag not in _ROWS:
            continue
        previous: Element | None = None
        for child in parent:
            if (
                child.tag == "mo"
                and child.text in _SIGNS
                and not child.attrib
                and (
                    previous is None
                    or (previous.tag == "mo" and (previous.text or "") not in _CLOSING)
                )
            ):
                child.set("form", "prefix")
                child.set("lspace", "0em")
                child.set("rspace", "0em")
            if child.tag != "mspace":
                previous = child


def _ellipses(math: Element) -> None:
    for element in math.iter("mo"):
        if element.text in _ELLIPSES and not element.attrib:
            element.tag = "mi"


def _lengths(math: Element) -> None:
    for element in math.iter("mspace"):
        width = element.get("width")
        if width in _NAMED_SPACES:
            element.set("width", _NAMED_SPACES[width])


def _em(element: Element) -> float | None:
    """The width of an ``mspace`` in em, or None if it is not one given in em."""
    width = element.get("width", "") if element.tag == "mspace" else ""
    match = re.fullmatch(r"(-?\d*\.?\d+)em", width)
    return float(match.group(1)) if match else None


def _spaced_from_name(element: Element) -> bool:
    """Whether TeX puts a thin space between an operator name and ``element``.

    It does before an atom (a letter, a number, a fraction, a ``\\left...\\right``
    group); it does not before an operator or a bracket, which bring their own.
    """
    if element.tag == "mo":
        return False
    if element.tag == "mrow" and len(element):
        first = element[0]
        if first.tag == "mo" and first.get("fence") == "true" and first.get("form") == "prefix":
            return True  # \left( ... \right): TeX's inner atom
        return _spaced_from_name(first)
    if element.tag in _SCRIPTED and len(element):
        return _spaced_from_name(element[0])
    return True


def _spaced_before_name(element: Element) -> bool:
    """Whether TeX puts a thin space between ``element`` and an operator name after it.

    It does after an atom (``D^{-1/2} \\min``) or a closing bracket; not after
    an operator, a relation or an opening bracket, which bring their own.
    """
    if element.tag == "mo":
        closing = element.get("form") == "postfix" or element.get("stretchy") == "false"
        return closing and (element.text or "") in _CLOSING
    if element.tag == "mi":
        return bool(element.text)  # not the empty one latex2mathml opens a column with
    if element.tag == "mrow" and len(element):
        return _spaced_before_name(element[-1])
    if element.tag in _SCRIPTED and len(element):
        return _spaced_before_name(element[0])
    return True


def _apply_functions(math: Element, names: set[Element]) -> None:
    """An invisible function application after every operator name that has an argument.

    It carries TeX's thin space before an atom; spaces written right after the
    name (``\\max\\!\\left(``) are added to it, as TeX adds a kern to its glue.
    A name after an atom gets TeX's thin space before it too.
    """
    for parent in list(math.iter()):
        if parent.tag not in _ROWS:
            continue
        children = list(parent)
        for index, child in enumerate(children):
            is_name = child in names or (
                child.tag in _SCRIPTED and len(child) and child[0] in names
            )
            if not is_name or index + 1 == len(children):
                continue
            following = children[index + 1 :]
            spaces = []
            for element in following:
                if _em(element) is None:
                    break
                spaces.append(element)
            after = following[len(spaces)] if len(spaces) < len(following) else None
            if after is None:
                continue  # only spaces follow: nothing to apply the name to
            if after.tag == "mo" and (after.text or "") not in _OPENING:
                continue  # an operator follows (``\sin^2 + \cos^2``): no argument
            width = (_THIN if _spaced_from_name(after) else 0.0) + sum(
                _em(s) or 0.0 for s in spaces
            )
            apply = Element("mo")
            apply.text = _FUNCTION_APPLICATION
            if width > 0.001:
                apply.set("rspace", f"{width:.4f}".rstrip("0").rstrip(".") + "em")
            if width >= -0.001:
                for space in spaces:
                    parent.remove(space)
            parent.insert(list(parent).index(child) + 1, apply)
            before = [e for e in children[:index] if _em(e) is None]
            if before and _spaced_before_name(before[-1]):
                parent.insert(list(parent).index(child), Element("mspace", width=f"{_THIN}em"))


def _matrix_fences(math: Element) -> None:
    """A matrix between brackets (``pmatrix``) in a row of its own, so that they match it."""
    for parent in list(math.iter()):
        children = list(parent)
        for index, child in enumerate(children):
            if child.tag != "mtable" or index == 0 or index + 1 == len(children):
                continue
            opening, closing = children[index - 1], children[index + 1]
            if (
                opening.tag == closing.tag == "mo"
                and opening.text in _OPENING
                and closing.text in _CLOSING
                and len(children) > 3
            ):
                row = Element("mrow")
                position = list(parent).index(opening)
                for element in (opening, child, closing):
                    parent.remove(element)
                    row.append(element)
                parent.insert(position, row)


def core(math: Element) -> None:
    """latex2mathml's MathML made MathML Core and set as TeX sets it (module docstring)."""
    _decode(math)
    check(math)
    names = _operator_names(math, _limits(math))
    _join_runs(math)
    _restyle(math)
    _symbols(math)
    _primes(math)
    _ellipses(math)
    _unary_signs(math)
    _lengths(math)
    _apply_functions(math, names)
    _matrix_fences(math)


def _words(exception: Exception) -> str:
    """latex2mathml's exception, which has no message, in words: "missing end"."""
    message = str(exception)
    if message:
        return message
    name = type(exception).__name__.removesuffix("Error")
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def element(latex: str, *, display: bool = False) -> Element:
    """``latex`` read into MathML Core (see the module's docstring); raises Unreadable.

    The book's one reader of LaTeX: the HTML's formulas, the search summary's
    text of a formula (:func:`text`) and the notation check's symbols
    (:func:`symbols`) all come from this tree.
    """
    try:
        math = convert_to_element(for_converter(latex), display="block" if display else "inline")
    except Unreadable:
        raise
    except Exception as exc:  # latex2mathml's own errors, and what its parser trips on
        raise Unreadable(_words(exc)) from exc
    core(math)
    return math


def mathml(latex: str, *, display: bool) -> str:
    """The ``<math>`` element for ``latex``, with its TeX as annotation; raises Unreadable."""
    math = element(latex, display=display)
    semantics = Element("semantics")
    for child in list(math):
        math.remove(child)
        semantics.append(child)
    SubElement(semantics, "annotation", encoding="application/x-tex").text = latex
    math.append(semantics)
    return tostring(math, encoding="unicode", short_empty_elements=False)


#: Characters MathML writes that a reader does not see: function application,
#: invisible times, separator and plus.
_INVISIBLE = dict.fromkeys(map(ord, "\u2061\u2062\u2063\u2064"))


#: Relations and binary operators, which read as words of their own (``n \\times d``
#: reads n, times sign, d with spaces between).
_SPACED = frozenset(
    "=+\N{MINUS SIGN}\N{MULTIPLICATION SIGN}\N{ELEMENT OF}\N{LESS-THAN OR EQUAL TO}"
    "\N{GREATER-THAN OR EQUAL TO}\N{ALMOST EQUAL TO}\N{RIGHTWARDS ARROW}\N{LEFTWARDS ARROW}"
)


def text(latex: str) -> str:
    """The characters a browser shows of ``latex``, relations spaced; raises Unreadable.

    ``n \\times d`` is n, a space, the times sign, a space, d; ``QK^\\top`` is
    QK and the down tack; ``\\sqrt{d_k}`` is dk (a root sign is drawn, not
    written); ``[-1, 1]`` has the minus sign and a space after the comma.
    """
    parts = []
    for token in element(latex).iter():
        if token.tag in _TOKENS and token.text:
            spaced = token.tag == "mo" and token.text in _SPACED and token.get("form") != "prefix"
            parts.append(f" {token.text} " if spaced else token.text)
            if token.tag == "mo" and token.text in ",;":
                parts.append(" ")
    return " ".join("".join(parts).translate(_INVISIBLE).split())


#: TeX's own operator names (``\log``, ``\max`` ...): functions every reader
#: knows, which a book's notation does not define.
TEX_OPERATORS = frozenset(
    {
        *("arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg"),
        *("det", "dim", "exp", "gcd", "hom", "inf", "ker", "lg", "lim", "liminf", "limsup"),
        *("ln", "log", "max", "min", "Pr", "sec", "sin", "sinh", "sup", "tan", "tanh"),
    }
)
#: Words that ``\text`` puts between formulas rather than naming anything.
TEXT_WORDS = frozenset({"for", "if", "and", "or", "where", "otherwise", "with", "of", "is", "else"})


def _name(token: Element) -> str | None:
    """The symbol a token names: a letter (Latin, Greek, double-struck ...) or a word."""
    if token.tag not in ("mi", "mtext") or len(token):
        return None
    written = (token.text or "").replace("\N{THIN SPACE}", "").strip()
    if not written or not all(char.isalpha() for char in written):
        return None  # a symbol (∞, ∂), a number, or several words
    if len(written) > 1:  # a name: pos, softmax, FF (its style is its font, not its name)
        written = unicodedata.normalize("NFKC", written)
        if written in TEX_OPERATORS or written in TEXT_WORDS:
            return None
    elif token.tag == "mtext":
        return None if written in TEXT_WORDS else written
    return written


def _label(script: Element) -> str | None:
    """A subscript that is part of its symbol's name (the ``head`` of ``d_\\text{head}``).

    Such a label is upright: text, or upright letters. An italic name is a
    variable of its own (the ``pos`` of ``x_{\\mathit{pos}}``).
    """
    while script.tag == "mrow" and len(script) == 1:
        script = script[0]
    written = script.text or ""
    upright = script.get("mathvariant") == "normal" or (
        len(written) > 1 and unicodedata.normalize("NFKC", written) == written
    )
    if script.tag == "mtext" or (script.tag == "mi" and upright):
        return _name(script)
    return None


def symbols(latex: str) -> set[str]:
    """The symbols a formula uses: letters, Greek letters and names, as the page shows them.

    A letter counts as the character the page shows (``\\mathbb{R}`` is the
    double-struck R, ``\\ell`` the script l), a name
    (``\\operatorname{softmax}``, ``\\mathit{pos}``) as its letters. The
    letters of subscripts and superscripts count as symbols of their own (the
    ``i`` of ``x_i``), except a named subscript, which is part of its symbol:
    ``d_\\text{head}`` is ``d_head``. TeX's operators
    (``\\log``) and ``\\text``'s joining words are no symbols. Raises Unreadable.
    """
    found: set[str] = set()

    def visit(node: Element) -> None:
        if node.tag in ("msub", "msubsup") and len(node) >= 2:
            base, label = _name(node[0]), _label(node[1])
            if base is not None and label is not None:
                found.add(f"{base}_{label}")
                for rest in node[2:]:
                    visit(rest)
                return
        name = _name(node)
        if name is not None:
            found.add(name)
        for child in node:
            visit(child)

    visit(element(latex, display=True))
    return found


def render(latex: str, *, display: bool, node: nodes.Node | None = None) -> str:
    """Return the MathML for ``latex``, in a ``span.formula``; MathError if unreadable."""
    try:
        markup = mathml(latex, display=display)
    except Unreadable as exc:
        where = _where(node) if node is not None else "<unknown location>"
        raise MathError(f"{where}: cannot typeset {latex!r}: {exc}") from exc
    return f'<span class="formula">{markup}</span>'


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
