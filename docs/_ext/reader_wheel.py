"""Ship the ``lessons_code`` wheel on the site, so downloaded examples run.

When the build starts, the wheel is built from the working tree into
``docs/_generated/`` (ignored by git) by ``book_tools.build_package``, the
same function ``nox -s build`` uses; pages link it with ``|wheel_download|``
and name it with ``|wheel_name|`` (rST and MyST alike). A build takes one or
two seconds, so it is skipped while the digest of its inputs matches the one
saved next to the wheel.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.errors import ExtensionError

from book_tools import build_package

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config


def inputs_digest(root: Path) -> str:
    """SHA-256 of what the wheel is built from: metadata, package files, source date."""
    digest = hashlib.sha256(os.environ.get("SOURCE_DATE_EPOCH", "").encode())
    package = sorted((root / "lessons_code").rglob("*"))
    for path in [root / "pyproject.toml", root / "README.md", *package]:
        if path.is_file() and "__pycache__" not in path.parts:
            name = path.relative_to(root).as_posix().encode()
            digest.update(name + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Build the wheel of the project at ``root`` into ``out_dir``, unless it is up to date."""
    stamp = out_dir / "inputs.sha256"
    digest = inputs_digest(root)
    wheels = list(out_dir.glob("*.whl"))
    if len(wheels) == 1 and stamp.is_file() and stamp.read_text(encoding="utf-8") == digest:
        return wheels[0]
    shutil.rmtree(out_dir, ignore_errors=True)  # no wheel of an older version stays
    try:
        (wheel,) = build_package(out_dir, root=root)
    except RuntimeError as error:
        raise ExtensionError(f"the reader wheel: {error}") from None
    stamp.write_text(digest, encoding="utf-8")
    return wheel


def on_config_inited(app: Sphinx, config: Config) -> None:
    """Build the wheel and define the substitutions that link to it."""
    srcdir = Path(app.srcdir)
    wheel = build_wheel(srcdir.parent, srcdir / "_generated")
    link = f":download:`{wheel.name} </_generated/{wheel.name}>`"
    config.rst_prolog = (config.rst_prolog or "") + (
        f"\n.. |wheel_download| replace:: {link}\n.. |wheel_name| replace:: ``{wheel.name}``\n"
    )
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "wheel_download": f"{{download}}`{wheel.name} </_generated/{wheel.name}>`",
        "wheel_name": f"`{wheel.name}`",
    }


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the wheel builder."""
    app.connect("config-inited", on_config_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
