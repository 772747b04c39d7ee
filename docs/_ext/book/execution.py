"""Running the lessons' code: what it depends on, where a failing cell is, what it ran with.

**Code deps.** Run again exactly what an edit affects, and say what ran and why.

The caches of MyST-NB (jupyter-cache, keyed on a page's code cells) and
sphinx-gallery (an md5 stamp per script) only see a page's or an example's
own code. Its output also depends on the ``lessons_code`` modules it imports
(followed through the package's own imports), on the book's build modules it
imports (``from bounds import at_least`` reads ``docs/_ext/bounds.py``) and
on the figure settings (``book_figures.py``). Those files are its *dependencies*:

* Lesson pages: each dependency is noted for Sphinx, so an edit makes Sphinx
  read the page again. A hidden cell is put after the last line of every
  notebook page (no line of the page moves): it carries, as a comment, a
  digest of the dependencies, so jupyter-cache sees new code and executes the
  page again. The kernel itself is set up by an IPython startup file
  (``KERNEL_SETUP``: ``docs/_ext`` on the path, the figure settings applied).
* Gallery examples: before sphinx-gallery runs, an example whose dependencies
  changed since the last build loses its ``.md5`` stamp.

When the build ends, ``<outdir>/../execution.json`` records for every page and
example whether it was executed or its saved output reused, and why (its
code changed; a dependency changed, named; no change), plus the digests the
next build compares with. The log gets a one-line summary.

The same reading of imports feeds the API reference: the directive
``.. used-in-pages:: lessons_code.positional.positional_encoding`` lists the
lesson pages that import that name.

**Cell errors.** Name the page *and line* of a lesson cell that raised during the build.

MyST-NB reports a notebook whose execution failed, and names the page, not
where in it the failing cell stands (``nb_execution_raise_on_error`` is left
off: the build goes on, reports every failing page, and fails at the end,
as every warning does under ``-W``). The notebook MyST-NB saves for the page
holds the failing cell's error output, with the error's name and message;
the page model (``book_pages``) gives that cell's line in the page. This
extension reports ``<page>:<line>: a code cell raised <error>: <message>``,
the line being the cell's first line of code.

**Provenance.** A ``{provenance}`` directive: how and where a page's results were produced.

Placed at the end of an executed page, it becomes one line naming the versions
of ``lessons_code``, PyTorch and NumPy, the device and processor, the seeds the
page uses (given as the directive's ``:seeds:`` option) and how long the page's
code took to execute -- the runtime recorded by MyST-NB, also when the outputs
come from its cache.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import platform
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import nbformat
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parallel import make_chunks

from .collectors import IMPORTS
from .mystnb import exec_data, execution_cache, saved_notebook
from .pages import is_lesson, is_lesson_text, read_page

if TYPE_CHECKING:
    from sphinx.application import Sphinx


# -- code_deps -------------------------------------------------------------

logger = logging.getLogger(__name__)

PACKAGE = "lessons_code"
#: docs/_ext: the modules a kernel may import (bounds, book_figures) and this package.
EXT = Path(__file__).resolve().parents[1]
FIGURE_SETTINGS = EXT / "book_figures.py"
_CELL_BREAK = "\n# -- next cell --\n"
#: Put after a notebook page's last line, so that no line of the page moves
#: (a warning names the file's own line). Its digest of the page's
#: dependencies is new code to jupyter-cache when one of them changes; it
#: also checks that the kernel's startup file ran (``KERNEL_SETUP``).
LAST_CELL = """

```{{code-cell}} ipython3
:tags: [remove-cell]

# Build only (docs/_ext/book/execution.py); dependencies' digest: {digest}
assert globals().get("BOOK_KERNEL_SETUP"), "the kernel's startup file did not run"
```
"""
_BUILD_ONLY = "# Build only (docs/_ext/book/execution.py)"
#: Run by every lesson page's kernel before its first cell: an IPython
#: startup file in the build's own IPython folder (``IPYTHONDIR``, set by
#: :func:`on_builder_inited`). It puts ``docs/_ext`` on the path (a page may
#: import ``book_figures`` or ``bounds``) and applies the figure settings.
KERNEL_SETUP = """\
# The book's kernel setup (docs/_ext/book/execution.py, KERNEL_SETUP).
import sys

sys.path.insert(0, {ext!r})
import book_figures

book_figures.apply_to_notebook()
BOOK_KERNEL_SETUP = True
"""


def is_build_only(cell: Any) -> bool:
    """Whether ``cell``, a cell of a notebook MyST-NB ran, is the one put first here."""
    return bool(cell.cell_type == "code" and cell.source.startswith(_BUILD_ONLY))


def package_dir(app: Sphinx) -> Path:
    """The folder of the ``lessons_code`` package in this source tree."""
    return (Path(app.srcdir) / ".." / PACKAGE).resolve()


def code_of(text: str) -> str:
    """The Python code of a lesson page (its code cells, hidden ones too), or ``text`` itself."""
    if not is_lesson_text(text):
        return text
    return _CELL_BREAK.join(cell.source for cell in read_page(text).code_cells)


def _imports(code: str) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of ``code``'s cells; a cell that is not plain Python is skipped."""
    for cell in code.split(_CELL_BREAK):
        try:
            tree = ast.parse(cell)
        except SyntaxError:
            continue
        yield from (
            node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
        )


def imported_modules(code: str, package: str = PACKAGE) -> set[str]:
    """Dotted names of the ``lessons_code`` modules (and names) that ``code`` imports.

    ``package`` resolves relative imports (code inside the package). A cell
    that is not plain Python (an IPython magic) is skipped: its execution
    reports it.
    """
    names: set[str] = set()
    for node in _imports(code):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = f"{package}.{module}".rstrip(".")
            # ``from lessons_code import positional`` imports a submodule.
            names.update([module, *(f"{module}.{alias.name}" for alias in node.names)])
        else:
            names.update(alias.name for alias in node.names)
    return {name for name in names if name.split(".")[0] == PACKAGE}


def local_modules(code: str) -> set[str]:
    """File names of the book's own build modules (``docs/_ext``) that ``code`` imports.

    A page's kernel has ``docs/_ext`` on its path (its startup file puts
    it there), so ``from bounds import at_least`` reads ``docs/_ext/bounds.py``.
    """
    names: set[str] = set()
    for node in _imports(code):
        if isinstance(node, ast.ImportFrom):
            if not node.level and node.module:
                names.add(node.module.split(".")[0])
        else:
            names.update(alias.name.split(".")[0] for alias in node.names)
    return {f"{name}.py" for name in names if (EXT / f"{name}.py").is_file()}


@functools.lru_cache(maxsize=256)
def _file_imports(path: Path, mtime_ns: int) -> frozenset[str]:
    text = path.read_text(encoding="utf-8")
    return frozenset(imported_modules(text) | local_modules(text))


def dependencies(root: Path, code: str) -> dict[str, Path]:
    """The files ``code``'s output depends on, by name.

    They are the package modules it imports and the book's build modules
    (``docs/_ext``) it imports, each followed through its own imports, and
    the figure settings, which the kernel's startup file applies to every page.
    """
    found: dict[str, Path] = {}
    pending = [PACKAGE, *sorted(imported_modules(code) | local_modules(code))]
    while pending:
        module = pending.pop()
        if module.endswith(".py"):  # a build module
            candidates = [EXT / module]
        else:
            base = root.joinpath(*module.split(".")[1:])
            candidates = [base.with_suffix(".py"), base / "__init__.py"]
        for path in candidates:
            if path.is_file() and module not in found:
                found[module] = path
                pending.extend(_file_imports(path, path.stat().st_mtime_ns))
    found[FIGURE_SETTINGS.name] = FIGURE_SETTINGS
    return dict(sorted(found.items()))


def inputs(app: Sphinx, code: str, files: dict[str, Path] | None = None) -> dict[str, Any]:
    """Digests of ``code`` and of each of its dependencies (``files``, found if not given)."""
    if files is None:
        files = dependencies(package_dir(app), code)
    return {
        "code": _sha(code.encode()),
        "dependencies": {name: _sha(path.read_bytes()) for name, path in files.items()},
    }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def kernel_setup() -> str:
    """The startup file's code (``KERNEL_SETUP`` for this source tree)."""
    return KERNEL_SETUP.format(ext=str(EXT))


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """Tie a notebook page's execution to its dependencies; put the last cell in."""
    text = source[0]
    if not is_lesson_text(text):
        return
    code = code_of(text)
    # The package names it imports, for the API pages' lists (collectors.py).
    app.env.temp_data[IMPORTS] = sorted(imported_modules(code))
    files = dependencies(package_dir(app), code)
    for path in files.values():
        app.env.note_dependency(str(path))
    digests = inputs(app, code, files)["dependencies"]
    digests["kernel setup"] = _sha(kernel_setup().encode())
    digest = _sha(json.dumps(digests, sort_keys=True).encode())
    source[0] = text.rstrip("\n") + "\n" + LAST_CELL.format(digest=digest)


def _set_up_kernels(app: Sphinx) -> None:
    """Write the startup file every page's kernel runs, and point the kernels to it.

    The kernels MyST-NB starts inherit this process's environment; with
    ``IPYTHONDIR`` set, IPython runs the ``*.py`` files of
    ``profile_default/startup`` in that folder before a notebook's first cell.
    """
    folder = Path(app.outdir).parent / "ipython"
    startup = folder / "profile_default" / "startup" / "00-book.py"
    startup.parent.mkdir(parents=True, exist_ok=True)
    if not startup.is_file() or startup.read_text(encoding="utf-8") != kernel_setup():
        startup.write_text(kernel_setup(), encoding="utf-8")
    os.environ["IPYTHONDIR"] = str(folder)


def _report_path(app: Sphinx) -> Path:
    return Path(app.outdir).parent / "execution.json"


def _examples(app: Sphinx) -> dict[str, Path]:
    """``auto_examples/plot_x.py`` -> the script, for every gallery example."""
    conf = app.config.sphinx_gallery_conf
    found = {}
    for examples, gallery in zip(conf["examples_dirs"], conf["gallery_dirs"], strict=True):
        folder = (Path(app.srcdir) / examples).resolve()
        for script in sorted(folder.rglob("*.py")):
            found[f"{gallery}/{script.relative_to(folder).as_posix()}"] = script
    return found


def _previous_inputs(app: Sphinx) -> dict[str, Any]:
    """The digests the last build recorded (empty before the first report)."""
    try:
        inputs: dict[str, Any] = json.loads(_report_path(app).read_text(encoding="utf-8"))["inputs"]
    except (OSError, ValueError, KeyError):
        return {}
    return inputs


def on_builder_inited(app: Sphinx) -> None:
    """Drop the md5 stamp of every gallery example whose dependencies changed.

    The last build's JUnit report goes too: sphinx-gallery writes a new one
    only when it runs the examples, and an old one would name examples as
    executed in this build.
    """
    app._code_deps_start = time.time()  # type: ignore[attr-defined]
    _set_up_kernels(app)
    junit = app.config.sphinx_gallery_conf.get("junit")
    if junit:
        (Path(app.outdir) / junit).unlink(missing_ok=True)
    app._code_deps_previous = previous = _previous_inputs(app)  # type: ignore[attr-defined]
    for key, script in _examples(app).items():
        now = inputs(app, script.read_text(encoding="utf-8"))["dependencies"]
        stamp = Path(app.srcdir) / f"{key}.md5"
        if previous.get(key, {}).get("dependencies") != now and stamp.exists():
            stamp.unlink()


def _why(now: dict[str, Any], before: dict[str, Any] | None, executed: bool) -> str:
    """Why a page or example was executed, or why its saved output was reused."""
    if before is None:  # no report yet: a first build, or a cache kept from before
        return "first build" if executed else "output saved before the first report"
    if before["code"] != now["code"]:
        return "its code changed"
    old, new = before["dependencies"], now["dependencies"]
    changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
    if changed:
        return f"{', '.join(changed)} changed"
    return "no saved output" if executed else "unchanged code and dependencies"


def _example_seconds(app: Sphinx) -> dict[Path, float]:
    """Script -> seconds, for every example sphinx-gallery ran in this build.

    Read from the JUnit report sphinx-gallery writes on every build
    (``junit`` in ``conf.py``), which lists exactly the examples it ran.
    """
    conf = app.config.sphinx_gallery_conf
    report = Path(app.outdir) / conf.get("junit", "")
    if not conf.get("junit") or not report.is_file():
        return {}
    import xml.etree.ElementTree as ElementTree

    found = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        # "file" is the script's path from the source folder.
        script = (Path(app.srcdir) / case.get("file", "")).resolve()
        found[script] = float(case.get("time", "0"))
    return found


def write_report(app: Sphinx, exception: Exception | None) -> None:
    """Write ``execution.json`` and log its summary."""
    if exception is not None or not hasattr(app, "_code_deps_start"):
        return
    path, previous = _report_path(app), app._code_deps_previous  # type: ignore[attr-defined]
    env, start = app.env, app._code_deps_start
    sources: dict[str, tuple[str, float | None]] = {}  # name -> code, seconds if executed
    for docname in sorted(env.found_docs):
        if _is_notebook(env, docname):
            data = exec_data(env, docname)
            text = Path(env.doc2path(docname)).read_text(encoding="utf-8")
            ran_now = data.get("mtime", 0) >= start
            sources[docname] = (code_of(text), data.get("runtime") if ran_now else None)
    times = _example_seconds(app)
    for key, script in _examples(app).items():
        sources[key] = (script.read_text(encoding="utf-8"), times.get(script.resolve()))
    report: dict[str, Any] = {"executed": {}, "reused": {}, "inputs": {}, "seconds": {}}
    for name, (code, seconds) in sources.items():
        now = report["inputs"][name] = inputs(app, code)
        why = _why(now, previous.get(name), seconds is not None)
        report["executed" if seconds is not None else "reused"][name] = why
        if seconds is not None:
            report["seconds"][name] = round(float(seconds), 3)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    logger.info(
        f"[execution] {len(report['executed'])} pages and examples executed, "
        f"{len(report['reused'])} reused; what and why: {path}"
    )


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
    cache = execution_cache(env)
    if cache is not None:
        cache.list_cache_records()  # opens (creates) the database


def _is_notebook(env: Any, docname: str) -> bool:
    """Whether ``docname`` is a lesson page (a MyST notebook)."""
    return is_lesson(Path(env.doc2path(docname)))


# -- cell_errors -----------------------------------------------------------

logger = logging.getLogger(__name__)
_READ: Any = nbformat.read  # untyped


def report_failed_cell(app: Sphinx, doctree: nodes.document) -> None:
    """After a lesson page is read, report the cell whose execution raised, if one did.

    The page is also read (and executed) again on the next build: the failed
    run is saved nowhere, so a build that did not read the page again would
    show its traceback without a word.
    """
    docname = app.env.docname
    data = exec_data(app.env, docname)
    if not data or data.get("succeeded", True):
        return
    app.env.note_reread()
    text = Path(app.env.doc2path(docname)).read_text(encoding="utf-8")
    where, message = _failed_cell(app, docname, text)
    if message is None:  # no cell holds an error: a timeout, a kernel that died
        message = f"the page's execution failed ({data.get('error') or 'no cell raised'})"
    logger.warning(message, location=(docname, where), type="cell_errors")


def _failed_cell(app: Sphinx, docname: str, text: str) -> tuple[int | None, str | None]:
    """(line, message) of the cell whose error the saved notebook holds, or (None, None)."""
    cells = _READ(saved_notebook(Path(app.outdir), docname), as_version=4).cells
    if cells and is_build_only(cells[-1]):
        if _errors(cells[-1]):
            error = _errors(cells[-1])[0]
            setup = "the build's last cell (code_deps.LAST_CELL)"
            return None, f"{setup} raised {error.ename}: {error.evalue}"
        cells = cells[:-1]
    page = read_page(text)
    for cell, ran in zip(page.cells, cells, strict=True):
        errors = _errors(ran)
        if errors:
            line = cell.body_line + len(cell.source) - len(cell.source.lstrip("\n"))
            return line, f"a code cell raised {errors[0].ename}: {errors[0].evalue}"
    return None, None


def _errors(cell: Any) -> list[Any]:
    return [out for out in cell.get("outputs", []) if out.output_type == "error"]


# -- provenance ------------------------------------------------------------


class provenance_node(nodes.General, nodes.Element):
    """Placeholder filled in once the page has been executed."""


def processor_name() -> str:
    """The CPU's model name, or the platform's description of it."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown processor"


class ProvenanceDirective(SphinxDirective):
    """``{provenance}`` with an optional ``:seeds:`` option."""

    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {"seeds": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """Return the placeholder node."""
        node = provenance_node()
        node["seeds"] = self.options.get("seeds", "none (no randomness)")
        node["docname"] = self.env.docname
        self.set_source_info(node)
        return [node]


def describe(env: Any, docname: str, seeds: str) -> str:
    """The provenance sentence for one page."""
    record = exec_data(env, docname)
    runtime = record.get("runtime")
    took = (
        f"executing this page took {runtime:.1f} s"
        if isinstance(runtime, (int, float))
        else "the page's execution time was not recorded"
    )
    cores = os.cpu_count() or 1
    threads = os.environ.get("OMP_NUM_THREADS", str(cores))
    # The arithmetic the numbers depend on (pyproject's [tool.book.build-env]).
    kernels = ", ".join(
        f"{name}={os.environ[name]}"
        for name in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")
        if os.environ.get(name)
    )
    return (
        f"Produced by the build with lessons_code {version('lessons-code')}, "
        f"PyTorch {version('torch')} and NumPy {version('numpy')} on the CPU "
        f"({processor_name()}, {cores} cores, {threads} PyTorch thread"
        f"{'' if threads == '1' else 's'}{', ' + kernels if kernels else ''}); seeds: {seeds}; "
        f"{took}."
    )


def fill_provenance(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace each placeholder by its sentence."""
    for node in doctree.findall(provenance_node):
        paragraph = nodes.paragraph(classes=["provenance"])
        paragraph += nodes.Text(describe(app.env, node["docname"], node["seeds"]))
        node.replace_self(paragraph)
