"""Benchmark: ``vimesync sync`` on the demo vs the six commands it runs, one by one (issues 22, 30).

    python bench/bench_sync.py              # 5 runs each, a fresh pre-sync demo per run
    python bench/bench_sync.py --runs 10
    python bench/bench_sync.py --root /path/to/another/vimesync/checkout   # bench that code
    python bench/bench_sync.py --slime 38   # a real range: 38 first-parent commits of the slime mirror

Target (issue 30): the one ``sync`` process <= 0.5x the six processes ``walk``, ``carry``,
``patches check``, ``audit``, ``sop status`` and ``report`` run one after the other, as SYNC.md
has a maintainer run them (``ci``, ``images`` and ``tests`` switched off in both: the demo is
offline); and one sync starts at most half the git processes it did before (227 on the demo, 208
on ``--slime 38``). Shown: median
wall and median CPU (user + sys of the children), and the git processes each started, counted in
one more run (untimed) through a ``git`` on PATH that logs each start and runs the real one. The
demo's build is not timed.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
TARGET = 0.5  # sync's wall time over the six commands'
OFF = ["--skip-gate", "ci", "--skip-gate", "images", "--skip-gate", "tests"]  # the demo is offline, no suites


def presync(root: Path) -> tuple[Path, Path]:
    """The demo before its sync: (checkout, where the sync worktree will be)."""
    from vimesync import git
    from vimesync.demo.build import build_demo

    d = build_demo(root)
    git.run(d.checkout, ["worktree", "remove", "--force", str(d.downstream)])
    git.run(d.checkout, ["branch", "-q", "-D", f"sync/{d.tip[:8]}"])
    return d.checkout, d.downstream


def timed(commands: list[tuple[list[str], Path]], env: dict[str, str] | None = None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    for args, cwd in commands:
        proc = subprocess.run(
            [sys.executable, "-m", "vimesync", *args], cwd=cwd, env=env or ENV, capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"vimesync {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}")
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


# --slime N: a real range instead of the demo (None: the demo), and its upstream clone
SLIME: tuple[str, Path] | None = None
MIRROR = Path("/work/.mirror/THUDM+slime/repo")


def slime_presync(root: Path) -> tuple[Path, Path]:
    """The slime mirror's range mapped into a vime-like downstream at its base (bench_carry's):
    (checkout, the sync worktree's folder)."""
    from bench_carry import make_downstream

    assert SLIME is not None
    rng, upstream = SLIME
    root.mkdir(parents=True)
    make_downstream(upstream, rng.split("..")[0], root / "vime")
    return root / "vime", root / "vime.sync"


def sync_alone(tmp: Path, name: str) -> list[tuple[list[str], Path]]:
    out = ["--output", str(tmp / f"{name}.md")]
    if SLIME is not None:  # no engine pinned: the patches gate is off (its step checks nothing)
        checkout, wt = slime_presync(tmp / name)
        real = ["--range", SLIME[0], "--direct", "include", "--worktree", str(wt), "--skip-gate", "patches"]
        return [(["sync", *real, *OFF, *out], checkout)]
    checkout, _ = presync(tmp / name)
    return [(["sync", *OFF, *out], checkout)]


def six_steps(tmp: Path, name: str) -> list[tuple[list[str], Path]]:
    out = ["--output", str(tmp / f"{name}.md")]
    if SLIME is not None:  # five: with no engine pinned, patches check has nothing to check
        checkout, wt = slime_presync(tmp / name)
        rng, off = ["--range", SLIME[0]], [*OFF, "--skip-gate", "patches"]
        return [
            (["walk", *rng], checkout),
            (["carry", *rng, "--direct", "include", "--worktree", str(wt)], checkout),
            (["audit", "--baseline", "main"], wt),
            (["sop", "status", "--baseline", "main", *off], wt),
            (["report", "--baseline", "main", *off, *out], wt),
        ]
    checkout, wt = presync(tmp / name)
    return [
        (["walk"], checkout),
        (["carry"], checkout),
        (["patches", "check"], wt),
        (["audit", "--baseline", "main"], wt),
        (["sop", "status", "--baseline", "main", *OFF], wt),
        (["report", "--baseline", "main", *OFF, *out], wt),
    ]


def git_processes(tmp: Path, commands: list[tuple[list[str], Path]]) -> int:
    """The git processes ``commands`` start: run once more with a ``git`` first on PATH that
    writes a line to a log and runs the real git (vimesync passes PATH on to git, not others)."""
    real = shutil.which("git")
    assert real is not None
    shim = Path(tempfile.mkdtemp(prefix="git-shim-", dir=tmp))
    log = shim / "log"
    log.touch()
    script = shim / "git"
    script.write_text(f'#!/bin/sh\necho x >> {shlex.quote(str(log))}\nexec {shlex.quote(real)} "$@"\n')
    script.chmod(0o755)
    timed(commands, {**ENV, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"})
    return len(log.read_text().splitlines())


def main() -> None:
    global ENV, SLIME
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT, help="the vimesync checkout whose code is benched")
    parser.add_argument("--slime", type=int, metavar="N", help="N slime commits: a real range")
    opts = parser.parse_args()
    ENV = {**os.environ, "PYTHONPATH": str(opts.root.resolve())}
    one: list[tuple[float, float]] = []
    steps: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as name:
        tmp = Path(name)
        if opts.slime:
            from bench_carry import default_range

            upstream = tmp / "slime.git"  # a clone: the mirror is read-only
            subprocess.run(["git", "clone", "-q", "--bare", str(MIRROR), str(upstream)], check=True)
            SLIME = (default_range(upstream, steps=opts.slime), upstream)
        for i in range(opts.runs + 1):  # the first pair warms the page cache and the parse cache
            a = timed(sync_alone(tmp, f"a{i}"))
            b = timed(six_steps(tmp, f"b{i}"))
            if i:
                one.append(a)
                steps.append(b)
        git_sync = git_processes(tmp, sync_alone(tmp, "ga"))
        git_steps = git_processes(tmp, six_steps(tmp, "gb"))
    a_wall, a_cpu = (statistics.median(x) for x in zip(*one, strict=True))
    b_wall, b_cpu = (statistics.median(x) for x in zip(*steps, strict=True))
    what = f"slime {SLIME[0]}" if SLIME else "the demo"
    print(f"code benched: {opts.root.resolve()} on {what}, {opts.runs} runs, {os.cpu_count()} cores")
    print(f"vimesync sync           wall {a_wall:6.2f} s   cpu {a_cpu:6.2f} s   git processes {git_sync:5,}")
    print(f"six steps one by one    wall {b_wall:6.2f} s   cpu {b_cpu:6.2f} s   git processes {git_steps:5,}")
    ratio = a_wall / b_wall
    print(f"sync / steps: {ratio:.2f}x wall, {a_cpu / b_cpu:.2f}x cpu  (target <= {TARGET}x)")
    print("OK" if ratio <= TARGET else "over target")


if __name__ == "__main__":
    main()
