"""Every page fits a phone: at 390 px wide nothing scrolls the page sideways.

Each page of the built site is loaded in one Chromium tab, 390 x 844 px (a
phone held upright), with every solution opened and every tab of a tab set
shown. The page must not be wider than the window
(``document.scrollingElement.scrollWidth`` is its ``clientWidth``): a table, a
formula or a code block wider than the column scrolls inside its own box, and a
long name wraps (docs/_static/narrow.css). A failure names the page and the
elements that run past the window's right edge, each where the overflow starts
(its parent still fits). A box that scrolls sideways must be reachable by the
keyboard (it, or something in it, takes the focus), or a keyboard user could
not scroll it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from site_support import BuildResult, settle, site_pages

WIDTH, HEIGHT = 390, 844

#: Every tab panel of a tab set shown at once: a panel not selected on load
#: is as wide as the one that is.
ALL_TABS_CSS = ".sd-tab-set > .sd-tab-content { display: block !important; }"

OVERFLOW_JS = """
() => {
  const root = document.scrollingElement;
  const width = root.clientWidth;
  const name = (el) => {
    let text = el.tagName.toLowerCase();
    if (el.id) text += "#" + el.id;
    if (el.classList.length) text += "." + Array.from(el.classList).slice(0, 2).join(".");
    return text;
  };
  const where = (el) => {
    const parts = [];
    for (let a = el; a && a !== document.body && parts.length < 4; a = a.parentElement) {
      parts.unshift(name(a));
    }
    return parts.join(" > ");
  };
  // Inside a box that clips or scrolls (or a fixed one), an element cannot widen the page.
  const contained = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== "visible" || style.position === "fixed") return true;
    }
    return false;
  };
  const past = (el) => el.getBoundingClientRect().right > width + 0.5;
  const overflowing = Array.from(document.body.querySelectorAll("*")).filter((el) => {
    const box = el.getBoundingClientRect();
    return (box.width > 0 || box.height > 0) && past(el)
      && getComputedStyle(el).position !== "fixed" && !contained(el);
  });
  const focusable = "a[href], button, input, select, textarea, summary, [tabindex='0']";
  const scrolling = Array.from(document.querySelectorAll("main *")).filter((el) => {
    const style = getComputedStyle(el);
    return ["auto", "scroll"].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1
      && el.checkVisibility();
  });
  const unreachable = scrolling.filter((el) => el.tabIndex < 0 && !el.querySelector(focusable));
  // Scrolled to its start, a box shows that it continues to the right (a11y.js, narrow.css).
  const uncued = scrolling.filter((el) => el.scrollLeft === 0
    && !(el.dataset.more || "").split(" ").includes("right"));
  // A shell command is read whole before it is typed: none hides its end.
  const shells = Array.from(
    document.querySelectorAll("div.highlight-bash pre, div.highlight-console pre")
  ).filter((el) => el.checkVisibility());
  const cutShells = shells.filter((el) => el.scrollWidth > el.clientWidth + 1);
  return {
    shells: shells.length,
    cutShells: cutShells.map((el) => JSON.stringify(el.textContent.trim().slice(0, 50))),
    scrollWidth: root.scrollWidth,
    clientWidth: width,
    // where each overflow starts: the element is past the edge, its parent is not
    offenders: overflowing.filter((el) => !past(el.parentElement)).map((el) =>
      `${where(el)} (right edge at ${Math.round(el.getBoundingClientRect().right)} px): `
      + JSON.stringify((el.textContent || "").trim().slice(0, 50))),
    unreachable: unreachable.map(where),
    uncued: uncued.map(where),
    scrolling: scrolling.length,
  };
}
"""


@pytest.fixture(scope="module")
def phone_tab(browser) -> Iterator[object]:
    """One tab at 390 x 844 px, reused for every page."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        yield context.new_page()
    finally:
        context.close()


def fit(page, url: str) -> dict:
    """Load ``url`` in ``page``, open everything folded, and measure its width."""
    page.goto(url, wait_until="load")
    page.add_style_tag(content=ALL_TABS_CSS)
    buttons = page.locator("button.toggle-button")
    for index in range(buttons.count()):
        buttons.nth(index).click()
    # Two frames (the page's resize observers have run) and the toggles' transitions ended.
    settle(page)
    return page.evaluate(OVERFLOW_JS)


@pytest.fixture(scope="module")
def narrow_survey(built_site: BuildResult, phone_tab, site_url: str) -> dict[str, dict]:
    """Every page of the site at 390 px: its width and what runs past the window."""
    pages = [p.relative_to(built_site.html).as_posix() for p in site_pages(built_site.html)]
    return {path: fit(phone_tab, f"{site_url}/{path}") for path in pages}


def test_every_page_was_measured(built_site: BuildResult, narrow_survey: dict) -> None:
    assert len(narrow_survey) == len(site_pages(built_site.html)) >= 15
    assert all(r["clientWidth"] == WIDTH for r in narrow_survey.values())


def test_no_page_scrolls_sideways_at_390px(narrow_survey: dict) -> None:
    wide = {page: r for page, r in narrow_survey.items() if r["scrollWidth"] > r["clientWidth"]}
    report = "\n".join(
        f"{page} is {r['scrollWidth']} px wide:\n  " + "\n  ".join(r["offenders"])
        for page, r in wide.items()
    )
    assert wide == {}, f"{len(wide)} pages wider than a 390 px window:\n{report}"


def test_boxes_that_scroll_sideways_take_the_keyboard_focus(narrow_survey: dict) -> None:
    unreachable = {page: r["unreachable"] for page, r in narrow_survey.items() if r["unreachable"]}
    report = "\n".join(f"{page}: {boxes}" for page, boxes in unreachable.items())
    assert unreachable == {}, f"boxes a keyboard user cannot scroll:\n{report}"


def test_boxes_that_scroll_sideways_show_that_they_do(narrow_survey: dict) -> None:
    """A table, formula or code block wider than its box fades at the edge it continues past."""
    uncued = {page: r["uncued"] for page, r in narrow_survey.items() if r["uncued"]}
    report = "\n".join(f"{page}: {boxes}" for page, boxes in uncued.items())
    assert uncued == {}, f"boxes that scroll with no cue:\n{report}"
    # The check saw boxes that scroll (the recurrence page's timing table does at 390 px).
    assert sum(r["scrolling"] for r in narrow_survey.values()) > 0


def test_shell_commands_wrap_rather_than_scroll(narrow_survey: dict) -> None:
    """An install command on a phone shows its whole text, not its first 36 characters."""
    cut = {page: r["cutShells"] for page, r in narrow_survey.items() if r["cutShells"]}
    assert cut == {}, f"shell commands cut at the box's edge: {cut}"
    # the landing page's install commands were looked at
    assert narrow_survey["index.html"]["shells"] >= 3


def test_the_check_sees_a_wide_element(phone_tab, site_url: str) -> None:
    fit(phone_tab, f"{site_url}/index.html")
    phone_tab.evaluate(
        """() => {
          const wide = document.createElement("div");
          wide.id = "too-wide";
          wide.style.width = "600px";
          wide.style.height = "1em";
          document.querySelector("article").append(wide);
        }"""
    )
    result = phone_tab.evaluate(OVERFLOW_JS)
    assert result["scrollWidth"] > WIDTH
    assert any("div#too-wide" in offender for offender in result["offenders"])
