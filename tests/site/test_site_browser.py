"""The built site as a reader's browser meets it (headless Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest
from site_support import IMAGES_JS, MATH_BOXES_JS, RAW_TEX_JS, PageVisit


@pytest.fixture(scope="module")
def positional_page(browser, site_url):
    visit = PageVisit(browser, site_url, "positional_encoding.html")
    yield visit
    visit.close()


def test_no_request_leaves_the_local_server(positional_page) -> None:
    assert positional_page.requests, "the page made no request at all"
    assert positional_page.foreign == []


def test_no_http_errors_and_no_console_errors(positional_page) -> None:
    assert positional_page.failed_responses == []
    assert positional_page.console_errors == []


def test_math_is_typeset(positional_page) -> None:
    boxes = positional_page.page.evaluate(MATH_BOXES_JS)
    assert len(boxes) >= 5
    assert all(width > 0 and height > 0 for width, height in boxes), boxes
    assert positional_page.page.evaluate(RAW_TEX_JS) == []
    display = positional_page.page.locator("div.display-math math[display='block']")
    assert display.count() >= 1
    assert display.first.bounding_box()["height"] > 20  # a fraction is taller than a line


def test_both_heatmaps_load_with_alt_text(positional_page) -> None:
    images = positional_page.page.evaluate(IMAGES_JS)
    heatmaps = [image for image in images if "Heatmap" in image["alt"]]
    assert len(heatmaps) == 2, images
    assert all(image["loaded"] for image in images), images


def test_screenshot_for_maintainers(positional_page, artifacts: Path) -> None:
    target = artifacts / "positional_encoding.png"
    positional_page.page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_first_visit_follows_the_readers_colour_scheme(browser, site_url: str, scheme: str) -> None:
    """A reader who has not chosen gets their system's scheme before the page draws.

    The theme's own script is blocked, so that only the head script of
    ``_templates/layout.html``, which runs before the body is read, can set it;
    once the reader has chosen (stored by the theme's switch), the choice wins.
    """
    context = browser.new_context(color_scheme=scheme)
    try:
        page = context.new_page()
        page.route("**/pydata-sphinx-theme.js*", lambda route: route.abort())
        page.goto(f"{site_url}/index.html", wait_until="domcontentloaded")
        root = "document.documentElement.dataset"
        assert page.evaluate(f"[{root}.mode, {root}.theme]") == ["auto", scheme]
        other = "light" if scheme == "dark" else "dark"
        page.evaluate(
            f"localStorage.setItem('mode', '{other}'); localStorage.setItem('theme', '{other}')"
        )
        page.reload(wait_until="domcontentloaded")
        assert page.evaluate(f"[{root}.mode, {root}.theme]") == [other, other]
    finally:
        context.close()
