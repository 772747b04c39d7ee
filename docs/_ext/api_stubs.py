"""Generate the API reference's stub pages only when they can have changed.

``api.md`` lists the package's modules in an ``autosummary`` directive, and
``sphinx.ext.autosummary`` writes one stub page per module
(``docs/api/lessons_code.<module>.rst``) from the template
``_templates/autosummary/module.rst``. To do so it imports every module, and
with them PyTorch: about two seconds, on every build, even when nothing
changed.

``conf.py`` therefore turns autosummary's own generation off, and this
extension runs the same generator at the same moment (``builder-inited``),
but only when the stubs are missing or a digest of their inputs -- ``api.md``,
the templates and the package's sources -- differs from the one recorded
after the last successful generation (``docs/api/.inputs-digest``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.ext.autosummary.generate import generate_autosummary_docs
from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

SOURCE = "api.md"  # the page whose autosummary directive lists the modules
STUBS = "api"  # its :toctree: folder
STAMP = ".inputs-digest"


def inputs_digest(srcdir: Path) -> str:
    """Digest of everything the stubs are generated from."""
    package = srcdir.parent / "lessons_code"
    files = [
        srcdir / SOURCE,
        *sorted((srcdir / "_templates").rglob("*.rst")),
        *sorted(package.rglob("*.py")),
    ]
    return hashlib.sha256(b"\0".join(p.read_bytes() for p in files)).hexdigest()


def listed_modules(srcdir: Path) -> list[str]:
    """The dotted module names listed in the autosummary directive of ``api.md``."""
    text = (srcdir / SOURCE).read_text(encoding="utf-8")
    return re.findall(r"^\s+(lessons_code\.\w+)\s*$", text, re.MULTILINE)


def generate_if_outdated(app: Sphinx) -> None:
    """Write the stubs unless they exist and their inputs are unchanged."""
    srcdir = Path(app.srcdir)
    if not (srcdir / SOURCE).is_file():  # a book without an API reference
        return
    stubs = srcdir / STUBS
    current = inputs_digest(srcdir)
    stamp = stubs / STAMP
    present = all((stubs / f"{name}.rst").is_file() for name in listed_modules(srcdir))
    if present and stamp.is_file() and stamp.read_text(encoding="utf-8") == current:
        return
    logger.info("[api_stubs] generating the API reference's module pages")
    generate_autosummary_docs(
        [str(srcdir / SOURCE)],
        suffix=".rst",
        base_path=srcdir,
        app=app,
        overwrite=True,
        encoding=app.config.source_encoding,
    )
    stamp.write_text(current, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the generator; ``conf.py`` sets ``autosummary_generate = False``."""
    app.connect("builder-inited", generate_if_outdated)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
