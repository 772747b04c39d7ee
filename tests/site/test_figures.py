"""Figures on lesson and gallery pages are sharp, legible and introduced.

At 1280 px and at 390 px (a phone), every content image (figures drawn at build
time and hand-written diagrams; gallery thumbnails and theme icons excluded)
is either SVG or a PNG with at least twice as many pixels across as it is
shown wide, so it stays sharp on a HiDPI screen.

Tick labels: the build draws them at ``xtick.labelsize`` points (one setting
for the pages and the gallery, ``docs/_ext/book_figures.py``), and matplotlib
records the dpi it saved at in each PNG's ``pHYs`` chunk. A label is then
``size_pt * dpi / 72`` pixels high in the file and
``size_pt * dpi / 72 * shown_width / pixel_width`` CSS pixels on the page,
which must be at least 11 at 1280 px and 9 on the phone (where the column
is 342 px wide; ``book_figures.check_figure`` keeps every text at least as
large as the tick labels and every figure narrow enough).

Every gallery thumbnail block (``minigallery``) on a lesson page follows a
paragraph that introduces it ("Run it yourself: ...").

Every PNG a page shows (lesson and gallery figures, gallery thumbnails) is an
8-bit palette PNG of few bits per pixel, about a third of Matplotlib's RGBA
file (``book_figures.quantise``, whose unit tests are in
tests/ext/test_book_figures.py).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from site_support import DOCS, HTML, LESSON_PAGES, BuildResult, load_images, settle

sys.path.insert(0, str(DOCS / "_ext"))
import book_figures

MIN_TICK_PX = 11.0
#: A phone held upright, and the smallest figure text it may show (issue 26).
PHONE_WIDTH = 390
MIN_PHONE_TEXT_PX = 9.0
MIN_SCALE = 2.0
#: File bits per pixel of a PNG a page shows. As palette PNGs the book's figures
#: take 0.16 to 0.58 and the gallery's thumbnails 0.65 to 1.5; as Matplotlib's
#: RGBA files they took 0.42 to 1.66 and 1.75 to 4.5.
MAX_BITS_PER_PIXEL = 1.0
MAX_THUMB_BITS_PER_PIXEL = 2.0

LESSONS = LESSON_PAGES
EXAMPLES = sorted(
    f"auto_examples/{path.stem}.html" for path in (DOCS.parent / "gallery").glob("plot_*.py")
)

CONTENT_IMAGES_JS = """
() => Array.from(document.querySelectorAll("article img"))
  .filter((img) => !img.closest(".sphx-glr-thumbcontainer, .sphx-glr-thumbnails"))
  .filter((img) => img.checkVisibility())
  .map((img) => ({
    src: img.getAttribute("src"),
    alt: img.getAttribute("alt") || "",
    natural: img.naturalWidth,
    shown: img.getBoundingClientRect().width,
  }))
"""

MINIGALLERY_JS = """
() => Array.from(document.querySelectorAll("article .sphx-glr-thumbnails")).map((block) => {
  const before = block.previousElementSibling;
  return {
    tag: before ? before.tagName : "",
    text: before ? before.textContent.trim().replace(/\\s+/g, " ").slice(0, 80) : "",
  };
})
"""


def png_dpi(path: Path) -> float:
    """Horizontal dpi from a PNG's ``pHYs`` chunk (pixels per metre)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    offset = 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"pHYs":
            per_x, _, unit = struct.unpack(">IIB", data[offset + 8 : offset + 17])
            assert unit == 1, f"{path.name}: pHYs unit is not the metre"
            return per_x * 0.0254
        offset += 12 + length
    raise AssertionError(f"{path.name} has no pHYs chunk: its dpi is unknown")


def measure(browser, site_url: str, page: str) -> tuple[list[dict], list[dict]]:
    """The page's content images at 1280 px, then (the same tab, narrowed) at 390 px."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/{page}", wait_until="load")
        load_images(tab)
        tab.wait_for_load_state("networkidle")
        wide = tab.evaluate(CONTENT_IMAGES_JS)
        tab.set_viewport_size({"width": PHONE_WIDTH, "height": 844})
        settle(tab)
        return wide, tab.evaluate(CONTENT_IMAGES_JS)
    finally:
        context.close()


def tick_px(image: dict, file: Path) -> float:
    """CSS px height of the figure's tick labels, the smallest text it has (``check_figure``)."""
    size_pt = float(book_figures.RC["xtick.labelsize"])
    return size_pt * png_dpi(file) / 72 * image["shown"] / image["natural"]


@pytest.mark.parametrize("page", LESSONS + EXAMPLES)
def test_figures_are_sharp_with_legible_ticks(browser, site_url: str, page: str) -> None:
    images, phone = measure(browser, site_url, page)
    problems = []
    pngs = 0
    for image in phone:
        path = (HTML / page).parent / unquote(urlsplit(image["src"]).path)
        if path.suffix != ".svg" and tick_px(image, path) < MIN_PHONE_TEXT_PX:
            problems.append(
                f"{image['src']} ({image['alt'][:40]!r}): at {PHONE_WIDTH} px its text is "
                f"{tick_px(image, path):.1f} px high (< {MIN_PHONE_TEXT_PX:g})"
            )
    for image in images:
        path = (HTML / page).parent / unquote(urlsplit(image["src"]).path)
        if path.suffix == ".svg":
            continue
        pngs += 1
        label = f"{image['src']} ({image['alt'][:40]!r})"
        if image["natural"] < MIN_SCALE * image["shown"] - 1:
            problems.append(
                f"{label}: {image['natural']} px shown at {image['shown']:.0f} px "
                f"(needs {MIN_SCALE:g}x)"
            )
        ticks = tick_px(image, path)
        if ticks < MIN_TICK_PX:
            problems.append(f"{label}: tick labels {ticks:.1f} px high (< {MIN_TICK_PX:g})")
    assert not problems, f"{page}:\n" + "\n".join(problems)
    if page in EXAMPLES or "figure" in (HTML / page).read_text(encoding="utf-8"):
        assert images, f"{page}: no content image found (is the selector still right?)"
    assert pngs == 0 or all(image["natural"] > 0 for image in images), "an image did not load"


LAZY_JS = """
() => Array.from(document.querySelectorAll("article img")).map((img) => ({
  src: img.getAttribute("src"),
  loading: img.getAttribute("loading"),
  width: img.getAttribute("width"),
  height: img.getAttribute("height"),
  natural: [img.naturalWidth, img.naturalHeight],
  box: [img.getBoundingClientRect().width, img.getBoundingClientRect().height],
}))
"""


@pytest.mark.parametrize("width", [1280, PHONE_WIDTH])
def test_later_figures_load_lazily_and_keep_their_shape(
    built_site: BuildResult, browser, site_url: str, width: int
) -> None:
    """After a page's first image, every one waits until it is near; none is distorted."""
    context = browser.new_context(viewport={"width": width, "height": 844})
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/positional_encoding.html", wait_until="load")
        before = tab.evaluate(LAZY_JS)  # boxes before the lazy images arrive
        load_images(tab)
        after = tab.evaluate(LAZY_JS)
    finally:
        context.close()
    assert len(before) > 5
    assert before[0]["loading"] is None
    assert all(image["loading"] == "lazy" for image in before[1:])
    sized = [(b, a) for b, a in zip(before, after, strict=True) if a["height"] is not None]
    assert len(sized) >= 5  # the page's figures
    for empty, image in sized:
        natural_w, natural_h = image["natural"]
        shown_w, shown_h = image["box"]
        # shown with the file's aspect, at 1280 px and squeezed into a phone
        assert abs(shown_h - shown_w * natural_h / natural_w) <= 1.5, image["src"]
        # and the box had that shape before its pixels came
        assert abs(empty["box"][1] - shown_h) <= 1.5, image["src"]


def test_tick_size_is_the_book_setting() -> None:
    """The test reads the label size from the one place the build sets it."""
    assert book_figures.RC["xtick.labelsize"] == book_figures.RC["ytick.labelsize"]
    assert float(book_figures.RC["xtick.labelsize"]) >= 8.25  # 11 px at 96 dpi


@pytest.mark.parametrize("page", LESSONS)
def test_minigalleries_are_introduced(
    built_site: BuildResult, browser, site_url: str, page: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/{page}", wait_until="load")
        blocks = tab.evaluate(MINIGALLERY_JS)
    finally:
        context.close()
    for block in blocks:
        introduced = block["tag"] in {"H2", "H3", "H4"} or (
            block["tag"] == "P" and block["text"].startswith("Run it yourself:")
        )
        assert introduced, f"{page}: a gallery block follows {block} with no introduction"


def test_site_pngs_are_small_palette_images(built_site: BuildResult) -> None:
    import re

    from PIL import Image

    shown = {
        name
        for page in built_site.html.rglob("*.html")
        for name in re.findall(r"_images/([^\"'?#]+\.png)", page.read_text(encoding="utf-8"))
    }
    assert shown, "no page shows a PNG from _images (is the pattern still right?)"
    problems = []
    for name in sorted(shown):
        path = built_site.html / "_images" / name
        limit = MAX_THUMB_BITS_PER_PIXEL if name.endswith("_thumb.png") else MAX_BITS_PER_PIXEL
        with Image.open(path) as image:
            bits = 8 * path.stat().st_size / (image.width * image.height)
            if image.mode != "P":
                problems.append(f"{name}: mode {image.mode}, not a palette image")
            if bits > limit:
                problems.append(f"{name}: {bits:.2f} bits per pixel (> {limit:g})")
    assert not problems, "\n".join(problems)
