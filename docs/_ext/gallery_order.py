"""The order of the gallery: the examples in the order of the book's sections.

sphinx-gallery sorts the scripts of a folder with ``within_subsection_order``;
``"gallery_order.BookOrder"`` names this class there. Scripts not listed in
``ORDER`` come after the listed ones, alphabetically, so a new example shows
up at the end of the gallery instead of breaking the build.
"""

from __future__ import annotations

from pathlib import Path

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
