"""Check every number the prose states against the range its page's claims file allows.

Pages glue their measured numbers into the prose with MyST-NB's ``glue``. This
extension reads the glued values of every page after the pages have executed
and compares each one with its expectation in ``docs/claims/<page>.toml``
(one file per page, named after the page's document name):

.. code-block:: toml

   # docs/claims/positional_encoding.toml
   [pe_max_diff]
   what = "largest |torch - numpy| over the 50 x 32 encoding"
   min = 0.0
   max = 1e-6

A value outside its range, a glued value with no expectation, or an expectation
whose value was never glued is reported as a warning on the page (and the build
treats warnings as errors), so the text can never silently contradict the code.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)


def load_expectations(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Read ``folder/*.toml``: page -> glue key -> {what, min, max, equals}.

    A page in a subfolder, ``a/b``, has its claims in ``folder/a.b.toml``.
    """
    expectations = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as handle:
            expectations[path.stem.replace(".", "/")] = tomllib.load(handle)
    return expectations


def glued_values(folder: Path, docname: str) -> dict[str, str] | None:
    """The ``text/plain`` form of each value page ``docname`` glued, or None."""
    path = folder / f"{docname}.glue.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return {key: output["data"].get("text/plain", "") for key, output in data.items()}


_NUMPY_SCALAR = re.compile(r"^np\.\w+\((.*)\)$")


def problems(value_text: str, expected: dict[str, Any]) -> str | None:
    """Why ``value_text`` breaks ``expected``, or None when it holds."""
    scalar = _NUMPY_SCALAR.match(value_text.strip())
    if scalar:  # the repr of a NumPy scalar, e.g. np.float64(0.5)
        value_text = scalar.group(1)
    if "equals" in expected:
        wanted = expected["equals"]
        if isinstance(wanted, str):
            return None if value_text.strip("'\"") == wanted else f"expected {wanted!r}"
        try:
            return None if float(value_text) == float(wanted) else f"expected {wanted}"
        except ValueError:
            return f"expected the number {wanted}"
    try:
        value = float(value_text)
    except ValueError:
        return "expected a number"
    if math.isnan(value):
        return "the value is NaN"
    low, high = expected.get("min", -math.inf), expected.get("max", math.inf)
    if not low <= value <= high:
        return f"expected a value in [{low}, {high}]"
    return None


def check_claims(app: Sphinx, exception: BaseException | None) -> None:
    """Compare every page's glued values with ``claims/*.toml``, on every build."""
    if exception is not None:
        return
    env = app.env
    spec_dir = Path(app.srcdir) / "claims"
    expectations = load_expectations(spec_dir)
    folder = Path(app.outdir).parent / "jupyter_execute"
    for docname in sorted(env.found_docs):
        glued = glued_values(folder, docname) or {}
        wanted = expectations.get(docname, {})
        spec_name = f"claims/{docname.replace('/', '.')}.toml"
        for key in sorted(set(glued) - set(wanted)):
            logger.warning(
                f"claims: {key!r} is glued into the prose but {spec_name} has no "
                f"expectation [{key}] for it",
                location=docname,
                type="claims",
            )
        for key, expected in sorted(wanted.items()):
            what = expected.get("what", key)
            if key not in glued:
                logger.warning(
                    f"claims: {what} ({key!r}) is expected by {spec_name} "
                    "but the page never glued it",
                    location=docname,
                    type="claims",
                )
                continue
            reason = problems(glued[key], expected)
            if reason:
                logger.warning(
                    f"claims: {what} ({key!r}) is {glued[key]}, {reason}",
                    location=docname,
                    type="claims",
                )


def setup(app: Sphinx) -> dict[str, Any]:
    """Check the claims at the end of every build, incremental ones included."""
    app.connect("build-finished", check_claims)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
