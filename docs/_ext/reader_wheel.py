"""Ship the ``lessons_code`` wheel on the site, so downloaded examples run.

A reader who downloads an example needs the package it imports. When the build
starts, this extension writes a pure-Python wheel of ``lessons_code`` from the
working tree into ``docs/_generated/`` (ignored by git), with fixed timestamps
so that two builds give the same bytes. Pages link to it with the substitution
``|wheel_download|`` (rST and MyST alike), and the file name is available as
``|wheel_name|``.

The wheel is written by hand rather than by a build backend so that the book
builds offline and in well under a second; ``python -m build`` (``nox -s
build``) produces the release wheel from the same sources and metadata.
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reproducible import source_date, write_zip

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def metadata_text(project: dict[str, Any]) -> str:
    """Core metadata (``METADATA``) for the ``[project]`` table of pyproject.toml."""
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.11')}",
    ]
    lines += [f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])]
    for extra, requirements in sorted(project.get("optional-dependencies", {}).items()):
        if extra != "examples":  # the only extra a reader needs
            continue
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {req}; extra == "{extra}"' for req in requirements]
    return "\n".join(lines) + "\n"


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` for the package under ``root``."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist_name = project["name"].replace("-", "_")
    version = project["version"]
    dist_info = f"{dist_name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = []
    package = root / "lessons_code"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in {".py", ".typed"}:
            files.append((path.relative_to(root).as_posix(), path.read_bytes()))
    files.append((f"{dist_info}/METADATA", metadata_text(project).encode()))
    wheel_info = "Wheel-Version: 1.0\nGenerator: docs/_ext/reader_wheel.py\n"
    wheel_info += "Root-Is-Purelib: true\nTag: py3-none-any\n"
    files.append((f"{dist_info}/WHEEL", wheel_info.encode()))
    files.append((f"{dist_info}/top_level.txt", b"lessons_code\n"))
    record = [_record_line(name, data) for name, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{dist_name}-{version}-py3-none-any.whl"
    for stale in out_dir.glob("*.whl"):
        if stale != target:  # an unchanged wheel keeps its file, and its date
            stale.unlink()
    write_zip(target, files, source_date())  # fixed date: reproducible bytes
    return target


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
