"""katex_mathml: every formula becomes MathML at build time, or the build stops."""

from __future__ import annotations

import re

import pytest
from ext_support import Book, warnings
from katex_mathml import MathError, render, styled

PAGE = r"""# Formulas

Inline: $\frac{a}{b}$ and $x \in \mathbb{R}^d$.

$$
\sum_i \alpha_i v_i
$$ (eq-sum)

By {eq}`eq-sum` the output is a weighted sum.
"""


def _visible(html: str) -> str:
    """The page without the TeX each formula carries as its annotation."""
    return re.sub(r"<annotation\b.*?</annotation>", "", html, flags=re.DOTALL)


def test_formulas_become_mathml_without_tex_or_errors(book: Book) -> None:
    app = book("katex", {"index.md": PAGE})
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert warnings(app) == ""
    assert html.count("<math") == 3
    visible = _visible(html)
    for tex in (r"\frac", r"\mathbb", r"\sum", r"\alpha", "$"):
        assert tex not in visible
    assert "katex-error" not in html
    assert "<mfrac>" in visible
    # The styled letter is a character of its own, not a variant browsers ignore.
    assert "\N{DOUBLE-STRUCK CAPITAL R}" in visible
    assert 'mathvariant="double-struck"' not in visible


def test_a_labelled_equation_gets_a_number_and_its_reference_shows_it(book: Book) -> None:
    app = book("katex", {"index.md": PAGE})
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<div class="math notranslate display-math" id="equation-eq-sum">', html)
    assert '<span class="eqno">(1)' in html
    assert re.search(r'href="#equation-eq-sum"[^>]*>.*?\(1\)', html, flags=re.DOTALL)


@pytest.mark.parametrize(
    ("name", "page", "line"),
    [
        ("index.md", "# Bad\n\nFine: $x^2$.\n\n$$\n\\frac{1}{\n$$\n", 5),
        ("index.md", "# Bad\n\nFine: $x^2$.\n\nBroken: $\\frac{1}{$ inline.\n", 5),
        # A role's node has no line of its own: the paragraph's is named.
        ("index.rst", "Bad\n===\n\nFine.\n\nBroken: :math:`\\frac{1}{` inline.\n", 6),
    ],
    ids=["display", "inline", "rst-role"],
)
def test_a_malformed_formula_stops_the_build_naming_page_and_line(
    book: Book, name: str, page: str, line: int
) -> None:
    where = re.escape(f"{name}:{line}: cannot typeset '\\\\frac{{1}}{{'")
    with pytest.raises(MathError, match=where):
        book("katex", {name: page})


def _body(latex: str) -> str:
    """The MathML between <semantics> and the TeX annotation."""
    return render(latex, display=False).split("<semantics>")[1].split("<annotation")[0]


@pytest.mark.parametrize(
    ("latex", "letters"),
    [
        (r"\mathbb{R}", "\N{DOUBLE-STRUCK CAPITAL R}"),
        (r"\mathbb{N}", "\N{DOUBLE-STRUCK CAPITAL N}"),
        (r"\mathbf{x}", "\N{MATHEMATICAL BOLD SMALL X}"),
        (r"\boldsymbol{\alpha}", "\N{MATHEMATICAL BOLD ITALIC SMALL ALPHA}"),
        (r"\mathcal{L}", "\N{SCRIPT CAPITAL L}"),
        (r"\mathcal{A}", "\N{MATHEMATICAL SCRIPT CAPITAL A}"),
        (r"\mathfrak{g}", "\N{MATHEMATICAL FRAKTUR SMALL G}"),
        (r"\mathsf{A}", "\N{MATHEMATICAL SANS-SERIF CAPITAL A}"),
        (r"\mathtt{z}", "\N{MATHEMATICAL MONOSPACE SMALL Z}"),
    ],
)
def test_styled_letters_are_unicode_characters(latex: str, letters: str) -> None:
    body = _body(latex)
    assert "mathvariant" not in body
    assert f"<mi>{letters}</mi>" in body


def test_upright_names_are_one_identifier() -> None:
    assert _body(r"\mathrm{FF}") == "<mrow><mi>FF</mi></mrow>"
    assert '<mi mathvariant="normal">FFN</mi>' in _body(r"\operatorname{FFN}(x)")


def test_letters_without_a_styled_form_keep_their_variant() -> None:
    assert styled("x+", "bold") is None
    assert styled("1", "italic") is None  # Unicode has no italic digits


def test_an_operator_name_in_a_script_has_no_function_application() -> None:
    """``\\eta_{\\max}``: a subscript of two parts, which browsers can draw."""
    body = _body(r"\eta_{\max}")
    assert re.search(r"<msub><mi>η</mi><mi>max</mi></msub>", body), body
