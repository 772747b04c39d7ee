"""Helpers for the tests that build the site and look at it in a browser.

The site is built once per test session with the same flags as ``nox -s docs``
(nitpicky, warnings are errors) into ``docs/_build/html``, so the execution
caches of a previous ``nox -s docs`` are reused. The browser is Debian's
Chromium driven by Playwright; Playwright's own browser download is not used.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
HTML = DOCS / "_build" / "html"
ARTIFACTS = ROOT / "test-artifacts"
DEFAULT_FLAGS = "-W --keep-going -n -T -b html"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]


@dataclass(frozen=True)
class BuildResult:
    """What one ``sphinx-build`` run returned."""

    returncode: int
    output: str
    html: Path


def run_sphinx(source: Path, out: Path, *extra: str) -> BuildResult:
    """Build ``source`` into ``out`` with the maintainers' flags; never raises."""
    flags = shlex.split(os.environ.get("LESSONS_SPHINX_FLAGS", DEFAULT_FLAGS))
    # Pickled doctrees stay next to the site, not inside it (as in nox -s docs).
    doctrees = ["-d", str(out.parent / "doctrees")]
    command = [sys.executable, "-m", "sphinx", *flags, *doctrees, *extra, str(source), str(out)]
    # As in noxfile.BUILD_ENV: one PyTorch thread while the book is built.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=1800
    )
    return BuildResult(completed.returncode, completed.stdout + completed.stderr, out)


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
() => Array.from(document.images).map((img) => ({
  src: img.getAttribute("src"), alt: img.getAttribute("alt") || "",
  loaded: img.complete && img.naturalWidth > 0,
}))
"""


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


def find_chromium() -> str | None:
    """Path of a Chromium executable, or ``None``."""
    configured = os.environ.get("CHROMIUM")
    for candidate in ((configured,) if configured else ()) + CHROMIUM_CANDIDATES:
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


AXE_CANDIDATES = (
    ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js",
    ROOT / "node_modules" / "axe-core" / "axe.min.js",
)


def find_axe() -> Path | None:
    """Path of axe-core's ``axe.min.js`` (installed from the npm registry), or None."""
    configured = os.environ.get("AXE_CORE_JS")
    candidates = ((Path(configured),) if configured else ()) + AXE_CANDIDATES
    return next((path for path in candidates if path.is_file()), None)


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
