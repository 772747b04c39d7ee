"""Every page of the built site, as a reader's browser meets it.

Each HTML page is loaded from a local server in headless Chromium. The checks
run on every page, not a sample: no request to another host, no HTTP error, no
console error, every formula typeset and no raw TeX left, every image loaded
with an alt text that describes it (a gallery thumbnail: an empty one, its
card's link names the example), and axe-core's accessibility rules with no
"serious" or "critical" violation in light mode on every page, and in dark
mode on every top-level page and the first and last page of each folder.
Counts go to ``test-artifacts/site-report.json``; lesson pages are also saved as screenshots.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from site_support import (
    AXE_RUN_JS,
    BAD_ALT,
    IMAGES_JS,
    MATH_BOXES_JS,
    RAW_TEX_JS,
    BuildResult,
    PageVisit,
    find_axe,
    site_pages,
    skip_or_fail,
)

LESSONS = {
    "index.html",
    "recurrence.html",
    "self_attention.html",
    "multihead_attention.html",
    "positional_encoding.html",
    "encoder_block.html",
    "translation.html",
    "modern_architecture.html",
    "vision_transformers.html",
}
#: axe-core's every impact: a page may have no violation at all, minor ones included.
BLOCKING = {"minor", "moderate", "serious", "critical"}


@pytest.fixture(scope="module")
def axe_script() -> Path:
    path = find_axe()
    if path is None:
        reason = (
            "NO AXE-CORE: axe.min.js not found (nox -s tests installs it with npm into .axe/; "
            "or set AXE_CORE_JS); accessibility checks skipped"
        )
        skip_or_fail(reason)
    return path


@pytest.fixture(scope="module")
def survey(built_site: BuildResult, browser, site_url: str, artifacts: Path) -> dict:
    """Visit every page once (light mode) and record what the browser saw.

    axe-core runs in the same visit (the light pass of ``test_accessibility``),
    after everything else is recorded, so a page is loaded once for both.
    """
    pages = [p.relative_to(built_site.html).as_posix() for p in site_pages(built_site.html)]
    axe = find_axe()
    report: dict[str, dict] = {}
    for path in pages:
        visit = PageVisit(browser, site_url, path)
        try:
            report[path] = {
                "requests": len(visit.requests),
                "foreign": visit.foreign,
                "failed": visit.failed_responses,
                "console": visit.console_errors,
                "raw_tex": visit.page.evaluate(RAW_TEX_JS),
                "math": visit.page.evaluate(MATH_BOXES_JS),
                "images": visit.page.evaluate(IMAGES_JS),
            }
            if path in LESSONS or path.startswith("auto_examples/plot_"):
                name = path.replace("/", "__").removesuffix(".html")
                visit.page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
            if axe is not None:
                visit.page.add_script_tag(path=str(axe))
                report[path]["axe"] = visit.page.evaluate(AXE_RUN_JS)
        finally:
            visit.close()
    summary = {
        "pages": len(report),
        "requests": sum(r["requests"] for r in report.values()),
        "formulas": sum(len(r["math"]) for r in report.values()),
        "images": sum(len(r["images"]) for r in report.values()),
    }
    (artifacts / "site-report.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return report


def test_every_page_was_visited(survey: dict) -> None:
    assert len(survey) >= 15
    assert set(LESSONS) - {"encoder_block.html"} <= set(survey)


def test_no_request_to_another_host(survey: dict) -> None:
    assert {page: r["foreign"] for page, r in survey.items() if r["foreign"]} == {}


def test_no_http_error_responses(survey: dict) -> None:
    assert {page: r["failed"] for page, r in survey.items() if r["failed"]} == {}


def test_no_console_errors(survey: dict) -> None:
    assert {page: r["console"] for page, r in survey.items() if r["console"]} == {}


def test_every_formula_typeset(survey: dict) -> None:
    raw = {page: r["raw_tex"] for page, r in survey.items() if r["raw_tex"]}
    assert raw == {}, "raw TeX left on pages"
    empty = {
        page: sum(1 for w, h in r["math"] if w <= 0 or h <= 0)
        for page, r in survey.items()
        if any(w <= 0 or h <= 0 for w, h in r["math"])
    }
    assert empty == {}, "visible formulas with an empty box"
    assert sum(len(r["math"]) for r in survey.values()) > 30


def test_every_image_loads_with_a_describing_alt_text(survey: dict) -> None:
    broken = {
        page: [i["src"] for i in r["images"] if not i["loaded"]]
        for page, r in survey.items()
        if any(not i["loaded"] for i in r["images"])
    }
    assert broken == {}
    bad_alt = {
        page: [(i["src"], i["alt"], i["card_link"]) for i in r["images"] if _undescribed(i)]
        for page, r in survey.items()
        if any(_undescribed(i) for i in r["images"])
    }
    assert bad_alt == {}
    thumbnails = [i for r in survey.values() for i in r["images"] if i["card_link"] is not None]
    assert len(thumbnails) >= 9, "no gallery thumbnails found (is the selector still right?)"


def _undescribed(image: dict) -> bool:
    """An image without a useful text alternative.

    A gallery thumbnail is decorative: the link on its card reads out the
    example's title, so its alt text is empty (WAI: an image next to text that
    says the same) and that link must have a text.
    """
    if image["card_link"] is not None:
        return image["alt"] != "" or not image["card_link"]
    return bool(BAD_ALT.search(image["alt"]))


def one_page_per_folder(html: Path, pages: list[Path]) -> list[Path]:
    """Every top-level page, and the first and last page of each folder below it.

    Dark mode changes colours only, and a folder's pages (the API pages, the
    gallery's examples) share their templates and styles: the light pass
    checks every page, the dark pass every lesson and a sample of each folder
    (the gallery's: its index and an example).
    """
    chosen: dict[tuple[str, ...], list[Path]] = {}
    for page in pages:
        parts = page.relative_to(html).parent.parts
        chosen.setdefault(parts, []).append(page)
    sample = [found if not folder else {found[0], found[-1]} for folder, found in chosen.items()]
    return sorted(page for pages_ in sample for page in pages_)


def test_dark_pass_covers_every_top_level_page_and_every_folder(built_site: BuildResult) -> None:
    pages = site_pages(built_site.html)
    chosen = one_page_per_folder(built_site.html, pages)
    folders = {page.relative_to(built_site.html).parent for page in pages}
    assert {page.relative_to(built_site.html).parent for page in chosen} == folders
    top = [page for page in pages if page.parent == built_site.html]
    assert set(top) <= set(chosen)
    assert len(top) >= 10
    assert len(chosen) < len(pages)


def axe_verdict(results: dict[str, dict], artifacts: Path, mode: str) -> None:
    """Fail on any violation axe-core found on the pages ``results`` maps to its result."""
    impacts: Counter[str] = Counter()
    blocking: dict[str, list] = {}
    rules = 0
    for path, result in results.items():
        rules = max(rules, result["rules"])
        for violation in result["violations"]:
            impacts[violation["impact"]] += 1
            if violation["impact"] in BLOCKING:
                blocking.setdefault(path, []).append(violation)
    report = {"mode": mode, "pages": len(results), "rules": rules}
    report["violations_by_impact"] = dict(impacts)
    (artifacts / f"axe-{mode}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    assert rules > 50
    assert blocking == {}, json.dumps(blocking, indent=1)[:8000]


def test_accessibility_light(
    built_site: BuildResult, survey: dict, axe_script: Path, artifacts: Path
) -> None:
    """axe-core on every page in light mode (run during the survey's visit)."""
    results = {path: r["axe"] for path, r in survey.items()}
    assert len(results) == len(site_pages(built_site.html))
    axe_verdict(results, artifacts, "light")


def test_accessibility_dark(
    built_site: BuildResult, browser, site_url: str, axe_script: Path, artifacts: Path
) -> None:
    """axe-core in dark mode on every top-level page and a sample of each folder."""
    results: dict[str, dict] = {}
    for page in one_page_per_folder(built_site.html, site_pages(built_site.html)):
        path = page.relative_to(built_site.html).as_posix()
        visit = PageVisit(browser, site_url, path, mode="dark")
        try:
            visit.page.add_script_tag(path=str(axe_script))
            results[path] = visit.page.evaluate(AXE_RUN_JS)
        finally:
            visit.close()
    axe_verdict(results, artifacts, "dark")
