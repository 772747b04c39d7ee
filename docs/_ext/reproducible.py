"""Make the archives of the built site reproducible.

sphinx-gallery zips the example scripts and notebooks with the modification
times of the files on disk, which differ from one checkout to the next. At the
end of the build every ``.zip`` under the output folder is rewritten with its
entries in name order and dated ``SOURCE_DATE_EPOCH`` (set in ``conf.py``), so
two builds of the same commit give the same bytes.
"""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def source_date() -> tuple[int, int, int, int, int, int]:
    """``SOURCE_DATE_EPOCH`` (set in ``conf.py``) as a zip entry's date."""
    return time.gmtime(int(os.environ["SOURCE_DATE_EPOCH"]))[:6]


def normalise_zip(path: Path, date_time: tuple[int, int, int, int, int, int]) -> None:
    """Rewrite ``path`` with its entries in name order, all dated ``date_time``, mode 644."""
    with zipfile.ZipFile(path) as archive:
        entries = sorted((info.filename, archive.read(info)) for info in archive.infolist())
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


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
