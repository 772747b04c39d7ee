"""lesson_notebooks: a link to a section leads to the id Jupyter gives its heading in the notebook.

A tiny book of two lessons whose headings hold what Sphinx writes otherwise
than the notebook's Markdown shows it (straight and curly apostrophes and
quotes, which Sphinx's smart quotes turn curly; a colon, an em dash, non-ASCII
letters; code and math, whose backticks and dollars Sphinx's title text
drops). Its converter turns each ``{ref}`` into a Markdown link; the link's
fragment must be the id JupyterLab and nbconvert give the heading (written
out below, as they gave it), and a heading of the notebook the converter
writes.
"""

# The curly apostrophes and quotes here are the point of the tests.
# ruff: noqa: RUF001

from __future__ import annotations

from pathlib import Path

import pytest
from book.downloads import Converter, Shared
from book.pages import heading_ids, link_targets
from ext_support import Book

# sphinx-exercise 1.2 reads ``env.app`` and a transform's ``app``, which
# Sphinx 9 deprecates (see test_self_check.py).
pytestmark = pytest.mark.filterwarnings(r"ignore:.*\.app. is deprecated")

LESSON = """\
(lesson)=
# A lesson’s title

(straight)=
## Today's models: what `softmax` does — and $QK^\\top$

Back to {ref}`the top <lesson>`, on to {ref}`curly`, and {ref}`ex-depth`.

(curly)=
## Today’s “best” models, "naïvely"

Back to {ref}`straight`.

## Exercise

```{exercise} Post-norm at depth
:label: ex-depth

Stack ten blocks.
```
"""

OTHER = """\
# Another lesson

See {ref}`straight` and {ref}`curly` in the first lesson.
"""

INDEX = """\
# Book

```{toctree}
lesson
other
```
"""

#: label -> the id JupyterLab 4.6.6 and nbconvert 7.17 give the heading it labels.
JUPYTER_IDS = {
    "lesson": "A-lesson’s-title",
    "straight": "Today's-models:-what-softmax-does-—-and-$QK^\\top$",
    "curly": 'Today’s-“best”-models,-"naïvely"',
    "ex-depth": "Exercise",  # an exercise is no heading: the section that holds it
}


@pytest.fixture
def converters(book: Book) -> dict[str, Converter]:
    """The converter of each lesson of the book."""
    app = book("notebook-links", {"index.md": INDEX, "lesson.md": LESSON, "other.md": OTHER})
    shared = Shared(frozenset({"lesson", "other"}), {}, {}, "lessons_code-0-py3-none-any.whl")
    return {name: Converter(app, name, shared) for name in shared.lessons}


@pytest.mark.parametrize(
    ("page", "label"),
    [("lesson", label) for label in JUPYTER_IDS] + [("other", "straight"), ("other", "curly")],
)
def test_a_link_leads_to_the_id_jupyter_gives_the_heading(
    converters: dict[str, Converter], page: str, label: str
) -> None:
    (target,) = link_targets(converters[page].inline(f"{{ref}}`{label}`"))
    notebook = "" if page == "lesson" else "lesson.ipynb"
    assert target == f"{notebook}#{JUPYTER_IDS[label]}"


def test_the_notebook_has_those_headings_and_links_only_to_them(
    converters: dict[str, Converter],
) -> None:
    lesson = converters["lesson"]
    markdown = lesson.markdown((Path(lesson.app.srcdir) / "lesson.md").read_text(encoding="utf-8"))
    assert set(JUPYTER_IDS.values()) <= set(heading_ids(markdown))
    targets = link_targets(markdown)
    assert len(targets) == 4
    assert {target.removeprefix("#") for target in targets} <= set(heading_ids(markdown))
