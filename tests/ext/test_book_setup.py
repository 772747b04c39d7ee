"""book: one setup, its table of handlers, its checked settings, and the page-head job."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import book as extension
import pytest
from book.config import FEATURES, validated
from ext_support import Book, warnings
from PIL import Image
from sphinx.errors import ExtensionError
from sphinx.testing.util import SphinxTestApp


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return buffer.getvalue()


PAGE = """\
Heads
=====

.. image:: first.png
   :width: 200

Text between the figures.

.. image:: second.png
   :width: 300
"""


def test_every_handler_of_the_table_is_connected_once_at_its_priority(book: Book) -> None:
    app = book("setup", {"index.rst": "Title\n=====\n"}, build=False)
    for entry in extension.HANDLERS:
        found = [
            listener
            for listener in app.events.listeners[entry.event]
            if getattr(listener.handler, "__wrapped__", listener.handler) is entry.handler
        ]
        assert [listener.priority for listener in found] == [entry.priority], entry
        assert entry.feature is None or entry.feature in FEATURES, entry


def test_every_feature_has_a_handler_or_a_collector() -> None:
    used = {entry.feature for entry in extension.HANDLERS}
    assert set(FEATURES) == used - {None}


def test_a_bad_setting_stops_the_build_and_names_itself(book: Book) -> None:
    conf = 'extensions = ["book"]\nbook_features = ["head", "sumary"]\n'
    with pytest.raises(ExtensionError, match=r"book_features: unknown features \['sumary'\]"):
        book("setup", {"conf.py": conf, "index.rst": "Title\n=====\n"}, build=False)


def test_validated_settings_reject_a_string_for_a_list() -> None:
    class Config:
        book_features = "head"

    with pytest.raises(ValueError, match="book_features: expected a list of feature names"):
        validated(Config())  # type: ignore[arg-type]


def _page(app: object) -> str:
    return (app.outdir / "index.html").read_text(encoding="utf-8")  # type: ignore[attr-defined]


def test_the_head_job_defers_scripts_bundles_styles_and_sizes_later_images(book: Book) -> None:
    pages = {"index.rst": PAGE, "first.png": _png(40, 20), "second.png": _png(60, 45)}
    app = book("setup", pages)
    assert warnings(app) == ""
    html = _page(app)
    scripts = [s.split("?")[0] for s in re.findall(r"<script [^>]*src=\"([^\"]+)\"[^>]*>", html)]
    tags = re.findall(r"<script [^>]*src=\"[^\"]+\"[^>]*>", html)
    assert any(name.endswith("one.js") for name in scripts)
    for name, tag in zip(scripts, tags, strict=True):
        # documentation_options.js stays as it is: inline scripts use it
        assert ("defer" in tag) != name.endswith("documentation_options.js"), tag
    # one.css and two.css come as one file, written when the build ends;
    # print.css (a media attribute) keeps its own link
    assert "_static/book-styles.css" in html
    assert "_static/one.css" not in html
    assert "_static/two.css" not in html
    assert re.search(r'media="print"[^>]*href="_static/print.css', html)
    bundle = (app.outdir / "_static" / "book-styles.css").read_text(encoding="utf-8")
    assert bundle.index(".one { color: red; }") < bundle.index(".two { color: blue; }")
    # the first image loads at once; the later one is lazy, with the height
    # its width implies (300 * 45 / 60)
    first, second = re.findall(r"<img [^>]*>", html)
    assert "loading" not in first
    assert 'loading="lazy"' in second
    assert 'height="225"' in second


def test_without_the_head_job_the_page_links_each_file(book: Book) -> None:
    conf = (
        'extensions = ["book"]\nbook_features = []\nhtml_static_path = ["_static"]\n'
        'html_css_files = ["one.css", "two.css"]\n'
    )
    app = book(
        "setup",
        {"conf.py": conf, "index.rst": PAGE, "first.png": _png(40, 20), "second.png": _png(60, 45)},
    )
    html = _page(app)
    assert "_static/one.css" in html
    assert "book-styles.css" not in html
    assert "loading=" not in html


def test_the_theme_stylesheet_loses_its_icon_glyphs_and_font_only(book: Book) -> None:
    conf = (
        'extensions = ["book"]\nbook_features = ["head"]\nhtml_theme = "pydata_sphinx_theme"\n'
        'html_static_path = ["_static"]\n'
    )
    app = book("setup", {"conf.py": conf, "index.rst": "Title\n=====\n\nText.\n"})
    css = (app.outdir / "_static" / "styles" / "pydata-sphinx-theme.css").read_text("utf-8")
    assert not re.search(r'\.fa-[\w-]+\{--fa:"', css)
    assert "vendor/fontawesome/webfonts" not in css
    assert "sourceMappingURL" not in css
    # the rest of the theme is there: its colours, and the icon classes' own rules
    assert "--pst-color-primary" in css
    assert ".fa-solid" in css or ".fas" in css


def test_the_one_page_book_for_the_pdf_loads_every_image(
    make_app: Callable[..., SphinxTestApp], rootdir: Path, tmp_path: Path
) -> None:
    """Chromium prints a lazy image it has not loaded as nothing: singlehtml keeps them eager."""
    srcdir = tmp_path / "setup"
    shutil.copytree(rootdir / "test-setup", srcdir)
    for name, data in {"first.png": _png(40, 20), "second.png": _png(60, 45)}.items():
        (srcdir / name).write_bytes(data)
    (srcdir / "index.rst").write_text(PAGE, encoding="utf-8")
    app = make_app("singlehtml", srcdir=srcdir)
    app.build()
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert len(re.findall(r"<img ", html)) == 2
    assert "loading=" not in html
