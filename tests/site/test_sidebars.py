"""The sidebar buttons a reader sees: drawers on a phone, a folding sidebar on a desktop."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

PAGE = "positional_encoding.html"


def open_page(browser, site_url: str, width: int):
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    page.goto(f"{site_url}/{PAGE}", wait_until="load")
    page.wait_for_load_state("networkidle")
    return context, page


@pytest.mark.parametrize(
    ("toggle", "drawer"),
    [
        ("primary-toggle", "#pst-primary-sidebar-modal"),
        ("secondary-toggle", "#pst-secondary-sidebar-modal"),
    ],
)
def test_visible_sidebar_button_opens_its_drawer_at_390_px(
    browser, site_url: str, toggle: str, drawer: str
) -> None:
    context, page = open_page(browser, site_url, 390)
    try:
        buttons = page.locator(f"button.{toggle}:visible")
        assert buttons.count() == 1, f"{buttons.count()} visible .{toggle} buttons"
        assert not page.locator(drawer).evaluate("d => d.open")
        buttons.first.click()
        page.wait_for_function(f"document.querySelector('{drawer}').open")
        assert page.locator(f"{drawer} a").first.is_visible()
    finally:
        context.close()


def test_visible_primary_button_folds_the_sidebar_at_1280_px(browser, site_url: str) -> None:
    context, page = open_page(browser, site_url, 1280)
    try:
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        page.locator("button.primary-toggle:visible").first.click()
        page.wait_for_function(
            "document.querySelector('#pst-primary-sidebar').classList"
            ".contains('pst-sidebar-hidden')"
        )
        expect(sidebar).to_be_hidden()
        page.locator("button.primary-toggle:visible").first.click()
        page.wait_for_function(
            "!document.querySelector('#pst-primary-sidebar').classList"
            ".contains('pst-sidebar-hidden')"
        )
        expect(sidebar).to_be_visible()
    finally:
        context.close()
