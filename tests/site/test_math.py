"""Formulas as MathML Core draws them: styled letters as characters, names upright.

The renderer's own unit tests (styled letters, upright names) are in
tests/ext/test_tex_mathml.py; these look at the built site and its sources.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
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
    const formula = block.querySelector(":scope > .formula");
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


TOKENS = {"mi", "mn", "mo", "mtext", "ms"}
#: The Unicode name each styling command's letters carry.
STYLES = {"mathbb": "DOUBLE-STRUCK", "mathcal": "SCRIPT", "mathbf": "BOLD", "boldsymbol": "BOLD"}
#: The environments that become a table (``aligned``: rows of equations).
TABLES = re.compile(r"\\begin\{(aligned|split|cases|array|[pbBvV]?matrix)\}")


def formula_problems(markup: str) -> list[str]:
    """What shows that a ``<math>`` element is not its annotation's TeX, converted whole.

    No TeX left in its text (a backslash command, an ``&``, a brace as a letter),
    no ``merror``, no line break MathML Core cannot draw, no ``mathvariant``
    browsers ignore, no script or fraction with other than its parts (a
    converter that follows an operator name with a function application even
    in a script writes ``\\eta_{\\max}`` as a subscript of three parts, which
    Chromium cannot draw); and the structure the TeX asks for: an ``mfrac`` for
    each ``\\frac``, a root for each ``\\sqrt``, a growing bracket for each
    ``\\left`` and ``\\right``, a table for each aligned environment, each
    styled letter a styled character, each name one upright token.
    """
    root = ElementTree.fromstring(markup)
    annotation = root.find(f"{MATHML}semantics/{MATHML}annotation")
    if annotation is None or annotation.text is None:
        return ["no TeX annotation"]
    tex = annotation.text
    body = root.find(f"{MATHML}semantics")[0]
    problems = []
    tags: Counter[str] = Counter()
    texts = []
    for element in body.iter():
        name = element.tag.removeprefix(MATHML)
        tags[name] += 1
        text = element.text or ""
        if name in TOKENS:
            texts.append(text)
            if "\\" in text:
                problems.append(f"TeX left in <{name}>{text}</{name}>")
        if name == "mi" and text in {"&", "{", "}", "#", "^", "_"}:
            problems.append(f"a stray {text!r}")
        if name == "merror" or element.get("linebreak"):
            problems.append(f"<{name}> MathML Core cannot draw")
        if name in ARITY and len(element) != ARITY[name]:
            problems.append(f"<{name}> with {len(element)} parts")
        if element.get("mathvariant", "normal") != "normal":
            problems.append(f"mathvariant={element.get('mathvariant')!r}")
    count = lambda pattern: len(re.findall(pattern, tex))  # noqa: E731
    stretchy = Counter(
        element.get("form")
        for element in body.iter(f"{MATHML}mo")
        if element.get("stretchy") == "true" and element.get("fence") == "true"
    )
    expected = {
        "mfrac": (count(r"\\[dt]?frac\b"), tags["mfrac"]),
        "msqrt": (count(r"\\sqrt\b"), tags["msqrt"] + tags["mroot"]),
        "mtable": (count(TABLES), tags["mtable"]),
        r"\left": (count(r"\\left\b") + count(r"\\begin\{cases\}"), stretchy["prefix"]),
        r"\right": (count(r"\\right\b"), stretchy["postfix"]),
    }
    for what, (wanted, found) in expected.items():
        if wanted != found:
            problems.append(f"{wanted} {what} in the TeX, {found} in the MathML")
    for command, style in STYLES.items():
        wanted = count(rf"\\{command}\{{[A-Za-z\\]")
        found = sum(1 for t in texts for c in t if style in unicodedata.name(c, ""))
        if found < wanted:
            problems.append(f"{wanted} \\{command} letters, {found} {style} characters")
    names = re.findall(r"\\(?:operatorname\*?|mathrm)\{([A-Za-z\\,]{2,})\}", tex)
    tokens = [t.replace("\N{THIN SPACE}", "") for t in texts]
    for word in names:
        if word.replace("\\,", "") not in tokens:
            problems.append(f"the name {word!r} is not one token")
    return problems


def test_every_formula_is_its_tex_converted_whole(built_site: BuildResult) -> None:
    """Every formula of the site, inline or display, passes :func:`formula_problems`.

    And a display formula is set in display style (``display="block"``).
    """
    bad = []
    formulas = 0
    for page in site_pages(built_site.html):
        text = page.read_text(encoding="utf-8")
        for source in re.findall(r"<math\b.*?</math>", text, re.DOTALL):
            formulas += 1
            problems = formula_problems(source)
            if problems:
                bad.append(f"{page.name}: {problems} in {source[:300]}")
        display = re.findall(r'class="math notranslate display-math".*?<math\b([^>]*)>', text, re.S)
        bad += [
            f"{page.name}: display formula not in display style"
            for d in display
            if 'display="block"' not in d
        ]
    assert formulas > 500
    assert bad == []


COPY_JS = """
([selector, whole]) => {
  const target = document.querySelector(selector);
  const range = document.createRange();
  if (whole) {
    range.selectNodeContents(target);
  } else {  // from inside the first formula's MathML to inside the last's
    const formulas = target.querySelectorAll("span.formula mi");
    range.setStart(formulas[0], 0);
    range.setEnd(formulas[formulas.length - 1], 0);
  }
  const selection = document.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  const data = new DataTransfer();
  document.dispatchEvent(new ClipboardEvent("copy", {clipboardData: data, bubbles: true}));
  return data.getData("text/plain");
}
"""


def test_copying_a_formula_copies_its_tex(browser, site_url: str) -> None:
    """A selection that touches formulas copies them whole, as $TeX$ and $$TeX$$."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{site_url}/recurrence.html", wait_until="load")
        display = page.evaluate(COPY_JS, ["#equation-eq-scaled-dot-product-attention", True])
        paragraph = page.evaluate(
            "() => { const p = Array.from(document.querySelectorAll('article p'))"
            ".find((p) => p.querySelectorAll('span.formula').length >= 2);"
            " p.id = 'copy-test'; return p.innerText; }"
        )
        mixed = page.evaluate(COPY_JS, ["#copy-test", False])
    finally:
        context.close()
    # the whole block: its number, then the formula as display TeX
    assert display.endswith("$$"), display
    for tex in ("$$\\operatorname{Attention}", r"\operatorname{softmax}", r"\sqrt{d_k}"):
        assert tex in display, display
    # Text between the formulas stays; each formula, cut into by the
    # selection at either end, is copied whole as its TeX.
    assert mixed.startswith("$"), mixed
    assert mixed.endswith("$"), mixed
    assert "\N{FUNCTION APPLICATION}" not in mixed, mixed
    assert "\n" not in mixed.strip(), mixed
    words = [w for w in paragraph.split() if w.isalpha() and len(w) > 3]
    assert any(w in mixed for w in words), (mixed, paragraph)
