"""Under each glossary definition, the sections of the book that use the term.

Every ``{term}`` reference is a ``pending_xref`` of type ``term`` when a page
is read. For each one this extension records the term, the page and the
innermost section around it; when the glossary page is written, each entry
gets a paragraph "Used in:" with one link per section (in the order of the
book), named by the page title and the section title.

References from the glossary to itself (one entry naming another) are left
out: they are visible on the page already.

The records live in the build environment, one list per page, so that they
survive incremental builds (``env-purge-doc`` forgets a page that is read
again) and parallel reads (``env-merge-info`` combines the readers' records).
The glossary page is written again whenever what its lists would show has
changed, without being read again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes

if TYPE_CHECKING:
    from sphinx.application import Sphinx

# A use: (term key, section id or "" for the page's top, section title). The title
# names an exercise or a solution the use lies in ("Exercise, solution").
Use = tuple[str, str, str]


def _key(text: str) -> str:
    """How a term is matched: case and runs of white space do not matter."""
    return " ".join(text.split()).lower()


def _uses(env: Any) -> dict[str, list[Use]]:
    """The term references of each page (kept in the environment)."""
    if not hasattr(env, "glossary_term_uses"):
        env.glossary_term_uses = {}
    uses: dict[str, list[Use]] = env.glossary_term_uses
    return uses


def _glossaries(env: Any) -> set[str]:
    """Docnames of the pages that hold a glossary."""
    if not hasattr(env, "glossary_pages"):
        env.glossary_pages = set()
    pages: set[str] = env.glossary_pages
    return pages


def _is_heading_section(node: nodes.Node) -> bool:
    """Whether ``node`` is a section with a heading of its own.

    sphinx-exercise wraps the body of every exercise and solution in a
    section without a title whose id, ``exercise-content`` or
    ``solution-content``, is the same for all of them: no place to link to.
    """
    return (
        isinstance(node, nodes.section)
        and bool(node.children)
        and isinstance(node.children[0], nodes.title)
    )


def _section(node: nodes.Node) -> nodes.section | None:
    """The innermost section with a heading around ``node``."""
    parent = node.parent
    while parent is not None and not _is_heading_section(parent):
        parent = parent.parent
    return parent if isinstance(parent, nodes.section) else None


def _gated(node: nodes.Node) -> str:
    """Which of an exercise or a solution ``node`` lies in ("" for neither)."""
    parent = node.parent
    while parent is not None and not isinstance(parent, nodes.section | nodes.document):
        # sphinx-exercise's nodes are admonitions with the class "exercise"
        # or "solution"
        if isinstance(parent, nodes.Admonition) and isinstance(parent, nodes.Element):
            for kind in ("solution", "exercise"):
                if kind in parent["classes"]:
                    return kind
        parent = parent.parent
    if isinstance(parent, nodes.section) and not _is_heading_section(parent):
        return _gated(parent)
    return ""


def collect_uses(app: Sphinx, doctree: nodes.document) -> None:
    """Record the term references of the page just read."""
    env = app.env
    docname = env.docname
    if any(True for _ in doctree.findall(addnodes.glossary)):
        _glossaries(env).add(docname)
        return
    found: list[Use] = []
    for ref in doctree.findall(addnodes.pending_xref):
        if ref.get("refdomain") != "std" or ref.get("reftype") != "term":
            continue
        section = _section(ref)
        # A use inside an exercise or its solution is named as such; the
        # link goes to the section that holds it.
        gated = _gated(ref)
        # The page's own top section is the page itself: no anchor, no title.
        if section is None or isinstance(section.parent, nodes.document):
            found.append((_key(ref["reftarget"]), "", gated))
        else:
            heading = section.children[0].astext()
            if gated:
                heading = f"{heading}, {gated}"
            found.append((_key(ref["reftarget"]), section["ids"][0], heading))
    if found:
        _uses(env)[docname] = found


def _book_order(env: Any) -> list[str]:
    """Docnames in reading order: the toctrees walked from the root page."""
    order: list[str] = []
    stack = [env.config.root_doc]
    while stack:
        docname = stack.pop()
        if docname in order:
            continue
        order.append(docname)
        stack.extend(reversed(env.toctree_includes.get(docname, [])))
    return order


def _state(env: Any) -> list[tuple[str, list[Use], str]]:
    """What the lists show: every page's uses and its title."""
    titles = getattr(env, "titles", {})
    return sorted(
        (page, uses, titles[page].astext() if page in titles else page)
        for page, uses in _uses(env).items()
    )


def remember_state(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Before pages are read again, note what the lists show now."""
    # A note on this build's application object, read back by rewrite_glossary.
    app._glossary_backlinks_before = _state(env)  # type: ignore[attr-defined]
    return []


def rewrite_glossary(app: Sphinx, env: Any) -> list[str]:
    """Write the glossary again when a use, a section title or a page title changed."""
    if getattr(app, "_glossary_backlinks_before", None) == _state(env):
        return []
    return sorted(_glossaries(env))


def fill_backlinks(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Add "Used in:" and its links under every glossary definition that is used."""
    if docname not in _glossaries(app.env):
        return
    env = app.env
    rank = {page: index for index, page in enumerate(_book_order(env))}
    by_term: dict[str, list[tuple[str, str, str]]] = {}
    for page in sorted(_uses(env), key=lambda page: (rank.get(page, len(rank)), page)):
        for term, anchor, title in _uses(env)[page]:
            places = by_term.setdefault(term, [])
            if (page, anchor, title) not in places:
                places.append((page, anchor, title))
    for glossary in doctree.findall(addnodes.glossary):
        for item in glossary.findall(nodes.definition_list_item):
            terms = [_key(term.astext()) for term in item.findall(nodes.term)]
            places = [place for term in terms for place in by_term.get(term, [])]
            if not places:
                continue
            paragraph = nodes.paragraph(classes=["glossary-used-in"])
            paragraph += nodes.strong(text="Used in: ")
            for index, (page, anchor, title) in enumerate(places):
                if index:
                    paragraph += nodes.Text("; ")
                page_title = env.titles[page].astext() if page in env.titles else page
                text = page_title
                if title:  # a section, or an exercise at the page's top level
                    text += f" \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} {title}"
                uri = app.builder.get_relative_uri(docname, page)
                if anchor:
                    uri += "#" + anchor
                paragraph += nodes.reference("", text, internal=True, refuri=uri)
            definition = item.next_node(nodes.definition)
            if definition is not None:  # a glossary entry always has one
                definition.append(paragraph)


def purge_uses(app: Sphinx, env: Any, docname: str) -> None:
    """Forget what a removed or re-read page referenced."""
    _uses(env).pop(docname, None)
    _glossaries(env).discard(docname)


def merge_uses(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    """Combine the records of parallel readers (only the pages they read)."""
    theirs = _uses(other)
    _uses(env).update({page: theirs[page] for page in docnames if page in theirs})
    _glossaries(env).update(_glossaries(other) & set(docnames))


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hooks."""
    app.connect("doctree-read", collect_uses)
    app.connect("env-get-outdated", remember_state)
    app.connect("env-get-updated", rewrite_glossary)
    app.connect("env-purge-doc", purge_uses)
    app.connect("env-merge-info", merge_uses)
    app.connect("doctree-resolved", fill_backlinks)
    return {
        "version": "1.0",
        "env_version": 1,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
