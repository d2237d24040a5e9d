"""Benchmark: start-up of the ``vimesync`` process, and the whole ``walk`` process vs a bare git log.

    python bench/bench_startup.py                       # --version and --help, 20 runs each
    python bench/bench_startup.py --repo PATH           # also: walk process vs git log on PATH
    python bench/bench_startup.py --repo /work/.mirror/THUDM+slime/repo --runs 10

Targets (issues 12 and 28): ``vimesync --version`` and ``vimesync --help`` <= 0.1 s wall; the
whole ``vimesync walk --json`` process <= 3x ``git log --first-parent -m --name-only`` of the same
range. Shown per command: median wall time and median CPU time (user + sys of the child), because
on a shared machine wall time includes waiting for a core. ``python -c pass`` is the floor; the
typer version is shown because it decides the cost of every option (README, "Dependencies").
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def measure(cmd: list[str], runs: int, cwd: Path | None = None) -> tuple[float, float]:
    """Median wall and median CPU seconds of ``runs`` runs of ``cmd`` (after one warm-up run)."""
    env = ENV
    cwd = cwd or ROOT  # python -m puts the working folder first on sys.path: make it this tree
    walls, cpus = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=cwd, env=env
        )
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i:  # the first run warms the page cache
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def show(label: str, wall: float, cpu: float, target: float | None = None) -> None:
    verdict = "" if target is None else ("  OK" if wall <= target else f"  over {target:.2f}s")
    print(f"{label:<44} wall {wall * 1000:6.0f} ms   cpu {cpu * 1000:6.0f} ms{verdict}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repo", type=Path, help="an upstream clone or bare mirror for the walk figures")
    ap.add_argument("--range", default="HEAD", help="BASE..TIP or TIP (default: HEAD)")
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="do not give the runs a bytecode cache (see above): measure the environment as it is",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vimesync-pyc-") as pyc:
        if args.no_bytecode_cache:
            flag = ENV.get("PYTHONDONTWRITEBYTECODE", "")
            print(f"bytecode: as the environment has it (PYTHONDONTWRITEBYTECODE={flag!r})")
        else:
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = pyc
            print("bytecode: cached (as installed), in a temporary PYTHONPYCACHEPREFIX")
        return _run(args)


def _run(args: argparse.Namespace) -> int:

    py = sys.executable
    script = Path(py).with_name("vimesync")
    if not script.exists():
        script = Path(shutil.which("vimesync") or "vimesync")
    typer = subprocess.run(
        [py, "-c", "import typer; print(typer.__version__)"], capture_output=True, text=True, env=ENV
    ).stdout.strip()
    print(f"typer {typer or '(not importable)'}")
    show("python -c pass (floor)", *measure([py, "-c", "pass"], args.runs))
    for what in ("--version", "--help"):
        show(f"python -m vimesync {what}", *measure([py, "-m", "vimesync", what], args.runs), target=0.1)
        if script.exists():
            show(
                f"{script.name} {what} (console script)", *measure([str(script), what], args.runs), target=0.1
            )
    show("python -m vimesync walk --help", *measure([py, "-m", "vimesync", "walk", "--help"], args.runs))

    if args.repo is not None:
        base, sep, tip = args.range.partition("..")
        git_range = [tip, f"^{base}"] if sep else [args.range]
        git_log = [
            "git",
            "-c",
            "advice.graftFileDeprecated=false",
            "log",
            "--first-parent",
            "-m",
            "--name-only",
        ]
        runs = max(3, args.runs // 4)
        g = measure([*git_log, *git_range], runs, cwd=args.repo)
        walk = [py, "-m", "vimesync", "walk", "--upstream", str(args.repo), "--range", args.range, "--json"]
        w = measure(walk, runs)
        show(f"git log --first-parent -m --name-only ({args.range})", *g)
        show("python -m vimesync walk --json (whole process)", *w)
        print(f"walk process / git log: {w[0] / g[0]:.2f}x wall, {w[1] / g[1]:.2f}x cpu (target <= 3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
