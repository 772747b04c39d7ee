"""reproducible: every zip of the HTML build is rewritten sorted and dated SOURCE_DATE_EPOCH."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest
from book.downloads import normalise_zip
from ext_support import Book, warnings

EPOCH = 1700000000  # 2023-11-14 22:13:20 UTC, not the default of reproducible.py
NAMES = ["plot_b.py", "a/plot_a.ipynb", "plot_a.py"]


def _zip(date_time: tuple[int, int, int, int, int, int]) -> bytes:
    """A zip as sphinx-gallery writes one: entries in any order, dated by the disk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in NAMES:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = 0o755 << 16
            archive.writestr(info, f"contents of {name}\n")
    return buffer.getvalue()


def test_every_zip_the_build_wrote_is_sorted_and_dated(
    book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    pages = {
        "index.rst": "Zips\n====\n\nThe downloads.\n",
        "_static/downloads.zip": _zip((2024, 5, 17, 13, 45, 2)),
    }
    app = book("reproducible", pages)
    assert warnings(app) == ""
    with zipfile.ZipFile(app.outdir / "_static" / "downloads.zip") as archive:
        infos = archive.infolist()
        assert [info.filename for info in infos] == sorted(NAMES)
        assert {info.date_time for info in infos} == {time.gmtime(EPOCH)[:6]}
        assert {info.external_attr >> 16 for info in infos} == {0o644}
        assert archive.read("plot_b.py") == b"contents of plot_b.py\n"


def test_two_zips_of_the_same_files_become_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "first.zip", tmp_path / "second.zip"
    first.write_bytes(_zip((2024, 5, 17, 13, 45, 2)))
    second.write_bytes(_zip((2025, 2, 1, 8, 0, 0)))
    assert first.read_bytes() != second.read_bytes()
    for path in (first, second):
        normalise_zip(path, (2026, 1, 1, 0, 0, 0))
    assert first.read_bytes() == second.read_bytes()
