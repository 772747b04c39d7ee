"""gallery_order: the gallery lists the examples in the order of the book's sections."""

from __future__ import annotations

from pathlib import Path

from book.figures import ORDER, BookOrder

GALLERY = Path(__file__).resolve().parents[2] / "gallery"


def test_listed_examples_come_in_book_order_then_the_rest_alphabetically() -> None:
    scripts = [
        "plot_zeta_new.py",
        "plot_date_translation.py",
        "plot_alpha_new.py",
        "plot_self_attention.py",
        "plot_rnn_vs_attention.py",
    ]
    key = BookOrder(GALLERY)
    assert sorted((str(GALLERY / name) for name in scripts), key=key) == [
        str(GALLERY / name)
        for name in (
            "plot_rnn_vs_attention.py",
            "plot_self_attention.py",
            "plot_date_translation.py",
            "plot_alpha_new.py",
            "plot_zeta_new.py",
        )
    ]


def test_the_order_names_each_example_of_the_gallery_once() -> None:
    """A renamed script would otherwise drop silently to the end of the gallery."""
    assert sorted(ORDER) == sorted(path.name for path in GALLERY.glob("plot_*.py"))
