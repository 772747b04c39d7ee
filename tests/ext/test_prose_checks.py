"""prose_checks: each kind of text defect is a warning naming its page and line."""

from __future__ import annotations

import re

import pytest
from book.checks import template_sentences
from book.mathml import symbols
from docutils import nodes
from ext_support import Book, warnings

FINE = """# A fine page

One thread runs 12 steps; the two runs agree exactly.

Half of the runs is 50 % of them, and all is 100 % of them.

The printed zero `0.00e+00` is code, and so is this block:

```
1 threads 0.00e+00 50%
```

A formula: $x + y$.
"""

DEFECTS = [
    "# Defects",  # 1
    "",
    "## The cost: $O(T^2)$",  # 3
    "",
    "A sentence wrapped so that its next line begins with a percent sign: 92.2",  # 5
    "% of the clause is lost.",  # 6
    "",
    "The table has 1 distinct total.",  # 8
    "",
    "The outputs differ by 0.00e+00 at most.",  # 10
    "",
    "Half of the runs is 50 % of them.",  # 12
    "",
    "Most is 90% of them, and all is 100% of them.",  # 14
]


def _line(text: str) -> int:
    return DEFECTS.index(text) + 1


def test_a_page_without_defects_builds_without_warnings(book: Book) -> None:
    app = book("prose", {"index.md": FINE})
    assert warnings(app) == ""


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            _line("% of the clause is lost."),
            "a line of this paragraph starts with '%', which MyST reads as a comment",
        ),
        (
            _line("## The cost: $O(T^2)$"),
            "prose: the heading 'The cost: O(T^2)' contains math",
        ),
        (
            _line("The table has 1 distinct total."),
            "prose: '1 distinct total': write 'one' and the singular",
        ),
        (
            _line("The outputs differ by 0.00e+00 at most."),
            "prose: 'The outputs differ by 0.00e+00': an exact zero is written in words",
        ),
        (
            _line("Half of the runs is 50 % of them."),
            "prose: a percentage is written '50 %' here and '50%' elsewhere on the page",
        ),
    ],
    ids=["comment", "math-heading", "one-plural", "zero", "percent"],
)
def test_each_defect_is_reported_at_its_line(book: Book, line: int, message: str) -> None:
    app = book("prose", {"index.md": "\n".join(DEFECTS) + "\n"})
    assert f"index.md:{line}: WARNING: {message}" in warnings(app)


def test_the_notation_table_names_each_symbol_once_and_every_symbol(book: Book) -> None:
    notation = (
        "---\norphan: true\n---\n# Notation\n\n"
        "| Symbol | Meaning |\n| --- | --- |\n| $x$ | a token |\n| $x$ | again |\n"
    )
    app = book("prose", {"index.md": "# Page\n\nA sum: $x + \\zeta$.\n", "notation.md": notation})
    found = warnings(app)
    assert "notation.md:9: WARNING: notation: 'x' is defined twice (first on line 8)" in found
    assert re.search(
        r"index\.md:3: WARNING: notation: \N{GREEK SMALL LETTER ZETA} in \$x \+ \\zeta\$ "
        r"is not in the notation table",
        found,
    )
    # x is in the table: only zeta is reported.
    assert "notation: x," not in found


def test_a_pasted_zero_is_said_in_words() -> None:
    paragraph = nodes.paragraph("", "The change is ")
    paragraph += nodes.inline("", "0.00", classes=["pasted-text"])
    found = [why for _, why in template_sentences(paragraph)]
    assert found == ["pasted value '0.00' is zero: say what a zero means in words"]
    paragraph[1].replace_self(nodes.inline("", "0.01", classes=["pasted-text"]))
    assert list(template_sentences(paragraph)) == []


@pytest.mark.parametrize(
    ("value", "reported"),
    [("175207", True), ("175,207", False), ("2026", False), ("0.12345", False)],
)
def test_a_long_pasted_number_has_thousands_separators(value: str, reported: bool) -> None:
    paragraph = nodes.paragraph("", "It has ")
    paragraph += nodes.inline("", value, classes=["pasted-text"])
    found = [why for _, why in template_sentences(paragraph)]
    expected = (
        f"pasted value {value!r} has no thousands separators: glue it with a format such as `:,`"
    )
    assert found == ([expected] if reported else [])


@pytest.mark.parametrize(
    ("tex", "found"),
    [
        (r"x_i + W_q", {"x", "i", "W", "q"}),
        (r"d_\text{head}", {"d_head"}),
        (r"d_{\mathrm{model}}^2 + d", {"d_model", "d"}),
        # An italic name is a variable of its own, not a label.
        (r"x_{\mathit{pos}}", {"x", "pos"}),
        (
            r"\operatorname{softmax}(\alpha) \in \mathbb{R}",
            {"softmax", "\N{GREEK SMALL LETTER ALPHA}", "\N{DOUBLE-STRUCK CAPITAL R}"},
        ),
        (r"\text{for } \ell", {"\N{SCRIPT SMALL L}"}),
        # TeX's own operators and symbols name nothing of the book's.
        (r"\log p + \max_i \partial x / \infty", {"p", "i", "x"}),
        # A calligraphic letter is not its plain letter: listing the loss does not list L.
        (r"\mathcal{L} = L(L+1)", {"\N{SCRIPT CAPITAL L}", "L"}),
    ],
)
def test_symbols_of_a_formula(tex: str, found: set[str]) -> None:
    assert symbols(tex) == found
