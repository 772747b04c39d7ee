"""Shape the API reference's pages: one field list per object, modest gallery headings.

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
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

SHAPE = "Shape"
EXAMPLES_PREFIX = "Examples using"
API_FOLDER = "api/"
CSS = "api.css"
#: The words of a NumPy type such as "dict of str to int" that are not types.
TYPE_WORDS = re.compile(r"(\s+(?:of|to|or|and)\s+|,\s+)")
#: A return type Sphinx does not split into its types by itself.
MAPPING = re.compile(r"\s(?:to|and)\s")


def _shape_as_field(app: Sphinx, domain: str, objtype: str, contentnode: nodes.Element) -> None:
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


def _return_type_after_returns(
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
        if not self.env.docname.startswith(API_FOLDER):
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


def setup(app: Sphinx) -> dict[str, Any]:
    """Register both changes and the stylesheet for the API pages."""
    # autodoc's type-hint merge listens to the same event at the default 500.
    app.connect("object-description-transform", _shape_as_field, priority=400)
    app.connect("object-description-transform", _return_type_after_returns, priority=600)
    app.add_transform(ExamplesHeadingAsRubric)
    app.add_css_file(CSS)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
