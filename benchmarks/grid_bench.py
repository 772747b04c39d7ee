"""Time every training grid the book runs, and the stages of the last test run.

``nox -s bench`` runs this script after the build benchmark (alone:
``python benchmarks/grid_bench.py``). Each grid is trained at the settings
its page uses, with one PyTorch thread per worker as the pages set it and no
results cache, in this process, one grid after another:

- the depth study (:func:`lessons_code.depth.run_depth_grid`) twice, each run
  on its own (``batched=False``, how the book trained it before) and the
  runs of each kind of stack together (``batched=True``, the default);
- the order task at ``T = 8`` and ``T = 32``
  (:func:`lessons_code.order_task.run_order_grid`);
- the head-count grid of the multi-head page
  (:func:`lessons_code.heads.run_heads_grid`).

It prints the wall seconds of each and the speed-up of the batched depth
grid. Then, if a test run left its JUnit reports (``nox -s tests`` writes
``.nox/tests-junit-parallel.xml`` and ``.nox/tests-junit-serial.xml``), the
wall seconds of each stage of that run and the seconds of each test file.
The figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from build_bench import table  # noqa: E402

JUNIT = ROOT / ".nox"  # where nox -s tests leaves tests-junit-STAGE.xml


def timed(train: Callable[[], object]) -> float:
    """Wall seconds of one call of ``train``."""
    start = time.perf_counter()
    train()
    return time.perf_counter() - start


def grids() -> list[tuple[str, int, float, float | None]]:
    """``(grid, runs, seconds each run alone, seconds batched or None)`` per grid."""
    os.environ.pop("LESSONS_CODE_RESULTS", None)  # train, never reuse a stored result
    import torch

    from lessons_code.depth import DEPTH_CONFIGS, run_depth_grid
    from lessons_code.heads import run_heads_grid
    from lessons_code.order_task import run_order_grid

    torch.set_num_threads(1)  # as the pages do: the models are tiny
    seeds = range(5)
    rows: list[tuple[str, int, float, float | None]] = []
    runs = len(DEPTH_CONFIGS) * len(seeds)
    alone = timed(lambda: run_depth_grid(DEPTH_CONFIGS, seeds, batched=False))
    together = timed(lambda: run_depth_grid(DEPTH_CONFIGS, seeds, batched=True))
    rows.append(("depth study (encoder block, gallery)", runs, alone, together))
    for seq_len in (8, 32):
        seconds = timed(lambda t=seq_len: run_order_grid(seq_lens=(t,), seeds=seeds))
        rows.append(
            (
                f"order task, T = {seq_len} (positional encoding, gallery)",
                2 * len(seeds),
                seconds,
                None,
            )
        )
    seconds = timed(lambda: run_heads_grid(head_counts=(1, 4), seeds=seeds))
    rows.append(("head counts 1 and 4 (multi-head attention)", 2 * len(seeds), seconds, None))
    return rows


def stages(
    reports: list[Path],
) -> tuple[list[tuple[str, float, int]], list[tuple[str, int, float]]]:
    """Each report's ``(stage, wall seconds, tests)``, and ``(test file, tests, seconds)``.

    A stage's wall time is its test suite's ``time``; a file's seconds are the
    sum of its tests' (setup, call and teardown), so under several workers
    the files add up to more than the wall time. Files slowest first.
    """
    walls: list[tuple[str, float, int]] = []
    by_file: dict[str, tuple[int, float]] = {}
    for report in reports:
        root = ET.parse(report).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        cases = list(root.iter("testcase"))
        stage = report.stem.removeprefix("tests-junit-")
        walls.append(
            (stage, float(suite.get("time", 0.0)) if suite is not None else 0.0, len(cases))
        )
        for case in cases:
            name = case.get("classname", "").replace(".", "/") + ".py"
            count, seconds = by_file.get(name, (0, 0.0))
            by_file[name] = (count + 1, seconds + float(case.get("time", 0.0)))
    files = sorted(((name, n, s) for name, (n, s) in by_file.items()), key=lambda row: -row[2])
    return walls, files


def main(argv: list[str] | None = None) -> None:
    """Train the grids, then print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--junit", type=Path, default=JUNIT, help=f"a test run's JUnit report ({JUNIT.name})"
    )
    parser.add_argument("--no-grids", action="store_true", help="only the test stages")
    args = parser.parse_args(argv)
    if not args.no_grids:
        rows = []
        for name, runs, alone, together in grids():
            rows.append(
                [
                    name,
                    str(runs),
                    f"{alone:.1f}",
                    "" if together is None else f"{together:.1f}",
                    "" if together is None else f"{alone / together:.1f}x",
                ]
            )
        print(f"Training grids (wall seconds, one thread per worker, {os.cpu_count()} CPU cores)\n")
        print(table(["grid", "runs", "each run alone", "batched", "speed-up"], rows))
        print()
    reports = sorted(args.junit.glob("tests-junit-*.xml"))
    if not reports:
        print(f"No test report in {args.junit}: run `nox -s tests` for the stages of a CI run.")
        return
    walls, files = stages(reports)
    print(f"Stages of the last `nox -s tests` run ({args.junit})\n")
    print(table(["stage", "tests", "wall s"], [[st, str(n), f"{w:.0f}"] for st, w, n in walls]))
    print(
        f"\nin all: {sum(w for _, w, _ in walls):.0f} s of tests (installs and lint not counted)\n"
    )
    print(
        table(
            ["test file", "tests", "seconds"], [[name, str(n), f"{s:.0f}"] for name, n, s in files]
        )
    )


if __name__ == "__main__":
    main()
