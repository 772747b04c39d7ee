"""Benchmark the book's build and what a reader's browser downloads.

``nox -s bench`` runs this script. It copies the working tree (tracked and
untracked, not ignored files: what a fresh clone plus your edits would hold)
into a scratch folder and times these scenarios, each ``--repeats`` times:

=====================  ==========================================================
scenario               what is done before ``sphinx-build`` runs
=====================  ==========================================================
cold                   a new scratch copy: no build folder, no caches
cold, ``-j auto``      the same, with Sphinx's parallel build
no change              nothing
prose edit             a sentence appended to a lesson page's prose
example edit           a comment appended to one gallery script
package edit           a comment appended to one ``lessons_code`` module
=====================  ==========================================================

For every scenario it prints the median wall time, how many notebooks (lesson
pages) and gallery examples were executed, the goal and whether it was met.
Executions are read from the build's own report (``execution.json``, written by
docs/_ext/book/execution.py). For the package edit, the pages and
examples that should run again are found independently of the build's own
dependency tracking, with the standard library's ``modulefinder`` run on the
code of each page and example. A second table gives the execution time of
every page and example in the cold build. Then the page weights: for the
landing page, every lesson, gallery example and API page, the files, raw and
compressed bytes of a first visit and of a second page after the landing page
(headless Chromium, the site served like a static host), and Lighthouse's
performance score, LCP and TBT for the landing and positional-encoding pages.
``--pages-only`` measures only these, on an already built site.

The figures are printed, never asserted: the script exits non-zero only when a
build fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from modulefinder import ModuleFinder
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The settings (pyproject's [tool.book]) and the helpers the bench shares with
# the tests: book_tools.py, next to pyproject.toml.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from book.pages import lesson_pages, read_page  # noqa: E402

from book_tools import (  # noqa: E402
    CHROMIUM_ARGS,
    HTML,
    TEXT_SUFFIXES,
    StaticHost,
    build_folder,
    executed,
    find_chromium,
    serve_folder,
    sphinx_build,
)

PACKAGE = "lessons_code"
PROSE_PAGE = "docs/self_attention.md"
EXAMPLE = "gallery/plot_positional_encoding.py"
MODULE = "lessons_code/positional.py"

COLD_GOAL_S = 120.0
NO_CHANGE_GOAL_S = 5.0
PAGE_BYTES_GOAL = 500_000


@dataclass
class Build:
    """What one ``sphinx-build`` run did."""

    seconds: float
    notebooks: dict[str, float] = field(default_factory=dict)  # page -> seconds
    examples: dict[str, float] = field(default_factory=dict)  # script -> seconds


@dataclass
class Scenario:
    """The builds of one scenario and its goal."""

    name: str
    builds: list[Build]
    goal: str
    met: bool

    @property
    def median(self) -> float:
        """Median wall time of the scenario's builds."""
        return statistics.median(build.seconds for build in self.builds)


def scratch_copy(parent: Path, name: str) -> Path:
    """Copy the working tree's tracked and untracked, not ignored files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    copy = parent / name
    for relative in filter(None, listed.split("\0")):
        source = ROOT / relative
        if not source.is_file():  # deleted but not yet committed
            continue
        target = copy / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return copy


def timed_build(copy: Path, jobs: bool) -> Build:
    """Build the copy's book (its own ``lessons_code`` first on the path), timed."""
    docs = copy / "docs"
    start = time.perf_counter()
    done = sphinx_build(docs=docs, jobs=jobs)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"sphinx-build failed in {copy} (exit {done.returncode}):\n{done.output[-6000:]}")
    pages, examples = executed(done.html)
    return Build(seconds, pages, examples)


def append(path: Path, text: str) -> None:
    """Append ``text`` to the file at ``path``."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


# -- what an edit to the package should re-execute ------------------------------


def page_code(page: Path) -> str:
    """Return the Python source of a lesson page's code cells (the page model's)."""
    cells = read_page(page.read_text(encoding="utf-8")).code_cells
    lines = "\n\n".join(cell.source for cell in cells).splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def package_files_loaded(code: str, copy: Path) -> set[str]:
    """Files of the copy's ``lessons_code`` that ``code`` loads, per ``modulefinder``."""
    finder = ModuleFinder(path=[str(copy)])  # only the copy: torch & co. are not followed
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(code)
    try:
        finder.run_script(script.name)
    finally:
        os.unlink(script.name)
    return {
        Path(module.__file__).relative_to(copy).as_posix()
        for name, module in finder.modules.items()
        if name.split(".")[0] == PACKAGE and module.__file__
    }


def dependents(copy: Path, module: str) -> tuple[set[str], set[str]]:
    """Pages (``x.md``) and examples (``plot_x.py``) whose code loads ``module``."""
    docs = copy / "docs"
    pages = {
        page.relative_to(docs).as_posix()
        for page in lesson_pages(docs)
        if module in package_files_loaded(page_code(page), copy)
    }
    examples = {
        script.name
        for script in sorted((copy / "gallery").glob("*.py"))
        if module in package_files_loaded(script.read_text(encoding="utf-8"), copy)
    }
    return pages, examples


# -- the scenarios --------------------------------------------------------------


def run_scenarios(work: Path, repeats: int) -> tuple[list[Scenario], Build, Path]:
    """Run every scenario; return them, the first cold build and a built copy."""
    scenarios = []
    cold_serial: list[Build] = []
    cold_parallel: list[Build] = []
    copy = work
    for index in range(repeats):
        for jobs, builds in ((False, cold_serial), (True, cold_parallel)):
            label = "cold-j" if jobs else "cold"
            copy = scratch_copy(work, f"{label}-{index}")
            builds.append(timed_build(copy, jobs))
            progress(f"{label} #{index + 1}", builds[-1])
            if index < repeats - 1 or not jobs:
                shutil.rmtree(copy)
    total_pages = len(lesson_pages(copy / "docs"))
    total_examples = len(list((copy / "gallery").glob("*.py")))
    for name, builds in (("cold", cold_serial), ("cold, -j auto", cold_parallel)):
        everything = all(
            (len(b.notebooks), len(b.examples)) == (total_pages, total_examples) for b in builds
        )
        median = statistics.median(b.seconds for b in builds)
        goal = f"< {COLD_GOAL_S:.0f} s, all {total_pages} pages and {total_examples} examples"
        scenarios.append(Scenario(name, builds, goal, everything and median < COLD_GOAL_S))

    # The copy below was built with -j auto; the incremental builds use it too.
    jobs = True

    def incremental(name: str, goal: str, edit: Callable[[int], None], check) -> None:
        builds = []
        for index in range(repeats):
            edit(index)
            builds.append(timed_build(copy, jobs))
            progress(f"{name} #{index + 1}", builds[-1])
        met = all(check(build) for build in builds)
        scenarios.append(Scenario(name, builds, goal, met))

    incremental(
        "no change",
        f"0 pages, 0 examples, < {NO_CHANGE_GOAL_S:.0f} s",
        lambda index: None,
        lambda b: not b.notebooks and not b.examples and b.seconds < NO_CHANGE_GOAL_S,
    )
    incremental(
        "prose edit",
        "0 pages, 0 examples",
        lambda index: append(copy / PROSE_PAGE, f"\nA sentence the benchmark adds ({index}).\n"),
        lambda b: not b.notebooks and not b.examples,
    )
    example = Path(EXAMPLE).name
    incremental(
        "example edit",
        f"0 pages, only {example}",
        lambda index: append(copy / EXAMPLE, f"\n# A comment the benchmark adds ({index}).\n"),
        lambda b: not b.notebooks and set(b.examples) == {example},
    )
    pages, examples = dependents(copy, MODULE)
    incremental(
        "package edit",
        f"{MODULE}: exactly {', '.join(sorted(pages | examples))}",
        lambda index: append(copy / MODULE, f"\n# A comment the benchmark adds ({index}).\n"),
        lambda b: set(b.notebooks) == pages and set(b.examples) == examples,
    )
    return scenarios, cold_parallel[0], copy


def progress(label: str, build: Build) -> None:
    """One line per build, so a long run shows where it is."""
    print(
        f"  {label}: {build.seconds:.1f} s, {len(build.notebooks)} pages, "
        f"{len(build.examples)} examples executed",
        flush=True,
    )


# -- what a reader's browser downloads ---------------------------------------------
#
# The built site is served as a static host serves it (book_tools.StaticHost,
# the tests' server too): text gzip-compressed, every file cacheable for ten
# minutes. Every file the server sends is counted; a file the browser takes
# from its cache never reaches the server. Sizes are the bodies: raw (the file)
# and compressed (gzip -9 for text, images and fonts as they are).

#: The theme's icon font: its JavaScript and webfonts (another change removes them).
ICON_FONT = re.compile(r"(fontawesome[^/]*\.js|\.woff2?)$")
#: Goals of issue 17, compressed bytes: a first visit per page type; a second
#: page in the same visit, not counting its own images.
FIRST_VISIT_GOAL = {"landing": 200_000, "lesson": 400_000}
SECOND_PAGE_GOAL = 150_000
#: Lighthouse (npm), installed by ``nox -s bench`` into ``.lighthouse/``.
LIGHTHOUSE_CLI = ROOT / ".lighthouse" / "node_modules" / "lighthouse" / "cli" / "index.js"
LIGHTHOUSE_PAGES = ("index.html", "positional_encoding.html")


@dataclass
class Visit:
    """The files the server sent for one page load."""

    files: int = 0
    raw: int = 0
    compressed: int = 0
    icon_font: int = 0  # compressed bytes of the icon font's script and webfonts
    images: int = 0  # compressed bytes of the page's images (``_images/``)


@dataclass
class PageWeight:
    """One page: a first visit (empty cache), and after the landing page (warm cache)."""

    kind: str
    page: str
    first: Visit
    second: Visit | None  # None for the landing page itself
    math: int  # MathML elements on the page


def file_sizes(site: Path, relative: str, cache: dict[str, tuple[int, int]]) -> tuple[int, int]:
    """(raw, compressed) bytes of a file of the site, as a static host sends it."""
    import gzip

    if relative not in cache:
        data = (site / relative).read_bytes()
        packed = len(gzip.compress(data, 9, mtime=0))
        text = Path(relative).suffix in TEXT_SUFFIXES
        cache[relative] = (len(data), packed if text else len(data))
    return cache[relative]


def weighed_pages(site: Path) -> list[tuple[str, str]]:
    """(page type, page) for every page measured: landing, lessons, gallery, API."""
    lessons = [f"{page.stem}.html" for page in lesson_pages(ROOT / "docs")]
    pages = [("landing", "index.html")]
    pages += [("lesson", page) for page in lessons if (site / page).is_file()]
    gallery = sorted(site.glob("auto_examples/plot_*.html"))
    pages += [("gallery", path.relative_to(site).as_posix()) for path in gallery]
    api = [site / "api.html", *sorted(site.glob("api/*.html"))]
    pages += [("API", path.relative_to(site).as_posix()) for path in api if path.is_file()]
    return pages


def page_weights(site: Path) -> list[PageWeight]:
    """Load every measured page in headless Chromium and weigh what the server sent."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        print("No Chromium found: the page-weight table is skipped.")
        return []
    sizes: dict[str, tuple[int, int]] = {}
    rows = []

    def visit(page, host: StaticHost, path: str) -> Visit:
        host.sent.clear()
        page.goto(f"{host.url}/{path}", wait_until="networkidle")
        # Webfonts are requested once the icon script has drawn: wait for them too.
        page.evaluate("document.fonts.ready.then(() => true)")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        weight = Visit()
        for relative, status in list(host.sent):
            if status != 200:
                continue
            raw, compressed = file_sizes(site, relative, sizes)
            weight.files += 1
            weight.raw += raw
            weight.compressed += compressed
            if ICON_FONT.search(relative):
                weight.icon_font += compressed
            if relative.startswith("_images/"):  # figures, diagrams, thumbnails
                weight.images += compressed
        return weight

    with serve_folder(site) as host, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for kind, path in weighed_pages(site):
            context = browser.new_context()  # empty cache: a first visit
            tab = context.new_page()
            first = visit(tab, host, path)
            math = tab.locator("math").count()
            context.close()
            second = None
            if path != "index.html":
                context = browser.new_context()
                tab = context.new_page()
                visit(tab, host, "index.html")  # the landing page first...
                second = visit(tab, host, path)  # ...then this page, cache warm
                context.close()
            rows.append(PageWeight(kind, path, first, second, math))
        browser.close()
    return rows


def lighthouse(site: Path, runs: int) -> list[tuple[str, list[tuple[float, float, float]]]]:
    """Per page, ``runs`` x (performance score, LCP ms, TBT ms) from Lighthouse's mobile preset."""
    import json

    chromium = find_chromium()
    if chromium is None or not LIGHTHOUSE_CLI.is_file() or shutil.which("node") is None:
        print(
            f"Lighthouse skipped: it needs node, Chromium and {LIGHTHOUSE_CLI.relative_to(ROOT)} "
            "(`nox -s bench` installs it)."
        )
        return []
    results = []
    with serve_folder(site) as host:
        for page in LIGHTHOUSE_PAGES:
            command = [
                "node",
                str(LIGHTHOUSE_CLI),
                f"{host.url}/{page}",
                "--quiet",
                "--only-categories=performance",
                "--output=json",
                "--output-path=stdout",
                f"--chrome-flags={' '.join(CHROMIUM_ARGS)}",
            ]
            env = {**os.environ, "CHROME_PATH": chromium}
            found = []
            for _ in range(runs):
                done = subprocess.run(
                    command, capture_output=True, text=True, env=env, timeout=300, check=False
                )
                if done.returncode != 0:
                    print(f"Lighthouse failed on {page} (exit {done.returncode}):")
                    print(done.stderr[-2000:])
                    continue
                report = json.loads(done.stdout)
                audits = report["audits"]
                found.append(
                    (
                        100 * report["categories"]["performance"]["score"],
                        audits["largest-contentful-paint"]["numericValue"],
                        audits["total-blocking-time"]["numericValue"],
                    )
                )
            if found:
                results.append((page, found))
    return results


def page_report(
    weights: list[PageWeight], scores: list[tuple[str, list[tuple[float, float, float]]]]
) -> str:
    """Format the two page-weight tables, with their goals, and Lighthouse's figures."""

    def kb(size: int) -> str:
        return f"{size / 1e3:,.0f}"

    parts = []
    if weights:
        parts.append(
            "First visit, empty cache (headless Chromium; kB of the bodies a static host "
            "sends: gzip -9 for text, images and fonts as they are)\n"
        )
        rows = []
        for row in weights:
            visit = row.first
            goal = FIRST_VISIT_GOAL.get(row.kind)
            rows.append(
                [
                    row.kind,
                    row.page,
                    str(visit.files),
                    kb(visit.raw),
                    kb(visit.compressed),
                    kb(visit.icon_font),
                    kb(visit.compressed - visit.icon_font),
                    kb(visit.images),
                    str(row.math),
                    "-" if goal is None else f"<= {kb(goal)}: {yes(visit.compressed <= goal)}",
                ]
            )
        header = ["type", "page", "files", "raw", "compressed", "icon font"]
        header += ["without icon font", "images", "math", "goal"]
        parts.append(table(header, rows))
        parts.append(
            "\n'icon font': fontawesome.js and the *.woff2 webfonts, included in 'compressed'. "
            "'math': MathML elements, typeset by the browser (no math JavaScript or fonts)."
        )
        parts.append(
            "\nSecond page of a visit: the landing page first, then this page in the same tab; "
            "what the server sent again (every file is served with max-age=600)\n"
        )
        rows = []
        for row in weights:
            visit = row.second
            if visit is None:
                continue
            own = visit.compressed - visit.images
            rows.append(
                [
                    row.kind,
                    row.page,
                    str(visit.files),
                    kb(visit.raw),
                    kb(visit.compressed),
                    kb(visit.images),
                    kb(own),
                    f"<= {kb(SECOND_PAGE_GOAL)}: {yes(own <= SECOND_PAGE_GOAL)}",
                ]
            )
        header = ["type", "page", "files", "raw", "compressed", "images", "less images", "goal"]
        parts.append(table(header, rows))
    if scores:
        runs = max(len(found) for _, found in scores)
        parts.append(
            f"\nLighthouse (mobile preset, simulated throttling, on this machine): "
            f"median of {runs} runs, [lowest, highest]\n"
        )
        rows = []
        for page, found in scores:
            score, lcp, tbt = ([run[i] for run in found] for i in range(3))
            lcp = [ms / 1e3 for ms in lcp]
            rows.append(
                [
                    page,
                    f"{statistics.median(score):.0f} [{min(score):.0f}, {max(score):.0f}]",
                    f"{statistics.median(lcp):.2f} [{min(lcp):.2f}, {max(lcp):.2f}]",
                    f"{statistics.median(tbt):.0f} [{min(tbt):.0f}, {max(tbt):.0f}]",
                ]
            )
        parts.append(table(["page", "performance", "LCP s", "TBT ms"], rows))
    return "\n".join(parts)


def yes(met: bool) -> str:
    """``yes`` or ``NO``, as the build table prints a goal."""
    return "yes" if met else "NO"


# -- report ------------------------------------------------------------------------


def table(header: list[str], rows: list[list[str]]) -> str:
    """Format a Markdown table (readable as plain text too)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def report(scenarios: list[Scenario], cold: Build, repeats: int) -> str:
    """Format the build tables: scenarios and execution times."""
    parts = [f"Build scenarios (wall seconds: median of {repeats}; {os.cpu_count()} CPU cores)\n"]
    rows = []
    for scenario in scenarios:
        pages = sorted({len(b.notebooks) for b in scenario.builds})
        examples = sorted({len(b.examples) for b in scenario.builds})
        rows.append(
            [
                scenario.name,
                f"{scenario.median:.1f}",
                "/".join(map(str, pages)),
                "/".join(map(str, examples)),
                scenario.goal,
                "yes" if scenario.met else "NO",
            ]
        )
    header = ["scenario", "wall s", "pages run", "examples run", "goal", "met"]
    parts.append(table(header, rows))
    serial = next(s for s in scenarios if s.name == "cold")
    parallel = next(s for s in scenarios if s.name == "cold, -j auto")
    parts.append(
        f"\n-j auto: {parallel.median:.1f} s against {serial.median:.1f} s, "
        f"{serial.median / parallel.median:.2f}x.\n"
    )
    parts.append("Execution times in the first cold -j auto build (seconds)\n")
    times = [[f"page {name}", f"{s:.1f}"] for name, s in sorted(cold.notebooks.items())]
    times += [[f"example {name}", f"{s:.1f}"] for name, s in sorted(cold.examples.items())]
    parts.append(table(["executed", "seconds"], times))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    """Run the scenarios and print the tables (or only the page weights: ``--pages-only``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="builds per scenario (3)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument(
        "--pages-only",
        action="store_true",
        help="no builds: weigh the pages of an already built site and run Lighthouse",
    )
    parser.add_argument(
        "--site",
        type=Path,
        default=HTML,
        help="the built site --pages-only measures (docs/_build/html)",
    )
    parser.add_argument(
        "--lighthouse-runs", type=int, default=3, help="Lighthouse runs per page (3; 0: none)"
    )
    args = parser.parse_args(argv)
    if args.pages_only:
        if not (args.site / "index.html").is_file():
            sys.exit(f"No built site in {args.site}: build it first (`nox -s docs`).")
        print(page_report(page_weights(args.site), lighthouse(args.site, args.lighthouse_runs)))
        return
    work = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    try:
        print(f"Scratch folder: {work}", flush=True)
        scenarios, cold, copy = run_scenarios(work, args.repeats)
        site = build_folder(copy / "docs") / "html"
        weights, scores = page_weights(site), lighthouse(site, args.lighthouse_runs)
        print()
        print(report(scenarios, cold, args.repeats))
        print()
        print(page_report(weights, scores))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
