"""The built site as a reader's browser meets it (headless Chromium)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

RAW_TEX_JS = r"""
() => {
  const article = document.querySelector("main") || document.body;
  const copy = article.cloneNode(true);
  const skipped = "math, pre, code, script, style, .highlight";
  copy.querySelectorAll(skipped).forEach((n) => n.remove());
  const text = copy.textContent;
  const commands = /\\(frac|sin|cos|sqrt|left|right|operatorname|mathrm|cdot)\b/g;
  const found = (text.match(/\$\$|\\\(|\\\[/g) || []).concat(text.match(commands) || []);
  return found;
}
"""

MATH_BOXES_JS = """
() => Array.from(document.querySelectorAll("math")).map((m) => {
  const box = m.getBoundingClientRect();
  return [box.width, box.height];
})
"""

IMAGES_JS = """
() => Array.from(document.images).map((img) => ({
  src: img.getAttribute("src"), alt: img.getAttribute("alt") || "",
  loaded: img.complete && img.naturalWidth > 0,
}))
"""


class PageVisit:
    """Load one page and record everything the browser did."""

    def __init__(self, browser, base_url: str, path: str) -> None:
        self.base_host = urlsplit(base_url).netloc
        self.requests: list[str] = []
        self.foreign: list[str] = []
        self.failed_responses: list[str] = []
        self.console_errors: list[str] = []
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.context.route("**/*", self._route)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        self.page.on("response", self._response)
        self.page.goto(f"{base_url}/{path}", wait_until="load")
        self.page.wait_for_load_state("networkidle")

    def _route(self, route) -> None:
        url = route.request.url
        self.requests.append(url)
        parts = urlsplit(url)
        if parts.scheme in {"data", "blob", "about"} or parts.netloc == self.base_host:
            route.continue_()
        else:
            self.foreign.append(url)
            route.abort()

    def _console(self, message) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    def _response(self, response) -> None:
        if response.status >= 400:
            self.failed_responses.append(f"{response.status} {response.url}")

    def close(self) -> None:
        self.context.close()


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
