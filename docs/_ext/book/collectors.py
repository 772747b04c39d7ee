"""Per-page state the build keeps between pages: who uses what, for the pages that list it.

Two kinds of page list what other pages use: the glossary, under each
term, the sections that refer to it ("Used in: ..."), and each API page,
under each object, the lessons that import it ("Used in the lessons: ...").
Both need every page read before they can be written. One Sphinx
:class:`~sphinx.environment.collectors.EnvironmentCollector`,
:class:`LinksCollector`, keeps what each page uses in the environment
(:class:`Links`), forgets a page when it is read again or removed, merges the
records of parallel readers (of the pages they read), and asks for the
listing pages to be written again when what they show changed; the lists
themselves are filled in when those pages are written (:func:`fill_backlinks`,
:func:`fill_usage`), so a no-change rebuild reads and writes none of them.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: The key under which the source-read handler (execution.py) leaves a page's
#: imported package names for :class:`LinksCollector` (``env.temp_data``).
IMPORTS = "book_imports"

# A use: (term key, section id or "" for the page's top, section title). The title
# names an exercise or a solution the use lies in ("Exercise, solution").
Use = tuple[str, str, str]


def _key(text: str) -> str:
    """How a term is matched: case and runs of white space do not matter."""
    return " ".join(text.split()).lower()


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


@dataclass
class Links:
    """What every page uses, kept in the environment (``env.book_links``)."""

    #: docname -> the glossary terms it refers to, and where.
    uses: dict[str, list[Use]] = field(default_factory=dict)
    #: docname -> the package names that lesson imports.
    imports: dict[str, list[str]] = field(default_factory=dict)
    #: Pages holding a glossary, and pages holding a ``used-in-pages`` list.
    glossaries: set[str] = field(default_factory=set)
    listings: set[str] = field(default_factory=set)

    def shown(self, env: Any) -> tuple[Any, ...]:
        """What the lists show: every page's uses and imports, and its title."""
        titles = getattr(env, "titles", {})

        def title(page: str) -> str:
            return titles[page].astext() if page in titles else page

        return (
            sorted((page, uses, title(page)) for page, uses in self.uses.items()),
            sorted((page, names, title(page)) for page, names in self.imports.items()),
        )


def _links(env: Any) -> Links:
    """The environment's :class:`Links` (made empty the first time)."""
    if not isinstance(getattr(env, "book_links", None), Links):
        env.book_links = Links()
    links: Links = env.book_links
    return links


class LinksCollector(EnvironmentCollector):
    """Keeps :class:`Links` up to date as pages are read, removed and merged."""

    def __init__(self) -> None:
        self.before: tuple[Any, ...] | None = None

    def clear_doc(self, app: Sphinx, env: Any, docname: str) -> None:
        """Forget what a removed or re-read page used."""
        links = _links(env)
        links.uses.pop(docname, None)
        links.imports.pop(docname, None)
        links.glossaries.discard(docname)
        links.listings.discard(docname)

    def merge_other(self, app: Sphinx, env: Any, docnames: AbstractSet[str], other: Any) -> None:
        """Take a parallel reader's records of the pages it read."""
        links, theirs = _links(env), _links(other)
        links.uses.update({page: theirs.uses[page] for page in docnames if page in theirs.uses})
        links.imports.update(
            {page: theirs.imports[page] for page in docnames if page in theirs.imports}
        )
        links.glossaries |= theirs.glossaries & docnames
        links.listings |= theirs.listings & docnames

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Record what the page just read uses, and whether it lists uses."""
        env = app.env
        docname, links = env.docname, _links(env)
        if IMPORTS in env.temp_data:
            links.imports[docname] = env.temp_data[IMPORTS]
        if any(True for _ in doctree.findall(used_in_pages)):
            links.listings.add(docname)
        if any(True for _ in doctree.findall(addnodes.glossary)):
            links.glossaries.add(docname)
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
            links.uses[docname] = found

    def get_outdated_docs(
        self, app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
    ) -> list[str]:
        """Before pages are read again, note what the lists show now."""
        self.before = _links(env).shown(env)
        return []

    def get_updated_docs(self, app: Sphinx, env: Any) -> list[str]:
        """The listing pages, when a use, an import or a title changed."""
        links = _links(env)
        if self.before == links.shown(env):
            return []
        return sorted(links.glossaries | links.listings)


class used_in_pages(nodes.General, nodes.Element):
    """Placeholder for the list of pages that import a name."""


class UsedInPagesDirective(SphinxDirective):
    """``.. used-in-pages:: dotted.name`` -- links to the lesson pages importing it."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        """Return the placeholder; it is filled when the page is written."""
        node = used_in_pages()
        node["target"] = self.arguments[0]
        return [node]


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


def fill_backlinks(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Add "Used in:" and its links under every glossary definition that is used."""
    if docname not in _links(app.env).glossaries:
        return
    env = app.env
    rank = {page: index for index, page in enumerate(_book_order(env))}
    by_term: dict[str, list[tuple[str, str, str]]] = {}
    for page in sorted(_links(env).uses, key=lambda page: (rank.get(page, len(rank)), page)):
        for term, anchor, title in _links(env).uses[page]:
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


def fill_usage(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace each placeholder by links to the pages that import its name."""
    usage = _links(app.env).imports
    for node in doctree.findall(used_in_pages):
        target = node["target"]
        pages = sorted(page for page, names in usage.items() if target in names)
        if not pages:
            node.replace_self([])
            continue
        paragraph = nodes.paragraph(classes=["used-in-pages"])
        paragraph += nodes.strong(text="Used in the lessons: ")
        for index, page in enumerate(pages):
            if index:
                paragraph += nodes.Text(", ")
            title = app.env.titles[page].astext() if page in app.env.titles else page
            uri = app.builder.get_relative_uri(docname, page)
            paragraph += nodes.reference("", title, internal=True, refuri=uri)
        node.replace_self(paragraph)


def register(app: Sphinx) -> None:
    """The collector, and the API pages' ``used-in-pages`` directive and node."""
    app.add_env_collector(LinksCollector)
    app.add_node(used_in_pages)
    app.add_directive("used-in-pages", UsedInPagesDirective)
