"""Helpers for the tests that build the site and look at it in a browser.

The site is built once per test session with the same flags as ``nox -s docs``
(pyproject's ``[tool.book]``: nitpicky, warnings are errors) into
``docs/_build/html``, so the execution caches of a previous ``nox -s docs``
are reused. The browser is Debian's
Chromium driven by Playwright; Playwright's own browser download is not used.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

from book.listing import listed_objects  # noqa: F401 (a page's listings, as the build finds them)
from book.pages import lesson_pages, read_page

from book_tools import DOCS, HTML, ROOT, BuildResult  # noqa: F401 (the tests import them from here)

ARTIFACTS = ROOT / "test-artifacts"


NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
---
"""


def make_book(tmp_path: Path, pages: dict[str, str], examples: dict[str, str]) -> Path:
    """A copy of the book under ``tmp_path`` with only ``pages`` (name -> text) and ``examples``.

    The copy has the real configuration, extensions and package; its index
    lists the gallery and ``pages``. Returns the copy's ``docs`` folder.
    """
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "book_tools.py", tmp_path / "book_tools.py")
    shutil.copytree(ROOT / "lessons_code", tmp_path / "lessons_code")
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(DOCS / "conf.py", docs / "conf.py")
    shutil.copy(DOCS / "references.bib", docs / "references.bib")
    for folder in ("_ext", "_static", "_templates"):
        shutil.copytree(DOCS / folder, docs / folder)
    (docs / "claims").mkdir()
    toctree = "\n".join(["auto_examples/index", *pages])
    bibliography = "```{bibliography}\n:all:\n```\n"
    (docs / "index.md").write_text(
        f"# Test book\n\n```{{toctree}}\n{toctree}\n```\n\n{bibliography}", encoding="utf-8"
    )
    for name, text in pages.items():
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    gallery = tmp_path / "gallery"
    gallery.mkdir()
    (gallery / "README.txt").write_text("Examples\n========\n", encoding="utf-8")
    for name, text in examples.items():
        (gallery / name).write_text(text, encoding="utf-8")
    return docs


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
() => Array.from(document.querySelectorAll("math"))
  // formulas in a closed dropdown or an inactive tab are not rendered yet
  .filter((m) => m.checkVisibility())
  .map((m) => {
    const box = m.getBoundingClientRect();
    return [box.width, box.height];
  })
"""

IMAGES_JS = """
() => Array.from(document.images).map((img) => {
  const card = img.closest(".sphx-glr-thumbcontainer");
  return {
    src: img.getAttribute("src"), alt: img.getAttribute("alt") || "",
    loaded: img.complete && img.naturalWidth > 0,
    // a gallery thumbnail: the text of its card's link (null elsewhere); that
    // this text is the link's accessible name is axe-core's "link-name" rule
    card_link: card ? (card.querySelector("a")?.textContent ?? "").trim() : null,
  };
})
"""


#: Resolves once the page has laid out and painted twice and no finite CSS
#: transition or animation is running (a toggle's fade, a menu's slide): a
#: condition to wait for, where a fixed sleep would pass or fail with the load.
SETTLE_JS = """
() => new Promise((resolve) => {
  const running = () => document.getAnimations().some((a) =>
    a.playState === "running" && a.effect && a.effect.getTiming().iterations !== Infinity);
  const tick = () => (running() ? requestAnimationFrame(tick) : resolve(true));
  requestAnimationFrame(() => requestAnimationFrame(tick));
})
"""


#: Every image of the page loaded now, the lazy ones too (conf.py makes every
#: image after a page's first one ``loading="lazy"``): what a reader who
#: scrolls through the whole page gets. Returns how many were lazy.
LOAD_IMAGES_JS = """
async () => {
  const lazy = Array.from(document.querySelectorAll('img[loading="lazy"]'));
  lazy.forEach((img) => { img.loading = "eager"; });
  await Promise.all(Array.from(document.images).map((img) => img.complete ? null
    : new Promise((done) => {
      img.addEventListener("load", done, { once: true });
      img.addEventListener("error", done, { once: true });
    })));
  return lazy.length;
}
"""


def load_images(page) -> int:
    """Load every image of ``page`` now, lazy or not (``LOAD_IMAGES_JS``)."""
    return int(page.evaluate(LOAD_IMAGES_JS))


def settle(page) -> None:
    """Wait until ``page`` has laid out and its transitions have ended (``SETTLE_JS``)."""
    page.evaluate(SETTLE_JS)


class PageVisit:
    """Load one page and record everything the browser did."""

    def __init__(self, browser, base_url: str, path: str, *, mode: str = "light") -> None:
        self.base_host = urlsplit(base_url).netloc
        self.requests: list[str] = []
        self.foreign: list[str] = []
        self.failed_responses: list[str] = []
        self.console_errors: list[str] = []
        self.context = browser.new_context(color_scheme=mode)
        # The theme keeps the reader's choice of light or dark mode here.
        self.context.add_init_script(f"localStorage.setItem('mode', '{mode}');")
        self.page = self.context.new_page()
        self.context.route("**/*", self._route)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        self.page.on("response", self._response)
        self.page.goto(f"{base_url}/{path}", wait_until="load")
        load_images(self.page)  # every image's request is checked, lazy ones too
        self.page.wait_for_load_state("networkidle")
        # The theme sets dark mode as the page starts, and some colours ease
        # into it (sphinx-design's tab labels: a 250 ms transition): every check
        # reads the page once its transitions have ended, never half-way, where
        # axe-core once measured a mid-transition colour's contrast.
        settle(self.page)

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


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test with ``reason``; under ``CI=true`` a missing tool fails it instead."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} -- and CI=true, where that is a failure")
    pytest.skip(reason)


AXE_CANDIDATES = (
    ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js",
    ROOT / "node_modules" / "axe-core" / "axe.min.js",
)


def find_axe() -> Path | None:
    """Path of axe-core's ``axe.min.js`` (installed from the npm registry), or None."""
    configured = os.environ.get("AXE_CORE_JS")
    candidates = ((Path(configured),) if configured else ()) + AXE_CANDIDATES
    return next((path for path in candidates if path.is_file()), None)


#: The lesson pages (book_pages.py: the pages the build executes).
LESSON_SOURCES = lesson_pages(DOCS)
#: The same pages as the built site names them.
LESSON_PAGES = [f"{path.stem}.html" for path in LESSON_SOURCES]


@dataclass(frozen=True)
class CodeCell:
    """One code cell of a lesson page, as the reader meets it."""

    source: str
    visible: bool  # not removed from the page by a tag
    in_solution: bool  # between a solution-start and its solution-end


def code_cells(page: Path) -> list[CodeCell]:
    """Every code cell of the lesson page ``page``, in order."""
    cells = []
    in_solution = False
    for cell in read_page(page.read_text(encoding="utf-8")).cells:
        if cell.kind == "markdown":
            if "{solution-start}" in cell.source:
                in_solution = True
            if "{solution-end}" in cell.source:
                in_solution = False
        elif cell.kind == "code":
            cells.append(CodeCell(cell.source, cell.shown, in_solution))
    return cells


def site_pages(html: Path) -> list[Path]:
    """Every HTML page a reader can reach (theme templates in _static excluded)."""
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.relative_to(html).parts)


#: Image alt texts that describe nothing.
BAD_ALT = re.compile(r"(^\s*$|\.(png|jpe?g|svg|gif|webp)$|^(plot|figure|image|img)\s*\d*$)", re.I)

AXE_RUN_JS = """
async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return {
    rules: result.violations.length + result.passes.length + result.incomplete.length
      + result.inapplicable.length,
    violations: result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    })),
  };
}
"""
