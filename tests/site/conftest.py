"""Fixtures for the tests that build the site and look at it in a browser.

The site is built once per test session with the same flags as ``nox -s docs``
(nitpicky, warnings are errors) into ``docs/_build/html``, so the execution
caches of a previous ``nox -s docs`` are reused. The browser is Debian's
Chromium driven by Playwright; Playwright's own browser download is not used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from site_support import ARTIFACTS, BuildResult, skip_or_fail

from book_tools import CHROMIUM_ARGS, find_chromium, serve_folder, sphinx_build

SITE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by these markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test here ``site``, and ``browser`` where it uses the browser.

    The markers follow from where a test lives and what it asks for, so a new
    test cannot be left without them: ``-m "not site"`` then builds nothing
    and never starts Playwright.
    """
    for item in items:
        if SITE in item.path.parents:
            item.add_marker(pytest.mark.site)
            if "browser" in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def built_site() -> BuildResult:
    """The site, built from the working tree; the build must succeed."""
    result = sphinx_build()
    if result.returncode != 0:
        pytest.fail(f"sphinx-build failed (exit {result.returncode}):\n{result.output[-6000:]}")
    return result


@pytest.fixture(scope="session")
def site_url(built_site: BuildResult) -> Iterator[str]:
    """Serve the built site as a static host serves it (book_tools.StaticHost)."""
    with serve_folder(built_site.html) as host:
        yield host.url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """A headless Chromium; skipped loudly without one, except under CI=true."""
    executable = find_chromium()
    if executable is None:
        reason = (
            "NO BROWSER: Chromium not found at /usr/bin/chromium (install Debian's "
            "'chromium' package or set CHROMIUM=/path/to/chromium); browser tests skipped"
        )
        skip_or_fail(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Folder for screenshots a maintainer can look at after the run."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
