"""site_pointers: the page shows the site's text of a pointer; a pointer needs both texts."""

from __future__ import annotations

import pytest
from book.downloads import texts
from ext_support import Book, warnings


def test_the_page_shows_the_site_text_only(book: Book) -> None:
    page = (
        "# Explorer\n\nDrag the slider in\n"
        "{site-pointer}`the explorer below <the explorer on this lesson's web page>`.\n"
    )
    app = book("pointers", {"index.md": page})
    assert warnings(app) == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "Drag the slider in\nthe explorer below." in html
    assert "web page" not in html


def test_a_pointer_without_both_texts_is_an_error_at_its_line(book: Book) -> None:
    page = "# Explorer\n\nSome prose.\n\nSee {site-pointer}`the explorer below`.\n"
    app = book("pointers", {"index.md": page})
    assert (
        "index.md:5: ERROR: {site-pointer} needs the page's text and the notebook's: "
        "`site text <offline text>`, not 'the explorer below'"
    ) in warnings(app)


@pytest.mark.parametrize(
    ("content", "both"),
    [
        (
            "the explorer below <the explorer on the web page>",
            ("the explorer below", "the explorer on the web page"),
        ),
        (
            "the\n  example  below\n<the example on the\nsite>",
            ("the example below", "the example on the site"),
        ),
        ("<only the notebook's>", None),
        ("only the page's", None),
    ],
)
def test_the_two_texts_of_a_pointer(content: str, both: tuple[str, str] | None) -> None:
    assert texts(content) == both
