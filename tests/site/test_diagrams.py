"""The hand-written diagrams: on their pages, described, and self-contained.

Each diagram is an SVG file under ``docs/figures/`` placed with a MyST
``{figure}`` that has a ``:name:``. The checks read the built HTML: the figure
is on its page, its ``<img>`` has an alt text that describes it, and the file
the page points at is shipped, byte for byte the one in the repository, small,
well-formed XML with a ``<title>`` and a ``<desc>``, and free of anything that
would make a reader's browser fetch or run something (no URL, no ``@import``,
no script). In headless Chromium the image loads, in light and in dark mode,
and at the default 1280 px wide viewport it is not scaled down, so its
smallest text (12 px in the file) stays at least 12 px on screen; at 390 px
(a phone) it shrinks to the column but stays at least 9 px, as test_figures.py
asks of the drawn figures.
Every SVG file in ``docs/figures/`` is on the list, and the pictures that
draw numbers draw them right: the soft look-up a softmax of its scores, the
shift of the positional encoding its pairs' angles, the cost of greedy
decoding its triangle.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from site_support import BAD_ALT, DOCS, BuildResult, PageVisit, settle

SVG = "{http://www.w3.org/2000/svg}"
SVG_NAMESPACE_DECLARATION = 'xmlns="http://www.w3.org/2000/svg"'
MAX_BYTES = 15_000
MIN_ALT = 80
#: Smallest text in the files, in px at 1:1 (they are shown unscaled at 1280 px).
MIN_FONT_PX = 12
#: A phone held upright, and the smallest figure text it may show (as in test_figures.py).
PHONE_WIDTH = 390
MIN_PHONE_TEXT_PX = 9.0

#: (page, figure id, file name under docs/figures/)
DIAGRAMS = [
    ("recurrence.html", "fig-recurrence-attention", "recurrence_vs_attention.svg"),
    ("self_attention.html", "fig-qkv-lookup", "qkv_lookup.svg"),
    ("multihead_attention.html", "fig-multihead-block", "multihead_block.svg"),
    ("multihead_attention.html", "fig-head-split", "head_split_shapes.svg"),
    ("encoder_block.html", "fig-encoder-norms", "encoder_block_norms.svg"),
    ("encoder_block.html", "fig-encoder-decoder", "encoder_decoder.svg"),
    ("positional_encoding.html", "fig-pe-rotation", "pe_rotation.svg"),
    ("translation.html", "fig-greedy-cost", "greedy_decoding_cost.svg"),
]
IDS = [figure for _, figure, _ in DIAGRAMS]


class _FigureImages(HTMLParser):
    """The attributes of the first ``<img>`` inside every ``<figure id=...>``."""

    def __init__(self) -> None:
        super().__init__()
        self.images: dict[str, dict[str, str]] = {}
        self._figure: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "figure" and values.get("id"):
            self._figure = values["id"]
        elif tag == "img" and self._figure and self._figure not in self.images:
            self.images[self._figure] = values

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self._figure = None


def figure_image(html: Path, page: str, figure: str) -> dict[str, str]:
    parser = _FigureImages()
    parser.feed((html / page).read_text(encoding="utf-8"))
    assert figure in parser.images, f"{page} has no <figure id={figure!r}> with an <img>"
    return parser.images[figure]


def shipped_file(html: Path, page: str, src: str) -> Path:
    parts = urlsplit(src)
    assert not parts.scheme, f"{page}: image {src!r} is not local"
    assert not parts.netloc, f"{page}: image {src!r} is not local"
    return ((html / page).parent / unquote(parts.path)).resolve()


@pytest.mark.parametrize(("page", "figure", "name"), DIAGRAMS, ids=IDS)
def test_diagram_is_on_its_page_with_a_describing_alt_text(
    built_site: BuildResult, page: str, figure: str, name: str
) -> None:
    image = figure_image(built_site.html, page, figure)
    assert Path(urlsplit(image.get("src", "")).path).name == name
    alt = image.get("alt", "")
    assert len(alt) >= MIN_ALT, f"alt text of {figure} is too short to describe it: {alt!r}"
    assert not BAD_ALT.search(alt), alt


@pytest.mark.parametrize(("page", "figure", "name"), DIAGRAMS, ids=IDS)
def test_diagram_file_is_shipped_small_and_self_contained(
    built_site: BuildResult, page: str, figure: str, name: str
) -> None:
    path = shipped_file(built_site.html, page, figure_image(built_site.html, page, figure)["src"])
    assert path.is_file(), f"{path} is not in the built site"
    data = path.read_bytes()
    assert data == (DOCS / "figures" / name).read_bytes(), "the site ships another file"
    assert len(data) < MAX_BYTES, f"{name} is {len(data)} bytes"

    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    for child in ("title", "desc"):
        element = root.find(f"{SVG}{child}")
        assert element is not None, f"{name}: no <{child}>"
        assert (element.text or "").strip(), f"{name}: empty <{child}>"
    forbidden = {"script", "foreignObject", "image", "a", "iframe"}
    used = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert used & forbidden == set(), f"{name} uses {used & forbidden}"
    for element in root.iter():
        for key, value in element.attrib.items():
            if key.endswith("href"):
                assert value.startswith("#"), f"{name}: {key}={value!r} leaves the file"
            assert not key.startswith("on"), f"{name}: event handler {key}"

    text = data.decode("utf-8").replace(SVG_NAMESPACE_DECLARATION, "", 1)
    assert not re.search(r"https?:|//[a-z0-9]|@import|@font-face", text, re.I), name
    assert all(ref.startswith("#") for ref in re.findall(r"url\(\s*([^)]*)\)", text)), name
    sizes = [float(size) for size in re.findall(r"font-size:\s*([\d.]+)px", text)]
    assert sizes, f"{name}: no font size set"
    assert min(sizes) >= MIN_FONT_PX, f"{name}: text of {min(sizes)} px"
    assert "font-family" in text, name
    assert not re.search(r"font-size=", text), f"{name}: a font size outside the style sheet"


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_diagrams_load_unscaled_at_1280_px(
    browser, site_url: str, artifacts: Path, mode: str
) -> None:
    for page in sorted({page for page, _, _ in DIAGRAMS}):
        visit = PageVisit(browser, site_url, page, mode=mode)
        try:
            assert visit.page.viewport_size["width"] == 1280
            assert visit.page.evaluate("document.documentElement.dataset.theme") == mode
            for figure in (f for p, f, _ in DIAGRAMS if p == page):
                image = visit.page.locator(f"figure#{figure} img")
                image.scroll_into_view_if_needed()
                loaded = image.evaluate("img => img.complete && img.naturalWidth > 0")
                assert loaded, f"{figure} did not load ({mode} mode)"
                shown, natural = image.evaluate(
                    "img => [img.getBoundingClientRect().width, img.naturalWidth]"
                )
                assert shown >= natural - 1, f"{figure} scaled to {shown}/{natural} px"
                # A full-page clip, so the theme's sticky header does not cover it.
                visit.page.evaluate("window.scrollTo(0, 0)")
                box = visit.page.locator(f"figure#{figure}").bounding_box()
                target = artifacts / f"diagram-{figure}-{mode}.png"
                visit.page.screenshot(path=str(target), full_page=True, clip=box)
        finally:
            visit.close()


def smallest_font_px(name: str) -> float:
    """The smallest ``font-size`` in px that the diagram's style sheet sets."""
    text = (DOCS / "figures" / name).read_text(encoding="utf-8")
    return min(float(size) for size in re.findall(r"font-size:\s*([\d.]+)px", text))


def test_diagrams_text_legible_at_390_px(browser, site_url: str) -> None:
    """On a phone a diagram shrinks to the column; its smallest text stays 9 px or more."""
    for page in sorted({page for page, _, _ in DIAGRAMS}):
        visit = PageVisit(browser, site_url, page)
        try:
            visit.page.set_viewport_size({"width": PHONE_WIDTH, "height": 844})
            settle(visit.page)
            for figure, name in ((f, n) for p, f, n in DIAGRAMS if p == page):
                image = visit.page.locator(f"figure#{figure} img")
                shown, natural = image.evaluate(
                    "img => [img.getBoundingClientRect().width, img.naturalWidth]"
                )
                assert natural > 0, f"{figure} did not load"
                text_px = smallest_font_px(name) * min(1.0, shown / natural)
                assert text_px >= MIN_PHONE_TEXT_PX, (
                    f"{figure}: at {PHONE_WIDTH} px shown {shown:.0f}/{natural} px wide, "
                    f"its smallest text is {text_px:.1f} px"
                )
        finally:
            visit.close()


def test_every_diagram_file_is_checked() -> None:
    """A new SVG in docs/figures/ must be listed above, or it escapes these checks."""
    on_disk = {path.name for path in (DOCS / "figures").glob("*.svg")}
    assert on_disk == {name for _, _, name in DIAGRAMS}


#: qkv_lookup.svg draws its scores at this many px per unit (the picture has no axis).
QKV_SCORE_PX = 18.0


def _rects(root: ET.Element, cls: str) -> list[dict[str, float]]:
    found = [e for e in root.iter(f"{SVG}rect") if e.get("class") == cls]
    return [{key: float(e.get(key, 0)) for key in ("x", "y", "width", "height")} for e in found]


def test_qkv_lookup_draws_a_softmax_of_its_scores() -> None:
    """The caption's claims about the picture: the weights are the softmax of the scores.

    Scores are bars about a zero line, weights are bars in tracks of height 1,
    and each value's line into the output is as wide as its weight (so the
    largest score gets the widest line, and the weights sum to 1).
    """
    root = ET.fromstring((DOCS / "figures" / "qkv_lookup.svg").read_bytes())
    zero_line = next(e for e in root.iter(f"{SVG}path") if e.get("class") == "zero")
    zero = float(re.match(r"M[\d.]+ ([\d.]+)", zero_line.get("d", "")).group(1))  # type: ignore[union-attr]
    scores = [
        (bar["height"] if bar["y"] < zero else -bar["height"]) / QKV_SCORE_PX
        for bar in sorted(_rects(root, "sc"), key=lambda bar: bar["x"])
    ]
    tracks = _rects(root, "tr")
    unit = tracks[0]["height"]
    assert all(track["height"] == unit for track in tracks)
    weights = [bar["height"] / unit for bar in sorted(_rects(root, "wt"), key=lambda b: b["x"])]
    exps = [math.exp(score) for score in scores]
    expected = [e / sum(exps) for e in exps]
    assert len(scores) == len(weights) == len(tracks) == 4
    assert weights == pytest.approx(expected, abs=0.01)
    assert sum(weights) == pytest.approx(1.0, abs=0.01)
    lines = [e for e in root.iter(f"{SVG}path") if e.get("class") == "mix"]
    widths = [float(e.get("stroke-width", 0)) for e in lines]
    ratios = [width / weight for width, weight in zip(widths, weights, strict=True)]
    assert max(ratios) / min(ratios) == pytest.approx(1.0, abs=0.05)


#: pe_rotation.svg: D, the column pair of each circle, the positions drawn, p and k.
PE_WIDTH = 32
PE_PAIRS = {"fast": 0, "slow": 2}
PE_POSITIONS = 5
PE_P, PE_K = 1, 2


def _pe_omega(pair: int) -> float:
    """The frequency of column pair ``pair``, as the page defines it."""
    return float(10000.0 ** (-2 * pair / PE_WIDTH))


def _clockwise_from_top(x: float, y: float, cx: float, cy: float) -> float:
    """The angle of (x, y) about (cx, cy): sine across, cosine up (SVG y runs down)."""
    return math.atan2(x - cx, cy - y) % (2 * math.pi)


def _same_angle(a: float, b: float) -> bool:
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi) < 0.01


def test_pe_rotation_draws_each_pair_at_its_angles() -> None:
    """Position p sits at the angle p omega_i, and the arrow turns from p to p + k.

    Each circle is a column pair (sin, cos) drawn with sine across and cosine
    up, so position p is at the angle p omega_i clockwise from the top; the
    arc arrow starts at p and ends at p + k; the labels give omega_i and the
    turn k omega_i to two decimals.
    """
    root = ET.fromstring((DOCS / "figures" / "pe_rotation.svg").read_bytes())
    groups = {e.get("class"): e for e in root.iter(f"{SVG}g")}
    labels = "".join(root.itertext())
    for cls, pair in PE_PAIRS.items():
        omega = _pe_omega(pair)
        group = groups[cls]
        circles = list(group.iter(f"{SVG}circle"))
        unit = next(c for c in circles if c.get("class") == "unit")
        cx, cy, r = (float(unit.get(key, 0)) for key in ("cx", "cy", "r"))
        dots = [c for c in circles if c.get("class") in ("pt", "pk")]
        assert len(dots) == PE_POSITIONS
        for p, dot in enumerate(dots):
            x, y = float(dot.get("cx", 0)), float(dot.get("cy", 0))
            assert math.hypot(x - cx, y - cy) == pytest.approx(r, abs=0.05)
            assert _same_angle(_clockwise_from_top(x, y, cx, cy), p * omega), (cls, p)
        highlighted = [p for p, dot in enumerate(dots) if dot.get("class") == "pk"]
        assert highlighted == [PE_P, PE_P + PE_K]
        arc = next(e for e in group.iter(f"{SVG}path") if e.get("class") == "turn")
        numbers = [float(v) for v in re.findall(r"-?[\d.]+", arc.get("d", ""))]
        start, end = (numbers[0], numbers[1]), (numbers[-2], numbers[-1])
        assert _same_angle(_clockwise_from_top(*start, cx, cy), PE_P * omega)
        assert _same_angle(_clockwise_from_top(*end, cx, cy), (PE_P + PE_K) * omega)
        assert arc.get("d", "").count(" 0 1 ") == 1, "the arc must turn clockwise"
        shown_omega = "1" if omega == 1 else f"{omega:.2f}"
        assert re.search(rf"pair {pair}: ω{pair} [=≈] {re.escape(shown_omega)}\b", labels)
        turn = PE_K * omega
        shown_turn = f"{turn:.0f}" if turn == round(turn) else f"{turn:.2f}"
        assert f"turns {shown_turn} rad for k = {PE_K}" in labels


def test_greedy_decoding_cost_draws_the_triangle() -> None:
    """Row s has s cells, the last one new; the totals are L(L + 1)/2 and L."""
    root = ET.fromstring((DOCS / "figures" / "greedy_decoding_cost.svg").read_bytes())
    cells = [e for e in root.iter(f"{SVG}rect") if e.get("class") in ("old", "new")]
    rows: dict[float, list[ET.Element]] = {}
    for cell in cells:  # the legend's swatch is class "new key", no cell
        rows.setdefault(float(cell.get("y", 0)), []).append(cell)
    length = len(rows)
    assert length >= 4
    for s, y in enumerate(sorted(rows), start=1):
        row = sorted(rows[y], key=lambda cell: float(cell.get("x", 0)))
        assert [cell.get("class") for cell in row] == ["old"] * (s - 1) + ["new"], f"row {s}"
    texts = ["".join(e.itertext()) for e in root.iter(f"{SVG}text")]
    assert f"an output of L = {length} tokens; one row per decoder run" in texts
    total = texts.index("all cells, L(L + 1)/2")
    assert texts[total + 1] == str(length * (length + 1) // 2)
    cached = next(i for i, text in enumerate(texts) if text.startswith("new cells"))
    assert texts[cached + 1] == str(length)
