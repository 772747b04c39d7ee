"""api_layout: one field list per API object; "Examples using ..." as a rubric on API pages."""

from __future__ import annotations

import pytest
from docutils import nodes
from ext_support import Book, warnings
from sphinx import addnodes

EXAMPLES = """\
{title}
{underline}

Examples using attend
---------------------

Two examples.
"""


# Sphinx 9.0's own napoleon reads autodoc's options the deprecated way.
@pytest.mark.filterwarnings(
    "ignore:The mapping interface for autodoc options:sphinx.deprecation.RemovedInSphinx11Warning"
)
def test_an_object_has_one_field_list_with_its_shape_and_return_type(book: Book) -> None:
    app = book("api", {"index.rst": "API\n===\n\n.. autofunction:: documented.attend\n"})
    assert warnings(app) == ""
    (content,) = app.env.get_doctree("index").findall(addnodes.desc_content)
    assert not any(True for _ in content.findall(nodes.rubric))
    (fields,) = content.findall(nodes.field_list)
    names = [field[0].astext() for field in fields.children]
    assert names == ["Parameters", "Returns", "Return type", "Shape", "Raises"]
    shape = fields.children[names.index("Shape")]
    assert shape[1].astext() == "x is (n, d)."
    # "dict of str to int": each type a cross-reference of its own.
    rtype = fields.children[names.index("Return type")]
    targets = [ref["reftarget"] for ref in rtype.findall(addnodes.pending_xref)]
    assert targets == ["dict", "str", "int"]
    # The parameters' types come from the signature, once.
    assert fields.children[0].astext().count("float") == 2


def test_examples_headings_of_api_pages_become_rubrics(book: Book) -> None:
    pages = {
        "index.rst": EXAMPLES.format(title="Book", underline="====")
        + "\n.. toctree::\n\n   api/mod\n",
        "api/mod.rst": EXAMPLES.format(title="Module", underline="======"),
    }
    app = book("api", pages)
    assert warnings(app) == ""
    api = app.env.get_doctree("api/mod")
    (rubric,) = api.findall(nodes.rubric)
    assert rubric.astext() == "Examples using attend"
    assert rubric["ids"] == ["examples-using-attend"]
    assert "sphx-glr-examples-heading" in rubric["classes"]
    assert [title.astext() for title in api.findall(nodes.title)] == ["Module"]
    # The text of the section stays, after the rubric.
    assert rubric.parent.children[rubric.parent.index(rubric) + 1].astext() == "Two examples."
    # Outside api/ the section is left alone.
    titles = [title.astext() for title in app.env.get_doctree("index").findall(nodes.title)]
    assert titles == ["Book", "Examples using attend"]
