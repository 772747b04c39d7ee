"""Make the archives of the built site reproducible.

sphinx-gallery zips the example scripts and notebooks with the modification
times of the files on disk, which differ from one checkout to the next. At the
end of the build every ``.zip`` under the output folder is rewritten with its
entries in name order and dated ``SOURCE_DATE_EPOCH`` (set in ``conf.py``), so
two builds of the same commit give the same bytes.
"""

from __future__ import annotations

import filecmp
import os
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def source_date() -> tuple[int, int, int, int, int, int]:
    """``SOURCE_DATE_EPOCH`` (set in ``conf.py``) as a zip entry's date."""
    return time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "1767225600")))[:6]


def write_zip(
    path: Path, entries: list[tuple[str, bytes]], date_time: tuple[int, int, int, int, int, int]
) -> None:
    """Write ``entries`` (name, bytes), in the order given, all dated ``date_time``.

    A file that already holds exactly these bytes is left alone, modification
    time included: pages that depend on it (the reader wheel, say) are then
    not read again by the next build.
    """
    partial = path.with_suffix(path.suffix + ".tmp")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    if path.is_file() and filecmp.cmp(partial, path, shallow=False):
        partial.unlink()
        return
    partial.replace(path)


def normalise_zip(path: Path, date_time: tuple[int, int, int, int, int, int]) -> None:
    """Rewrite ``path`` with sorted entries, a fixed date and fixed permissions."""
    with zipfile.ZipFile(path) as archive:
        entries = [(info.filename, archive.read(info)) for info in archive.infolist()]
    write_zip(path, sorted(entries), date_time)


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Normalise every zip the HTML build wrote."""
    if exception is not None or app.builder.format != "html":
        return
    date_time = source_date()
    for path in sorted(Path(app.outdir).rglob("*.zip")):
        normalise_zip(path, date_time)


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the hook."""
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
