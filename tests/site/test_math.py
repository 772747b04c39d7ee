"""Formulas as MathML Core draws them: styled letters as characters, names upright.

The renderer's own unit tests (styled letters, upright names) are in
tests/ext/test_katex_mathml.py; these look at the built site and its sources.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest
from site_support import DOCS, LESSON_PAGES, BuildResult, site_pages


def test_no_page_relies_on_a_mathvariant_browsers_ignore(built_site: BuildResult) -> None:
    variant = re.compile(r'mathvariant="(?!normal")')
    offenders = [
        page.relative_to(built_site.html).as_posix()
        for page in site_pages(built_site.html)
        if variant.search(page.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    positional = (built_site.html / "positional_encoding.html").read_text(encoding="utf-8")
    assert "<mi>\N{DOUBLE-STRUCK CAPITAL R}</mi>" in positional


EQUATIONS_JS = """
() => Array.from(document.querySelectorAll("div.display-math"))
  .filter((block) => block.checkVisibility())
  .map((block) => {
    const formula = block.querySelector(":scope > .katex");
    const number = block.querySelector(":scope > .eqno");
    const f = formula.getBoundingClientRect();
    const b = block.getBoundingClientRect();
    const n = number ? number.getBoundingClientRect() : null;
    return {
      id: block.id || formula.textContent.slice(0, 40),
      overlaps: n !== null && n.left < f.right - 0.5 && n.right > f.left + 0.5
        && n.top < f.bottom && n.bottom > f.top,
      // The number sits beside the formula, or under it where both do not fit.
      numberCut: n !== null && ((n.left < f.right - 0.5 && n.top < f.bottom - 0.5)
        || n.left < b.left - 0.5 || n.right > b.right + 0.5
        || n.right > document.documentElement.clientWidth),
      spills: formula.scrollWidth > formula.clientWidth + 1
        && getComputedStyle(formula).overflowX === "visible",
      // Wider than its box: the reader would have to scroll it to read it whole.
      clipped: formula.scrollWidth > formula.clientWidth + 1,
      wider: b.right > document.documentElement.clientWidth + 0.5,
    };
  })
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_equation_numbers_stay_visible_beside_their_formulas(
    built_site: BuildResult, browser, site_url: str, width: int
) -> None:
    """On every page with display math: each formula whole in its box, its number never over it.

    Every display formula of the book is written to fit a 390 px phone (long
    ones on several aligned lines), so none needs scrolling; the number moves
    under a formula that leaves no room beside it.
    """
    problems: dict[str, list] = {}
    seen = 0
    html = built_site.html
    pages = [
        p.relative_to(html).as_posix()
        for p in site_pages(html)
        if 'class="math notranslate display-math"' in p.read_text(encoding="utf-8")
    ]
    assert set(LESSON_PAGES) <= set(pages)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for path in pages:
            page.goto(f"{site_url}/{path}", wait_until="load")
            equations = page.evaluate(EQUATIONS_JS)
            seen += len(equations)
            bad = [
                e
                for e in equations
                if e["overlaps"] or e["numberCut"] or e["spills"] or e["wider"] or e["clipped"]
            ]
            if bad:
                problems[path] = bad
    finally:
        context.close()
    assert seen >= 15
    assert problems == {}


SIZES_JS = """
(id) => {
  const block = document.getElementById(id);
  const height = (el) => el.getBoundingClientRect().height;
  const ops = (text) => Array.from(block.querySelectorAll("mo"))
    .filter((mo) => mo.textContent.trim() === text).map(height);
  const letter = Math.max(...Array.from(block.querySelectorAll("mi")).map(height));
  const fractions = Array.from(block.querySelectorAll("mfrac")).map(height);
  return {sums: ops("\\u2211"), opening: ops("("), letter, fractions};
}
"""


def test_display_sums_are_large_and_brackets_grow_around_fractions(browser, site_url: str) -> None:
    """Needs a system math font (CI installs fonts-dejavu-core, which has one)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{site_url}/encoder_block.html", wait_until="load")
        layer_norm = page.evaluate(SIZES_JS, "equation-eq-layer-norm")
        page.goto(f"{site_url}/positional_encoding.html", wait_until="load")
        encoding = page.evaluate(SIZES_JS, "equation-eq-positional-encoding")
    finally:
        context.close()
    assert len(layer_norm["sums"]) == 2
    assert min(layer_norm["sums"]) >= 1.5 * layer_norm["letter"], layer_norm
    # Each bracket pair around a sine's fraction is at least as tall as the fraction.
    assert encoding["fractions"], encoding
    assert sorted(encoding["opening"])[-2] >= max(encoding["fractions"]), encoding


def test_names_are_upright_not_kerned_letters() -> None:
    """Multi-letter names use \\mathrm or \\operatorname, never letters pulled together with \\!."""
    kerned = re.compile(r"[A-Za-z]\\![A-Za-z]")
    sources = [*DOCS.glob("*.md"), *(DOCS.parent / "lessons_code").glob("*.py")]
    offenders = [p.name for p in sources if kerned.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_brackets_are_sized_by_their_content() -> None:
    r"""Brackets use \left ... \right, which grow with what they hold, not a fixed \big."""
    fixed = re.compile(r"\\[Bb]igg?[lr]?\s*[(\[)\]]")
    sources = [*DOCS.glob("*.md"), *(DOCS.parent / "lessons_code").glob("*.py")]
    offenders = [p.name for p in sources if fixed.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


#: How many parts each MathML layout element has (MathML Core); a browser
#: draws one with any other count as an error, or not at all.
ARITY = {
    "mfrac": 2,
    "mroot": 2,
    "msub": 2,
    "msup": 2,
    "munder": 2,
    "mover": 2,
    "msubsup": 3,
    "munderover": 3,
}
MATHML = "{http://www.w3.org/1998/Math/MathML}"


def test_every_script_and_fraction_has_its_parts(built_site: BuildResult) -> None:
    """Every formula of every page is well-formed MathML whose scripts have their parts.

    KaTeX wrote ``\\eta_{\\max}`` as a subscript of three parts, which Chromium
    cannot draw (``katex_mathml._FUNCTION_APPLIED_IN_SCRIPT``).
    """
    bad = []
    formulas = 0
    for page in site_pages(built_site.html):
        text = page.read_text(encoding="utf-8")
        for source in re.findall(r"<math\b.*?</math>", text, re.DOTALL):
            formulas += 1
            root = ElementTree.fromstring(source)
            for element in root.iter():
                name = element.tag.removeprefix(MATHML)
                if name in ARITY and len(element) != ARITY[name]:
                    annotation = root.find(f".//{MATHML}annotation")
                    tex = annotation.text if annotation is not None else "?"
                    bad.append(f"{page.name}: <{name}> with {len(element)} parts in {tex!r}")
    assert formulas > 500
    assert bad == []
