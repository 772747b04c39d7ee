"""The API reference: one field list per object, modest "Examples using" headings.

Every documented object (``dl.py.function``, ``dl.py.class``, ``dl.py.method``
...) carries at most one field list in its own ``dd`` (fields of objects nested
inside it, such as a class's methods, are theirs), and in it at most one
"Parameters", one "Returns" and one "Return type" field; each parameter is
named once. The count of duplicated field lists over the whole reference is
reported and must be 0.

sphinx-gallery's "Examples using <name>" headings are rubrics no larger than
the page's ``h3``; at 1280 px neither they nor anything in the right-hand
contents column runs past its edge.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from site_support import BuildResult, PageVisit

#: Object types autodoc writes as ``<dl class="py TYPE">``.
OBJECT_TYPES = {
    "function",
    "class",
    "method",
    "attribute",
    "property",
    "data",
    "exception",
    "classmethod",
    "staticmethod",
}
SINGLE_FIELDS = ("Parameters", "Returns", "Return type")
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


@dataclass
class Element:
    """A node of a small HTML tree: enough to walk the API pages."""

    tag: str
    classes: set[str]
    parent: Element | None = None
    children: list[Element | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def elements(self) -> list[Element]:
        return [c for c in self.children if isinstance(c, Element)]

    def iter(self):
        yield self
        for child in self.elements():
            yield from child.iter()


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", set())
        self._open = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        node = Element(tag, classes, parent=self._open)
        self._open.children.append(node)
        if tag not in VOID:
            self._open = node

    def handle_endtag(self, tag: str) -> None:
        node = self._open
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self._open = node.parent

    def handle_data(self, data: str) -> None:
        self._open.children.append(data)


def parse(path: Path) -> Element:
    builder = _TreeBuilder()
    builder.feed(path.read_text(encoding="utf-8"))
    return builder.root


def is_object(node: Element) -> bool:
    return node.tag == "dl" and "py" in node.classes and bool(node.classes & OBJECT_TYPES)


def own_descendants(node: Element):
    """The descendants of ``node`` that do not belong to an object nested in it."""
    for child in node.elements():
        if is_object(child):
            continue
        yield child
        yield from own_descendants(child)


@dataclass
class ObjectFields:
    """What one documented object shows in its own description."""

    page: str
    name: str
    field_lists: int
    fields: Counter
    parameters: Counter


def object_fields(html: Path) -> list[ObjectFields]:
    found = []
    for page in sorted((html / "api").glob("*.html")):
        for obj in parse(page).iter():
            if not is_object(obj):
                continue
            dt = next(c for c in obj.elements() if c.tag == "dt")
            name = dt.text().split("(")[0].replace("#", "").strip()
            dd = next(c for c in obj.elements() if c.tag == "dd")
            lists = [n for n in own_descendants(dd) if n.tag == "dl" and "field-list" in n.classes]
            fields: Counter = Counter()
            parameters: Counter = Counter()
            for field_list in lists:
                for entry in field_list.elements():
                    if entry.tag == "dt":
                        label = entry.text().strip().rstrip(":").strip()
                        fields[label] += 1
                    elif entry.tag == "dd" and fields and label == "Parameters":
                        # One <li> per parameter; a lone parameter is a paragraph.
                        items = [i for i in entry.iter() if i.tag == "li"] or [entry]
                        for item in items:
                            strong = next((s for s in item.iter() if s.tag == "strong"), None)
                            if strong is not None:
                                parameters[strong.text().strip()] += 1
            found.append(ObjectFields(page.name, name, len(lists), fields, parameters))
    return found


def test_every_api_object_has_one_field_list(built_site: BuildResult, artifacts: Path) -> None:
    objects = object_fields(built_site.html)
    assert len(objects) >= 20  # every module page was read

    duplicated = [o for o in objects if o.field_lists > 1]
    repeated = {
        f"{o.page}: {o.name}": {k: o.fields[k] for k in SINGLE_FIELDS if o.fields[k] > 1}
        for o in objects
        if any(o.fields[k] > 1 for k in SINGLE_FIELDS)
    }
    twice_named = {
        f"{o.page}: {o.name}": sorted(p for p, n in o.parameters.items() if n > 1)
        for o in objects
        if any(n > 1 for n in o.parameters.values())
    }
    (artifacts / "api_field_lists.txt").write_text(
        f"duplicated API field lists: {len(duplicated)} of {len(objects)} objects\n",
        encoding="utf-8",
    )
    assert [f"{o.page}: {o.name}" for o in duplicated] == []
    assert repeated == {}
    assert twice_named == {}

    # The page named in the issue: four objects, one Parameters field each, and
    # the docstrings' Shape sections are fields of that same list.
    attention = [o for o in objects if o.page == "lessons_code.attention.html"]
    assert len(attention) == 4
    assert [o.fields["Parameters"] for o in attention] == [1, 1, 1, 1]
    assert all(o.fields["Shape"] == 1 for o in attention)
    assert all(o.fields["Returns"] == 1 for o in attention)


EXAMPLES_JS = """
() => {
  const article = document.querySelector("article.bd-article");
  const probe = document.createElement("h3");
  probe.textContent = "probe";
  article.appendChild(probe);
  const h3 = parseFloat(getComputedStyle(probe).fontSize);
  probe.remove();
  const headings = Array.from(article.querySelectorAll("h1, h2, h3, h4, h5, h6, p.rubric"))
    .filter((e) => e.textContent.trim().startsWith("Examples using"))
    .map((e) => {
      const r = e.getBoundingClientRect();
      const a = article.getBoundingClientRect();
      return {
        text: e.textContent.trim(),
        tag: e.tagName.toLowerCase(),
        size: parseFloat(getComputedStyle(e).fontSize),
        overflows: e.scrollWidth > e.clientWidth + 1 || r.right > a.right + 0.5,
      };
    });
  const side = document.querySelector(".bd-sidebar-secondary");
  const s = side.getBoundingClientRect();
  const wider = Array.from(side.querySelectorAll("*"))
    .filter((e) => e.checkVisibility())
    .filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 && (r.right > s.right + 0.5 || r.width > s.width + 0.5);
    })
    .map((e) => e.tagName.toLowerCase() + ": " + e.textContent.trim().slice(0, 60));
  return {
    h3,
    headings,
    sidebar: {
      visible: side.checkVisibility() && s.width > 0,
      scrollWidth: side.scrollWidth,
      clientWidth: side.clientWidth,
      wider,
      text: side.textContent,
    },
  };
}
"""


def test_examples_headings_are_modest_and_nothing_overflows_the_contents_column(
    browser, site_url: str, built_site: BuildResult
) -> None:
    pages = sorted(p.name for p in (built_site.html / "api").glob("*.html"))
    assert len(pages) >= 5
    problems: dict[str, list] = {}
    headings = 0
    for name in pages:
        visit = PageVisit(browser, site_url, f"api/{name}")
        try:
            visit.page.set_viewport_size({"width": 1280, "height": 900})
            found = visit.page.evaluate(EXAMPLES_JS)
        finally:
            visit.close()
        bad: list = []
        for heading in found["headings"]:
            headings += 1
            if heading["tag"] != "p" or heading["size"] > found["h3"] or heading["overflows"]:
                bad.append(heading)
        side = found["sidebar"]
        if not side["visible"]:
            bad.append("the contents column is not shown at 1280 px")
        if side["scrollWidth"] > side["clientWidth"]:
            bad.append(f"contents column scrolls: {side['scrollWidth']} > {side['clientWidth']}")
        bad.extend(f"wider than the contents column: {w}" for w in side["wider"])
        if "Examples using" in side["text"]:
            bad.append("an 'Examples using' heading is listed in the contents column")
        if bad:
            problems[name] = bad
    assert headings >= 5  # the minigalleries are there
    assert problems == {}
