"""The theme's icons, drawn by docs/_static/icons.css without the icon font.

The theme would load Font Awesome's script (1.5 MB) and webfont to draw its
icons; docs/_templates/static/webpack-macros.html leaves the script out and
icons.css draws each icon as a mask over the text colour. Checked on a page of
each kind (landing, lesson, gallery example, API), in light and dark mode, at
1280 and 390 px: no request for the script or a Font Awesome font, nor to
another host; every icon the reader can see has a box and puts ink in it, in
its text colour; the colour-mode menu and the search dialog work from the
keyboard, their icons included. Without JavaScript nothing asks for the font
either (the search page's notice is an admonition with an icon).
"""

from __future__ import annotations

import io

import pytest
from site_support import PageVisit, settle, site_pages

pytestmark = [pytest.mark.site, pytest.mark.browser]

PAGES = [
    "index.html",
    "positional_encoding.html",
    "auto_examples/plot_order_task.html",
    "api/lessons_code.attention.html",
]

# Icons are <i>/<span> elements with a Font Awesome class; some are drawn by
# pseudo-elements of the theme's own markup instead.
ICONS = "i[class*='fa-'], span[class*='fa-']"
PSEUDO_ICONS = {
    ".admonition > .admonition-title": "::after",
    "a.reference.download": "::before",
}

ICON_STYLES_JS = """
([scope, selector, pseudoIcons]) => {
  const root = document.querySelector(scope);
  const found = [];
  root.querySelectorAll(selector).forEach((el, index) => {
    if (!el.checkVisibility({visibilityProperty: true, opacityProperty: true})) return;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    found.push({
      index, classes: el.className, width: box.width, height: box.height,
      mask: style.maskImage || style.webkitMaskImage, color: style.color,
      background: style.backgroundColor, font: style.fontFamily,
      glyph: getComputedStyle(el, "::before").content,
    });
  });
  const pseudo = [];
  for (const [owner, which] of Object.entries(pseudoIcons)) {
    root.querySelectorAll(owner).forEach((el) => {
      if (!el.checkVisibility()) return;
      const style = getComputedStyle(el, which);
      if (style.content === "none" || style.display === "none") return;
      pseudo.push({
        owner: owner + which, content: style.content, width: parseFloat(style.width),
        height: parseFloat(style.height), mask: style.maskImage || style.webkitMaskImage,
        color: style.color, background: style.backgroundColor,
      });
    });
  }
  return {elements: found, pseudo};
}
"""

# The drawing icons.css gives an icon class it has no drawing for.
BLANK = "<svg xmlns='http://www.w3.org/2000/svg'/>"


def _rgb(css: str) -> tuple[int, ...]:
    inside = css[css.index("(") + 1 : css.index(")")]
    return tuple(round(float(part)) for part in inside.replace("/", ",").split(",")[:3])


def _ink(png: bytes, colour: tuple[int, ...]) -> float:
    """Share of the pixels of a screenshot within a small distance of ``colour``."""
    from PIL import Image

    data = Image.open(io.BytesIO(png)).convert("RGB").tobytes()
    pixels = list(zip(data[0::3], data[1::3], data[2::3], strict=True))
    near = sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, colour, strict=True)) <= 60)
    return near / len(pixels)


def _font_requests(visit: PageVisit) -> list[str]:
    return [
        url
        for url in visit.requests
        if "fontawesome" in url.lower() or url.split("?")[0].endswith((".woff2", ".woff", ".ttf"))
    ]


def _check_icons(visit: PageVisit, where: str, scope: str = "body") -> int:
    """Assert every visible icon in ``scope`` draws itself; return how many there were."""
    found = visit.page.evaluate(ICON_STYLES_JS, [scope, ICONS, PSEUDO_ICONS])
    for icon in found["elements"]:
        name = f"{where}: <{icon['classes']}>"
        assert min(icon["width"], icon["height"]) > 4, f"{name} has no box: {icon}"
        assert "data:image/svg+xml" in icon["mask"], f"{name} has no drawing"
        assert BLANK not in icon["mask"], f"{name}: icons.css has no drawing for it"
        assert icon["glyph"] in ("none", "normal"), f"{name} still asks for a glyph"
        assert "Font Awesome" not in icon["font"], f"{name} still uses the icon font"
        assert icon["background"] == icon["color"], f"{name} is not in its text colour"
        shot = visit.page.locator(scope).locator(ICONS).nth(icon["index"]).screenshot()
        ink = _ink(shot, _rgb(icon["color"]))
        # A drawn icon inks part of its box: not none of it, not all of it.
        assert 0.05 < ink < 0.85, f"{name}: {ink:.0%} of its box in its colour"
    for icon in found["pseudo"]:
        name = f"{where}: {icon['owner']}"
        assert icon["content"] == '""', f"{name} still asks for a glyph: {icon['content']}"
        assert min(icon["width"], icon["height"]) > 4, f"{name} has no box: {icon}"
        assert "data:image/svg+xml" in icon["mask"], f"{name} has no drawing"
        assert icon["background"] == icon["color"], f"{name} is not in its text colour"
    return len(found["elements"]) + len(found["pseudo"])


def test_no_page_loads_the_icon_script(built_site) -> None:
    """The script is gone from every page; the theme's other head assets are still there."""
    for page in site_pages(built_site.html):
        text = page.read_text(encoding="utf-8")
        assert "fontawesome" not in text.lower(), page
        assert "scripts/pydata-sphinx-theme.js" in text, page
        assert "_static/icons.css" in text, page


def test_no_stylesheet_declares_the_icon_font(built_site) -> None:
    """No stylesheet of the site names a webfont, so no load can fetch one.

    With the theme's ``@font-face`` rules left in, Chromium fetched the font on
    about one load in six of the search page without JavaScript.
    """
    sheets = sorted((built_site.html / "_static").rglob("*.css"))
    assert len(sheets) > 5
    for sheet in sheets:
        text = sheet.read_text(encoding="utf-8")
        assert "@font-face" not in text, sheet
        assert ".woff" not in text, sheet


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("path", PAGES)
def test_icons_draw_without_the_icon_font(browser, site_url: str, path: str, mode: str) -> None:
    visit = PageVisit(browser, site_url, path, mode=mode)
    try:
        assert visit.page.evaluate("document.documentElement.dataset.theme") == mode
        for width in (1280, 390):
            visit.page.set_viewport_size({"width": width, "height": 900})
            visit.page.evaluate("window.scrollTo(0, 0)")
            settle(visit.page)
            count = _check_icons(visit, f"{path} at {width} px, {mode}")
            assert count >= 5, f"{path} at {width} px: only {count} icons visible"
        # "Back to top" shows once the reader scrolls down and then up a little (on
        # a narrow screen, as here after the loop: the theme hides it on wide ones).
        visit.page.mouse.wheel(0, 4000)
        visit.page.wait_for_function("window.scrollY > 2000")
        visit.page.mouse.wheel(0, -300)
        back = visit.page.locator("#pst-back-to-top")
        back.wait_for(state="visible")
        settle(visit.page)
        assert back.locator("i.fa-arrow-up").is_visible()
        _check_icons(visit, f"{path}, back to top", "#pst-back-to-top")
        visit.page.evaluate("window.scrollTo(0, 0)")
        # The download menu's icons (the page's source, its PDF).
        download = ".bd-header-article button[aria-label='Download this page']"
        visit.page.locator(download).click()
        visit.page.locator(f"{download}[aria-expanded='true']").wait_for()
        settle(visit.page)
        _check_icons(visit, f"{path}, download menu open", ".bd-header-article .dropdown-menu")
        visit.page.wait_for_load_state("networkidle")
        assert _font_requests(visit) == []
        assert visit.foreign == []
        assert visit.failed_responses == []
        assert visit.console_errors == []
    finally:
        visit.close()


def _tab_to(page, selector: str, limit: int = 80) -> None:
    """Press Tab until the focused element matches ``selector``."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} not reached in {limit} presses of Tab")


@pytest.mark.parametrize("width", [1280, 390])
def test_colour_mode_and_search_by_keyboard(browser, site_url: str, width: int) -> None:
    visit = PageVisit(browser, site_url, "positional_encoding.html")
    page = visit.page
    try:
        page.set_viewport_size({"width": width, "height": 900})
        settle(page)
        # The colour-mode menu: Tab to its button; ArrowDown opens the menu on its
        # first item (Enter and Space open it too, but the theme's menu then leaves
        # the focus on the page); choose "Dark" with the arrows and Enter.
        switch = ".bd-header-article .theme-switch-button"
        _tab_to(page, switch)
        page.keyboard.press("ArrowDown")
        menu = page.locator(".bd-header-article .theme-switch-container .dropdown-menu")
        menu.wait_for(state="visible")
        _check_icons(visit, f"colour-mode menu at {width} px", ".bd-header-article")
        for _ in range(3):
            if page.evaluate("document.activeElement.dataset.mode") == "dark":
                break
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        page.wait_for_function("document.documentElement.dataset.theme === 'dark'")
        settle(page)
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        shown = page.locator(f"{switch} i.theme-switch:visible")
        assert shown.count() == 1
        assert shown.get_attribute("data-mode") == "dark"
        _check_icons(visit, f"header in dark mode at {width} px", ".bd-header-article")
        # The search button (the sidebar's field at 1280 px, the header's magnifier at
        # 390 px): Tab to it, Enter opens the dialog with the field focused. At
        # 1280 px the sidebar comes before the article's header in the tab order,
        # so from the colour-mode button the Tabs cross the whole lesson, its
        # explorer's controls included, and wrap around.
        page.evaluate("document.activeElement.blur()")
        _tab_to(page, "button.search-button__button", limit=400)
        page.keyboard.press("Enter")
        dialog = page.locator("#pst-search-dialog")
        dialog.wait_for(state="visible")
        assert page.evaluate("document.activeElement.matches('#pst-search-dialog input')")
        _check_icons(visit, f"search dialog at {width} px", "#pst-search-dialog")
        page.keyboard.press("Escape")
        dialog.wait_for(state="hidden")
        assert _font_requests(visit) == []
        assert visit.console_errors == []
    finally:
        visit.close()


def test_no_font_without_javascript(browser, site_url: str) -> None:
    """Without JavaScript the search page shows its notice; its icon is not the font's."""
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{site_url}/search.html", wait_until="networkidle")
        notice = page.locator(".admonition.error > .admonition-title")
        assert notice.is_visible()
        mask = notice.evaluate("(el) => getComputedStyle(el, '::after').maskImage")
        assert "data:image/svg+xml" in mask
        assert [url for url in requests if "fontawesome" in url or ".woff" in url] == []
    finally:
        context.close()
