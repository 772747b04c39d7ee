"""The book's figure settings, in one place, for the lesson pages and the gallery.

Every figure is drawn at 96 dpi (one inch of ``figsize`` is 96 CSS pixels on
the page) and saved at twice that, 192 dpi, so a figure is sharp on HiDPI
screens and when zoomed. The image is shown at half its pixel width, so on a
desktop a 10 pt tick label is ``10 * 96 / 72 = 13.3`` px high. On a phone the
text column is :data:`PHONE_COLUMN_PX` wide and a wider figure is scaled down
with its text; a figure at most :data:`MAX_SHOWN_PX` wide (``figsize`` at most
:data:`MAX_WIDTH_IN` inches) keeps every text of at least :data:`MIN_FONT_PT`
points :data:`MIN_PHONE_TEXT_PX` px high or more there. A figure with several
panels is laid out for that width (panels stacked rather than side by side
where they would get too narrow). Inside an exercise's solution the phone's
column is 320 px, so a figure there is drawn at most 4.6 in wide; the site's
tests measure every figure's text at 390 px (``tests/site/test_figures.py``).

How the settings reach the figures (nothing here ships with a download):

* Lesson pages: the kernel's startup file that ``code_deps`` writes
  (``KERNEL_SETUP``) runs :func:`apply_to_notebook`: it applies :data:`RC`
  and registers
  a PNG formatter that saves at 192 dpi and tells MyST-NB the width to show
  (``conf.py`` adds the height that width implies, and ``figures.css`` lets a
  narrow screen scale the image down with its aspect kept).
* Gallery: sphinx-gallery's ``reset_modules`` calls :func:`reset_for_gallery`
  before each example, and :func:`scraper` saves each figure at 192 dpi and
  shows it at half its pixel width.

Both paths first run :func:`check_figure`: no legend may cover data, no text
may be smaller than :data:`MIN_FONT_PT`, and every figure must be narrow enough
to read on a phone, or the build fails.

Every PNG the book writes is an 8-bit palette PNG (:func:`quantise`), about a
third of the bytes of Matplotlib's 32-bit RGBA file: a plot has few colours
besides the anti-aliased edges, a colour map has 256. Lesson figures are
quantised in :func:`png_with_width`; the gallery's figures and thumbnails are
quantised in place by :func:`quantise_gallery_images` once sphinx-gallery has
written them.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType
    from PIL import Image

EXT = Path(__file__).resolve().parent

#: CSS pixels per inch of ``figsize``: the width a figure is shown at.
DISPLAY_DPI = 96
#: Saved pixels per displayed pixel.
SCALE = 2
#: The text column of the theme at 1280 px is 688 px wide.
COLUMN_PX = 688
#: The text column on a phone 390 px wide.
PHONE_COLUMN_PX = 342
#: The smallest text, in CSS px, a figure may show on that phone.
MIN_PHONE_TEXT_PX = 9.0
#: The smallest font size (points) of any text in a figure (tick labels too).
MIN_FONT_PT = 10.0
#: The widest a figure may be shown (CSS px): on the phone it is scaled by
#: ``PHONE_COLUMN_PX / MAX_SHOWN_PX``, and text of ``MIN_FONT_PT`` stays
#: ``MIN_PHONE_TEXT_PX`` high.
MAX_SHOWN_PX = int(PHONE_COLUMN_PX * MIN_FONT_PT * DISPLAY_DPI / 72 / MIN_PHONE_TEXT_PX)
#: The widest ``figsize`` (inches).
MAX_WIDTH_IN = MAX_SHOWN_PX / DISPLAY_DPI

#: Entries in the palette of every PNG the book writes.
PALETTE_SIZE = 256
#: While the palette is chosen, a colour weighs as many pixels as it covers, up
#: to this many (a 16 x 16 patch at 2x, 8 x 8 CSS px): see :func:`quantise`.
WEIGHT_CAP = 256

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
    """Raise ``ValueError`` if ``fig`` is too wide, has small text, or a legend covers data."""
    from matplotlib.text import Text

    from lessons_code.plots import legend_covers_data

    width = fig.get_size_inches()[0]
    if width > MAX_WIDTH_IN + 1e-9:
        raise ValueError(
            f"figure {_name(fig)!r} is {width:.2f} in wide; at most {MAX_WIDTH_IN:.2f} in "
            f"keeps its text {MIN_PHONE_TEXT_PX:g} px high on a phone (stack its panels)"
        )
    small = sorted(
        {
            f"{text.get_text()!r} ({text.get_fontsize():g} pt)"
            for text in fig.findobj(Text)
            if text.get_visible()
            and text.get_text().strip()
            and float(text.get_fontsize()) < MIN_FONT_PT - 1e-9
        }
    )
    if small:
        raise ValueError(
            f"figure {_name(fig)!r} has text smaller than {MIN_FONT_PT:g} pt: {', '.join(small)}"
        )
    for ax in fig.axes:
        if legend_covers_data(ax):
            raise ValueError(f"the legend of axes {ax.get_title()!r} covers data")


def check_width(fig: Figure, pixels: int) -> int:
    """The width (CSS px) to show a PNG of ``pixels`` columns at; it must fit the column."""
    shown = round(pixels / SCALE)
    if shown > MAX_SHOWN_PX:
        raise ValueError(
            f"figure {_name(fig)!r} would be shown {shown} px wide, more than "
            f"{MAX_SHOWN_PX} px (on a phone it would be shrunk and its text get small)"
        )
    return shown


def _label(ax: Any, axis: str) -> str:
    """An axis' label; for panels that share the axis, the label one of them shows."""
    own = getattr(ax, f"get_{axis}label")().strip()
    if own:
        return str(own)
    shared = getattr(ax, f"get_shared_{axis}_axes")().get_siblings(ax)
    labels = [getattr(other, f"get_{axis}label")().strip() for other in shared]
    figure_label = getattr(ax.figure, f"get_sup{axis}label")() or ""
    return next((label for label in labels if label), figure_label.strip())


def _axes_text(ax: Any, series: bool) -> str:
    """One panel in words: its title, what it draws, of what against what (and its series)."""
    from matplotlib.patches import Rectangle

    marks = []
    if ax.images:
        marks.append("a colour map" if len(ax.images) == 1 else f"{len(ax.images)} colour maps")
    lines = [line for line in ax.lines if len(line.get_xdata()) > 2]
    if lines:
        marks.append("a line" if len(lines) == 1 else f"{len(lines)} lines")
    bars = [patch for patch in ax.patches if isinstance(patch, Rectangle)]
    if bars:
        marks.append(f"{len(bars)} bars")
    if ax.collections and not (ax.images or lines or bars):
        marks.append("points")
    what = " and ".join(marks) or "a plot"
    y, x = _label(ax, "y"), _label(ax, "x")
    y += " on a log scale" if y and ax.get_yscale() == "log" else ""
    x += " on a log scale" if x and ax.get_xscale() == "log" else ""
    if y and x:
        what += f" of {y} against {x}"
    elif x or y:
        what += f" over {x or y}"
    labels = _series(ax)
    if series and labels:
        what += ", labelled " + ", ".join(labels)
    title = ax.get_title().strip()
    return f"{title}: {what}" if title else what


def _series(ax: Any) -> list[str]:
    return [label for label in ax.get_legend_handles_labels()[1] if not label.startswith("_")]


def describe_figure(fig: Figure) -> str:
    """Alt text for a figure, read off the figure itself: its panels, axes, scales and series.

    It says what is drawn (colour maps, lines, bars), of which quantity
    against which, on which scale, and the names in the legends (once, when
    every panel has the same). It makes no statement about the data, which
    is the page's and its checks' business. Colour-bar axes are described
    with the panel they belong to.
    """
    panels = [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]
    bars = [_label(ax, "y") or _label(ax, "x") for ax in fig.axes if hasattr(ax, "_colorbar")]
    every = {tuple(_series(ax)) for ax in panels}
    common = list(every.pop()) if len(panels) > 1 and len(every) == 1 else []
    parts = [_axes_text(ax, series=not common) for ax in panels]
    if len(parts) == 1:
        text = parts[0]
    else:
        text = f"{len(parts)} panels. " + " ".join(
            f"Panel {number}, {part}." for number, part in enumerate(parts, 1)
        )
    said = {label for ax in panels for label in _series(ax)} - set(common)
    legend = common + [
        entry.get_text()
        for legend in fig.legends
        for entry in legend.get_texts()
        if entry.get_text() not in said and entry.get_text() not in common
    ]
    if legend:
        text = text.rstrip(".") + ". Series: " + ", ".join(legend)
    if any(bars):
        text = text.rstrip(".") + ". Colour bar: " + ", ".join(bar for bar in bars if bar)
    suptitle = fig.get_suptitle().strip()
    text = f"{suptitle}. {text}" if suptitle else text
    return " ".join(text.replace("$", "").split()).rstrip(".") + "."


def _name(fig: Figure) -> str:
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return fig.get_suptitle() or (titles[0] if titles else "untitled")


def quantise(image: Image.Image) -> Image.Image:
    """The same picture as an image of at most :data:`PALETTE_SIZE` colours (mode ``P``).

    An image with that few colours is kept exactly. Otherwise the palette is
    chosen by median cut over the image's colours, each weighing as many
    pixels as it covers but at most :data:`WEIGHT_CAP`. Weighed by plain
    pixel counts, the large areas get most entries and a colour bar's steps
    merge into bands: on the multi-head attention figure its colours moved by
    up to 14 levels (of 255), against 6 with the cap. Each entry is then
    replaced by the most common colour it stands for, so the dominant colours
    (white, black, the lines, a heatmap's cells) come out exact, and every
    pixel takes its nearest entry (squared RGB distance, in integers: the
    result is the same on every machine).

    Fully transparent pixels (sphinx-gallery's padding around a thumbnail)
    share one transparent entry; a pixel that is partly transparent raises
    ``ValueError``, as the book's figures are drawn on an opaque background.
    """
    import numpy as np
    from PIL import Image

    pixels = np.ascontiguousarray(np.asarray(image.convert("RGBA")))
    height, width, _ = pixels.shape
    alpha = pixels[..., 3]
    if not ((alpha == 0) | (alpha == 255)).all():
        raise ValueError("the image has partly transparent pixels; figures must be opaque")
    # One 32-bit key per pixel (its RGBA bytes); every transparent pixel gets 0.
    keys = pixels.view(np.uint32).reshape(-1).copy()
    keys[alpha.reshape(-1) == 0] = 0
    colours, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    transparent = bool(colours[0] == 0)
    if transparent:
        colours, counts = colours[1:], counts[1:]
    bytes_ = colours.view(np.uint8).reshape(-1, 4)
    opaque = bytes_[:, :3].astype(np.int64)
    slots = PALETTE_SIZE - transparent
    if len(opaque) <= slots:
        palette, entry = opaque, np.arange(len(opaque))
    else:
        sample = np.repeat(bytes_[:, :3], np.minimum(counts, WEIGHT_CAP), axis=0)
        chosen = Image.fromarray(sample[np.newaxis], "RGB").quantize(
            slots, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
        palette = np.array((chosen.getpalette() or [])[: 3 * slots], dtype=np.int64).reshape(-1, 3)
        entry = _nearest(opaque, palette)
        # Each entry in use becomes its most common colour (ties: the lowest key).
        order = np.lexsort((-counts, entry))
        first = np.ones(len(order), dtype=bool)
        first[1:] = entry[order][1:] != entry[order][:-1]
        palette[entry[order][first]] = opaque[order][first]
        entry = _nearest(opaque, palette)
    if transparent:  # the transparent entry is last; its key, 0, sorted first
        entry = np.concatenate([[len(palette)], entry])
        palette = np.vstack([palette, [255, 255, 255]])
    indexed = Image.fromarray(entry.astype(np.uint8)[inverse].reshape(height, width), "P")
    indexed.putpalette(palette.astype(np.uint8).reshape(-1).tobytes())
    if transparent:
        indexed.info["transparency"] = len(palette) - 1
    return indexed


def _nearest(colours: Any, palette: Any) -> Any:
    """Index of the nearest palette entry of each colour (integer arithmetic)."""
    # |c - p|^2 = |c|^2 - 2 c.p + |p|^2; |c|^2 is the same for every entry.
    distance = (palette * palette).sum(axis=1)[None, :] - 2 * (colours @ palette.T)
    return distance.argmin(axis=1)


def palette_png(data: bytes) -> bytes:
    """``data`` (a PNG) as an optimised palette PNG, with the same dpi (``pHYs``)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        indexed = quantise(image)
        dpi = image.info.get("dpi")
    options: dict[str, Any] = {"optimize": True}
    if dpi:
        options["dpi"] = dpi
    if "transparency" in indexed.info:
        options["transparency"] = indexed.info["transparency"]
    buffer = io.BytesIO()
    indexed.save(buffer, format="png", **options)
    return buffer.getvalue()


def png_with_width(fig: Figure) -> tuple[bytes, dict[str, int]]:
    """Palette PNG of ``fig`` at ``SCALE`` x its display dpi, with the width to show it at."""
    from PIL import Image

    check_figure(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=SCALE * fig.dpi, bbox_inches="tight")
    data = palette_png(buffer.getvalue())
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


def explorer(kind: str, label: str, data: dict[str, Any]) -> Any:
    """A page's interactive explorer (``docs/_static/explorers.js``) with its data.

    Shown by a hidden-input cell of a lesson page: a hidden, labelled group
    that the script fills in (without JavaScript the static figures stand
    alone), its data as JSON, and the script and stylesheet, which only the
    pages with an explorer load.
    """
    import json

    from IPython.display import HTML

    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    return HTML(  # type: ignore[no-untyped-call]
        '<link rel="stylesheet" href="_static/explorers.css">'
        f'<div class="explorer" data-explorer="{kind}" role="group" '
        f'aria-label="{label}" hidden>'
        f'<script type="application/json">{payload}</script></div>'
        '<script src="_static/explorers.js" defer></script>'
    )
