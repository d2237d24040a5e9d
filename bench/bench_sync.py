"""Benchmark: ``vimesync sync`` on the demo vs the sum of its steps run one by one (issue 22).

    python bench/bench_sync.py              # 5 runs each, a fresh pre-sync demo per run
    python bench/bench_sync.py --runs 10

Target: the one ``sync`` process <= 1.2x the six processes ``walk``, ``carry``, ``patches
check``, ``audit``, ``sop status`` and ``report`` run one after the other, as SYNC.md has a
maintainer run them (``ci``, ``images`` and ``tests`` switched off in both: the demo is offline). Shown:
median wall and median CPU (user + sys of the children); the demo's build is not timed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
OFF = ["--skip-gate", "ci", "--skip-gate", "images", "--skip-gate", "tests"]  # the demo is offline, no suites


def presync(root: Path) -> tuple[Path, Path]:
    """The demo before its sync: (checkout, where the sync worktree will be)."""
    from vimesync import git
    from vimesync.demo.build import build_demo

    d = build_demo(root)
    git.run(d.checkout, ["worktree", "remove", "--force", str(d.downstream)])
    git.run(d.checkout, ["branch", "-q", "-D", f"sync/{d.tip[:8]}"])
    return d.checkout, d.downstream


def timed(commands: list[tuple[list[str], Path]]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    for args, cwd in commands:
        proc = subprocess.run(
            [sys.executable, "-m", "vimesync", *args], cwd=cwd, env=ENV, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"vimesync {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    one: list[tuple[float, float]] = []
    steps: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        for i in range(runs + 1):  # the first pair warms the page cache and the parse cache
            checkout, wt = presync(Path(tmp) / f"a{i}")
            a = timed([(["sync", *OFF, "--output", str(Path(tmp) / f"a{i}.md")], checkout)])
            checkout, wt = presync(Path(tmp) / f"b{i}")
            b = timed(
                [
                    (["walk"], checkout),
                    (["carry"], checkout),
                    (["patches", "check"], wt),
                    (["audit", "--baseline", "main"], wt),
                    (["sop", "status", "--baseline", "main", *OFF], wt),
                    (["report", "--baseline", "main", *OFF, "--output", str(Path(tmp) / f"b{i}.md")], wt),
                ]
            )
            if i:
                one.append(a)
                steps.append(b)
    a_wall, a_cpu = (statistics.median(x) for x in zip(*one, strict=True))
    b_wall, b_cpu = (statistics.median(x) for x in zip(*steps, strict=True))
    print(f"vimesync sync           wall {a_wall:6.2f} s   cpu {a_cpu:6.2f} s")
    print(f"six steps one by one    wall {b_wall:6.2f} s   cpu {b_cpu:6.2f} s")
    ratio = a_wall / b_wall
    print(f"sync / steps: {ratio:.2f}x wall, {a_cpu / b_cpu:.2f}x cpu  (target <= 1.2x)")
    print("OK" if ratio <= 1.2 else "over target")


if __name__ == "__main__":
    main()
