"""What a reader downloads from the gallery works on its own.

Every example page links a Python script, a Jupyter notebook, a zip of both and
the ``lessons_code`` wheel. These tests follow those links in the built site,
check that each file is what it claims to be, then install the documented
requirements into one fresh virtual environment and run every downloaded
script (and some notebooks) there, away from the repository.

Every lesson page is offered as a notebook too. Each runs there top to bottom,
with the page's own removed cells put back where the page runs them
(``checked_notebook``): the numbers those cells glue, computed from what the
reader's cells computed, must hold the page's claims (docs/claims/).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import time
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest
from book.checks import load_expectations, problems  # the build's own check of a claim
from book.listing import listing_lines, read_names  # a listing's code, its free names
from book.mystnb import saved_notebook  # the notebook MyST-NB ran
from book.pages import (  # the ids Jupyter gives headings
    HIDDEN_TAGS,
    heading_ids,
    link_targets,
    read_page,
)
from jupyter_cache import get_cache
from site_support import DOCS, LESSON_SOURCES, ROOT, BuildResult, listed_objects

from book_tools import ARITHMETIC_VAR, BUILD_ENV

GALLERY = ROOT / "gallery"
EXAMPLES = sorted(path.stem for path in GALLERY.glob("*.py"))
# Notebooks executed end to end (the scripts of all examples run anyway):
# two quick ones that draw heatmaps and print tables.
NOTEBOOKS = ("plot_self_attention", "plot_multihead_attention")
# The install line the examples' docstrings give readers; the landing page's
# line is this one with JupyterLab added, for the notebooks.
READER_INSTALL = "pip install lessons_code-*.whl matplotlib pandas"
# The landing page's line, for the lesson notebooks: the examples' line with
# scikit-learn (the digits of the vision lesson) and JupyterLab added.
LANDING_INSTALL = "pip install lessons_code-*.whl matplotlib pandas scikit-learn jupyterlab"
# Installed first and pinned, as in every nox session: an unpinned torch would
# pull a multi-GB CUDA build, while this one comes from the local wheel store.
TORCH = "torch==2.13.0"
# The examples that train models for a while start first. The order-detection
# examples train 10 small models each (about 20 and 35 s on a 2-core machine),
# and get a longer limit than the others; the date example trains one
# encoder-decoder (about 17 s on one thread, twice that on a busy machine).
SLOW_FIRST = (
    "plot_order_task_long",
    "plot_order_task",
    "plot_pre_post_norm",
    "plot_date_translation",
)
# A guard against a run that hangs, not a speed check: no run nears it on a
# loaded 2-core machine (the slowest, the capstone's notebook, trains for a
# few minutes there), so a slow machine never fails the test by its load.
HANG_LIMIT = 900  # seconds for one example or notebook (and one of its cells)
INSTALL_TIMEOUT = 600
# Every lesson page is offered as a notebook (docs/_ext/book/downloads.py),
# and each runs top to bottom. Four of them train models with nothing saved
# in the reader's folder: the order grid (positional_encoding), the depth grid
# (encoder_block), the date model and its exercise (translation), the
# decoder-only date model and the rotary-position runs (modern_architecture).
# They start first.
LESSONS = [path.stem for path in LESSON_SOURCES]
SLOW_LESSONS = ("translation", "modern_architecture", "encoder_block", "positional_encoding")
# MyST syntax that a reader's Jupyter would show as it is.
MYST_SYNTAX = ("{glue", "{term}", "{ref}", "{numref}", "{eq}", "{cite", "```{", ":::{", "(label)=")


class _DownloadLinks(HTMLParser):
    """Collect the ``href`` of every ``<a>`` marked as a download."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "a" and "download" in classes and attributes.get("href"):
            self.hrefs.append(attributes["href"] or "")


def download_links(page: Path) -> list[Path]:
    """The files that the download links of ``page`` point to, resolved on disk."""
    parser = _DownloadLinks()
    parser.feed(page.read_text(encoding="utf-8"))
    return [(page.parent / href.split("#")[0]).resolve() for href in parser.hrefs]


class _CodeBlocks(HTMLParser):
    """Collect the text of every ``<pre>`` block, as a reader would copy it."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self._depth += 1
            if self._depth == 1:
                self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.blocks[-1] += data


def code_blocks(page: Path) -> list[str]:
    """The text of every code block of ``page``."""
    parser = _CodeBlocks()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.blocks


@dataclass(frozen=True)
class Downloads:
    """The files one example page offers."""

    name: str
    page: Path
    script: Path
    notebook: Path
    archive: Path
    wheel: Path


def _only(files: list[Path], suffix: str, page: Path) -> Path:
    matches = sorted({path for path in files if path.name.endswith(suffix)})
    assert len(matches) == 1, f"{page.name}: expected one {suffix} download link, got {matches}"
    return matches[0]


@pytest.fixture(scope="module")
def downloads(built_site: BuildResult) -> dict[str, Downloads]:
    """Each example's downloads, found through the links on its page."""
    html = built_site.html.resolve()
    found = {}
    for name in EXAMPLES:
        page = html / "auto_examples" / f"{name}.html"
        assert page.is_file(), f"no page for gallery/{name}.py"
        files = download_links(page)
        for path in files:
            assert path.is_relative_to(html / "_downloads"), f"{page.name} links {path}"
            assert path.is_file(), f"{page.name} links a missing file: {path}"
        found[name] = Downloads(
            name=name,
            page=page,
            script=_only(files, f"{name}.py", page),
            notebook=_only(files, f"{name}.ipynb", page),
            archive=_only(files, f"{name}.zip", page),
            wheel=_only(files, ".whl", page),
        )
    return found


@pytest.fixture(scope="module")
def wheel(downloads: dict[str, Downloads]) -> Path:
    """The one wheel every example page links."""
    wheels = {item.wheel for item in downloads.values()}
    assert len(wheels) == 1, f"the example pages link different wheels: {sorted(wheels)}"
    (path,) = wheels
    assert path.name.startswith("lessons_code-")
    assert path.name.endswith("-py3-none-any.whl")
    return path


#: What the build sets and a reader does not: the saved results and the
#: arithmetic (thread counts, processor code paths). A reader's PyTorch uses
#: its processor's own kernels and as many threads as it has cores, so the
#: claims the readers' runs re-check must hold on that arithmetic too.
NOT_A_READERS = {*BUILD_ENV, ARITHMETIC_VAR, "LESSONS_CODE_RESULTS"}


def _clean_env(tmp: Path) -> dict[str, str]:
    """The environment of a reader's process: nothing from this checkout or the build."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "MPLBACKEND", *NOT_A_READERS}
    }
    env.update(
        {
            "MPLCONFIGDIR": str(tmp / "mplconfig"),
            "IPYTHONDIR": str(tmp / "ipython"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
        }
    )
    return env


@pytest.fixture(scope="module")
def reader_python(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """Python of a fresh virtual environment with only the documented install."""
    root = tmp_path_factory.mktemp("reader")
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    env = _clean_env(root)

    def pip(*args: str) -> None:
        command = [str(python), "-m", "pip", "install", "--quiet", *args]
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr[-4000:]}"

    pip(TORCH)
    # nbclient and ipykernel are this test's own needs (to execute notebooks),
    # not part of what readers install.
    pip(str(wheel), "matplotlib", "pandas", "scikit-learn", "nbclient", "ipykernel")
    return python


@pytest.fixture(scope="module")
def lesson_notebooks(built_site: BuildResult) -> dict[str, Path]:
    """Each lesson's notebook, found through the download link under its title."""
    html = built_site.html.resolve()
    found = {}
    for name in LESSONS:
        page = html / f"{name}.html"
        notebooks = [path for path in download_links(page) if path.suffix == ".ipynb"]
        assert len(notebooks) == 1, f"{page.name}: expected one notebook link, got {notebooks}"
        assert notebooks[0] == html / "_downloads" / "notebooks" / f"{name}.ipynb"
        assert notebooks[0].is_file(), f"{page.name} links a missing notebook"
        found[name] = notebooks[0]
    return found


@dataclass(frozen=True)
class Run:
    """A finished process and how long it took."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    folder: Path  # where it ran


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> Run:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        output = error.stdout or b""
        stdout = output.decode(errors="replace") if isinstance(output, bytes) else output
        return Run(-1, stdout, f"timed out after {timeout} s", time.perf_counter() - start, cwd)
    return Run(done.returncode, done.stdout, done.stderr, time.perf_counter() - start, cwd)


NOTEBOOK_RUNNER = """
import sys

import nbformat
from nbclient import NotebookClient

notebook = nbformat.read(sys.argv[1], as_version=4)
client = NotebookClient(
    notebook, timeout=int(sys.argv[2]), kernel_name="python3",
    resources={"metadata": {"path": "."}},
)
client.execute()  # raises CellExecutionError on the first failing cell
nbformat.write(notebook, "executed.ipynb")
print("cells executed:", sum(cell.cell_type == "code" for cell in notebook.cells))
"""


#: The first cell of a checked lesson notebook (names start with "_book" so that
#: no cell of the reader's can use them by chance). ``glue`` records the value's
#: text as MyST-NB saves it; a removed cell runs on a copy of the notebook's
#: names, keeps what it defines to itself (a reader's cell that needed it would
#: fail), and leaves the random generators as it found them, so the reader's
#: cells compute exactly what they compute without it.
CHECK_SETUP = """
import sys as _book_sys
import types as _book_types

_book_sys.path.append({ext!r})
_book_glued = {{}}
_book_names = {{}}


def _book_glue(name, variable, display=True):
    formatted = get_ipython().display_formatter.format(variable)[0]
    _book_glued[name] = formatted.get("text/plain", "")


_book_sys.modules["myst_nb"] = _book_types.SimpleNamespace(glue=_book_glue)


def _book_cell(code):
    import random
    import numpy
    import torch

    states = random.getstate(), numpy.random.get_state(), torch.random.get_rng_state()
    user = get_ipython().user_ns
    names = {{**user, **_book_names}}
    exec(compile(code, "<the page's removed cell>", "exec"), names)
    _book_names.update((k, v) for k, v in names.items() if k not in user or user[k] is not v)
    random.setstate(states[0])
    numpy.random.set_state(states[1])
    torch.random.set_rng_state(states[2])


def _book_listing(code, names):
    # Every name a listing reads from outside itself (``names``, found by the
    # test) is defined once the notebook has run (the page's imports, the
    # other listings), as the landing page promises: a listing that calls a
    # helper the page never imports fails.
    user = get_ipython().user_ns
    missing = sorted(n for n in names if n not in user)
    assert not missing, f"a listing uses {{missing}}, defined by no cell:\\n{{code}}"
"""
#: The last cell: the values the page's cells glued, for the test to compare.
CHECK_DUMP = """
import json as _book_json

with open("glued.json", "w", encoding="utf-8") as _book_file:
    _book_json.dump(_book_glued, _book_file, indent=1, sort_keys=True)
"""


def checked_notebook(name: str, notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The reader's notebook with the page's removed cells put back where the page runs them.

    A removed cell runs after the visible cell that precedes it on the page
    (a solution's, at the end where the notebook moved it). The numbers those
    cells glue are then computed from the state the reader's own cells built,
    in the reader's environment, and compared with the page's claims.
    """
    source = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    page = read_page(source)
    # The page's listings of functions and classes are code cells of the notebook too.
    listings = {"\n".join(listing_lines(q)[1]) for q in listed_objects(source)}
    after: dict[int, list[str]] = {}  # visible cell's place on the page (-1: none) -> removed
    visible: list[tuple[int, str]] = []
    last = -1
    for place, cell in enumerate(page.code_cells):
        if not cell.shown:
            after.setdefault(last, []).append(cell.source)
        else:
            visible.append((place, cell.source))
            last = place

    def removed(place: int) -> list[nbformat.NotebookNode]:
        return [nbformat.v4.new_code_cell(f"_book_cell({code!r})") for code in after.get(place, [])]

    setup = CHECK_SETUP.format(ext=str(DOCS / "_ext"))
    cells = [nbformat.v4.new_code_cell(setup), *removed(-1)]
    for cell in notebook.cells:
        cells.append(cell)
        if cell.cell_type == "code" and cell.source not in listings:
            found = [i for i, (_, code) in enumerate(visible) if code == cell.source]
            assert found, f"{name}: a code cell of the notebook is not on the page:\n{cell.source}"
            place, _ = visible.pop(found[0])
            cells.extend(removed(place))
    assert visible == [], f"{name}: code cells of the page missing from the notebook: {visible}"
    # Every listing, function or method, reads only names the notebook defines.
    cells.extend(
        nbformat.v4.new_code_cell(f"_book_listing({code!r}, {sorted(read_names(code))!r})")
        for code in sorted(listings)
    )
    cells.append(nbformat.v4.new_code_cell(CHECK_DUMP))
    checked = nbformat.v4.new_notebook(cells=cells, metadata=notebook.metadata)
    nbformat.validate(checked)
    return checked


@pytest.fixture(scope="module")
def reader_runs(
    reader_python: Path,
    downloads: dict[str, Downloads],
    lesson_notebooks: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Run]:
    """Every downloaded script, and the chosen notebooks, run in the reader's venv.

    Each runs in a folder of its own that holds nothing but the downloaded
    file; two run at a time. They share one folder of saved results
    (``LESSONS_CODE_RESULTS``), empty at the start, as a reader who follows
    :mod:`lessons_code.results` would: a grid that a lesson notebook and an
    example both show is trained once, in the reader's environment, by
    whichever asks first, and read back by the other.
    """
    root = tmp_path_factory.mktemp("runs")
    saved = root / "saved-results"
    saved.mkdir()
    env = _clean_env(root) | {"LESSONS_CODE_RESULTS": str(saved)}
    jobs: dict[str, tuple[list[str], Path, dict[str, str]]] = {}
    # The lessons that train start before everything else.
    for name in sorted(LESSONS, key=lambda lesson: lesson not in SLOW_LESSONS):
        folder = root / f"lesson-{name}"
        folder.mkdir()
        notebook = folder / f"{name}.ipynb"
        downloaded = nbformat.read(lesson_notebooks[name], as_version=4)
        nbformat.write(checked_notebook(name, downloaded), notebook)
        command = [str(reader_python), "-c", NOTEBOOK_RUNNER, notebook.name, str(HANG_LIMIT)]
        jobs[f"lesson:{name}"] = (command, folder, env)
    # The slowest examples start first, so the two workers finish together.
    for name, item in sorted(downloads.items(), key=lambda pair: pair[0] not in SLOW_FIRST):
        folder = root / f"{name}-py"
        folder.mkdir()
        script = folder / item.script.name
        script.write_bytes(item.script.read_bytes())
        jobs[f"{name}.py"] = (
            [str(reader_python), script.name],
            folder,
            env | {"MPLBACKEND": "Agg"},
        )
    for name in NOTEBOOKS:
        folder = root / f"{name}-ipynb"
        folder.mkdir()
        notebook = folder / downloads[name].notebook.name
        notebook.write_bytes(downloads[name].notebook.read_bytes())
        command = [str(reader_python), "-c", NOTEBOOK_RUNNER, notebook.name, str(HANG_LIMIT)]
        jobs[f"{name}.ipynb"] = (command, folder, env)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(_run, *job, HANG_LIMIT) for key, job in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _failure(what: str, run: Run) -> str:
    """The end of a failed run's output, for the assertion message."""
    return (
        f"{what} failed (exit {run.returncode}) after {run.seconds:.0f} s\n"
        f"--- stdout (end) ---\n{run.stdout[-2000:]}\n"
        f"--- stderr (end) ---\n{run.stderr[-6000:]}"
    )


def _assert_ran(run: Run, what: str, request: pytest.FixtureRequest) -> None:
    """``run`` ended well; its time goes to the test's report."""
    request.node.user_properties.append(("seconds", round(run.seconds, 1)))
    assert run.returncode == 0, _failure(what, run)


# -- the files are what they claim to be -----------------------------------------


def test_every_example_offers_its_downloads(downloads: dict[str, Downloads]) -> None:
    assert sorted(downloads) == EXAMPLES
    assert len(EXAMPLES) >= 8, EXAMPLES


def test_gallery_index_offers_all_examples_zipped(built_site: BuildResult) -> None:
    index = built_site.html / "auto_examples" / "index.html"
    archives = [path for path in download_links(index) if path.suffix == ".zip"]
    contents = {}
    for archive in archives:
        with zipfile.ZipFile(archive) as opened:
            assert opened.testzip() is None
            contents[archive.name] = sorted(Path(name).name for name in opened.namelist())
    assert contents.get("auto_examples_python.zip") == [f"{name}.py" for name in EXAMPLES]
    assert contents.get("auto_examples_jupyter.zip") == [f"{name}.ipynb" for name in EXAMPLES]


@pytest.mark.parametrize("name", EXAMPLES)
def test_downloaded_script_is_python_with_the_install_line(
    name: str, downloads: dict[str, Downloads]
) -> None:
    source = downloads[name].script.read_text(encoding="utf-8")
    compile(source, downloads[name].script.name, "exec")
    assert source == (GALLERY / f"{name}.py").read_text(encoding="utf-8")
    docstring = source.split('"""')[1]
    assert READER_INSTALL in " ".join(docstring.split())


@pytest.mark.parametrize("name", EXAMPLES)
def test_downloaded_notebook_is_nbformat_4(name: str, downloads: dict[str, Downloads]) -> None:
    text = downloads[name].notebook.read_text(encoding="utf-8")
    assert json.loads(text)["nbformat"] == 4
    notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    first = notebook.cells[0]
    assert first.cell_type == "code"
    lines = first.source.splitlines()
    assert all(line.startswith("#") for line in lines), "the first cell must only comment"
    assert any("pip install lessons_code-" in line for line in lines)
    assert sum(cell.cell_type == "code" for cell in notebook.cells) >= 3


@pytest.mark.parametrize("name", EXAMPLES)
def test_downloaded_zip_holds_script_and_notebook(
    name: str, downloads: dict[str, Downloads]
) -> None:
    with zipfile.ZipFile(downloads[name].archive) as archive:
        assert archive.testzip() is None
        names = sorted(Path(member).name for member in archive.namelist())
        assert names == [f"{name}.ipynb", f"{name}.py"]
        assert archive.read(f"{name}.py") == downloads[name].script.read_bytes()


def test_wheel_holds_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    modules = {f"lessons_code/{path.name}" for path in (ROOT / "lessons_code").glob("*.py")}
    assert modules <= names, sorted(modules - names)


# -- they run on a reader's machine ----------------------------------------------


def test_reader_venv_uses_the_wheel_not_the_checkout(reader_python: Path) -> None:
    done = subprocess.run(
        [str(reader_python), "-c", "import lessons_code; print(lessons_code.__file__)"],
        cwd=reader_python.parent,
        env=_clean_env(reader_python.parent),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    location = Path(done.stdout.strip())
    assert "site-packages" in location.parts
    assert not location.is_relative_to(ROOT)


@pytest.mark.parametrize("name", EXAMPLES)
def test_downloaded_script_runs(
    name: str, reader_runs: dict[str, Run], request: pytest.FixtureRequest
) -> None:
    _assert_ran(reader_runs[f"{name}.py"], f"{name}.py", request)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_downloaded_notebook_runs(
    name: str, reader_runs: dict[str, Run], request: pytest.FixtureRequest
) -> None:
    run = reader_runs[f"{name}.ipynb"]
    _assert_ran(run, f"{name}.ipynb", request)
    assert "cells executed:" in run.stdout


# -- the lessons as notebooks -----------------------------------------------------


def test_landing_page_offers_all_lessons_zipped(
    built_site: BuildResult, lesson_notebooks: dict[str, Path], wheel: Path
) -> None:
    """One zip: every lesson's notebook as its page links it, and the wheel they install."""
    index = built_site.html / "index.html"
    (archive,) = [path for path in download_links(index) if path.name == "lessons-notebooks.zip"]
    expected = {f"{name}.ipynb": path.read_bytes() for name, path in lesson_notebooks.items()}
    expected[wheel.name] = wheel.read_bytes()
    with zipfile.ZipFile(archive) as opened:
        assert opened.testzip() is None
        infos = opened.infolist()
        assert [info.filename for info in infos] == sorted(expected)
        assert len({info.date_time for info in infos}) == 1
        for info in infos:
            assert opened.read(info) == expected[info.filename], info.filename


def test_landing_page_gives_the_install_and_the_build_arithmetic(
    built_site: BuildResult,
) -> None:
    """The landing page installs what the examples name, and sets what the build sets.

    Its install line is the examples' (``READER_INSTALL``) with scikit-learn and
    JupyterLab for the lesson notebooks (``LANDING_INSTALL``); its line for the
    page's digits installs the PyTorch the build ran and exports every
    arithmetic setting of ``[tool.book.build-env]`` (all but TZ), each with the
    build's value.
    """
    blocks = code_blocks(built_site.html / "index.html")
    lines = [line.strip() for block in blocks for line in block.splitlines()]
    assert LANDING_INSTALL in lines
    assert LANDING_INSTALL.startswith(READER_INSTALL)
    torch_version = version("torch").split("+")[0]
    (exact,) = [block for block in blocks if "export " in block]
    assert f"pip install torch=={torch_version} --index-url" in exact
    words = exact.replace("\\\n", " ").split("export", 1)[1].split()
    assert dict(word.split("=", 1) for word in words) == {
        name: value for name, value in BUILD_ENV.items() if name != "TZ"
    }


def _heading_anchors(notebook: nbformat.NotebookNode) -> set[str]:
    """The ids Jupyter gives a notebook's headings (its rendered text, "-" for spaces)."""
    return {
        anchor
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for anchor in heading_ids(cell.source)
    }


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_links_resolve_within_the_zip(
    name: str, lesson_notebooks: dict[str, Path]
) -> None:
    """Every link leads to a heading of this notebook or of another lesson's in the zip."""
    notebooks = {
        f"{lesson}.ipynb": nbformat.read(path, as_version=4)
        for lesson, path in lesson_notebooks.items()
    }
    notebook = notebooks[f"{name}.ipynb"]
    targets = [
        target
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for target in link_targets(cell.source)
    ]
    assert targets, f"{name}.ipynb links nothing"
    broken = []
    for target in targets:
        file, _, anchor = target.partition("#")
        linked = notebooks.get(file or f"{name}.ipynb")
        if linked is None or (anchor and anchor not in _heading_anchors(linked)):
            broken.append(target)
    assert broken == [], f"{name}.ipynb links outside the zip or to no heading: {broken}"


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_is_plain_jupyter(name: str, lesson_notebooks: dict[str, Path]) -> None:
    text = lesson_notebooks[name].read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    sources = [cell.source for cell in notebook.cells]
    for syntax in MYST_SYNTAX:
        assert not any(syntax in source for source in sources), f"{name}: {syntax!r} left"
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    for machinery in ("glue(", "myst_nb", "book_figures", "sys.path", "assert "):
        assert machinery not in code, f"{name}: build-only {machinery!r} in a code cell"
    counts = [cell.execution_count for cell in notebook.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{name}: execution counts {counts}"
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "execute_result":
                assert output.execution_count == cell.execution_count, f"{name}: {output}"
    assert "pip install lessons_code-" in sources[0]
    page = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
    if "{solution-start}" in page:
        headings = [s for s in sources if s.startswith("## Solutions")]
        assert len(headings) == 1, f"{name}: no Solutions section"


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_download_menu_offers_the_notebook(
    name: str, built_site: BuildResult, lesson_notebooks: dict[str, Path]
) -> None:
    """The theme's download menu of a lesson offers its notebook, not its MyST source."""
    html = (built_site.html / f"{name}.html").read_text(encoding="utf-8")
    menu = re.search(r'<div class="dropdown dropdown-download-buttons">(.*?)</ul>', html, re.S)
    assert menu, f"{name}.html has no download menu"
    links = re.findall(r'href="([^"]+)"', menu.group(1))
    assert [(built_site.html / link).resolve() for link in links] == [lesson_notebooks[name]]
    assert ">.ipynb<" in menu.group(1)
    assert "_sources/" not in menu.group(1)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_runs(
    name: str, reader_runs: dict[str, Run], request: pytest.FixtureRequest
) -> None:
    run = reader_runs[f"lesson:{name}"]
    _assert_ran(run, f"{name}.ipynb", request)
    assert "cells executed:" in run.stdout


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_carries_the_page_numbers(
    name: str, reader_runs: dict[str, Run], request: pytest.FixtureRequest
) -> None:
    """Run in the reader's venv, the notebook gives every number the page claims.

    The page's own removed cells, run inside the notebook (``checked_notebook``),
    glue the values; each must hold the page's claim (docs/claims/<page>.toml),
    within the same range the build allows.
    """
    run = reader_runs[f"lesson:{name}"]
    assert run.returncode == 0, f"{name}.ipynb did not run (see test_lesson_notebook_runs)"
    glued = json.loads((run.folder / "glued.json").read_text(encoding="utf-8"))
    claims = load_expectations(DOCS / "claims").get(name, {})
    assert claims, f"docs/claims/{name}.toml claims nothing"
    wrong = []
    for key, claim in sorted(claims.items()):
        what = claim.get("what", key)
        if key not in glued:
            wrong.append(f"{key} ({what}): the notebook's run never glued it")
        elif reason := problems(glued[key], claim):
            wrong.append(f"{key} ({what}) is {glued[key]}: {reason}")
    request.node.user_properties.append(("claims", len(claims)))
    assert wrong == [], f"{name}.ipynb differs from its page:\n" + "\n".join(wrong)


# -- what the lesson notebooks show without running ---------------------------------


@dataclass
class _Shown:
    """What a code cell shows under it: printed text (spaces collapsed), images, tables."""

    printed: str = ""
    images: list[str] = field(default_factory=list)  # file names: the PNG's SHA-256
    tables: int = 0


class _PageCells(HTMLParser):
    """A page's code cells as the reader sees them: source, printed text, images, tables.

    A cell is a ``<div class="cell ...">``; a removed cell is not on the page,
    and a cell whose input is removed (an explorer) has no source here.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[tuple[list[str], _Shown]] = []  # (source pieces, what it shows)
        self._divs: list[list[str]] = []  # the classes of each open <div>

    def _inside(self, name: str) -> bool:
        return any(name in classes for classes in self._divs)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "div":
            if {"cell", "container"} <= set(classes) and not self._inside("cell"):
                self.cells.append(([], _Shown()))
            self._divs.append(classes)
        if not self._inside("cell_output"):
            return
        shown = self.cells[-1][1]
        if tag == "img":
            shown.images.append(Path(attributes.get("src") or "").name)
        elif tag == "table":
            shown.tables += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._divs:
            self._divs.pop()

    def handle_data(self, data: str) -> None:
        if self._inside("cell_input"):
            self.cells[-1][0].append(data)
        elif self._inside("stream") or self._inside("stderr"):
            self.cells[-1][1].printed += data

    def feed_page(self, html: str) -> list[tuple[str, _Shown]]:
        """The cells of the page ``html`` that show their source, printouts' spaces collapsed."""
        self.feed(html)
        self.close()
        cells = []
        for pieces, shown in self.cells:
            shown.printed = " ".join(shown.printed.split())
            if "".join(pieces).strip():  # not an explorer (its input is removed)
                cells.append(("".join(pieces).strip("\n"), shown))
        return cells


def _shown(cell: nbformat.NotebookNode) -> _Shown:
    """What a notebook code cell's outputs show."""
    printed = "".join(o.text for o in cell.outputs if o.output_type == "stream")
    data = [o.data for o in cell.outputs if "data" in o]
    pngs = [base64.b64decode(d["image/png"]) for d in data if "image/png" in d]
    images = [f"{hashlib.sha256(png).hexdigest()}.png" for png in pngs]
    tables = sum(d.get("text/html", "").count("<table") for d in data)
    return _Shown(" ".join(printed.split()), images, tables)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_shows_what_the_page_shows(
    name: str, built_site: BuildResult, lesson_notebooks: dict[str, Path]
) -> None:
    """Each code cell of the page is in the notebook with the output the page shows under it.

    Its printout, its figures (the same PNG: the page names an image by its
    SHA-256) and its tables; a cell of the notebook that is not on the page
    (a listing) shows nothing.
    """
    page = _PageCells().feed_page((built_site.html / f"{name}.html").read_text(encoding="utf-8"))
    assert page, f"{name}.html shows no code cell"
    notebook = nbformat.read(lesson_notebooks[name], as_version=4)
    unmatched = [cell for cell in notebook.cells if cell.cell_type == "code"]
    wrong = []
    for source, shown in page:
        found = next((cell for cell in unmatched if cell.source.strip("\n") == source), None)
        assert found is not None, f"{name}: a cell of the page is not in the notebook:\n{source}"
        unmatched.remove(found)
        if _shown(found) != shown:
            wrong.append(f"{source[:200]}\n  page: {shown}\n  notebook: {_shown(found)}")
    assert wrong == [], f"{name}.ipynb shows other outputs than its page:\n" + "\n".join(wrong)
    extra = [cell.source[:80] for cell in unmatched if cell.outputs]
    assert extra == [], f"{name}.ipynb: outputs under cells the page shows none for: {extra}"
    assert any(cell.outputs for cell in notebook.cells if cell.cell_type == "code")


def _output_key(output: nbformat.NotebookNode) -> str:
    """An output's content, whatever its cell and execution count."""
    kept = {k: v for k, v in output.items() if k not in ("execution_count", "metadata")}
    return json.dumps(kept, sort_keys=True)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_shows_no_output_of_a_removed_cell(
    name: str, built_site: BuildResult, lesson_notebooks: dict[str, Path]
) -> None:
    """What the page's removed cells print or display (glue, explorers) is not shown."""
    # The page's run: its cells as MyST-NB saved them, their outputs from the
    # execution cache (the saved file has them only when the page ran).
    build = built_site.html.parent
    saved = nbformat.read(saved_notebook(built_site.html, name), as_version=4)
    _, ran = get_cache(str(build / ".jupyter_cache")).merge_match_into_notebook(saved)
    assert any(cell.get("outputs") for cell in ran.cells), f"{name}: its run shows nothing"
    removed = {
        _output_key(output)
        for cell in ran.cells
        if cell.cell_type == "code" and set(cell.metadata.get("tags", [])) & HIDDEN_TAGS
        for output in cell.outputs
    }
    notebook = nbformat.read(lesson_notebooks[name], as_version=4)
    shown = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    leaked = [_output_key(o)[:200] for o in shown if _output_key(o) in removed]
    assert leaked == [], f"{name}.ipynb shows outputs of removed cells: {leaked}"
    for output in shown:
        assert "scrapbook" not in output.get("metadata", {}), f"{name}: a glued value shown"
        assert "<script" not in output.get("data", {}).get("text/html", ""), f"{name}: a script"


#: A display formula of a page and its number: its MathML, then the number.
PAGE_EQUATION = re.compile(
    r'<div class="math[^"]*" id="equation-([\w-]+)">.*?<span class="eqno">\(([\d.]+)\)', re.S
)
#: A numbered formula of a notebook, and a reference to one in its text.
NOTEBOOK_TAG = re.compile(r"\\tag\{([\d.]+)\}")
NOTEBOOK_EQ_REF = re.compile(r"\(([\d.]+)\)")


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_numbers_equations_as_the_site(
    name: str, built_site: BuildResult, lesson_notebooks: dict[str, Path]
) -> None:
    """The notebook's formulas carry the numbers the site gives them (across the book).

    And each ``{eq}`` reference of the page's source reads, in the notebook,
    as the number the site shows for it.
    """
    html = (built_site.html / f"{name}.html").read_text(encoding="utf-8")
    site = dict(PAGE_EQUATION.findall(html))
    notebook = nbformat.read(lesson_notebooks[name], as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    assert sorted(NOTEBOOK_TAG.findall(text)) == sorted(site.values()), (
        f"{name}.ipynb numbers its formulas {NOTEBOOK_TAG.findall(text)}, the site {site}"
    )
    source = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    referenced = set(re.findall(r"\{eq\}`([\w-]+)`", source))
    all_site = {}
    for page in LESSONS:
        all_site.update(
            PAGE_EQUATION.findall((built_site.html / f"{page}.html").read_text("utf-8"))
        )
    shown = set(NOTEBOOK_EQ_REF.findall(text))
    missing = {label: all_site[label] for label in referenced if all_site[label] not in shown}
    assert missing == {}, f"{name}.ipynb never shows these equations' site numbers: {missing}"


#: Words that point to something the notebook does not hold, as if it were there.
POINTS_BELOW = re.compile(r"\b(explorers?|gallery examples?|minigallery)\s+below\b", re.I)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebook_points_to_the_web_page_for_what_it_lacks(
    name: str, lesson_notebooks: dict[str, Path]
) -> None:
    """No "explorer below" or "gallery example below": the notebook names the web page instead."""
    notebook = nbformat.read(lesson_notebooks[name], as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    dangling = [match.group(0) for match in POINTS_BELOW.finditer(text)]
    assert dangling == [], f"{name}.ipynb points below to what it does not hold: {dangling}"
    source = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    lacks = source.count("minigallery::") + source.count("explorer(")
    pointers = len(re.findall(r"(?:explorer|gallery examples?) on this lesson's web page", text))
    assert pointers >= lacks, f"{name}.ipynb: {lacks} explorers and galleries, {pointers} pointers"
