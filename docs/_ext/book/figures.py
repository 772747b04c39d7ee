"""The gallery's figures: the examples' order, the scraper, and palette PNGs.

The figure settings themselves, which the kernels and the examples share, are
``book_figures`` (next to this package); these are the Sphinx side of the gallery.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from book_figures import apply, check_figure, check_width, describe_figure, palette_png

if TYPE_CHECKING:
    from sphinx.application import Sphinx


# -- gallery_order ---------------------------------------------------------

ORDER = (
    "plot_rnn_vs_attention.py",
    "plot_self_attention.py",
    "plot_multihead_attention.py",
    "plot_attention_speed.py",
    "plot_positional_encoding.py",
    "plot_order_task.py",
    "plot_order_task_long.py",
    "plot_encoder_block.py",
    "plot_pre_post_norm.py",
    "plot_date_translation.py",
    "plot_kv_cache.py",
)


class BookOrder:
    """Sort key for sphinx-gallery: position in ``ORDER``, then the file name."""

    def __init__(self, src_dir: str | Path) -> None:
        self.src_dir = str(src_dir)

    def __call__(self, filename: str) -> tuple[int, str]:
        """Key of one script's file name."""
        name = Path(filename).name
        return (ORDER.index(name) if name in ORDER else len(ORDER), name)

    def __repr__(self) -> str:
        # sphinx-gallery compares configurations by repr: keep it stable.
        return "BookOrder(book sections)"


# -- the gallery's figures ------------------------------------------------


def reset_for_gallery(gallery_conf: dict[str, Any], fname: str) -> None:
    """sphinx-gallery ``reset_modules`` hook: the book's settings for each example."""
    apply()


_IMAGE_SG = re.compile(
    r"^(?P<indent> *)\.\. image-sg:: (?P<uri>/\S+)\n(?P<options>(?:(?P=indent) +:.*\n)*)",
    re.MULTILINE,
)
_SRCSET = re.compile(r"^(?P<indent> +):srcset: .*$", re.MULTILINE)
_ALT = re.compile(r"^(?P<indent> +):alt: .*$", re.MULTILINE)


def scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery image scraper: Matplotlib's, with each image shown at half its width.

    Each image's alt text is :func:`describe_figure`'s, not sphinx-gallery's
    (the axes' titles alone).

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
        fig = next(shown)
        px = check_width(fig, width)
        options = _SRCSET.sub(lambda line: f"{line['indent']}:width: {px}px", match["options"])
        alt = describe_figure(fig)
        options = _ALT.sub(lambda line: f"{line['indent']}:alt: {alt}", options)
        return f"{match['indent']}.. image:: {match['uri']}\n{options}"

    return _IMAGE_SG.sub(add_width, rst)


def quantise_gallery_images(app: Sphinx) -> None:
    """Make every PNG sphinx-gallery wrote (figures, thumbnails) a palette PNG, in place.

    Runs after sphinx-gallery's own ``builder-inited`` handler has executed
    the examples. A file already in palette mode is left alone, so an example
    that did not run again costs nothing.
    """
    from PIL import Image

    for gallery in app.config.sphinx_gallery_conf["gallery_dirs"]:
        for path in sorted((Path(app.srcdir) / gallery / "images").rglob("*.png")):
            with Image.open(path) as image:
                if image.mode == "P":
                    continue
            try:
                data = palette_png(path.read_bytes())
            except ValueError:  # sphinx-gallery's own placeholder (an example with
                continue  # no figure) has soft edges: it stays as it is
            path.write_bytes(data)
