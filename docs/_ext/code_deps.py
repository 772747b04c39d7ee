"""Re-execute exactly what depends on an edited ``lessons_code`` module.

The caches of MyST-NB (jupyter-cache) and sphinx-gallery (an md5 per script)
only look at a page's or an example's own code. Edit a function a page imports
and both caches would happily serve the old output. This extension closes that
gap:

* It reads which ``lessons_code`` modules a page or example imports, and
  follows the package's own imports from there (``positional`` imports
  ``_checks``, say), giving the set of source files its output depends on.
* Lesson pages: each file is noted as a Sphinx dependency, so an edit makes
  Sphinx read the page again; and a hidden cell carrying the digest of those
  files is appended to the notebook, so jupyter-cache sees new code and
  executes it again. A page that imports nothing from the package is
  untouched.
* Gallery examples: before sphinx-gallery runs, an example whose digest
  changed since the last build loses its ``.md5`` stamp, so sphinx-gallery
  executes it again. Digests are kept in ``<outdir>/../code_deps.json``.

Nothing else is executed: prose edits and edits to unrelated modules leave
every cached output in place.

The same reading of imports feeds the API reference: the directive
``.. used-in-pages:: lessons_code.positional.positional_encoding`` lists the
lesson pages that import that name.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parallel import make_chunks

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

PACKAGE = "lessons_code"
_IMPORT_LINE = re.compile(rf"^\s*(?:from|import)\s+{PACKAGE}\b")
_NOTEBOOK_MARKER = re.compile(r"^kernelspec:", re.MULTILINE)
DIGEST_CELL = """

```{{code-cell}} ipython3
:tags: [remove-cell]

# Digest of the lessons_code sources this page depends on (docs/_ext/code_deps.py):
# {digest}
```
"""


def package_dir(app: Sphinx) -> Path:
    """The folder of the ``lessons_code`` package in this source tree."""
    return (Path(app.srcdir) / ".." / PACKAGE).resolve()


def _module_file(root: Path, dotted: str) -> Path | None:
    """Path of ``lessons_code.x.y`` under ``root`` (the package folder), if any."""
    parts = dotted.split(".")[1:]
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(source: str) -> set[str]:
    """Dotted names of the ``lessons_code`` modules that ``source`` imports.

    ``source`` may be a Python script or a MyST notebook: every line that
    starts an import of the package is parsed (with its parenthesised
    continuation lines), wherever it stands.
    """
    names: set[str] = set()
    lines = source.splitlines()
    for index, line in enumerate(lines):
        if not _IMPORT_LINE.match(line):
            continue
        statement = line.strip()
        follow = index + 1
        while "(" in statement and ")" not in statement and follow < len(lines):
            statement += " " + lines[follow].strip()
            follow += 1
        try:
            tree = ast.parse(statement)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
                # ``from lessons_code import positional`` imports a submodule.
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return {name for name in names if name.split(".")[0] == PACKAGE}


@lru_cache(maxsize=256)
def _module_imports(path: Path, mtime_ns: int) -> frozenset[str]:
    """Package modules imported by the module at ``path`` (cached per mtime)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative import inside the package
                module = f"{PACKAGE}.{node.module}" if node.module else PACKAGE
            else:
                module = node.module or ""
            if module.split(".")[0] == PACKAGE:
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
    return frozenset(found)


def dependency_files(root: Path, modules: set[str]) -> list[Path]:
    """Source files of ``modules`` and of everything they import from the package."""
    seen: set[Path] = set()
    pending = [PACKAGE, *sorted(modules)]
    while pending:
        path = _module_file(root, pending.pop())
        if path is None or path in seen:
            continue
        seen.add(path)
        pending.extend(_module_imports(path, path.stat().st_mtime_ns))
    return sorted(seen)


def digest(files: list[Path], root: Path) -> str:
    """SHA-256 over the files' names (relative to ``root``) and contents."""
    hasher = hashlib.sha256()
    for path in files:
        hasher.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()


CACHE_CELL = """
```{code-cell} ipython3
:tags: [remove-cell]

# Build only: share slow, deterministic results with the gallery (docs/_ext/result_cache.py).
try:
    import sys

    sys.path.insert(0, "{ext}")
    import result_cache

    result_cache.install()
except ImportError:
    pass
```
"""
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """Tie a notebook page's execution to the package sources it imports."""
    text = source[0]
    if not _NOTEBOOK_MARKER.search(text):
        return
    modules = imported_modules(text)
    if not modules:
        return
    _usage(app.env)[docname] = sorted(modules)
    root = package_dir(app)
    files = dependency_files(root, modules)
    for path in files:
        app.env.note_dependency(str(path))
    text += DIGEST_CELL.format(digest=digest(files, root))
    front = _FRONT_MATTER.match(text)
    cut = front.end() if front else 0
    ext = os.path.relpath(Path(app.srcdir) / "_ext", Path(app.env.doc2path(docname)).parent)
    cell = CACHE_CELL.replace("{ext}", Path(ext).as_posix())
    source[0] = text[:cut] + cell + text[cut:]


def on_builder_inited(app: Sphinx) -> None:
    """Drop the md5 stamp of every gallery example whose package sources changed."""
    conf = app.config.sphinx_gallery_conf
    root = package_dir(app)
    record_path = Path(app.outdir).parent / "code_deps.json"
    try:
        record: dict[str, str] = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    srcdir = Path(app.srcdir)
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        examples_dir = (srcdir / examples).resolve()
        for script in sorted(examples_dir.rglob("*.py")):
            relative = script.relative_to(examples_dir)
            files = dependency_files(root, imported_modules(script.read_text(encoding="utf-8")))
            key = f"{gallery}/{relative.as_posix()}"
            current = digest(files, root)
            if record.get(key) != current:
                stamp = srcdir / gallery / f"{relative.as_posix()}.md5"
                if stamp.exists():
                    logger.info(f"[code_deps] {key}: lessons_code changed, will re-execute")
                    stamp.unlink()
                record[key] = current
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")


def spread_notebooks(app: Sphinx, env: Any, docnames: list[str]) -> None:
    """Reorder the pages to read so that a parallel build executes notebooks side by side.

    ``sphinx-build -j N`` reads the pages in consecutive chunks, N chunks at a
    time. Sorted by name, the lesson pages (the only ones that execute code,
    and by far the slowest to read) would mostly share one chunk and run one
    after the other. Dealt out over the first N chunks instead, they run N at
    a time. The order of reading changes nothing else.
    """
    nproc = app.parallel
    if nproc <= 1 or len(docnames) < 2:
        return
    _create_execution_cache(env)
    chunks = make_chunks(list(docnames), nproc)
    slots = [len(chunk) for chunk in chunks]
    is_notebook = {name: _is_notebook(env, name) for name in docnames}
    notebooks = [name for name in docnames if is_notebook[name]]
    others = [name for name in docnames if not is_notebook[name]]
    buckets: list[list[str]] = [[] for _ in chunks]
    for index, name in enumerate(notebooks):
        buckets[index % min(nproc, len(buckets))].append(name)
    if any(len(bucket) > slot for bucket, slot in zip(buckets, slots, strict=True)):
        return  # more notebooks than a chunk holds: keep Sphinx's order
    rest = iter(others)
    for bucket, slot in zip(buckets, slots, strict=True):
        bucket.extend(next(rest) for _ in range(slot - len(bucket)))
    docnames[:] = [name for bucket in buckets for name in bucket]


def _create_execution_cache(env: Any) -> None:
    """Create jupyter-cache's database before parallel readers use it.

    Two readers that both find no database would both create its tables,
    and one of them fails ("table settings already exists").
    """
    config = getattr(env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache" or not config.execution_cache_path:
        return
    from jupyter_cache import get_cache

    get_cache(config.execution_cache_path).list_cache_records()  # opens (creates) the database


def _is_notebook(env: Any, docname: str) -> bool:
    """Whether ``docname`` is a MyST notebook (a page with a kernelspec)."""
    path = Path(env.doc2path(docname))
    if path.suffix != ".md":
        return False
    return bool(_NOTEBOOK_MARKER.search(path.read_text(encoding="utf-8")))


def _usage(env: Any) -> dict[str, list[str]]:
    """docname -> the package names that page imports (kept in the environment)."""
    if not hasattr(env, "lessons_code_usage"):
        env.lessons_code_usage = {}
    return env.lessons_code_usage


class used_in_pages(nodes.General, nodes.Element):
    """Placeholder for the list of pages that import a name."""


class UsedInPagesDirective(SphinxDirective):
    """``.. used-in-pages:: dotted.name`` -- links to the lesson pages importing it."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        """Return the placeholder; it is filled when the page is written."""
        node = used_in_pages()
        node["target"] = self.arguments[0]
        _listings(self.env).add(self.env.docname)
        return [node]


def _listings(env: Any) -> set[str]:
    """Docnames that hold a ``used-in-pages`` list (kept in the environment)."""
    if not hasattr(env, "lessons_code_listings"):
        env.lessons_code_listings = set()
    return env.lessons_code_listings


def _usage_state(env: Any) -> list[tuple[str, list[str], str]]:
    """What the lists show: each page's imported names and its title."""
    titles = getattr(env, "titles", {})
    return sorted(
        (page, names, titles[page].astext() if page in titles else page)
        for page, names in _usage(env).items()
    )


def remember_usage(app: Sphinx, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """Before pages are read again, note what the lists show now."""
    app._lessons_code_usage_before = _usage_state(env)  # type: ignore[attr-defined]
    return []


def rewrite_listings(app: Sphinx, env: Any) -> list[str]:
    """Write the pages with lists again if an import or a title changed.

    The lists are filled in when a page is written (``fill_usage``), so the
    pages holding them never need to be read again for it: a no-change
    rebuild reads and writes none of them.
    """
    if getattr(app, "_lessons_code_usage_before", None) == _usage_state(env):
        return []
    return sorted(_listings(env))


def fill_usage(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace each placeholder by links to the pages that import its name."""
    usage = _usage(app.env)
    for node in doctree.findall(used_in_pages):
        target = node["target"]
        pages = sorted(page for page, names in usage.items() if target in names)
        if not pages:
            node.replace_self([])
            continue
        paragraph = nodes.paragraph(classes=["used-in-pages"])
        paragraph += nodes.strong(text="Used in the lessons: ")
        for index, page in enumerate(pages):
            if index:
                paragraph += nodes.Text(", ")
            title = app.env.titles[page].astext() if page in app.env.titles else page
            uri = app.builder.get_relative_uri(docname, page)
            paragraph += nodes.reference("", title, internal=True, refuri=uri)
        node.replace_self(paragraph)


def purge_usage(app: Sphinx, env: Any, docname: str) -> None:
    """Forget what a removed or re-read page imported or listed."""
    _usage(env).pop(docname, None)
    _listings(env).discard(docname)


def merge_usage(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    """Combine the records of parallel readers."""
    _usage(env).update(_usage(other))
    _listings(env).update(_listings(other))


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hooks; the gallery one runs before sphinx-gallery's."""
    app.add_node(used_in_pages)
    app.add_directive("used-in-pages", UsedInPagesDirective)
    app.connect("source-read", on_source_read)
    app.connect("env-before-read-docs", spread_notebooks)
    app.connect("builder-inited", on_builder_inited, priority=100)
    app.connect("doctree-resolved", fill_usage)
    app.connect("env-get-outdated", remember_usage)
    app.connect("env-get-updated", rewrite_listings)
    app.connect("env-purge-doc", purge_usage)
    app.connect("env-merge-info", merge_usage)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
