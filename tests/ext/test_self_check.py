"""self_check: a self-check question says "Question", its answer "Answer to Question"."""

from __future__ import annotations

import pytest
from ext_support import Book, warnings

# sphinx-exercise 1.2 reads ``env.app`` and a transform's ``app``, which
# Sphinx 9 deprecates (the book's build is not affected: a deprecation is not
# a Sphinx warning); the project's tests turn Python warnings into errors.
pytestmark = pytest.mark.filterwarnings(r"ignore:.*\.app. is deprecated")

PAGE = """\
# Questions

```{exercise} Predict the shape
:label: q-shape
:nonumber:
:class: self-check

What shape does the output have?
```

```{solution} q-shape
:class: dropdown

(2, 5, 16).
```

```{exercise} A real exercise
:label: ex-real

Train it.
```

```{solution} ex-real
:class: dropdown

Done.
```
"""

ANSWER_FIRST = """\
# Answer before the question

```{solution} q-later
The answer.
```

```{exercise} Which row
:label: q-later
:nonumber:
:class: self-check

Which row?
```
"""


def test_a_self_check_is_a_question_and_its_solution_an_answer(book: Book) -> None:
    app = book("self-check", {"index.md": PAGE})
    assert warnings(app) == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert '<p class="admonition-title">Question (Predict the shape)</p>' in html
    assert "Answer to" in html
    assert ">Answer to<a" in html.replace("\n", "") or "Answer to<a" in html
    assert " Question (Predict the shape)</a>" in html
    # A numbered exercise of the same page keeps sphinx-exercise's titles.
    assert "Solution to" in html
    assert "Exercise 1" in html
    assert html.count("Question (") == 2
    # Only the answer is marked, for its button's "Show answer" (a11y.js).
    assert html.count("self-check-answer") == 1


def test_an_answer_before_its_question_says_answer_too(book: Book) -> None:
    app = book("self-check", {"index.md": ANSWER_FIRST})
    assert warnings(app) == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "Solution to" not in html
    assert " Question (Which row)</a>" in html
    assert "Question (Which row)</p>" in html
