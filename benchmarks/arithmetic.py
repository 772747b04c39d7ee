"""Build the book under other arithmetic and list the claims that fail there.

``nox -s arithmetic -- NAME [NAME ...]`` runs this script. Each NAME is one of
the settings of ``[tool.book.arithmetic]`` in ``pyproject.toml`` (the
processor's own kernels, two threads, MKL's compatible code path, ...), or
``book`` for the book's own arithmetic (``[tool.book.build-env]``). For each,
the working tree (tracked and untracked, not ignored files) is copied into a
scratch folder and built cold there with ``BOOK_ARITHMETIC=NAME``; then the
script prints, per setting, the build's wall time, the lesson notebooks that
stopped at an error, and every claim (``docs/claims``) and prose check that
failed, with its page.

A new experiment is checked this way under more than one arithmetic before
it lands: a claim must hold on any reader's machine, not only on the build's
code paths. The figures are printed, never asserted; the script exits
non-zero when a build under a named setting fails, so that it can gate.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from build_bench import scratch_copy  # noqa: E402

from book_tools import ARITHMETIC_VAR, settings, sphinx_build  # noqa: E402

#: The name of the book's own arithmetic (no setting applied).
BOOK = "book"
# A warning line of Sphinx: "path/page.md:12: WARNING: text [type]" or "path/page.md: WARNING: ...".
WARNING = re.compile(r"^(?P<where>\S*?)(?::(?P<line>\d+))?: WARNING: (?P<text>.*)$", re.MULTILINE)
# MyST-NB's line for a notebook that stopped at an exception.
STOPPED = "Executing notebook failed"


@dataclass
class Outcome:
    """What the build under one arithmetic setting gave."""

    name: str
    seconds: float
    returncode: int
    stopped: list[str]
    claims: list[str]
    other: list[str]


def page_of(where: str, copy: Path) -> str:
    """``docs/page.md`` for a warning's path inside the scratch copy."""
    return where.replace(str(copy) + "/", "")


def outcome(name: str, copy: Path, seconds: float, returncode: int, output: str) -> Outcome:
    """Sort the build's warnings into stopped notebooks, failed claims and the rest."""
    stopped, claims, other = [], [], []
    for match in WARNING.finditer(output):
        where = page_of(match["where"], copy)
        text = match["text"].strip()
        if text.startswith(STOPPED):
            stopped.append(where)
        elif text.startswith("claims:"):
            claims.append(f"{where}: {text.removeprefix('claims:').strip()}")
        elif not text.startswith("Notebook exception traceback saved"):
            other.append(f"{where}:{match['line'] or ''} {text}")
    # An extension that raised (the claims check among them) checked nothing.
    other += [line.strip() for line in output.splitlines() if line.startswith("Extension error")]
    (copy / "build.log").write_text(output, encoding="utf-8")
    return Outcome(name, seconds, returncode, stopped, claims, other)


def build_under(name: str, work: Path) -> Outcome:
    """Build a scratch copy cold under the arithmetic ``name``."""
    copy = scratch_copy(work, name)
    variables = {} if name == BOOK else {ARITHMETIC_VAR: name}
    start = time.perf_counter()
    done = sphinx_build(docs=copy / "docs", env=variables)
    seconds = time.perf_counter() - start
    return outcome(name, copy, seconds, done.returncode, done.output)


def report(outcomes: list[Outcome]) -> str:
    """Return a table of the settings side by side, then what failed under each."""
    lines = [
        "| arithmetic | cold build (s) | notebooks stopped | claims failing | other warnings |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for out in outcomes:
        lines.append(
            f"| {out.name} | {out.seconds:.0f} | {len(out.stopped)} | "
            f"{len(out.claims)} | {len(out.other)} |"
        )
    for out in outcomes:
        if out.stopped or out.claims or out.other:
            lines.append(f"\n{out.name}:")
            lines += [f"  stopped: {page}" for page in out.stopped]
            lines += [f"  claim: {claim}" for claim in out.claims]
            lines += [f"  warning: {text}" for text in out.other]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Build under each named arithmetic and print what failed; non-zero if any build did."""
    known = [BOOK, *settings().arithmetic]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "names",
        nargs="*",
        choices=known,
        default=[name for name in known if name != BOOK],
        metavar="NAME",
        help=f"settings to build under (default: all but {BOOK!r}); one of {', '.join(known)}",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch copies (each with its build.log)"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="book-arithmetic-"))
    outcomes = []
    try:
        for name in args.names:
            print(f"building under {name!r} ...", flush=True)
            outcomes.append(build_under(name, work))
            done = outcomes[-1]
            print(f"  {done.seconds:.0f} s, {len(done.claims)} claims failing", flush=True)
    finally:
        if args.keep:
            print(f"scratch copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report(outcomes))
    return 1 if any(out.returncode for out in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
