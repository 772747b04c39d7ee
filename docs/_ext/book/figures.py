"""The gallery's figures: the examples' order, the scraper, and palette PNGs.

The figure settings themselves, which the kernels and the examples share, are
``book_figures`` (next to this package); these are the Sphinx side of the gallery.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import indent
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


def _image_rst(uri: str, alt: str, px: int, classes: str) -> str:
    """An ``image`` directive for the figure at ``uri`` (a path from the docs' root)."""
    return f".. image:: {uri}\n   :alt: {alt}\n   :width: {px}px\n   :class: {classes}\n"


def scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery image scraper: each open figure saved, and shown at half its width.

    Saves each figure where sphinx-gallery's ``image_path_iterator`` says, at
    ``savefig.dpi`` (192, from :data:`book_figures.RC`), after
    :func:`check_figure`; its reST is a plain ``image`` with a ``:width:`` of
    half the PNG's width (:func:`check_width`, as :func:`png_with_width` does
    it for the lesson pages) and :func:`describe_figure`'s alt text. Several
    figures of one block sit in sphinx-gallery's horizontal list, with its
    classes. sphinx-gallery's own ``image-sg`` has no width, so this writes
    the reST itself rather than editing what ``figure_rst`` writes.
    """
    import matplotlib.pyplot as plt
    from PIL import Image

    source = Path(gallery_conf["src_dir"])
    shown = []
    try:
        for number, path in zip(plt.get_fignums(), block_vars["image_path_iterator"], strict=False):
            fig = plt.figure(number)
            check_figure(fig)
            fig.savefig(path)
            with Image.open(path) as image:
                px = check_width(fig, image.size[0])
            shown.append(
                ("/" + Path(path).relative_to(source).as_posix(), describe_figure(fig), px)
            )
    finally:
        plt.close("all")
    if len(shown) == 1:
        return "\n" + _image_rst(*shown[0], "sphx-glr-single-img")
    items = [
        "\n    *\n\n" + indent(_image_rst(*image, "sphx-glr-multi-img"), " " * 6) for image in shown
    ]
    return "\n.. rst-class:: sphx-glr-horizontal\n\n" + "".join(items) if items else ""


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
