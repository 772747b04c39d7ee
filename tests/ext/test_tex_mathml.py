"""tex_mathml: every formula becomes MathML at build time, or the build stops."""

from __future__ import annotations

import re

import pytest
from book.mathml import MathError, render, styled
from ext_support import Book, warnings

PAGE = r"""# Formulas

Inline: $\frac{a}{b}$ and $x \in \mathbb{R}^d$.

$$
\sum_i \alpha_i v_i
$$ (eq-sum)

By {eq}`eq-sum` the output is a weighted sum.
"""

FUNCTION_APPLICATION = "\N{FUNCTION APPLICATION}"


def _visible(html: str) -> str:
    """The page without the TeX each formula carries as its annotation."""
    return re.sub(r"<annotation\b.*?</annotation>", "", html, flags=re.DOTALL)


def test_formulas_become_mathml_without_tex_or_errors(book: Book) -> None:
    app = book("mathml", {"index.md": PAGE})
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert warnings(app) == ""
    assert html.count("<math") == 3
    visible = _visible(html)
    for tex in (r"\frac", r"\mathbb", r"\sum", r"\alpha", "$"):
        assert tex not in visible
    assert "<mfrac>" in visible
    # The styled letter is a character of its own, not a variant browsers ignore.
    assert "\N{DOUBLE-STRUCK CAPITAL R}" in visible
    assert 'mathvariant="double-struck"' not in visible
    # Display math is set in display style, and its sum takes limits under it.
    assert html.count('display="block"') == 1
    assert "<munder><mo>∑</mo><mi>i</mi></munder>" in visible


def test_each_formula_keeps_its_tex_as_annotation(book: Book) -> None:
    app = book("mathml", {"index.md": PAGE})
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    annotations = re.findall(r'<annotation encoding="application/x-tex">(.*?)</annotation>', html)
    assert annotations == [r"\frac{a}{b}", r"x \in \mathbb{R}^d", r"\sum_i \alpha_i v_i"]
    assert html.count("<semantics>") == 3


def test_a_labelled_equation_gets_a_number_and_its_reference_shows_it(book: Book) -> None:
    app = book("mathml", {"index.md": PAGE})
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<div class="math notranslate display-math" id="equation-eq-sum">', html)
    assert '<span class="eqno">(1)' in html
    assert re.search(r'href="#equation-eq-sum"[^>]*>.*?\(1\)', html, flags=re.DOTALL)
    # The formula sits in the box math.css lays out beside its number.
    assert re.search(r'</span><span class="formula"><math [^>]*display="block"', html)


def test_equations_of_one_block_are_aligned(book: Book) -> None:
    page = "# Two\n\n$$\na &= b\n\nc &= d + e\n$$\n"
    html = (book("mathml", {"index.md": page}).outdir / "index.html").read_text("utf-8")
    assert html.count("<mtr>") == 2
    # The left-hand sides to the right of their column, "= ..." to the left of theirs.
    assert html.count('<mtd columnalign="right"><mi>') == 2
    assert html.count('<mtd columnalign="left"><mi></mi><mo>=</mo>') == 2
    assert "&amp;" not in _visible(html)


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
        book("mathml", {name: page})


@pytest.mark.parametrize(
    ("latex", "reason"),
    [
        (r"\frac{1}{2", "never closed"),  # latex2mathml would close it itself
        (r"x}", "closes no group"),
        (r"\foo x", r"unknown command \\foo"),  # latex2mathml would write "\foo"
        (r"a & b", "'&'"),
        (r"a \\ b", "outside an aligned"),
        (r"\begin{eqnarray}a\end{eqnarray}", "unknown environment 'eqnarray'"),
        (r"\operatorname{arg\;max}", "operator name"),
        (r"\left( x", "extra left or missing right"),
        (r"\sqrt", "no available tokens"),
    ],
)
def test_what_latex2mathml_would_pass_over_is_an_error(latex: str, reason: str) -> None:
    with pytest.raises(MathError, match=f"cannot typeset .*{reason}"):
        render(latex, display=False)


def _body(latex: str, *, display: bool = False) -> str:
    """The MathML between <semantics> and the TeX annotation."""
    return render(latex, display=display).split("<semantics>")[1].split("<annotation")[0]


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
        # A word in italic is one identifier of italic letters.
        (
            r"\mathit{pos}",
            "\N{MATHEMATICAL ITALIC SMALL P}\N{MATHEMATICAL ITALIC SMALL O}"
            "\N{MATHEMATICAL ITALIC SMALL S}",
        ),
    ],
)
def test_styled_letters_are_unicode_characters(latex: str, letters: str) -> None:
    body = _body(latex)
    assert "mathvariant" not in body
    assert f"<mi>{letters}</mi>" in body


def test_upright_names_are_one_identifier() -> None:
    assert "<mi>FF</mi>" in _body(r"\mathrm{FF}")
    assert "mathvariant" not in _body(r"\mathrm{FF}")
    # One upright letter stays upright (MathML would slant a lone letter).
    assert _body(r"\mathrm{d}x") == '<mrow><mi mathvariant="normal">d</mi><mi>x</mi></mrow>'
    assert f"<mi>FFN</mi><mo>{FUNCTION_APPLICATION}</mo><mo" in _body(r"\operatorname{FFN}(x)")
    assert "<mtext>head</mtext>" in _body(r"d_\text{head}")


def test_an_operator_name_is_spaced_from_an_atom_not_from_a_bracket() -> None:
    """TeX's thin space in ``\\log p``; none in ``\\log(x)``; ``\\!`` cancels it."""
    spaced = f'<mi>log</mi><mo rspace="0.1667em">{FUNCTION_APPLICATION}</mo><mi>p</mi>'
    assert spaced in _body(r"\log p")
    assert f"<mi>log</mi><mo>{FUNCTION_APPLICATION}</mo><mo" in _body(r"\log(x)")
    tight = _body(r"\max\!\left(0, x\right)")
    assert f"<mi>max</mi><mo>{FUNCTION_APPLICATION}</mo><mrow><mo " in tight
    assert "mspace" not in tight
    subscripted = _body(r"\operatorname{LN}_1\!\left(x\right)")
    assert f"<msub><mi>LN</mi><mn>1</mn></msub><mo>{FUNCTION_APPLICATION}</mo>" in subscripted


def test_an_operator_name_after_an_atom_is_spaced_from_it() -> None:
    """TeX's thin space in ``D^{-1/2} \\min``; none after ``=``, which brings its own."""
    body = _body(r"D^{-1/2} \min(a, b)")
    assert '</msup><mspace width="0.1667em"></mspace><mi>min</mi>' in body
    assert "<mo>=</mo><mi>log</mi>" in _body(r"= \log p")


def test_an_operator_name_in_a_script_has_no_function_application() -> None:
    """``\\eta_{\\max}``: a subscript of two parts, which browsers can draw."""
    body = _body(r"\eta_{\max}")
    assert re.search(r"<msub><mi>η</mi>(<mrow>)?<mi>max</mi>(</mrow>)?</msub>", body), body
    assert FUNCTION_APPLICATION not in body


def test_a_name_with_limits_takes_them_under_it() -> None:
    body = _body(r"\hat y = \operatorname*{arg\,max}_{v}\; p", display=True)
    operator = '<mo movablelimits="true" lspace="0em" rspace="0em">arg\N{THIN SPACE}max</mo>'
    assert f"<munder>{operator}" in body
    # TeX's thin space after the name, and the \; written there.
    assert f'</munder><mo rspace="0.4447em">{FUNCTION_APPLICATION}</mo><mi>p</mi>' in body


def test_brackets_of_left_and_right_grow() -> None:
    body = _body(r"\left(\frac{a}{b}\right)")
    assert body.count('stretchy="true"') == 2
    assert '<mo stretchy="false">(</mo>' in _body(r"(a)")


def test_ordinary_symbols_are_identifiers_and_cdot_a_dot_operator() -> None:
    top = '<msup><mi>W</mi><mi mathvariant="normal">\N{DOWN TACK}</mi></msup>'
    assert top in _body(r"W^\top")
    assert '<mi mathvariant="normal">∂</mi><mi>x</mi>' in _body(r"\partial x")
    assert "<mo>\N{DOT OPERATOR}</mo>" in _body(r"a \cdot b")
    # TeX's slash and period are ordinary: no operator's spacing around them.
    ordinary = '<mi>D</mi><mi mathvariant="normal">/</mi><mi>H</mi><mi mathvariant="normal">.</mi>'
    assert ordinary in _body(r"D / H .")


def test_a_matrix_and_its_brackets_are_one_row() -> None:
    body = _body(r"\begin{pmatrix} a & b \end{pmatrix} \cdot x")
    assert body.startswith("<mrow><mrow><mo>(</mo><mtable>")
    assert "</mtable><mo>)</mo></mrow><mo>" in body


def test_letters_without_a_styled_form_keep_their_variant() -> None:
    assert styled("x+", "bold") is None
    assert styled("1", "italic") is None  # Unicode has no italic digits


def _row(latex: str) -> str:
    """The formula's MathML inside its semantics element."""
    html = _visible(render(latex, display=False))
    return html[html.index("<semantics>") + len("<semantics>") : html.index("</semantics>")]


def test_a_prime_follows_its_letter_rather_than_being_its_script() -> None:
    row = _row(r"\delta_{jj'}")
    assert "<msup>" not in row
    assert '<mi>j</mi><mo lspace="0em" rspace="0em">\N{PRIME}</mo>' in row


@pytest.mark.parametrize("latex", [r"[-1, 1]", r"\mathcal{L} = -\frac{1}{B}", r"D^{-1/2}"])
def test_a_sign_with_nothing_to_its_left_is_unary(latex: str) -> None:
    assert '<mo form="prefix" lspace="0em" rspace="0em">\N{MINUS SIGN}</mo>' in _row(latex)


@pytest.mark.parametrize("latex", [r"a - b", r"(a) - b", r"1 + \cdots + L"])
def test_a_sign_between_two_terms_stays_binary(latex: str) -> None:
    assert 'form="prefix"' not in _row(latex)


def test_an_ellipsis_is_an_ordinary_symbol() -> None:
    assert "<mi>\N{HORIZONTAL ELLIPSIS}</mi>" in _row(r"n = 1, \dots, U")


def test_an_operator_name_before_an_operator_gets_no_function_application() -> None:
    assert FUNCTION_APPLICATION not in _row(r"\sin^2 + \cos^2 = 1")
