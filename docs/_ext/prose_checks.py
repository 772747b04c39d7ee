"""Fail the build on the kinds of text defect a reader has met in the book.

Each check below guards one kind of defect, everywhere, rather than one
sentence that once had it. A finding is a warning naming the page and line,
and the build turns warnings into errors.

* **Text lost to the markup.** MyST reads a line that starts with ``%`` as a
  comment, even in the middle of a paragraph, and drops it: a sentence wrapped
  so that a line begins with "% of ..." loses its clause without a trace. The
  sources are parsed with MyST's own Markdown parser and a comment that
  continues a paragraph is reported.
* **Math in headings.** A heading's text becomes a PDF bookmark, a search
  result and a browser tab title, where a formula turns into spaced letters.
  Headings are plain words (Unicode such as T² is fine).
* **Template sentences that read wrong for their value.** A zero written as
  ``0.00e+00`` or pasted after "at most", a count of one followed by a plural
  ("1 threads") come from a sentence written for other values. The page says
  what the value means instead ("exactly equal", "one"), and the value stays
  glued and claimed.
* **One way to write a percentage.** A page writes "50%" or "50 %"
  throughout, not both.

Bounds, round figures that read as exact, a value pasted twice in one clause
and the format of each glued value are checked by :mod:`claims`, which knows
the glued values and their expectations.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from myst_parser.config.main import MdParserConfig
from myst_parser.mdit_to_docutils.base import DocutilsRenderer
from myst_parser.parsers.mdit import create_md_parser
from sphinx.util import logging

if TYPE_CHECKING:
    from collections.abc import Iterator

    from markdown_it import MarkdownIt
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

# -- text lost to the markup ----------------------------------------------------


@functools.cache
def _markdown_parser() -> MarkdownIt:
    """MyST's own Markdown parser, built once."""
    return create_md_parser(MdParserConfig(), DocutilsRenderer)


def comments_inside_paragraphs(text: str) -> list[int]:
    """1-based lines of ``%`` comments that continue a paragraph of ``text``.

    The text is tokenised by MyST's own parser, so code blocks, directives and
    comments that stand on their own (after a blank line) are left alone.
    """
    lines = []
    paragraph_end = -1
    for token in _markdown_parser().parse(text):
        if token.type == "paragraph_open" and token.map:
            paragraph_end = token.map[1]
        elif token.type == "myst_line_comment" and token.map and token.map[0] == paragraph_end:
            lines.append(token.map[0] + 1)
    return lines


def check_comments(app: Sphinx, docname: str) -> None:
    """Report a comment line that would cut a paragraph of a Markdown page."""
    page = Path(app.env.doc2path(docname))
    if page.suffix != ".md":
        return
    for line in comments_inside_paragraphs(page.read_text(encoding="utf-8")):
        logger.warning(
            "a line of this paragraph starts with '%', which MyST reads as a comment "
            "and drops from the page; rewrap the paragraph",
            location=(docname, line),
            type="prose",
        )


# -- what the reader reads ------------------------------------------------------

# A zero in scientific notation ("0.00e+00") is always a template's output: an
# exact zero is written in words, or as 0.
ZERO_IN_E_NOTATION = re.compile(r"(?<![\d.])0\.0*e[+-]?0+\b")
# The count nouns of the book after the number one: "1 threads", "1 distinct total".
COUNT_NOUNS = (
    "blocks|characters|columns|configurations|cores|dates|epochs|errors|examples|formats|"
    "heads|layers|models|pairs|parameters|positions|rows|runs|seeds|sequences|steps|threads|"
    "times|tokens|totals|updates|values|words"
)
ONE_WITH_PLURAL = re.compile(
    rf"(?<![\d.,\-])\b1 (?:(?:distinct|other|more) \w+|(?:{COUNT_NOUNS}))\b"
)

_CODE = (nodes.literal_block, nodes.literal, nodes.math, nodes.math_block)


def _is_output(node: nodes.Node | None) -> bool:
    """Whether ``node`` lies in what a code cell or an example printed."""
    while node is not None:
        classes: list[str] = node.get("classes", []) if isinstance(node, nodes.Element) else []
        if "cell_output" in classes or any(c.startswith("sphx-glr-script-out") for c in classes):
            return True
        node = node.parent
    return False


def _in_code(node: nodes.Node) -> bool:
    """Whether ``node`` lies in code or math (its own node included)."""
    while node is not None:
        if isinstance(node, _CODE):
            return True
        node = node.parent
    return False


def rendered_text(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str, bool]]:
    """(block, its text, whether it is printed output) for every block of text.

    Prose, captions and table cells give their words without inline code and
    math; what a cell or an example printed gives all its text, a table it
    displayed (raw HTML) without the tags. Code a reader types is left out.
    """
    for block in doctree.findall(nodes.Element):
        output = _is_output(block)
        if isinstance(block, nodes.raw):  # a table a cell or an example displayed
            if "html" in block.get("format", ""):
                yield block, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block.astext())), True
            continue
        if isinstance(block, nodes.literal_block):
            if output:
                yield block, re.sub(r"\s+", " ", block.astext()), True
            continue
        if not isinstance(block, nodes.TextElement) or isinstance(block, nodes.Inline):
            continue
        if _in_code(block):
            continue
        words = [t.astext() for t in block.findall(nodes.Text) if not _in_code(t)]
        yield block, re.sub(r"\s+", " ", "".join(words)), output


# A pasted whole number of five digits or more, written without separators
# (a year has four digits and is written bare).
LONG_BARE_NUMBER = re.compile(r"\d{5,}")


def template_sentences(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str]]:
    """(block, why) for every sentence that reads wrong for the value it got."""
    for block, text, output in rendered_text(doctree):
        for match in ONE_WITH_PLURAL.finditer(text):
            yield block, f"{match.group(0)!r}: write 'one' and the singular"
        if not output:
            for match in ZERO_IN_E_NOTATION.finditer(text):
                start = max(match.start() - 40, 0)
                yield (
                    block,
                    (
                        f"{text[start : match.end()]!r}: an exact zero is written in words "
                        "('exactly equal', 'no change')"
                    ),
                )
    for block in doctree.findall(nodes.paragraph):
        pasted = [n for n in block.findall(nodes.inline) if "pasted-text" in n["classes"]]
        for node in pasted:
            value = node.astext().strip()
            try:
                zero = float(value.rstrip("%").strip()) == 0
            except ValueError:
                zero = False
            if zero:
                yield block, f"pasted value {value!r} is zero: say what a zero means in words"
            if LONG_BARE_NUMBER.fullmatch(value):
                yield (
                    block,
                    f"pasted value {value!r} has no thousands separators: "
                    "glue it with a format such as `:,`",
                )


def math_in_titles(doctree: nodes.Node) -> Iterator[nodes.title]:
    """Headings that contain a formula."""
    for title in doctree.findall(nodes.title):
        if any(True for _ in title.findall(nodes.math)):
            yield title


# A percentage written "46.3 %" on one line of a page and "100.0%" on another.
PERCENT_SPACED = re.compile(r"\d(?:\u00a0| )%")
PERCENT_ATTACHED = re.compile(r"\d%")


def mixed_percent_styles(doctree: nodes.Node) -> Iterator[tuple[nodes.Element, str]]:
    """(block, why) where a page's prose writes percentages two ways.

    The style the page uses more often wins; each block written the other way
    is reported. Printed output is left alone: it is the code's, not the prose's.
    """
    spaced: list[nodes.Element] = []
    attached: list[nodes.Element] = []
    count = {"spaced": 0, "attached": 0}
    for block, text, output in rendered_text(doctree):
        if output:
            continue
        for name, pattern, found in (
            ("spaced", PERCENT_SPACED, spaced),
            ("attached", PERCENT_ATTACHED, attached),
        ):
            hits = len(pattern.findall(text))
            count[name] += hits
            if hits:
                found.append(block)
    if spaced and attached:
        fewer = count["spaced"] < count["attached"]
        odd, style = (spaced, "'50 %'") if fewer else (attached, "'50%'")
        usual = "'50%'" if style == "'50 %'" else "'50 %'"
        for block in odd:
            yield block, f"a percentage is written {style} here and {usual} elsewhere on the page"


def check_doctree(doctree: nodes.document, docname: str) -> None:
    """Report template sentences and math in headings on a page."""

    def where(node: nodes.Node) -> tuple[str, int | None]:
        return docname, node.line or None

    for block, why in [*template_sentences(doctree), *mixed_percent_styles(doctree)]:
        logger.warning(f"prose: {why}", location=where(block), type="prose")
    for title in math_in_titles(doctree):
        logger.warning(
            f"prose: the heading {title.astext()!r} contains math, which bookmarks, "
            "search results and tab titles show as loose letters; write it in words "
            "or Unicode",
            location=where(title),
            type="prose",
        )


# -- notation -------------------------------------------------------------------

GREEK = (
    "alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|iota|kappa|lambda|mu|nu|xi|pi|"
    "rho|sigma|tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Pi|Sigma|Phi|"
    "Psi|Omega"
)
_NAMED = re.compile(r"\\(?:text|mathrm|operatorname\*?|textrm|mathit)\s*\{([^{}]*)\}")
_WORDS_IN_TEXT = {"for", "if", "and", "or", "where", "otherwise", "with", "of", "is", "else"}


def _skip_group(tex: str, start: int) -> int:
    """The index after the script (``x``, ``\\cmd`` or ``{...}``) starting at ``start``."""
    while start < len(tex) and tex[start] == " ":
        start += 1
    if start >= len(tex):
        return start
    if tex[start] == "{":
        depth = 0
        for index in range(start, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[index], 0)
            if depth == 0:
                return index + 1
        return len(tex)
    if tex[start] == "\\":
        match = re.match(r"\\[A-Za-z]+|\\.", tex[start:])
        end = start + (match.end() if match else 1)
        if tex[start:end] in {"\\text", "\\mathrm", "\\operatorname"}:
            return _skip_group(tex, end)
        return end
    return start + 1


def symbols_in(tex: str) -> set[str]:
    """The symbols a formula uses: letters (``\\ell`` too), Greek letters and upright names.

    The letters of subscripts and superscripts count as symbols of their own
    (the ``i`` of ``x_i``, the ``q`` of ``W_q``), except a named subscript,
    which is part of its symbol: ``d_\\text{head}`` is ``d_head``.
    """
    tex = re.sub(r"\\(?:begin|end|label|tag)\{[^}]*\}", " ", tex)
    tex = re.sub(r"\\mathbb\{(\w)\}", r"\\mathbb\1", tex)
    # A calligraphic letter is a symbol of its own: \mathcal{L} is not L.
    tex = re.sub(r"\\mathcal\{(\w)\}", r"\\mathcal\1", tex)
    found: set[str] = set()
    found_last: str | None = None
    index = 0
    while index < len(tex):
        char = tex[index]
        if char in "_^":
            end = _skip_group(tex, index + 1)
            script = tex[index + 1 : end].strip()
            if script.startswith("{") and script.endswith("}"):
                script = script[1:-1].strip()
            named = None if script.startswith("\\mathit") else _NAMED.fullmatch(script)
            label = named and re.sub(r"\\[,;:! ]|\\[A-Za-z]+", "", named.group(1)).strip()
            if char == "_" and label and found_last is not None:
                found.add(f"{found_last}_{label}")
                if not re.search(rf"(?<![\\A-Za-z]){re.escape(found_last)}(?![_A-Za-z])", tex):
                    found.discard(found_last)  # only ever seen with this subscript
                index = end
                continue
            index += 1  # an index or a label: its letters are symbols too
            continue
        found_last = None
        named = _NAMED.match(tex, index)
        if named:
            words = re.sub(r"\\[,;:! ]|\\[A-Za-z]+", "", named.group(1)).strip()
            if words and " " not in words and words not in _WORDS_IN_TEXT:
                found.add(words)
                found_last = words
            index = named.end()
            continue
        command = re.match(r"\\([A-Za-z]+)", tex[index:])
        if command:
            name = command.group(1)
            if re.fullmatch(GREEK, name) or name == "ell" or name.startswith(("mathbb", "mathcal")):
                found.add(f"\\{name}")
                found_last = f"\\{name}"
            index += command.end()
            continue
        if char.isalpha():
            found.add(char)
            found_last = char
        index += 1
    return found


_ROW = re.compile(r"^\|\s*\$(.+?)\$\s*\|", re.MULTILINE)


def notation_table(text: str) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """(symbol -> line, problems) of the notation page's tables.

    Each row's first cell is one formula naming one symbol; a row that names
    none or several, and a symbol named by two rows, are problems.
    """
    table: dict[str, int] = {}
    found = []
    for row in _ROW.finditer(text):
        line = text.count("\n", 0, row.start()) + 1
        named = symbols_in(row.group(1))
        if len(named) != 1:
            found.append(
                (line, f"a row must name one symbol; ${row.group(1)}$ names {sorted(named)}")
            )
            continue
        (symbol,) = named
        if symbol in table:
            found.append((line, f"{symbol!r} is defined twice (first on line {table[symbol]})"))
        table.setdefault(symbol, line)
    return table, found


def check_notation(doctree: nodes.document, docname: str, table: set[str], page: str) -> None:
    """Every symbol of every formula on a page is in the notation ``table``."""
    if docname.startswith(("api", "gen_modules")):
        return
    for formula in doctree.findall(lambda node: isinstance(node, (nodes.math, nodes.math_block))):
        missing = sorted(symbols_in(formula.astext()) - table)
        if missing:
            where = formula.line or None
            logger.warning(
                f"notation: {', '.join(missing)} in ${formula.astext()}$ "
                f"is not in the notation table ({page}.md)",
                location=(docname, where),
                type="prose",
            )


def check_every_page(app: Sphinx, exception: BaseException | None) -> None:
    """Run every check on every page, after every build (incremental ones too).

    A page that did not change is checked again, so a defect is reported on
    every build until it is fixed, not only on the build that wrote the page.
    """
    if exception is not None:
        return
    page = app.config.book_notation_page
    notation = Path(app.srcdir) / f"{page}.md"
    table: set[str] | None = None
    if notation.is_file():
        symbols, problems = notation_table(notation.read_text(encoding="utf-8"))
        table = set(symbols)
        for line, why in problems:
            logger.warning(f"notation: {why}", location=(page, line), type="prose")
    for docname in sorted(app.env.found_docs):
        check_comments(app, docname)
        doctree = app.env.get_doctree(docname)
        check_doctree(doctree, docname)
        if table is not None:
            check_notation(doctree, docname, table, page)


def setup(app: Sphinx) -> dict[str, Any]:
    """Check every page at the end of every build."""
    # The page whose table lists every symbol the formulas may use.
    app.add_config_value("book_notation_page", "notation", "env", types=[str])
    app.connect("build-finished", check_every_page)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
