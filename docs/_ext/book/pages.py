"""The book's pages as the build reads them: a lesson's cells, its headings and their ids.

**Book pages.** The book's pages as the build executes them: which pages are lessons,
and their cells.

A *lesson page* is a page MyST-NB executes: a MyST Markdown notebook, which
MyST-NB recognises by its front matter (``jupytext`` with ``format_name:
myst``, or ``file_format: mystnb``). Its cells are read by MyST-NB's own
reader, so they are split, and their options and tags parsed, exactly as
the build executes them; each cell also knows the line of the page it
starts on.

Every part of the build that needs a lesson's cells reads them here: the
dependency tracking (``code_deps``), the reader's notebooks
(``lesson_notebooks``), the location of a failing cell (``cell_errors``),
the site tests and the bench. Nothing else parses a page's cells.

**Heading ids.** The id Jupyter gives a Markdown heading, and links to it.

JupyterLab and nbconvert give every heading of a Markdown cell an id by one
rule: the heading's text as the browser reads it from the rendered HTML (its
``textContent``) with every space, U+0020, replaced by ``-``. Nothing else
changes: apostrophes straight (') and curly (U+2019), quotes, colons, dashes,
non-ASCII letters and case all stay as they are, and two spaces make two
dashes. The text is the rendered one: a code span shows its code without the
backticks, a link its text, an emphasis its words, an entity its character
(``&amp;`` is ``&``), a backslash escape the character it escapes, an image
and a tag nothing. Math is the exception: both renderers hide it from the
Markdown parser first and put it back as written, delimiters included, so
``$x_1$`` stays ``$x_1$``. nbconvert writes the id into its HTML
percent-encoded (``today%E2%80%99s-models``) and a browser decodes a link's
fragment before it looks for the id; the id here is the decoded one, the one
JupyterLab writes.

Math is found as JupyterLab finds it: from ``$``, ``$$``, ``\\(``,
``\\[`` or ``\begin{env}`` to the matching delimiter once the braces
between balance, never across a blank line, never in code, and never at an
escaped ``\\$``. ``\\(x\\)`` shows as ``\\(x\\)`` (nbconvert shows it as
``$x$``, the one case where the two differ).

The book's reader notebooks (:mod:`lesson_notebooks`) link headings with
these ids, and the site's tests check every such link with the same functions
(tests/site/test_downloads.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .mystnb import is_notebook_text, read_notebook

# -- book_pages ------------------------------------------------------------

#: Tags that keep a code cell's code off the page (``remove-cell`` also its
#: output): glue, checks, and data for the explorers.
HIDDEN_TAGS = frozenset({"remove-cell", "remove-input"})


@dataclass(frozen=True)
class Cell:
    """One cell of a lesson page."""

    kind: Literal["code", "markdown", "raw"]
    #: The cell's text, without its fence and options.
    source: str
    #: Its ``:tags:``.
    tags: frozenset[str]
    #: The page line (1-based) the cell starts on: a code cell's fence, a
    #: Markdown cell's first line.
    line: int
    #: Its options (``mystnb`` figure settings, ...), tags included.
    options: Mapping[str, Any]
    #: The page line (1-based) of the first line of :attr:`source`: after a
    #: code cell's fence and options (Python's line ``n`` of the cell is the
    #: page's ``body_line + n - 1``), a Markdown cell's :attr:`line`.
    body_line: int

    @property
    def shown(self) -> bool:
        """Whether a reader sees the cell's code on the page."""
        return not self.tags & HIDDEN_TAGS


@dataclass(frozen=True)
class Page:
    """A lesson page's cells, in order."""

    cells: tuple[Cell, ...]

    @property
    def code_cells(self) -> tuple[Cell, ...]:
        """The code cells, shown or hidden."""
        return tuple(cell for cell in self.cells if cell.kind == "code")


def is_lesson(path: Path) -> bool:
    """Whether the page at ``path`` is a lesson: a MyST notebook that the build executes."""
    if path.suffix != ".md" or not path.is_file():
        return False
    return is_lesson_text(path.read_text(encoding="utf-8"))


def is_lesson_text(text: str) -> bool:
    """Whether a Markdown page whose text is ``text`` is a lesson (see :func:`is_lesson`)."""
    return bool(is_notebook_text(text))


def lesson_pages(docs: Path) -> list[Path]:
    """The lesson pages of the book whose sources are in ``docs``, by file name.

    Every lesson is a top-level page of ``docs``; the extensions ask
    :func:`is_lesson` of every page Sphinx finds.
    """
    return sorted(path for path in docs.glob("*.md") if is_lesson(path))


@functools.lru_cache(maxsize=64)
def read_page(text: str) -> Page:
    """The cells of the MyST notebook whose text is ``text``."""
    notebook = read_notebook(text)
    lines = text.split("\n")  # as markdown-it counts them
    cells = []
    for cell, start in zip(notebook.cells, notebook.metadata["source_map"], strict=True):
        # A code cell's start is its fence's line (1-based); a Markdown cell's
        # is the index of the line after what precedes it, blank lines first.
        line = start
        if cell.cell_type == "markdown":
            while line < len(lines) and not lines[line].strip():
                line += 1
            line += 1
        body = line
        code = cell.source.lstrip("\n")
        if cell.cell_type == "code" and code:
            first = code.split("\n", 1)[0]  # found on the page, then back over blank lines
            while body < len(lines) and lines[body] != first:
                body += 1
            body += 1 - (len(cell.source) - len(code))
        tags = frozenset(cell.metadata.get("tags", ()))
        options = MappingProxyType(dict(cell.metadata))  # the cached page is shared
        cells.append(Cell(cell.cell_type, cell.source, tags, line, options, body))
    return Page(tuple(cells))


# -- heading_ids -----------------------------------------------------------

#: CommonMark with GitHub's strikethrough, as Jupyter's renderers read Markdown;
#: a link's destination stays as written (after Markdown's escapes), not
#: percent-encoded, and every scheme makes a link (a checker must see them all).
# -- MyST source: directives and roles, as MyST's own parser finds them ---------

#: The MyST syntax the book's pages use (conf.py's ``myst_enable_extensions``).
MYST_EXTENSIONS = frozenset({"amsmath", "colon_fence", "deflist", "dollarmath", "substitution"})


@functools.cache
def _myst() -> MarkdownIt:
    """MyST's own Markdown parser (myst-parser's markdown-it with the book's extensions)."""
    from myst_parser.config.main import MdParserConfig
    from myst_parser.mdit_to_docutils.base import DocutilsRenderer
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(
        MdParserConfig(enable_extensions=set(MYST_EXTENSIONS)), DocutilsRenderer
    )


def myst_tokens(text: str) -> list[Token]:
    """The markdown-it tokens MyST reads from the page ``text`` (block level)."""
    return _myst().parse(text)


@dataclass(frozen=True)
class Directive:
    """One directive of a MyST page: ``{name} argument``, its body, the line of its fence."""

    name: str
    argument: str
    #: The directive's content without its options, as MyST hands it over.
    body: str
    #: The page line (1-based) of its opening fence.
    line: int
    #: Its options (``:name: value`` lines or a YAML block), as text.
    options: Mapping[str, str]
    #: The page line (1-based) of its closing fence (its last line if unclosed).
    end: int


@dataclass(frozen=True)
class Role:
    """One role of a MyST page: ``{name}`content```, where it stands and what precedes it."""

    name: str
    content: str
    #: The page line (1-based) the role is on.
    line: int
    #: The text of its paragraph (or caption) before it, each ``{glue:text}``
    #: role in it written `` N ``, other roles as their content.
    before: str
    #: The page line its paragraph (or caption) starts on: roles with the
    #: same one share a paragraph.
    paragraph: int


def _inline_roles(token: Token, line: int, paragraph: int) -> list[Role]:
    """The roles of one inline token (a paragraph, a list item's text, a table cell)."""
    found: list[Role] = []
    text: list[str] = []
    for child in token.children or []:
        if child.type == "myst_role":
            found.append(Role(child.meta["name"], child.content, line, "".join(text), paragraph))
            text.append(" N " if child.meta["name"] == "glue:text" else child.content)
        elif child.type in ("softbreak", "hardbreak"):
            text.append("\n")
            line += 1
        elif child.type == "math_inline":
            text.append(f"${child.content}$")
        elif child.type in ("text", "code_inline", "html_inline"):
            text.append(child.content)
    return found


def _options(content: str) -> tuple[dict[str, str], int]:
    """A directive's options (``:key: value`` lines or a YAML block), and their line count."""
    lines = content.split("\n")
    if lines and lines[0].strip() == "---":
        ends = [i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"]
        if not ends:
            return {}, 0
        import yaml  # type: ignore[import-untyped]

        loaded = yaml.safe_load("\n".join(lines[1 : ends[0]])) or {}
        return {str(k): str(v) for k, v in loaded.items()}, ends[0] + 1
    options: dict[str, str] = {}
    skip = 0
    while skip < len(lines) and lines[skip].startswith(":") and ":" in lines[skip][1:]:
        option, _, value = lines[skip][1:].partition(":")
        options[option] = value.strip()
        skip += 1
    return options, skip


def _directive(token: Token, offset: int) -> tuple[Directive, int]:
    """The directive of a fence token, and how many lines its options take."""
    assert token.map is not None
    line = offset + token.map[0] + 1
    name, _, argument = token.info[1:].partition("}")
    options, skipped = _options(token.content)
    body = "\n".join(token.content.split("\n")[skipped:])
    end = offset + token.map[1]
    return Directive(name, argument.strip(), body, line, MappingProxyType(options), end), skipped


def _is_directive(token: Token) -> bool:
    return token.type in ("fence", "colon_fence") and token.info.startswith("{") and bool(token.map)


def _walk(text: str, offset: int) -> tuple[list[Directive], list[Role]]:
    found: list[Directive] = []
    roles: list[Role] = []
    for token in _myst().parse(text):
        line = offset + (token.map[0] if token.map else 0) + 1
        if _is_directive(token):
            directive, skipped = _directive(token, offset)
            name, body = directive.name, directive.body
            found.append(directive)
            if name not in ("code-cell", "code-block", "code", "math", "glossary"):
                inner, inner_roles = _walk(body, line + skipped)
                found += inner
                roles += inner_roles
            if name == "code-cell" and skipped:
                # a figure's caption, in the cell's options, is MyST too
                options = "\n".join(token.content.split("\n")[:skipped])
                for option in _myst().parse(options):
                    if option.type == "inline" and option.map:
                        start = line + 1 + option.map[0]
                        roles += _inline_roles(option, start, start)
        elif token.type == "inline":
            roles += _inline_roles(token, line, line)
    return found, roles


@functools.lru_cache(maxsize=64)
def myst_markup(text: str) -> tuple[tuple[Directive, ...], tuple[Role, ...]]:
    """Every directive and role of a MyST page, nested ones included, in page order.

    Read by MyST's own parser, so that a fence in a code block or a role in
    inline code is no directive or role, exactly as the build sees it. The
    body of a directive that holds MyST (an exercise, a tab) is read in turn;
    code, math and the glossary's definitions are not.
    """
    found, roles = _walk(text, 0)
    return tuple(sorted(found, key=lambda d: d.line)), tuple(roles)


def myst_headings(text: str) -> list[tuple[int, int, str]]:
    """(level, line, title) of every heading of a MyST page (not those inside directives)."""
    tokens = _myst().parse(text)
    return [
        (int(token.tag[1:]), token.map[0] + 1, tokens[index + 1].content)
        for index, token in enumerate(tokens)
        if token.type == "heading_open" and token.map
    ]


def first_cell_formulas(text: str) -> list[tuple[int, str]]:
    """(line, TeX) of every table row of a MyST page whose first cell is one formula."""
    found = []
    tokens = _myst().parse(text)
    for index, token in enumerate(tokens):
        if token.type != "tr_open" or not token.map:
            continue
        cell = tokens[index + 2] if index + 2 < len(tokens) else None
        if cell is None or cell.type != "inline":
            continue
        parts = [child for child in cell.children or [] if child.content.strip()]
        if len(parts) == 1 and parts[0].type == "math_inline":
            found.append((token.map[0] + 1, parts[0].content))
    return found


def myst_blocks(text: str) -> tuple[list[Directive], set[int]]:
    """The directives of ``text`` that are not inside another block, and its target lines.

    A target line is a ``(label)=`` line (1-based). A directive inside a
    list item, a quote or another directive is part of that block.
    """
    directives, targets = [], set()
    for token in _myst().parse(text):
        if token.level != 0 or not token.map:
            continue
        if _is_directive(token):
            directives.append(_directive(token, 0)[0])
        elif token.type == "myst_target":
            targets.add(token.map[0] + 1)
    return directives, targets


def myst_inline_roles(text: str) -> list[tuple[str, str]]:
    """(name, content) of every role of a piece of MyST text, in order."""
    return [(role.name, role.content) for role in myst_markup(text)[1]]


def myst_directives(text: str, name: str) -> list[Directive]:
    """The ``{name}`` directives of the MyST page ``text``, in page order."""
    return [directive for directive in myst_markup(text)[0] if directive.name == name]


def myst_roles(text: str, name: str) -> list[Role]:
    """The ``{name}`` roles of the MyST page ``text``, in page order."""
    return [role for role in myst_markup(text)[1] if role.name == name]


_MARKDOWN = MarkdownIt("commonmark").enable("strikethrough")
_MARKDOWN.normalizeLink = lambda url: url  # type: ignore[method-assign]
_MARKDOWN.validateLink = lambda url: True  # type: ignore[method-assign]

#: Where the math scan stops: an escaped dollar or brace (never a delimiter),
#: ``$$``, ``$``, ``\\(``/``\\)``/``\\[``/``\\]`` (the Markdown escape of
#: ``\(``), ``\begin{env}``/``\end{env}``, a brace, a run of line breaks and
#: a stand-in for hidden math.
_MATH_TOKEN = re.compile(
    r"\\[${}]|\$\$?|\\\\[()\[\]]|\\(?:begin|end)\{[a-zA-Z]*\*?\}|[{}]|(?:\n[ \t]*)+|@@\d+@@"
)
#: Code, where a dollar is no math: a fenced block, or a code span.
_CODE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[^\n]*\n.*?^(?P=fence)[`~]*[ \t]*$"
    r"|(?<![\\`])(?P<ticks>`+)(?!`)[^\n]*?[^`\n](?P=ticks)(?!`)",
    re.M | re.S,
)
_STAND_IN = re.compile(r"@@(\d+)@@")
_OPENINGS = ("$", "$$", "\\\\(", "\\\\[")
#: The inline tokens whose content the rendered HTML shows as text.
_TEXT_TOKENS = {"text", "code_inline", "text_special"}
#: What a link's destination reads differently unless escaped with a backslash.
_DESTINATION_SPECIAL = re.compile(r"[\\()<>&]")


def _closing(opening: str) -> str:
    """The delimiter that ends math opened by ``opening``."""
    if opening in ("$", "$$"):
        return opening
    if opening.startswith("\\\\"):
        return "\\\\" + {"(": ")", "[": "]"}[opening[-1]]
    return "\\end" + opening[len("\\begin") :]


def _hide_math(text: str) -> tuple[str, list[str]]:
    """``text`` with each piece of math replaced by a stand-in ``@@n@@``, and the pieces.

    A stand-in that was in the text already is kept as a piece of its own, so
    that it comes back as it was (see the module's docstring for what math is).
    """
    code = [(m.start(), m.end()) for m in _CODE.finditer(text)]
    pieces: list[str] = []
    out: list[str] = []
    done = 0  # text[:done] is in out
    start: int | None = None  # where the open math begins
    end = ""  # the delimiter that closes it
    braces = 0
    last: int | None = None  # after the last closing delimiter seen while braces were open

    def hide(begin: int, stop: int) -> None:
        nonlocal done
        out.extend((text[done:begin], f"@@{len(pieces)}@@"))
        pieces.append(text[begin:stop])
        done = stop

    for match in _MATH_TOKEN.finditer(text):
        token = match.group()
        if any(a <= match.start() < b for a, b in code):
            continue
        if _STAND_IN.fullmatch(token):
            if start is None:
                hide(match.start(), match.end())
        elif start is None:
            if token in _OPENINGS or token.startswith("\\begin"):
                start, end, braces, last = match.start(), _closing(token), 0, None
        elif token == end:
            if braces:
                last = match.end()
            else:
                hide(start, match.end())
                start = None
        elif token.count("\n") > 1:  # a blank line: no math across paragraphs
            if last is not None:
                hide(start, last)
            start = None
        elif token == "{":
            braces += 1
        elif token == "}" and braces:
            braces -= 1
    if start is not None and last is not None:
        hide(start, last)
    out.append(text[done:])
    return "".join(out), pieces


def _shown(piece: str) -> str:
    """A piece of math as the renderer puts it back: ``\\\\(`` loses its escape."""
    if piece[:3] in ("\\\\(", "\\\\[") and piece[-3:] in ("\\\\)", "\\\\]"):
        return piece[1:3] + piece[3:-3] + piece[-2:]
    return piece


def _read(markdown: str) -> tuple[list[Token], Callable[[str], str]]:
    """The tokens of ``markdown`` read as Jupyter reads it, and what puts its math back."""
    hidden, pieces = _hide_math(markdown)

    def restore(text: str) -> str:
        return _STAND_IN.sub(lambda m: _shown(pieces[int(m.group(1))]), text)

    return _MARKDOWN.parse(hidden), restore


def _text_content(tokens: list[Token]) -> str:
    """The text the browser reads in the HTML of these inline tokens."""
    parts = []
    for token in tokens:
        if token.type in _TEXT_TOKENS:
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        # an image shows no text, and tags (emphasis, links, raw HTML) none of their own
    return "".join(parts)


def _inline_attributes(tokens: list[Token], kind: str, attribute: str) -> list[str]:
    """``attribute`` of every inline token of ``kind`` among these block tokens' children."""
    return [
        str(child.attrGet(attribute))
        for token in tokens
        for child in token.children or []
        if child.type == kind
    ]


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def heading_ids(markdown: str) -> list[str]:
    """The ids Jupyter gives the headings of a Markdown cell, in order.

    Headings in quotes and lists count too; HTML headings (``<h2>``) do not.

    Parameters
    ----------
    markdown : str
        The cell's source.

    Returns
    -------
    list of str
        One id per heading: its rendered text, each space replaced by ``-``
        (see the module's docstring).

    Raises
    ------
    TypeError
        If ``markdown`` is not a string.
    """
    tokens, restore = _read(_check_str("markdown", markdown))
    return [
        restore(_text_content(tokens[i + 1].children or [])).replace(" ", "-")
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    ]


def heading_id(text: str) -> str:
    """The id JupyterLab and nbconvert give a Markdown heading whose text is ``text``.

    Parameters
    ----------
    text : str
        What follows the ``#`` marks on the heading's line
        (``"Why `softmax`, today's models"``); a closing run of ``#`` marks
        is not part of the heading's text, as in Markdown.

    Returns
    -------
    str
        The rendered text with each space replaced by ``-``
        (``"Why-softmax,-today's-models"``).

    Raises
    ------
    TypeError
        If ``text`` is not a string.
    ValueError
        If ``text`` holds a line break (an ATX heading is one line).
    """
    if "\n" in _check_str("text", text) or "\r" in text:
        raise ValueError(f"text must be one line, not {text!r}")
    (found,) = heading_ids(f"# {text}")
    return found


def link_targets(markdown: str) -> list[str]:
    """The destination of every link of a Markdown cell, as Jupyter reads it.

    Images are not links. A destination is as written after Markdown's
    escapes and entities (``#today\\'s`` is ``#today's``), not percent-encoded,
    and math in it is as written, as JupyterLab reads it.

    Raises
    ------
    TypeError
        If ``markdown`` is not a string.
    """
    tokens, restore = _read(_check_str("markdown", markdown))
    return [restore(href) for href in _inline_attributes(tokens, "link_open", "href")]


def image_sources(markdown: str) -> list[str]:
    """The source of every image of a Markdown cell, as Jupyter reads it (``attachment:x.png``).

    Raises ``TypeError`` if ``markdown`` is not a string.
    """
    tokens, restore = _read(_check_str("markdown", markdown))
    return [restore(src) for src in _inline_attributes(tokens, "image", "src")]


def link_target(anchor: str) -> str:
    """The destination of a Markdown link to the heading whose id is ``anchor``.

    ``"#" + anchor``, with a backslash before the characters a destination
    would otherwise read differently (``\\``, ``(``, ``)``, ``<``, ``>``,
    ``&``) outside math; math stays as written, which JupyterLab reads as it
    is.

    Raises
    ------
    TypeError
        If ``anchor`` is not a string.
    ValueError
        If no destination reads as ``"#" + anchor`` both in JupyterLab (math
        as written) and in CommonMark (nbconvert: Markdown's escapes in the
        math too): an empty anchor, a control character (a tab, a line
        break), or math with an escape such as ``\\{`` in it.
    """
    if not _check_str("anchor", anchor) or any(ord(c) < 0x20 or ord(c) == 0x7F for c in anchor):
        raise ValueError(f"anchor {anchor!r}: no Markdown link can lead to it")
    hidden, pieces = _hide_math(anchor)
    written = _DESTINATION_SPECIAL.sub(lambda m: "\\" + m.group(), hidden)
    written = "#" + _STAND_IN.sub(lambda m: pieces[int(m.group(1))], written)
    link = f"[link]({written})"
    if link_targets(link) != ["#" + anchor] or _inline_attributes(
        _MARKDOWN.parse(link), "link_open", "href"
    ) != ["#" + anchor]:
        raise ValueError(
            f"anchor {anchor!r}: no Markdown link reads as it both in JupyterLab and in nbconvert"
        )
    return written
