"""The book's figure settings, in one place, for the lesson pages and the gallery.

Every figure is drawn at 96 dpi (one inch of ``figsize`` is 96 CSS pixels on
the page) and saved at twice that, 192 dpi, so a figure is sharp on HiDPI
screens and when zoomed. The image is shown at half its pixel width, and a
figure at most :data:`MAX_WIDTH_IN` inches wide fits the 688 px text column
without being shrunk, so a 10 pt tick label stays ``10 * 96 / 72 = 13.3`` px
high on screen.

How the settings reach the figures (nothing here ships with a download):

* Lesson pages: a hidden first cell, added to every notebook page when it is
  read (``on_source_read``), applies :data:`RC` and registers a PNG formatter
  that saves at 192 dpi and tells MyST-NB the width to show (no height, so the
  image keeps its aspect ratio when a narrow screen scales it down).
* Gallery: sphinx-gallery's ``reset_modules`` calls :func:`reset_for_gallery`
  before each example, and :func:`scraper` saves each figure at 192 dpi and
  shows it at half its pixel width.

Both paths first run :func:`check_figure`: no legend may cover data, and
every figure must fit the column, or the build fails.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType
    from sphinx.application import Sphinx

EXT = Path(__file__).resolve().parent

#: CSS pixels per inch of ``figsize``: the width a figure is shown at.
DISPLAY_DPI = 96
#: Saved pixels per displayed pixel.
SCALE = 2
#: The text column of the theme at 1280 px is 688 px wide.
COLUMN_PX = 688
#: The widest ``figsize`` (inches) that is shown without being shrunk.
MAX_WIDTH_IN = COLUMN_PX / DISPLAY_DPI

RC: dict[RcKeyType, Any] = {
    "figure.dpi": DISPLAY_DPI,
    "savefig.dpi": SCALE * DISPLAY_DPI,
    "savefig.bbox": "tight",
    "font.size": 10.0,
    "xtick.labelsize": 10.0,
    "ytick.labelsize": 10.0,
    "legend.fontsize": 10.0,
    "svg.hashsalt": "transformer-book",
}


def apply() -> None:
    """Set :data:`RC` in Matplotlib's global settings."""
    import matplotlib

    matplotlib.rcParams.update(RC)


def check_figure(fig: Figure) -> None:
    """Raise ``ValueError`` if ``fig`` is too wide or a legend of it covers data."""
    from lessons_code.plots import legend_covers_data

    width = fig.get_size_inches()[0]
    if width > MAX_WIDTH_IN + 1e-9:
        raise ValueError(
            f"figure {_name(fig)!r} is {width:.2f} in wide; the text column holds "
            f"{MAX_WIDTH_IN:.2f} in at {DISPLAY_DPI} dpi (wider figures are shrunk "
            "and their text gets small)"
        )
    for ax in fig.axes:
        if legend_covers_data(ax):
            raise ValueError(f"the legend of axes {ax.get_title()!r} covers data")


def check_width(fig: Figure, pixels: int) -> int:
    """The width (CSS px) to show a PNG of ``pixels`` columns at; it must fit the column."""
    shown = round(pixels / SCALE)
    if shown > COLUMN_PX:
        raise ValueError(
            f"figure {_name(fig)!r} would be shown {shown} px wide, wider than the "
            f"{COLUMN_PX} px column (it would be shrunk and its text get small)"
        )
    return shown


def _name(fig: Figure) -> str:
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return fig.get_suptitle() or (titles[0] if titles else "untitled")


def png_with_width(fig: Figure) -> tuple[bytes, dict[str, int]]:
    """PNG of ``fig`` at ``SCALE`` x its display dpi, with the width to show it at."""
    from PIL import Image

    check_figure(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=SCALE * fig.dpi, bbox_inches="tight")
    data = buffer.getvalue()
    width, _ = Image.open(io.BytesIO(data)).size
    return data, {"width": check_width(fig, width)}


def apply_to_notebook() -> None:
    """In a notebook kernel: apply :data:`RC` and show figures through ``png_with_width``."""
    apply()
    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    if shell is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("png")
    shell.display_formatter.formatters["image/png"].for_type(Figure, png_with_width)


def reset_for_gallery(gallery_conf: dict[str, Any], fname: str) -> None:
    """sphinx-gallery ``reset_modules`` hook: the book's settings for each example."""
    apply()


_IMAGE_SG = re.compile(
    r"^(?P<indent> *)\.\. image-sg:: (?P<uri>/\S+)\n(?P<options>(?:(?P=indent) +:.*\n)*)",
    re.MULTILINE,
)
_SRCSET = re.compile(r"^(?P<indent> +):srcset: .*$", re.MULTILINE)


def scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery image scraper: Matplotlib's, with each image shown at half its width.

    The figures are saved at ``savefig.dpi`` (192, from :data:`RC`). Each
    ``image-sg`` (whose only source is that PNG) becomes a plain ``image``
    with a ``:width:`` of half the PNG's width, the way :func:`png_with_width`
    does it for the lesson pages.
    """
    import matplotlib.pyplot as plt
    from PIL import Image
    from sphinx_gallery.scrapers import matplotlib_scraper

    figures = [plt.figure(number) for number in plt.get_fignums()]
    for fig in figures:
        check_figure(fig)
    rst = matplotlib_scraper(block, block_vars, gallery_conf)
    shown = iter(figures)

    def add_width(match: re.Match[str]) -> str:
        path = Path(gallery_conf["src_dir"]) / match["uri"].lstrip("/")
        width, _ = Image.open(path).size
        px = check_width(next(shown), width)
        options = _SRCSET.sub(lambda line: f"{line['indent']}:width: {px}px", match["options"])
        return f"{match['indent']}.. image:: {match['uri']}\n{options}"

    return _IMAGE_SG.sub(add_width, rst)


SETUP_CELL = """
```{code-cell} ipython3
:tags: [remove-cell]

# Build only: the book's figure settings (docs/_ext/book_figures.py).
import sys

sys.path.insert(0, "{ext}")
import book_figures

book_figures.apply_to_notebook()
```
"""
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_NOTEBOOK_MARKER = re.compile(r"^kernelspec:", re.MULTILINE)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    """Put the figure settings first in every notebook page."""
    text = source[0]
    if not _NOTEBOOK_MARKER.search(text):
        return
    front = _FRONT_MATTER.match(text)
    cut = front.end() if front else 0
    ext = os.path.relpath(EXT, Path(app.env.doc2path(docname)).parent)
    cell = SETUP_CELL.replace("{ext}", Path(ext).as_posix())
    source[0] = text[:cut] + cell + text[cut:]


def drop_stale_gallery_stamps(app: Sphinx) -> None:
    """Make sphinx-gallery run every example again when this file changed.

    sphinx-gallery re-runs an example only when its script changed; its
    figures also depend on the settings here, so an edit of this file drops
    every example's ``.md5`` stamp (the digest is kept in
    ``<outdir>/../book_figures.sha256``).
    """
    import hashlib

    record = Path(app.outdir).parent / "book_figures.sha256"
    current = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    try:
        previous = record.read_text(encoding="utf-8").strip()
    except OSError:
        previous = ""
    if previous == current:
        return
    for gallery in app.config.sphinx_gallery_conf["gallery_dirs"]:
        for stamp in (Path(app.srcdir) / gallery).rglob("*.md5"):
            stamp.unlink()
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(current + "\n", encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the notebook hook and the gallery's stamp check (before sphinx-gallery)."""
    app.connect("source-read", on_source_read)
    app.connect("builder-inited", drop_stale_gallery_stamps, priority=100)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
