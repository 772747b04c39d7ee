"""heading_ids: the id Jupyter gives a Markdown heading, and a link that leads to it.

Every expected id below is the one both of Jupyter's renderers gave that
heading when these tests were written: JupyterLab 4.6.6 (its renderMarkdown
with marked 17, in jsdom) and nbconvert 7.17 (its HTML exporter's Markdown,
the percent-encoding of its id decoded, as a browser decodes a link). They
are written out here, not computed, so a change of the rule fails.
"""

# The curly apostrophes and quotes here are the point of the tests.
# ruff: noqa: RUF001

from __future__ import annotations

import pytest
from book.pages import heading_id, heading_ids, link_target, link_targets

#: A heading's text (after the ``#`` marks) -> the id Jupyter gives it.
JUPYTER_IDS = {
    "today’s models": "today’s-models",
    "today's models": "today's-models",
    "Why `softmax`?": "Why-softmax?",
    "A whole Transformer, trained: reading dates": "A-whole-Transformer,-trained:-reading-dates",
    "Attention — the idea": "Attention-—-the-idea",
    "Positional encoding: été, naïve, Ελληνικά": "Positional-encoding:-été,-naïve,-Ελληνικά",
    'The “quoted” word and "straight" ones': 'The-“quoted”-word-and-"straight"-ones',
    "Scores $QK^\\top/\\sqrt{d_k}$ and *softmax*": "Scores-$QK^\\top/\\sqrt{d_k}$-and-softmax",
    "Math with underscores $a_1 + b_2$ here": "Math-with-underscores-$a_1-+-b_2$-here",
    "Links [in](x.ipynb) headings": "Links-in-headings",
    "A &amp; B &lt; C & D": "A-&-B-<-C-&-D",
    "Escaped \\*stars\\*": "Escaped-*stars*",
    "Two  spaces": "Two--spaces",
    "Trailing hashes ##": "Trailing-hashes",
    "50% of (a|b) [c] {d}": "50%-of-(a|b)-[c]-{d}",
    "Code with `$x$` dollars": "Code-with-$x$-dollars",
    "**Bold** and _em_ and ~~gone~~": "Bold-and-em-and-gone",
    "![alt](a.png) pic": "-pic",
    "<span>x</span> y": "x-y",
    "Costs $5 and $6 each": "Costs-$5-and-$6-each",
    "A $$y$$ display": "A-$$y$$-display",
    "Escaped \\$ dollar": "Escaped-$-dollar",
    "Why `a  b` kept": "Why-a--b-kept",
    "Q&A: what's `x`?": "Q&A:-what's-x?",
    "Braces ${a}$ and $}$": "Braces-${a}$-and-$}$",
    "A `code $x` and $y$": "A-code-$x-and-$y$",
    "C# and F#": "C#-and-F#",
    "Paren $f(x)$ and (y)": "Paren-$f(x)$-and-(y)",
    # JupyterLab's form (nbconvert shows this math as $x$)
    "a \\\\(x\\\\) b": "a-\\(x\\)-b",
}


@pytest.mark.parametrize("text", JUPYTER_IDS)
def test_a_heading_has_the_id_jupyter_gives_it(text: str) -> None:
    assert heading_id(text) == JUPYTER_IDS[text]


def test_the_id_is_not_the_text_with_dashes_nor_sphinx_s_title() -> None:
    """The two rules the notebooks' links used before: the raw text, Sphinx's smart quotes."""
    assert heading_id("Why `softmax`, today's $x$?") == "Why-softmax,-today's-$x$?"
    assert heading_id("today's models") != "today’s-models"  # Sphinx's curly apostrophe


def test_a_cell_s_headings_in_order_quotes_and_lists_too_code_not() -> None:
    cell = (
        "# A lesson’s title\n\nText with $x$ and a # sign.\n\n"
        "```python\n# a comment, not a heading\n```\n\n"
        "> ## Quoted: `code`\n\n- ### In a list\n\nSetext heading\n---\n"
    )
    assert heading_ids(cell) == [
        "A-lesson’s-title",
        "Quoted:-code",
        "In-a-list",
        "Setext-heading",
    ]


def test_math_does_not_run_across_a_blank_line() -> None:
    assert heading_ids("It costs $5.\n\n## Then $x$ is *x*") == ["Then-$x$-is-x"]


@pytest.mark.parametrize("text", [t for t in JUPYTER_IDS if "\\\\(" not in t])
def test_a_link_to_a_heading_reads_back_as_its_id(text: str) -> None:
    anchor = JUPYTER_IDS[text]
    cell = f"## {text}\n\nSee [the heading]({link_target(anchor)})."
    assert link_targets(cell)[-1] == f"#{anchor}"  # after the heading's own link, if any
    assert heading_ids(cell) == [anchor]


def test_a_link_escapes_only_what_markdown_would_read_otherwise() -> None:
    assert link_target("today’s-models") == "#today’s-models"
    assert link_target("Q&A:-f(x)") == "#Q\\&A:-f\\(x\\)"
    assert link_target("Paren-$f(x)$") == "#Paren-$f(x)$"  # math stays as written


def test_link_targets_are_links_not_images_and_not_code() -> None:
    cell = (
        "![a figure](attachment:f.svg) [one](#a) `[not](#b)` [two](other.ipynb#c\\'d)"
        " [three](file:///etc/x)"
    )
    assert link_targets(cell) == ["#a", "other.ipynb#c'd", "file:///etc/x"]


@pytest.mark.parametrize(
    "anchor",
    [
        "",  # nothing to link
        "a\tb",  # a control character
        "Set-$\\{x\\}$",  # math JupyterLab reads as written, CommonMark as escaped
        "a-\\(x\\)-b",  # \( outside math: an escape to Markdown, math to JupyterLab
    ],
)
def test_an_anchor_no_link_can_reach_is_refused(anchor: str) -> None:
    with pytest.raises(ValueError, match="anchor"):
        link_target(anchor)


def test_a_heading_is_one_line() -> None:
    with pytest.raises(ValueError, match="one line"):
        heading_id("two\nlines")


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (heading_id, "text"),
        (heading_ids, "markdown"),
        (link_target, "anchor"),
        (link_targets, "markdown"),
    ],
)
def test_text_must_be_a_string(function: object, name: str) -> None:
    with pytest.raises(TypeError, match=name):
        function(b"# bytes")  # type: ignore[operator]
