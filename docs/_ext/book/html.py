"""The HTML pages: the API pages' layout, the self-checks' names, each page's head and summary.

**Search summary.** What a page says about itself to search: result snippets and its description.

* The search page gets ``_static/search_summary.js`` (deferred, so that it runs
  after Sphinx's ``searchtools.js``); the file explains the cause and the fix.
* Every page gets a ``<meta name="description">`` (and the same text as its
  link preview, ``og:description``, with ``og:title``): the page's opening
  paragraph, cut at a word to at most :data:`DESCRIPTION_CHARS` characters,
  its formulas as plain text. A page that sets its own description
  (``html_meta`` in its front matter) keeps it; a page without a document
  (the index, the search page) gets the book's one-line summary.

**Api layout.** Shape the API reference's pages: one field list per object, modest gallery headings.

Two things the standard extensions do not do on their own:

1. **One field list per object.** Napoleon turns a NumPy docstring's custom
   ``Shape`` section into a rubric followed by its text. That rubric splits
   the object's fields in two lists (Parameters and Returns before it, Raises
   after it), and ``autodoc_typehints = "description"`` then adds the
   parameter and return types to *each* list: every function showed
   "Parameters" and "Return type" twice. Here the rubric and its text become a
   ``Shape`` field of the list before it, and the list after it joins the same
   list, before autodoc adds the types (this handler runs at a lower priority
   than autodoc's). ``conf.py`` also asks autodoc to type only what the
   docstring documents, so a stray second list could never get the types.

2. **"Examples using ..." as a rubric.** sphinx-gallery's ``minigallery``
   writes its heading as a section title; on a module page that made each
   heading as large as the page's sections, listed it in the page's contents
   column, and nested the next object inside it. On pages under ``api/`` such
   a section is replaced by a rubric (same anchor) followed by its content.

**Self check.** Self-check questions: sphinx-exercise's exercises that say "Question".

A lesson's "Check your understanding" section asks its questions with
sphinx-exercise's ``exercise`` directive, unnumbered and with the class
``self-check``, and answers each with a ``solution`` in a dropdown, so that
they share the exercises' handling everywhere (hidden answers on the site,
the notebook's "Solutions" section, the PDF's appendix). sphinx-exercise
titles every exercise "Exercise" and every solution "Solution to Exercise";
this extension titles a self-check "Question (...)" and its answer "Answer to
Question (...)", before sphinx-exercise writes the titles out.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import (  # type: ignore[import-untyped]
    exercise_title,
    is_exercise_node,
    solution_node,
)

from . import mathml
from .config import book_config, validated

if TYPE_CHECKING:
    from sphinx.application import Sphinx


# -- search_summary --------------------------------------------------------

#: The longest description: about what search engines show.
DESCRIPTION_CHARS = 160


def _plain(node: nodes.Node) -> str:
    """The text of ``node``, each formula as the characters its MathML shows."""
    if isinstance(node, nodes.math):
        try:
            return mathml.text(node.astext())
        except mathml.Unreadable:  # the HTML writer reports it, with its line
            return node.astext()
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_plain(child) for child in node.children)


def opening_paragraph(doctree: nodes.document) -> str:
    """The first paragraph of the page's own text (not a caption, note or table)."""
    for paragraph in doctree.findall(nodes.paragraph):
        if isinstance(paragraph.parent, (nodes.section, nodes.document)):
            text = " ".join(_plain(paragraph).split())
            if text:
                return text
    return ""


def shorten(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """``text`` cut at a word so that it has at most ``limit`` characters."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def add_description(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Put the page's description and link-preview title in its ``<head>``."""
    tags = context.get("metatags", "")
    if 'name="description"' in tags:
        return
    text = opening_paragraph(doctree) if doctree is not None else ""
    description = html.escape(shorten(text or book_config(app).summary))
    title = html.escape(
        html.unescape(re.sub(r"<[^>]+>", "", context.get("title", ""))) or app.config.project
    )
    context["metatags"] = (
        f'{tags}\n<meta name="description" content="{description}" />'
        f'\n<meta property="og:title" content="{title}" />'
        f'\n<meta property="og:description" content="{description}" />'
    )


def add_to_search_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Load the snippet fix on the search page only."""
    if pagename == "search":
        app.add_js_file("search_summary.js", loading_method="defer")


# -- api_layout ------------------------------------------------------------

SHAPE = "Shape"
EXAMPLES_PREFIX = "Examples using"
CSS = "api.css"
#: The words of a NumPy type such as "dict of str to int" that are not types.
TYPE_WORDS = re.compile(r"(\s+(?:of|to|or|and)\s+|,\s+)")
#: A return type Sphinx does not split into its types by itself.
MAPPING = re.compile(r"\s(?:to|and)\s")


def shape_as_field(app: Sphinx, domain: str, objtype: str, contentnode: nodes.Element) -> None:
    """Move a ``Shape`` rubric and its text into the object's one field list."""
    if domain != "py":
        return
    for rubric in [n for n in contentnode.children if isinstance(n, nodes.rubric)]:
        if rubric.astext().strip() != SHAPE:
            continue
        parent = rubric.parent
        index = parent.index(rubric)
        body = nodes.field_body()
        following = parent.children[index + 1 :]
        taken = 0
        for node in following:
            if isinstance(node, (nodes.field_list, nodes.rubric)):
                break
            body += node.deepcopy()
            taken += 1
        after = following[taken] if taken < len(following) else None
        field = nodes.field("", nodes.field_name("", SHAPE), body)

        before = parent.children[index - 1] if index > 0 else None
        if isinstance(before, nodes.field_list):
            field_list = before
            field_list += field
        else:
            field_list = nodes.field_list("", field)
            parent.insert(index, field_list)
            index += 1
        # Remove the rubric and the text now inside the field.
        del parent.children[index : index + 1 + taken]
        if isinstance(after, nodes.field_list):
            field_list.extend(after.children)
            parent.remove(after)


def _linked_types(text: str, env: Any) -> list[nodes.Node]:
    """``dict of str to int``: each type a cross-reference, the words between as text."""
    pieces: list[nodes.Node] = []
    for i, part in enumerate(TYPE_WORDS.split(text)):
        if i % 2:
            pieces.append(nodes.Text(part))
        elif part:
            ref = addnodes.pending_xref(
                "", nodes.emphasis(part, part), refdomain="py", reftype="class", reftarget=part
            )
            ref["refspecific"] = True
            ref["py:module"] = env.ref_context.get("py:module")
            ref["py:class"] = env.ref_context.get("py:class")
            pieces.append(ref)
    return pieces


def return_type_after_returns(
    app: Sphinx, domain: str, objtype: str, contentnode: nodes.Element
) -> None:
    """Put "Return type" right after "Returns", and link a NumPy-style return type.

    autodoc appends the type it adds at the end of the list, after "Raises".
    Sphinx links each name of a return type such as ``list of float`` but
    reads ``dict of str to int`` as one name after ``of``; here each type of
    such a mapping is linked on its own.
    """
    if domain != "py":
        return
    for field_list in [n for n in contentnode.children if isinstance(n, nodes.field_list)]:
        fields = [f for f in field_list.children if isinstance(f, nodes.field)]
        names = [f[0].astext().strip() for f in fields]
        if "rtype" not in names:
            continue
        rtype = fields[names.index("rtype")]
        body = rtype[1]
        assert isinstance(body, nodes.field_body)  # a field is its name, then its body
        if (
            len(body) == 1
            and isinstance(body[0], nodes.paragraph)
            and MAPPING.search(body[0].astext())
        ):
            paragraph = body[0]
            paragraph[:] = _linked_types(paragraph.astext(), app.env)
        if "returns" in names:
            field_list.remove(rtype)
            field_list.insert(names.index("returns") + 1, rtype)


class ExamplesHeadingAsRubric(SphinxTransform):
    """Turn minigallery's "Examples using ..." sections of API pages into rubrics."""

    default_priority = 200  # before the table of contents is collected

    def apply(self, **kwargs: Any) -> None:
        if not self.env.docname.startswith(validated(self.config).api_folder):
            return
        for section in list(self.document.findall(nodes.section)):
            title = section.next_node(nodes.title)
            if title is None or title.parent is not section:
                continue
            if not title.astext().startswith(EXAMPLES_PREFIX):
                continue
            rubric = nodes.rubric("", "", *[child.deepcopy() for child in title.children])
            rubric["ids"] = list(section["ids"])
            rubric["names"] = list(section["names"])
            rubric["classes"].append("sphx-glr-examples-heading")
            rest = [child for child in section.children if child is not title]
            section.replace_self([rubric, *rest])


# -- self_check ------------------------------------------------------------

#: The class that marks an exercise as a self-check question.
SELF_CHECK = "self-check"
QUESTION = "Question"
ANSWER = "Answer to"
#: The class of a self-check question's answer.
ANSWER_CLASS = "self-check-answer"


def is_self_check(node: nodes.Node) -> bool:
    """Whether ``node`` is an exercise marked as a self-check question."""
    return (
        isinstance(node, nodes.Element)
        and is_exercise_node(node)
        and SELF_CHECK in node.get("classes", [])
    )


class NameSelfChecks(SphinxPostTransform):
    """Rename the titles' leading word before sphinx-exercise resolves them (at 20)."""

    default_priority = 19

    def run(self, **kwargs: Any) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for node in self.document.findall(is_self_check):
            title = node.children[0]
            if isinstance(title, exercise_title) and isinstance(title.children[0], nodes.Text):
                title.children[0].parent = None
                title[0] = nodes.Text(QUESTION)
        for node in self.document.findall(solution_node):
            target = registry.get(node.get("target_label"), {}).get("node")
            if target is not None and is_self_check(target):
                node["title"] = ANSWER
                # The page's script (a11y.js) names its button "Show answer".
                node["classes"].append(ANSWER_CLASS)
                # The exercise may sit on another page, or later on this one:
                # its title word is renamed here too, for the solution's copy.
                title = target.children[0]
                if isinstance(title, exercise_title) and isinstance(title.children[0], nodes.Text):
                    title[0] = nodes.Text(QUESTION)


# -- the pages' heads ------------------------------------------------------


def defer_scripts(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Let a page draw before its scripts run: every script file is ``defer``.

    Deferred scripts still run in their order, before ``DOMContentLoaded``.
    ``documentation_options.js`` stays as it is (inline scripts of the page set
    fields of the object it defines while the page is read), and so does the
    search page, whose search script runs while the page is read.
    """
    if pagename == "search":
        return
    deferred = []
    for script in context.get("script_files", []):
        name = str(getattr(script, "filename", "") or "")
        attributes = dict(getattr(script, "attributes", {}))
        if name and not name.endswith("documentation_options.js") and "async" not in attributes:
            attributes.setdefault("defer", "defer")
            script = type(script)(script.filename, priority=script.priority, **attributes)
        deferred.append(script)
    context["script_files"] = deferred


#: A rule of the theme's stylesheet that only names the Font Awesome glyph of
#: icon classes (``.fa-bars{--fa:"\f0c9"}``): about 2,000 of them.
_FA_GLYPH = re.compile(
    r'(?<=[}/])(?:\.fa-[\w-]+,)*\.fa-[\w-]+\{--fa:"[^"]*"(?:;--fa--fa:"[^"]*")?\}'
)
#: The stylesheet's own declarations of the icon font's webfonts. Without them a
#: browser that styles the page before icons.css arrives can still fetch the font
#: (it did, for one load in six, on the search page without JavaScript).
_FA_FONT_FACE = re.compile(r"@font-face\{[^}]*vendor/fontawesome/webfonts/[^}]*\}")
_SOURCE_MAP = "/*# sourceMappingURL=pydata-sphinx-theme.css.map*/"


def trim_theme_css(app: Any, exception: Exception | None) -> None:
    """Drop the Font Awesome glyph and font rules from the built copy of the theme's stylesheet.

    The book draws its icons with icons.css and never loads the icon font, so
    the glyphs are never shown; they were 19 kB of the stylesheet's 64 kB
    (gzip), which every page waits for before it draws. The comment naming the
    source map goes too (the map is of the whole file), and so do the three
    ``@font-face`` rules, so that no load can fetch the font; nothing else changes.
    """
    css = Path(app.outdir) / "_static" / "styles" / "pydata-sphinx-theme.css"
    if exception is None and app.builder.format == "html" and css.is_file():
        text = css.read_text(encoding="utf-8")
        trimmed = _FA_GLYPH.sub("", _FA_FONT_FACE.sub("", text)).replace(_SOURCE_MAP, "")
        if trimmed != text:
            css.write_text(trimmed, encoding="utf-8")


#: The file that holds the stylesheets a page would otherwise load one by one.
_STYLES = "_static/book-styles.css"
_IMG = re.compile(r"<img (?!fetchpriority)")


def _bundled(sheets: list[Any]) -> tuple[list[Any], list[str]]:
    """Split a page's stylesheets: ``pygments.css`` if first, and the run to bundle.

    The run is the leading plain stylesheets after it (up to the first one
    with a media attribute, from another host or not CSS), by file name; it is
    empty if fewer than two would be bundled.
    """
    sheets = sorted(sheets, key=lambda sheet: sheet.priority)
    lead = [s for s in sheets[:1] if os.fspath(s.filename) == "_static/pygments.css"]
    run = []
    for sheet in sheets[len(lead) :]:
        name = os.fspath(sheet.filename)
        if "media" in sheet.attributes or "://" in name or not name.endswith(".css"):
            break
        run.append(name)
    return lead, run if len(run) > 1 else []


def _site_sheets(app: Any) -> list[Any]:
    """The stylesheets the HTML builder links on every page (none if it keeps no list).

    Sphinx holds them in a private attribute; were it renamed, nothing would
    be bundled and every page would link its stylesheets one by one.
    """
    return list(getattr(app.builder, "_css_files", []))


def light_head(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Fewer requests before a page can draw, and figures after its text.

    A page waits for every stylesheet in its head before it draws, and on a
    slow connection each file costs a round trip. The leading run of plain
    stylesheets (the extensions' and the book's, in the order they are
    linked, up to the first one with a media attribute) is linked as one
    file, which ``write_styles`` writes when the build ends (only then are
    all of them in the output folder); print.css, narrow.css and those after
    them are linked as before. The theme's own two stylesheets come from its
    template, not this list, and stay as they are, and so does pygments.css,
    which the theme writes again once the pages are written
    (``overwrite_pygments_css``): it is linked on its own, first. A page
    whose stylesheets differ from every other page's keeps its own links.
    Every image after the first one of a page is fetched at low priority and
    only when the reader scrolls near it (``fetchpriority="low"``,
    ``loading="lazy"``): a first visit downloads the text, the styles and the
    figures in view, not every figure of a long lesson (browsers load lazy
    images before they print). Each PNG gets the height its width implies
    (:func:`_with_heights`), so a figure holds its place before it loads and
    the text below it does not jump. The one-page book that ``book_pdf.py``
    prints keeps every image eager: Chromium prints a lazy image it has not
    loaded as nothing.
    """
    sheets = sorted(context.get("css_files", []), key=lambda sheet: sheet.priority)
    lead, run = _bundled(sheets)
    if run and run == _bundled(_site_sheets(app))[1]:
        rest = sheets[len(lead) + len(run) :]
        merged = type(sheets[0])(_STYLES, priority=sheets[len(lead)].priority)
        context["css_files"] = [*lead, merged, *rest]
    # The book as one page (singlehtml) is printed to PDF: every image loads.
    if "body" in context and app.builder.name == "html":
        first = context["body"].find("<img ") + len("<img ")
        if first >= len("<img "):
            body = context["body"]
            later = _IMG.sub('<img fetchpriority="low" loading="lazy" ', body[first:])
            context["body"] = _with_heights(app, body[:first] + later)


_SIZED_IMG = re.compile(r'<img ([^>]*?)src="_images/([^"]+\.png)"([^>]*?)width="(\d+)"([^>]*)>')


def _png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) in pixels from a PNG's header, or None if ``path`` is no PNG."""
    try:
        with path.open("rb") as handle:
            head = handle.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _with_heights(app: Any, body: str) -> str:
    """Give every ``_images/*.png`` with a width and no height the height its aspect implies.

    The file is found through the builder's image table (source path -> name
    in ``_images``). A browser scales the image with its width (``height:
    auto`` in figures.css) and keeps its box's aspect before the pixels arrive.
    """
    sources = {name: Path(app.srcdir, source) for source, name in app.builder.images.items()}

    def sized(match: re.Match[str]) -> str:
        tag = match.group(0)
        if " height=" in tag or match.group(2) not in sources:
            return tag
        size = _png_size(sources[match.group(2)])
        if size is None or size[0] == 0:
            return tag
        width = int(match.group(4))
        height = round(width * size[1] / size[0])
        return tag.replace(f'width="{width}"', f'width="{width}" height="{height}"', 1)

    return _SIZED_IMG.sub(sized, body)


def write_styles(app: Any, exception: Exception | None) -> None:
    """Write the bundle the pages link: the stylesheets it stands for, in their order."""
    run = _bundled(_site_sheets(app))[1] if app.builder.format == "html" else []
    if exception is None and run:
        outdir = Path(app.outdir)
        text = "".join(
            f"/* {name} */\n{(outdir / name).read_text(encoding='utf-8')}\n" for name in run
        )
        bundle = outdir / _STYLES
        if not bundle.is_file() or bundle.read_text(encoding="utf-8") != text:
            bundle.write_text(text, encoding="utf-8")
