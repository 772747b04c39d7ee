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
Executions are read from the build's own log: MyST-NB's "Executed notebook"
lines and sphinx-gallery's summary. For the package edit, the pages and
examples that should run again are found independently of the build's own
dependency tracking, with the standard library's ``modulefinder`` run on the
code of each page and example. A second table gives the execution time of
every page and example in the cold build, and a third the bytes each top-level
page transfers in headless Chromium, split into the theme's assets, ours
(the page and every other asset) and images.

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
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
# The settings (pyproject's [tool.book]) and the helpers the bench shares with
# the tests: book_tools.py, next to pyproject.toml.
sys.path.insert(0, str(ROOT))
from book_tools import (  # noqa: E402
    CHROMIUM_ARGS,
    SPHINX_FLAGS,
    SPHINX_JOBS,
    executed,
    find_chromium,
    gallery_state,
    serve_folder,
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


def sphinx_build(copy: Path, *extra: str) -> Build:
    """Build the copy's book; its own ``lessons_code`` comes first on the path."""
    docs = copy / "docs"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        *SPHINX_FLAGS,
        *extra,
        "-d",
        str(docs / "_build" / "doctrees"),
        str(docs),
        str(docs / "_build" / "html"),
    ]
    # The copy's conf.py sets the build's threads, as in every build.
    env = {**os.environ, "PYTHONPATH": str(copy)}
    before = gallery_state(docs)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    if done.returncode != 0:
        sys.exit(f"sphinx-build failed in {copy} (exit {done.returncode}):\n{output[-6000:]}")
    pages, examples = executed(output, docs, before)
    return Build(seconds, pages, examples)


def append(path: Path, text: str) -> None:
    """Append ``text`` to the file at ``path``."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


# -- what an edit to the package should re-execute ------------------------------


def notebook_pages(docs: Path) -> list[Path]:
    """Lesson pages that are executed notebooks (MyST with a kernelspec)."""
    return sorted(
        page
        for page in docs.glob("*.md")
        if re.search(r"^kernelspec:", page.read_text(encoding="utf-8"), re.M)
    )


def page_code(page: Path) -> str:
    """Return the Python source of a MyST notebook's code cells."""
    cells = re.findall(
        r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S
    )
    lines = []
    for cell in cells:
        # Drop the cell's options: a YAML block between --- lines, or :key: lines.
        cell = re.sub(r"\A---\n.*?\n---\n", "", cell, flags=re.S)
        lines.extend(line for line in cell.splitlines() if not re.match(r"^:\w[\w-]*:", line))
        lines.append("")
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
        for page in notebook_pages(docs)
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
        for jobs, builds in (([], cold_serial), (SPHINX_JOBS, cold_parallel)):
            label = "cold-j" if jobs else "cold"
            copy = scratch_copy(work, f"{label}-{index}")
            builds.append(sphinx_build(copy, *jobs))
            progress(f"{label} #{index + 1}", builds[-1])
            if index < repeats - 1 or not jobs:
                shutil.rmtree(copy)
    total_pages = len(notebook_pages(copy / "docs"))
    total_examples = len(list((copy / "gallery").glob("*.py")))
    for name, builds in (("cold", cold_serial), ("cold, -j auto", cold_parallel)):
        everything = all(
            (len(b.notebooks), len(b.examples)) == (total_pages, total_examples) for b in builds
        )
        median = statistics.median(b.seconds for b in builds)
        goal = f"< {COLD_GOAL_S:.0f} s, all {total_pages} pages and {total_examples} examples"
        scenarios.append(Scenario(name, builds, goal, everything and median < COLD_GOAL_S))

    # The copy below was built with -j auto; the incremental builds use it too.
    jobs = SPHINX_JOBS

    def incremental(name: str, goal: str, edit: Callable[[int], None], check) -> None:
        builds = []
        for index in range(repeats):
            edit(index)
            builds.append(sphinx_build(copy, *jobs))
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


def theme_files() -> set[str]:
    """Paths under ``_static/`` that the theme (and Sphinx's basic theme) ship."""
    import pydata_sphinx_theme
    import sphinx
    import sphinx_book_theme

    folders = [
        Path(sphinx.__file__).parent / "themes" / "basic" / "static",
        Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static",
        Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme" / "static",
    ]
    names = {
        # Templated assets (basic.css.jinja, documentation_options.js_t) are
        # served under the name without the template suffix.
        path.relative_to(folder).as_posix().removesuffix(".jinja").removesuffix("_t")
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file()
    }
    # Written by Sphinx for the theme: its syntax-highlighting colours.
    return names | {"pygments.css"}


def page_bytes(html: Path) -> list[tuple[str, int, int, int, int]]:
    """(page, theme, ours, images, math elements) for every top-level page."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        print("No Chromium found: the transferred-bytes table is skipped.")
        return []
    theme = theme_files()
    rows = []
    with serve_folder(html) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for page_file in sorted(html.glob("*.html")):
            if page_file.name in ("genindex.html", "search.html", "py-modindex.html"):
                continue
            context = browser.new_context()  # empty cache: a first visit
            page = context.new_page()
            finished: list = []
            page.on("requestfinished", lambda request, done=finished: done.append(request))
            page.goto(f"{url}/{page_file.name}", wait_until="networkidle")
            math = page.locator("math").count()
            split = {"theme": 0, "ours": 0, "images": 0}
            for request in finished:
                sizes = request.sizes()
                size = sizes["responseBodySize"] + sizes["responseHeadersSize"]
                path = urlparse(request.url).path.lstrip("/")
                if request.resource_type == "image":
                    split["images"] += size
                elif path.startswith("_static/") and path.removeprefix("_static/") in theme:
                    split["theme"] += size
                else:
                    split["ours"] += size
            rows.append((page_file.stem, split["theme"], split["ours"], split["images"], math))
            context.close()
        browser.close()
    return rows


# -- report ------------------------------------------------------------------------


def table(header: list[str], rows: list[list[str]]) -> str:
    """Format a Markdown table (readable as plain text too)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(row) for row in rows)])


def report(scenarios: list[Scenario], cold: Build, bytes_rows: list, repeats: int) -> str:
    """Format the benchmark's three tables."""
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
    if bytes_rows:
        parts.append("\nBytes each page transfers on a first visit (headless Chromium)\n")
        rows = [
            [
                name,
                f"{theme / 1e3:.1f}",
                f"{ours / 1e3:.1f}",
                f"{images / 1e3:.1f}",
                str(math),
                "yes" if ours < PAGE_BYTES_GOAL else "NO",
            ]
            for name, theme, ours, images, math in bytes_rows
        ]
        header = ["page", "theme kB", "ours kB", "images kB", "math elements", "ours < 500 kB"]
        parts.append(table(header, rows))
        parts.append(
            "\nMath is MathML in the HTML, typeset by the browser as the page is drawn: "
            "no client-side typesetter is downloaded or waited for."
        )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    """Run the scenarios and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="builds per scenario (3)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="lessons-bench-"))
    try:
        print(f"Scratch folder: {work}", flush=True)
        scenarios, cold, copy = run_scenarios(work, args.repeats)
        bytes_rows = page_bytes(copy / "docs" / "_build" / "html")
        print()
        print(report(scenarios, cold, bytes_rows, args.repeats))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
