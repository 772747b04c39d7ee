"""Fixtures for the tests that build the site and look at it in a browser.

The site is built once per test session with the same flags as ``nox -s docs``
(nitpicky, warnings are errors) into ``docs/_build/html``, so the execution
caches of a previous ``nox -s docs`` are reused. The browser is Debian's
Chromium driven by Playwright; Playwright's own browser download is not used.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock
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
def built_site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> BuildResult:
    """The site, built from the working tree once per test run; the build must succeed.

    Under pytest-xdist every worker asks for it: the first to take the lock
    builds, and leaves the result where the others read it (a folder the
    run's workers share, new for every run).
    """
    if worker_id == "master":  # no workers: this process is the run
        result = sphinx_build()
    else:
        shared = tmp_path_factory.getbasetemp().parent / "built_site.json"
        with FileLock(f"{shared}.lock"):
            if shared.is_file():
                record = json.loads(shared.read_text(encoding="utf-8"))
                result = BuildResult(record["returncode"], record["output"], Path(record["html"]))
            else:
                result = sphinx_build()
                record = {
                    "returncode": result.returncode,
                    "output": result.output,
                    "html": str(result.html),
                }
                shared.write_text(json.dumps(record), encoding="utf-8")
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
