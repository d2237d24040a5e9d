"""Benchmark ``vimesync pin bump`` against one cold ``patches check`` on the new source.

The issue's target: a bump <= 1.5x one cold check of the new source, with the old pin's parse
coming from the cache (the old pin was checked before, as it is every week in CI). Each run uses
its own fresh cache folder (``VIMESYNC_CACHE_DIR``):

- cold check: ``patches check --keep-going`` on the new source, empty cache;
- bump: ``patches check`` on the old source first (fills the cache, not timed), then
  ``pin bump --to NEW`` (``--refresh`` with ``--refresh``; nothing is written: the series is copied
  to a scratch folder first).

    python bench/bench_bump.py --old sglang-0.5.12.post1-...whl --new sglang-0.5.15.post1-...whl \\
        --series /path/to/stack/series --strip 2 [--refresh] [--repeat 3]

Nothing large is committed: sources and stacks are given on the command line.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from timing import vimesync


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="the current pin's source")
    ap.add_argument("--new", type=Path, required=True, help="the new pin's source")
    ap.add_argument("--series", type=Path, required=True)
    ap.add_argument("--strip", type=int, default=1)
    ap.add_argument("--refresh", action="store_true", help="time pin bump --refresh (on a copy)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    cold, bump = [], []
    for _ in range(a.repeat):
        with tempfile.TemporaryDirectory(prefix="vimesync-bench-") as tmp:
            root = Path(tmp)
            stack = root / "stack"
            shutil.copytree(a.series.parent, stack)
            series = stack / a.series.name
            common = ["--series", str(series), "--strip", str(a.strip)]
            cold.append(
                vimesync(["patches", "check", "--source", str(a.new), *common, "--keep-going"], root / "c1")
            )
            vimesync(["patches", "check", "--source", str(a.old), *common, "--keep-going"], root / "c2")
            extra = ["--refresh"] if a.refresh else []
            bump.append(
                vimesync(
                    ["pin", "bump", "--source", str(a.old), *common, "--to", str(a.new), *extra], root / "c2"
                )
            )
    c, b = statistics.median(cold), statistics.median(bump)
    runs = ", ".join(f"{x:.2f}" for x in cold)
    print(f"cold patches check on the new source: {c:.2f} s (median of {a.repeat}: {runs})")
    runs = ", ".join(f"{x:.2f}" for x in bump)
    print(f"pin bump{' --refresh' if a.refresh else ''} (old pin cached): {b:.2f} s ({runs})")
    print(f"ratio: {b / c:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
