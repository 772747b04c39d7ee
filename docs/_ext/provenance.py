"""A ``{provenance}`` directive: how and where a page's results were produced.

Placed at the end of an executed page, it becomes one line naming the versions
of ``lessons_code``, PyTorch and NumPy, the device and processor, the seeds the
page uses (given as the directive's ``:seeds:`` option) and how long the page's
code took to execute -- the runtime recorded by MyST-NB, also when the outputs
come from its cache.
"""

from __future__ import annotations

import os
import platform
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from sphinx.application import Sphinx


class provenance_node(nodes.General, nodes.Element):
    """Placeholder filled in once the page has been executed."""


def processor_name() -> str:
    """The CPU's model name, or the platform's description of it."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown processor"


class ProvenanceDirective(SphinxDirective):
    """``{provenance}`` with an optional ``:seeds:`` option."""

    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {"seeds": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """Return the placeholder node."""
        node = provenance_node()
        node["seeds"] = self.options.get("seeds", "none (no randomness)")
        node["docname"] = self.env.docname
        self.set_source_info(node)
        return [node]


def describe(env: Any, docname: str, seeds: str) -> str:
    """The provenance sentence for one page."""
    from myst_nb.sphinx_ import NbMetadataCollector

    exec_data = NbMetadataCollector.get_exec_data(env, docname) or {}
    runtime = exec_data.get("runtime")
    took = (
        f"executing this page took {runtime:.1f} s"
        if isinstance(runtime, (int, float))
        else "the page's execution time was not recorded"
    )
    cores = os.cpu_count() or 1
    threads = os.environ.get("OMP_NUM_THREADS", str(cores))
    # The arithmetic the numbers depend on (pyproject's [tool.book.build-env]).
    kernels = ", ".join(
        f"{name}={os.environ[name]}"
        for name in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")
        if os.environ.get(name)
    )
    return (
        f"Produced by the build with lessons_code {version('lessons-code')}, "
        f"PyTorch {version('torch')} and NumPy {version('numpy')} on the CPU "
        f"({processor_name()}, {cores} cores, {threads} PyTorch thread"
        f"{'' if threads == '1' else 's'}{', ' + kernels if kernels else ''}); seeds: {seeds}; "
        f"{took}."
    )


def fill_provenance(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Replace each placeholder by its sentence."""
    for node in doctree.findall(provenance_node):
        paragraph = nodes.paragraph(classes=["provenance"])
        paragraph += nodes.Text(describe(app.env, node["docname"], node["seeds"]))
        node.replace_self(paragraph)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive and the filling hook."""
    app.add_node(provenance_node)
    app.add_directive("provenance", ProvenanceDirective)
    app.connect("doctree-resolved", fill_provenance)
    app.add_css_file("provenance.css")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
