"""What readers download: the lessons as notebooks, the wheel, pointers to the site, zips.

**Lesson notebooks.** Offer every lesson page as a plain Jupyter notebook, all of them
in one zip, and the PDF.

A lesson page is a MyST-NB notebook: its source has hidden cells, glue roles
and directives that a reader's Jupyter does not understand. When the HTML
build ends, each lesson's cells are read as the build executed them (the
book's page model, ``book_pages``, with MyST-NB's own reader), and this
extension rewrites what no library does:

* cells tagged ``remove-cell`` (glue, asserts) and ``remove-input`` (the
  explorers' build-only data) are left out; the visible cells stay in order,
  each with the outputs the page shows (printouts, tables, figures as PNG),
  taken from the HTML build's run of the page (the notebook MyST-NB saved
  in ``_build/jupyter_execute/``, its outputs from the execution cache,
  matched to the page cell by cell), numbered 1..n as a run from the top
  numbers them; a figure's caption follows its cell, with the site's number;
* roles become plain Markdown: ``{glue:text}`` the number as the page shows
  it (from the glued values MyST-NB saved, with the role's format); ``{ref}``,
  ``{numref}`` and ``{doc}`` links relative within the zip (another lesson's
  notebook, at the section's heading, with the id Jupyter gives that heading:
  :mod:`heading_ids`), or text for a page that is not a lesson; ``{term}`` a
  link to the notebook's own glossary, at its end, which defines the terms
  the lesson links; ``{eq}`` the equation's number on the
  site (numbered across the book, as figures are); ``{site-pointer}`` its
  offline text ("the explorer on this lesson's web page", see
  :mod:`site_pointers`), linked to the page where ``html_baseurl`` is set;
  ``{cite:p}``/``{cite:t}`` author and year, ``{func}`` and its kin the
  object's name as code;
* directives too: ``{math}`` is ``$$ ... $$`` (tagged with its number),
  ``{listing}`` the package's code as a Python block, ``{figure}`` the image
  attached to the cell, an exercise (or a self-check "Question") a quotation,
  a tab a bold heading; the solutions (and answers) move to a "Solutions"
  section at the end; the gallery's list of
  examples (the prose names the web page instead) and the provenance note go.

The notebooks are written to ``_downloads/notebooks/<page>.ipynb`` and zipped
with the package's wheel, which their install line names, into
``lessons-notebooks.zip`` (entries in name order, dated
``SOURCE_DATE_EPOCH``). Each lesson page links its notebook under its
title. ``tests/site/test_downloads.py`` runs every notebook in a fresh
environment with only the reader's install.

The role ``{book-pdf}`text``` links the book as one PDF, where ``nox -s pdf``
(book_pdf.py) wrote it, as a Sphinx download (copied into ``_downloads/``),
with its page count and size; a site built without it says nothing of a PDF
(docs/conf.py sets the tag ``book_pdf`` only where the file is). Sphinx
re-reads the page when the PDF changes or goes (it is a dependency of the
page); the ``env-get-outdated`` hook re-reads the landing page when the PDF
appears.

**Reader wheel.** Ship the ``lessons_code`` wheel on the site, so downloaded examples run.

When the build starts, the wheel is built from the working tree into
``docs/_generated/`` (ignored by git) by ``book_tools.build_package``, the
same function ``nox -s build`` uses; pages link it with ``|wheel_download|``
and name it with ``|wheel_name|`` (rST and MyST alike). A build takes one or
two seconds, so it is skipped while the digest of its inputs matches the one
saved next to the wheel.

**Site pointers.** Words that point to what only the web page holds:
``{site-pointer}`site text <offline text>```.

An explorer runs in the browser and a gallery's examples are pages of the
site; a lesson's notebook (docs/_ext/book/downloads.py) holds neither. A
sentence that points to one says so with this role: the page shows the first
text ("the explorer below"), the notebook the second ("the explorer on this
lesson's web page"), linked to the page when ``html_baseurl`` says where the
site lives. ``tests/site/test_downloads.py`` checks that no notebook still
points "below" to an explorer or a gallery example.

**Reproducible.** Make the archives of the built site reproducible.

sphinx-gallery zips the example scripts and notebooks with the modification
times of the files on disk, which differ from one checkout to the next. At the
end of the build every ``.zip`` under the output folder is rewritten with its
entries in name order and dated ``SOURCE_DATE_EPOCH`` (set in ``conf.py``), so
two builds of the same commit give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import pkgutil
import shutil
import textwrap
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from docutils import nodes
from docutils.nodes import make_id
from pybtex.database import parse_file  # type: ignore[import-untyped]
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.util.nodes import split_explicit_title

from book_tools import build_package

from .checks import glued_values
from .config import book_config, validated
from .execution import is_build_only
from .html import SELF_CHECK
from .listing import listing_lines
from .mystnb import (
    exec_data,
    executed_folder,
    execution_cache,
    format_glued,
    join_chunks,
    saved_notebook,
)
from .pages import (
    Directive,
    Page,
    heading_id,
    image_sources,
    is_lesson,
    link_target,
    myst_blocks,
    myst_directives,
    myst_inline_roles,
    read_page,
)

if TYPE_CHECKING:
    from docutils.parsers.rst.states import Inliner
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment


# -- lesson_notebooks ------------------------------------------------------


#: nbformat's helpers are untyped.
_V4: Any = nbformat.v4
_WRITES: Any = nbformat.writes
_READ: Any = nbformat.read
_FROM_DICT: Any = nbformat.from_dict
#: Text that must never reach a reader's notebook.
FORBIDDEN = ("{glue", "{term}", "{ref}", "```{", ":::{", "glue(", "book_figures", "myst_nb")

_ADMONITIONS = {"note", "tip", "warning", "important", "seealso", "caution", "hint"}
#: The heading of the glossary at a notebook's end, which ``{term}`` links lead to.
GLOSSARY = "Glossary"


class _Code(str):
    """A piece of a lesson that becomes a code cell of the notebook (a listing)."""

    __slots__ = ()


def _source(app: Sphinx, docname: str) -> Path:
    return Path(app.env.doc2path(docname))


@dataclass(frozen=True)
class Shared:
    """What every lesson's notebook is written with, read once per build."""

    lessons: frozenset[str]  # the lesson pages (each one a notebook of the zip)
    bib: dict[str, str]  # BibTeX key -> "Vaswani et al., 2017"
    glossary: dict[str, tuple[str, str]]  # see read_glossary
    wheel: str  # the file name of the package's wheel


class Converter:
    """MyST Markdown of one page -> plain Markdown; code cells pass through."""

    def __init__(self, app: Sphinx, docname: str, shared: Shared) -> None:
        self.app = app
        self.shared = shared
        self.others: dict[str, Converter] = {}  # other lessons' converters, for their headings
        self.doctrees: dict[str, nodes.document] = {}
        self.lessons = shared.lessons
        self.glossary = shared.glossary
        self.terms: set[str] = set()  # the glossary's entries this lesson links
        self.defining = False
        self.env = app.env
        self.docname = docname
        self.bib = shared.bib
        self.glued = glued_values(executed_folder(Path(app.outdir)), docname) or {}
        self.std: Any = app.env.get_domain("std")
        self.math: Any = app.env.get_domain("math")
        self.in_solution = False
        self.exercises: dict[str, str] = {}  # label -> title
        self.kinds: dict[str, str] = {}  # label -> "Exercise" or "Question" (a self-check)
        self.attachments: dict[str, dict[str, str]] = {}

    # -- roles -------------------------------------------------------------

    def _link(self, text: str, docname: str, heading: str = "") -> str:
        """``text`` linked to ``docname`` (at the heading ``heading``) within the zip.

        A lesson is a notebook next to this one; ``heading`` is the Markdown of
        a heading of that notebook, and the link's fragment the id Jupyter
        gives it (:func:`heading_ids.heading_id`). Any other page of the site
        is not in the zip, so its name stays as text.
        """
        anchor = link_target(heading_id(heading)) if heading else ""
        if docname == self.docname:
            return f"[{text}]({anchor})" if anchor else text
        if docname not in self.lessons:
            return text
        return f"[{text}]({docname}.ipynb{anchor})"

    def _role(self, name: str, text: str) -> str:
        explicit, title, key = split_explicit_title(text)
        title = title if explicit else ""
        if name == "glue:text":
            key, _, spec = text.rpartition(":") if ":" in text else ("", "", "")
            key = key or text
            if key not in self.glued:
                raise ExtensionError(f"{self.docname}: no glued value {key!r}")
            return format_glued(self.glued[key], spec or "s")
        if name == "term":
            key = " ".join(key.split())  # Sphinx reads a term across a line break
            if key.lower() not in self.glossary:
                raise ExtensionError(f"{self.docname}: no glossary entry {key!r}")
            if self.defining:  # in a definition: the glossary lists it or not
                return title or key
            self.terms.add(key.lower())
            return f"[{title or key}]({link_target(heading_id(GLOSSARY))})"
        if name in ("ref", "numref"):
            docname, anchor, section = self.std.labels.get(key, (None, None, None))
            if docname is None:
                if key not in self.std.anonlabels:  # Sphinx has warned where it is
                    return title or key
                docname, anchor = self.std.anonlabels[key]
            if name == "numref":
                number = self.env.toc_fignumbers[docname]["figure"][anchor]
                section = "Figure " + ".".join(map(str, number))
            linked = name == "ref" and docname in self.lessons
            heading = self.heading(docname, anchor) if linked else ""
            return self._link(title or section, docname, heading)
        if name == "doc":
            docname = key.lstrip("/")
            return self._link(title or self.env.titles[docname].astext(), docname)
        if name == "eq":
            return f"({self.equation_number(key)})"
        if name == "site-pointer":
            both = texts(text)
            if both is None:
                raise ExtensionError(
                    f"{self.docname}: {{site-pointer}} without two texts: {text!r}"
                )
            return self.on_site(both[1])
        if name.startswith("cite:"):
            keys = [k.strip() for k in text.split(",")]
            if name == "cite:t":
                return "; ".join(self.bib[k].replace(", ", " (", 1) + ")" for k in keys)
            return "(" + "; ".join(self.bib[k] for k in keys) + ")"
        if name in ("func", "class", "meth", "mod", "attr") or name.startswith("py:"):
            shown = key.lstrip("~").rsplit(".", 1)[-1] if key.startswith("~") else key
            shown = title or shown
            kind = name.rsplit(":", 1)[-1]
            return f"`{shown}()`" if kind in ("func", "meth") and not title else f"`{shown}`"
        raise ExtensionError(f"{self.docname}: no notebook form for the role {{{name}}}")

    def heading(self, docname: str, anchor: str) -> str:
        """The Markdown of the heading that the notebook of ``docname`` has at ``anchor``.

        It is the page's heading as written (the source of the section's
        title), with its roles converted as that page's notebook converts
        them; Sphinx's text of the title is not it (Sphinx turns straight
        quotes curly and drops the backticks of code and the dollars of math,
        while Jupyter's id keeps what the notebook's Markdown shows). A target
        that is not a heading (an exercise, a figure) leads to the heading of
        the section that holds it.
        """
        if docname not in self.doctrees:
            self.doctrees[docname] = self.env.get_doctree(docname)
        node = self.doctrees[docname].ids.get(anchor)
        while node is not None and not isinstance(node, (nodes.section, nodes.rubric)):
            node = node.parent
        title = node[0] if isinstance(node, nodes.section) else node
        if not isinstance(title, (nodes.title, nodes.rubric)) or not title.rawsource:
            raise ExtensionError(f"{self.docname}: no heading of {docname} at {anchor!r}")
        if docname == self.docname:
            return self.inline(title.rawsource)
        if docname not in self.others:
            self.others[docname] = Converter(self.app, docname, self.shared)
        return self.others[docname].inline(title.rawsource)

    def equation_number(self, label: str) -> str:
        """The number the site gives the equation ``label``, as Sphinx's math domain does.

        With ``math_numfig`` the site numbers equations across the book, as it
        numbers figures; the domain's own number restarts on every page.
        """
        docname, number = self.math.equations.get(label, (None, None))
        if docname is None:
            raise ExtensionError(f"{self.docname}: no equation {label!r}")
        config = self.app.config
        if not (config.math_numfig and config.numfig):
            return str(number)
        numbers = self.env.toc_fignumbers.get(docname, {}).get("displaymath", {})
        found = numbers.get(make_id(f"equation-{label}"))
        if not found:
            raise ExtensionError(f"{self.docname}: the site gives equation {label!r} no number")
        return str(config.math_numsep).join(".".join(map(str, found)).rsplit(".", 1))

    def on_site(self, text: str) -> str:
        """``text``, which names something only the lesson's web page holds, linked to that page.

        The page's address is known only where ``html_baseurl`` says where the
        site lives; without it the words ("on this lesson's web page") point the
        reader to the page they downloaded the notebook from.
        """
        base = str(self.app.config.html_baseurl).rstrip("/")
        if not base:
            return text
        return f"[{text}]({base}/{self.app.builder.get_target_uri(self.docname)})"

    def figure_caption(self, figure: dict[str, Any]) -> str:
        """A code cell's figure caption (MyST-NB's ``mystnb.figure``) with the site's number."""
        anchor = self.std.labels[figure["name"]][1] if "name" in figure else ""
        number = self.env.toc_fignumbers[self.docname]["figure"].get(anchor)
        lead = f"**Figure {'.'.join(map(str, number))}.** " if number else ""
        return lead + self.inline(" ".join(str(figure["caption"]).split()))

    def inline(self, text: str) -> str:
        """``text`` with each role (as MyST's parser finds them) in its notebook form."""
        out: list[str] = []
        position = 0
        for name, content in myst_inline_roles(text):
            # MyST gives a role's content with its line breaks as spaces
            opener, wanted = f"{{{name}}}`", " ".join(content.split())
            start = text.find(opener, position)
            while start >= 0:
                close = text.find("`", start + len(opener))
                raw = text[start + len(opener) : close]
                if close >= 0 and " ".join(raw.split()) == wanted:
                    break
                start = text.find(opener, start + 1)
            if start < 0:
                raise ExtensionError(f"{self.docname}: cannot find the role {{{name}}}`{content}`")
            out += [text[position:start], self._role(name, raw)]
            position = close + 1
        return "".join(out) + text[position:]

    # -- directives ----------------------------------------------------------

    def _directive(self, directive: Directive) -> list[tuple[bool, str]]:
        name, argument, options = directive.name, directive.argument, directive.options
        body = directive.body.strip("\n")
        if name == "math":
            label = options.get("label", "")
            tag = f" \\tag{{{self.equation_number(label)}}}" if label else ""
            return [(self.in_solution, f"$$\n{body}{tag}\n$$")]
        if name == "listing":
            _, code = listing_lines(argument)
            pieces: list[tuple[bool, str]] = []
            if "caption" in options:
                pieces.append((self.in_solution, f"*{self.inline(options['caption'])}*"))
            shown = "\n".join(code)
            obj = pkgutil.resolve_name(argument)
            if obj.__qualname__ == obj.__name__:
                # A function or class of its own: a code cell, which defines it
                # in the notebook, so the cells after it run the code shown.
                pieces.append((self.in_solution, _Code(shown)))
            else:  # a method cannot run outside its class: shown, not run
                pieces.append((self.in_solution, f"```python\n{shown}\n```"))
            return pieces
        if name == "figure":
            path = Path(self.app.srcdir) / argument
            mime = "image/svg+xml" if path.suffix == ".svg" else "image/png"
            if mime != "image/svg+xml":
                raise ExtensionError(f"{self.docname}: only SVG figures are attached ({path})")
            self.attachments[path.name] = {mime: path.read_text(encoding="utf-8")}
            anchor = self.std.labels[options["name"]][1] if "name" in options else ""
            number = self.env.toc_fignumbers[self.docname]["figure"].get(anchor)
            lead = f"**Figure {'.'.join(map(str, number))}.** " if number else ""
            alt = options.get("alt", "figure").replace("\n", " ")
            text = f"![{alt}](attachment:{path.name})\n\n{lead}{self.inline(body)}"
            return [(self.in_solution, text)]
        if name in ("exercise", "exercise-start"):
            kind = "Question" if SELF_CHECK in str(options.get("class", "")).split() else "Exercise"
            title = argument or kind
            self.exercises[options.get("label", "")] = title
            self.kinds[options.get("label", "")] = kind
            head = f"> **{kind}: {self.inline(title)}**" if argument else f"> **{kind}**"
            if name == "exercise-start":
                return [(self.in_solution, head)]
            inner = self.markdown(body)
            quoted = "\n".join(f"> {line}".rstrip() for line in inner.splitlines())
            return [(self.in_solution, f"{head}\n>\n{quoted}")]
        if name == "exercise-end":
            return []
        if name == "solution-start":
            self.in_solution = True
            kind = self.kinds.get(argument, "Exercise")
            title = self.exercises.get(argument, kind)
            word = "Answer" if kind == "Question" else "Solution"
            heading = f"### {word}: {title}" if title != kind else f"### {word}"
            return [(True, heading)]
        if name == "solution-end":
            self.in_solution = False
            return []
        if name == "tab-set":
            return self.chunks(body)
        if name == "tab-item":
            return [(self.in_solution, f"**{self.inline(argument)}**"), *self.chunks(body)]
        if name in ("eval-rst", "provenance"):
            return []  # gallery pointers and the build's provenance note
        if name in _ADMONITIONS or name == "admonition":
            title = argument or name.capitalize()
            inner = self.markdown(body)
            quoted = "\n".join(f"> {line}".rstrip() for line in inner.splitlines())
            return [(self.in_solution, f"> **{self.inline(title)}**\n>\n{quoted}")]
        raise ExtensionError(f"{self.docname}: no notebook form for the directive {{{name}}}")

    def chunks(self, text: str) -> list[tuple[bool, str]]:
        """``text`` as Markdown pieces, each marked whether it belongs to a solution.

        The directives are those MyST's parser finds outside any other block;
        the text between them is kept as written, less its ``(label)=`` lines.
        """
        out: list[tuple[bool, str]] = []
        lines = text.split("\n")
        found, targets = myst_blocks(text)

        def flush(start: int, stop: int) -> None:  # lines start..stop-1, 0-based
            kept = [lines[i] for i in range(start, stop) if i + 1 not in targets]
            joined = "\n".join(kept).strip("\n")
            if joined.strip():
                out.append((self.in_solution, self.inline(joined)))

        position = 0
        for directive in found:
            flush(position, directive.line - 1)
            out.extend(self._directive(directive))
            position = directive.end
        flush(position, len(lines))
        return out

    def markdown(self, text: str) -> str:
        return "\n\n".join(
            f"```python\n{piece}\n```" if isinstance(piece, _Code) else piece
            for _, piece in self.chunks(text)
        )


def _authors_year(entry: Any) -> str:
    """The short author-year form of a BibTeX entry ("Vaswani et al., 2017")."""
    names = [person.last_names[-1].strip("{}") for person in entry.persons.get("author", [])]
    year = entry.fields.get("year", "n.d.")
    if len(names) > 2:
        return f"{names[0]} et al., {year}"
    return f"{' and '.join(names)}, {year}"


def read_glossary(source: Path) -> dict[str, tuple[str, str]]:
    """The entries of the ``{glossary}`` of ``source``: lower-case term -> (term, definition).

    A term is a line without indentation (several in a row name one entry);
    its definition is the indented lines under it, still in MyST.
    """
    blocks = myst_directives(source.read_text(encoding="utf-8"), "glossary")
    if not blocks:
        raise ExtensionError(f"{source}: no glossary")
    entries: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    lines: list[str] = []

    def flush() -> None:
        for name in names:
            entries[name.lower()] = (name, textwrap.dedent("\n".join(lines)).strip())

    for line in blocks[0].body.splitlines():
        if not line.strip() or line.startswith(":"):
            if lines:
                lines.append("")
            continue
        if line[0].isspace():
            lines.append(line)
            continue
        if lines:
            flush()
            names, lines = [], []
        names.append(line.strip())
    flush()
    return entries


def glossary_cell(convert: Converter) -> nbformat.NotebookNode:
    """The glossary's entries the lesson links to, defined at the end of its notebook."""
    convert.defining = True
    parts = [f"## {GLOSSARY}"]
    for key in sorted(convert.terms):
        term, definition = convert.glossary[key]
        parts.append(f"**{term}**: {convert.markdown(definition)}")
    convert.defining = False
    cell: nbformat.NotebookNode = _V4.new_markdown_cell("\n\n".join(parts))
    return cell


def executed_cells(app: Sphinx, docname: str, page: Page) -> list[Any]:
    """The cells of ``page`` as the HTML build executed them.

    MyST-NB saves the notebook it ran for a page in
    ``_build/jupyter_execute/<page>.ipynb``: the reader's cells in their
    order, the removed ones included, and the build-only cell that
    code_deps.py puts last (left out here). Its outputs are in that file only
    when the page was executed in this build; the execution cache
    (jupyter-cache, ``.jupyter_cache``) holds them either way, so they are
    taken from there, as MyST-NB takes them when it reuses a run. The cells are
    matched to the page's one by one, and a cell whose type or source
    differs fails the build (the saved notebook is then not of these sources).
    """
    path = saved_notebook(Path(app.outdir), docname)
    if not path.is_file():
        raise ExtensionError(f"{docname}: MyST-NB saved no executed notebook ({path})")
    cache = execution_cache(app.env)
    if cache is None:
        raise ExtensionError(f"{docname}: the build keeps no execution cache (nb_execution_mode)")
    try:
        _, executed = cache.merge_match_into_notebook(_READ(path, as_version=4))
    except KeyError:
        raise ExtensionError(f"{docname}: the execution cache has no run of {path}") from None
    cells: list[Any] = executed.cells
    if cells and is_build_only(cells[-1]):
        cells = cells[:-1]
    if len(cells) != len(page.cells):
        raise ExtensionError(
            f"{docname}: {path} has {len(cells)} cells, the page {len(page.cells)}"
        )
    for number, (ran, cell) in enumerate(zip(cells, page.cells, strict=True)):
        if ran.cell_type != cell.kind or ran.source != cell.source:
            raise ExtensionError(f"{docname}: cell {number} of {path} is not the page's")
    return cells


def shown_outputs(docname: str, cell: Any) -> list[Any]:
    """The outputs of an executed visible code cell, as the page shows them.

    Streams, results and displays (tables as HTML, figures as PNG) stay. A
    glued value (MyST-NB's ``scrapbook`` output) and HTML with a script (an
    explorer) belong to the site and to cells the page removes; in a visible
    cell they fail the build.
    """
    outputs = []
    for output in join_chunks(cell.get("outputs", [])):
        if output.output_type == "error":
            raise ExtensionError(f"{docname}: a visible cell failed:\n{cell.source}")
        if "scrapbook" in output.get("metadata", {}):
            raise ExtensionError(f"{docname}: a visible cell glues a value:\n{cell.source}")
        if "<script" in str(output.get("data", {}).get("text/html", "")):
            raise ExtensionError(f"{docname}: a visible cell shows a script:\n{cell.source}")
        outputs.append(_FROM_DICT(json.loads(json.dumps(output))))
    return outputs


def lesson_notebook(app: Sphinx, docname: str, shared: Shared) -> nbformat.NotebookNode:
    """The reader's notebook of the lesson page ``docname``, with the page's outputs."""
    source = Path(app.srcdir) / f"{docname}.md"
    page = read_page(source.read_text(encoding="utf-8"))
    executed = executed_cells(app, docname, page)
    convert = Converter(app, docname, shared)
    wheel = shared.wheel
    main: list[nbformat.NotebookNode] = []
    solutions: list[nbformat.NotebookNode] = []
    for part, ran in zip(page.cells, executed, strict=True):
        if part.kind == "code":
            if not part.shown:
                continue
            target = solutions if convert.in_solution else main
            outputs = shown_outputs(docname, ran)
            target.append(_V4.new_code_cell(part.source.strip("\n"), outputs=outputs))
            figure = part.options.get("mystnb", {}).get("figure", {})
            if "caption" in figure:
                target.append(_V4.new_markdown_cell(convert.figure_caption(figure)))
            continue
        for in_solution, text in convert.chunks(part.source):
            target = solutions if in_solution else main
            if isinstance(text, _Code):
                target.append(_V4.new_code_cell(str(text)))
            elif target and target[-1].cell_type == "markdown":
                target[-1].source += "\n\n" + text
            else:
                target.append(_V4.new_markdown_cell(text))
    install = (
        "To run this notebook, install the book's package and its plotting needs "
        f"from the folder that holds the package's wheel, `{wheel}` (it comes with "
        f"the zip of all lessons, `{book_config(app).notebooks_archive}`, next to their "
        "notebooks; the book's home page offers both):\n\n"
        f"```bash\npip install {wheel} matplotlib pandas scikit-learn\n```\n\n"
        "Links to other lessons open their notebooks from the same folder."
    )
    at_end = [
        *(["the exercises' solutions"] if solutions else []),
        *(["a glossary of the terms the lesson links"] if convert.terms else []),
    ]
    if at_end:
        install += f" At the end: {' and '.join(at_end)}."
    title, _, rest = main[0].source.partition("\n")
    main[0].source = f"{title}\n\n{install}\n\n{rest.strip()}"
    if solutions:
        main.append(_V4.new_markdown_cell("## Solutions"))
        main.extend(solutions)
    if convert.terms:
        main.append(glossary_cell(convert))
    # Numbered as a reader's run from the top numbers them (the solutions at
    # the end); an execute_result carries its cell's number.
    count = 0
    for cell in main:
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = count
    for number, cell in enumerate(main):
        cell.id = f"cell-{number}"
        names = {
            source.removeprefix("attachment:")
            for source in (image_sources(cell.source) if cell.cell_type == "markdown" else ())
            if source.startswith("attachment:")
        }
        if names:
            cell.attachments = {name: convert.attachments[name] for name in sorted(names)}
        for bad in FORBIDDEN:
            if bad in cell.source:
                raise ExtensionError(f"{docname}: its notebook still contains {bad!r}")
    notebook: nbformat.NotebookNode = _V4.new_notebook(cells=main)
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


def write_notebooks(app: Sphinx, exception: BaseException | None) -> None:
    """Write every lesson's notebook and the zip of all of them (the HTML site only)."""
    if exception is not None or app.builder.name != "html":
        return
    lessons = sorted(name for name in app.env.found_docs if is_lesson(_source(app, name)))
    folder = Path(app.outdir) / book_config(app).notebooks_folder
    if any(not exec_data(app.env, name).get("succeeded", True) for name in lessons):
        # A cell raised (cell_errors says where): no notebooks of a failed run,
        # and none of an earlier one left beside it.
        shutil.rmtree(folder, ignore_errors=True)
        return
    bibliography = parse_file(str(Path(app.srcdir) / "references.bib"))
    bib = {key: _authors_year(entry) for key, entry in bibliography.entries.items()}
    # The glossary's entries, from the pages that define terms (the book's glossary).
    std: Any = app.env.get_domain("std")
    pages = sorted({entry[0] for (kind, _), entry in std.objects.items() if kind == "term"})
    glossary: dict[str, tuple[str, str]] = {}
    for page in pages:
        glossary.update(read_glossary(_source(app, page)))
    (wheel,) = (Path(app.srcdir) / "_generated").glob("*.whl")  # reader_wheel.py built it
    shared = Shared(frozenset(lessons), bib, glossary, wheel.name)
    folder.mkdir(parents=True, exist_ok=True)
    files = {wheel.name: wheel.read_bytes()}
    for docname in lessons:
        notebook = lesson_notebook(app, docname, shared)
        files[f"{docname}.ipynb"] = (_WRITES(notebook) + "\n").encode("utf-8")
        path = folder / f"{docname}.ipynb"
        if not path.is_file() or path.read_bytes() != files[f"{docname}.ipynb"]:
            path.write_bytes(files[f"{docname}.ipynb"])
    # The zip holds what the notebooks' links and install line name: each
    # other, and the wheel.
    write_zip(folder / book_config(app).notebooks_archive, files, source_date())


_H1_END = "</h1>"


def offer_notebook(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """On a lesson page, its notebook: linked under the title, and in the download menu.

    The theme's download menu offered the page's source, a MyST notebook with
    hidden cells and glue roles that a reader's Jupyter does not understand;
    the notebook takes its place, and the menu's other entry (print the page)
    stays.
    """
    if pagename not in app.env.found_docs or not is_lesson(_source(app, pagename)):
        return
    href = context["pathto"](f"{book_config(app).notebooks_folder}/{pagename}.ipynb", 1)
    label = "Download this lesson as a Jupyter notebook"
    body = context.get("body", "")
    if _H1_END in body:
        link = (
            f'<p class="lesson-notebook"><a class="reference download" href="{href}" '
            f'download="">{label}</a> '
            "(it runs with the book's package).</p>"
        )
        at = body.index(_H1_END) + len(_H1_END)
        context["body"] = body[:at] + link + body[at:]
    notebook = {
        "type": "link",
        "url": href,
        "text": ".ipynb",
        "tooltip": label,
        "icon": "fas fa-file",
        "label": "download-notebook-button",
    }
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            kept = [b for b in group["buttons"] if b.get("label") != "download-source-button"]
            group["buttons"] = [notebook, *kept]


def book_pdf_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{book-pdf}`Download the PDF```: the link, its page count and size.

    Without a PDF it is the plain text; the landing page shows its paragraph
    on the PDF only where there is one (``only:: book_pdf``, a tag docs/conf.py
    sets; an ``only`` block cannot hide a section, so the paragraph has no heading).
    """
    env = inliner.document.settings.env
    pdf = Path(env.srcdir) / validated(env.config).pdf
    if not validated(env.config).pdf or not pdf.is_file():
        return [nodes.inline(rawtext, text)], []
    facts_file = pdf.with_suffix(".json")  # book_pdf.py writes the page count there
    facts = json.loads(facts_file.read_text(encoding="utf-8")) if facts_file.is_file() else {}
    link = addnodes.download_reference(
        rawtext, "", refdoc=env.docname, refdomain="", reftype="download"
    )
    link["reftarget"], link["refexplicit"] = f"/{validated(env.config).pdf}", True
    link += nodes.inline(text, text)
    pages = f"{facts['pages']} pages, " if "pages" in facts else ""
    size = pdf.stat().st_size / 1e6
    return [link, nodes.Text(f" ({pages}{size:.1f} MB)")], []


def relink_pdf(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """The landing page, to be read again when the PDF appeared since it was read."""
    pdf = Path(app.srcdir) / book_config(app).pdf
    root = app.config.root_doc
    if not book_config(app).pdf or not pdf.is_file() or root in added | changed:
        return []
    linked = any(Path(path) == pdf for path in env.dependencies.get(root, ()))
    return [] if linked else [root]


# -- reader_wheel ----------------------------------------------------------


def inputs_digest(root: Path) -> str:
    """SHA-256 of what the wheel is built from: metadata, package files, source date."""
    digest = hashlib.sha256(os.environ.get("SOURCE_DATE_EPOCH", "").encode())
    package = sorted((root / "lessons_code").rglob("*"))
    for path in [root / "pyproject.toml", root / "README.md", *package]:
        if path.is_file() and "__pycache__" not in path.parts:
            name = path.relative_to(root).as_posix().encode()
            digest.update(name + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Build the wheel of the project at ``root`` into ``out_dir``, unless it is up to date."""
    stamp = out_dir / "inputs.sha256"
    digest = inputs_digest(root)
    wheels = list(out_dir.glob("*.whl"))
    if len(wheels) == 1 and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
        return wheels[0]
    shutil.rmtree(out_dir, ignore_errors=True)  # no wheel of an older version stays
    try:
        (wheel,) = build_package(out_dir, root=root)
    except RuntimeError as error:
        raise ExtensionError(f"the reader wheel: {error}") from None
    stamp.write_text(digest, encoding="utf-8")
    return wheel


def on_config_inited(app: Sphinx, config: Config) -> None:
    """Build the wheel and define the substitutions that link to it."""
    srcdir = Path(app.srcdir)
    wheel = build_wheel(srcdir.parent, srcdir / "_generated")
    link = f":download:`{wheel.name} </_generated/{wheel.name}>`"
    config.rst_prolog = (config.rst_prolog or "") + (
        f"\n.. |wheel_download| replace:: {link}\n.. |wheel_name| replace:: ``{wheel.name}``\n"
    )
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "wheel_download": f"{{download}}`{wheel.name} </_generated/{wheel.name}>`",
        "wheel_name": f"`{wheel.name}`",
    }


# -- site_pointers ---------------------------------------------------------


def texts(content: str) -> tuple[str, str] | None:
    """The role's two texts (the page's, the notebook's), or None if one is missing.

    They are written as a role's explicit title and target are (Sphinx's
    ``split_explicit_title``): ``site text <offline text>``.
    """
    explicit, site, offline = split_explicit_title(content)
    if not explicit or not site.strip() or not offline.strip():
        return None
    return " ".join(site.split()), " ".join(offline.split())


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


# -- reproducible ----------------------------------------------------------


def source_date() -> tuple[int, int, int, int, int, int]:
    """``SOURCE_DATE_EPOCH`` (set in ``conf.py``) as a zip entry's date."""
    return time.gmtime(int(os.environ["SOURCE_DATE_EPOCH"]))[:6]


def write_zip(
    path: Path, files: dict[str, bytes], date_time: tuple[int, int, int, int, int, int]
) -> None:
    """The book's one zip writer: ``files`` in name order, all dated ``date_time``, mode 644.

    The same files make the same bytes in every build (deflated, no
    timestamps or permissions of the machine).
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def normalise_zip(path: Path, date_time: tuple[int, int, int, int, int, int]) -> None:
    """Rewrite a zip another tool wrote (sphinx-gallery's) with :func:`write_zip`."""
    with zipfile.ZipFile(path) as archive:
        files = {info.filename: archive.read(info) for info in archive.infolist()}
    write_zip(path, files, date_time)


def date_zips(app: Sphinx, exception: BaseException | None) -> None:
    """Normalise every zip the HTML build wrote."""
    if exception is not None or app.builder.format != "html":
        return
    date_time = source_date()
    for path in sorted(Path(app.outdir).rglob("*.zip")):
        normalise_zip(path, date_time)
