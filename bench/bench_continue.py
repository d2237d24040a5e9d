"""Benchmark: a real sglang sync as a new maintainer runs it, each ``vimesync sync`` timed (issue 30).

    python bench/bench_continue.py --wheel sglang-0.5.15.post1-cp311-cp311-manylinux_2_34_x86_64.whl
    python bench/bench_continue.py --wheel W --committed      # the review committed before the last run
    python bench/bench_continue.py --wheel W --root /path/to/another/checkout --runs 3

The downstream is slime at aaf5c2092 renamed (``slime/`` -> ``vime/``, bench_carry's), its engine
pinned on the sglang wheel with slime's own v0.5.15.post1 stack (``docker/patch/latest``, strip 2),
and two commits of its own that conflict with #2249 and #2297 of the range aaf5c2092..624b824a8
(43 first-parent commits). Run: ``sync`` (stops at #2249), two ``sync --continue`` after taking
upstream's side of each conflict (the second checks the stack, cold: a fresh cache folder, and
stops at the audit), the review recorded as the stop says (``--committed``: and committed), and
the last ``sync --continue``. Shown per run: the median wall time and the git processes it
started (a ``git`` first on PATH that logs each start). The wheel is not in the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_carry import IDENTITY, MIRROR, make_downstream  # noqa: E402

from vimesync import git  # noqa: E402

BASE, TIP = "aaf5c2092", "624b824a8"
SERIES = "sglang.patch\nsglang-pull_weights.patch\nsglang-release_hicache.patch\nsglang-top_p.patch\n"
OFF = ["--skip-gate", "ci", "--skip-gate", "images", "--skip-gate", "tests"]
RUNS = ("sync", "continue 1", "continue 2 (cold check)", "last continue")


def fork(root: Path, wheel: Path) -> Path:
    """The renamed fork at BASE with its engine pin and its own two edits: its checkout."""
    up = root / "slime.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(MIRROR), str(up)], check=True)
    down = root / "vime"
    make_downstream(up, git.resolve(up, BASE), down)
    (down / "docker/patch/latest/series").write_text(SERIES)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (down / "pins/sglang.toml").write_text(
        '[engine]\nname = "sglang"\nrepo = "sgl-project/sglang"\nseries = "../docker/patch/latest/series"\n'
        f'strip = 2\nsource = "{wheel.resolve()}"\nsha256 = "{sha}"\n'
    )
    with (down / "vimesync.toml").open("a") as f:
        f.write('\n[engine]\npin = "pins/sglang.toml"\n')
    git.run(down, ["add", "-A"])
    git.run(down, ["commit", "-q", "-m", "pin sglang"], env=IDENTITY)
    args = down / "vime/utils/arguments.py"
    text = args.read_text()
    ours = ("reserve 1GB as margin.", "the temperature for the inference engine during rollout.")
    for old in ours:
        assert old in text, old
        text = text.replace(old, old[:-1] + " (vime).")
    args.write_text(text)
    git.run(down, ["commit", "-qam", "vime: our own help texts"], env=IDENTITY)
    return down


def theirs(path: Path) -> None:
    """Upstream's side of every conflict in ``path``, as a maintainer may resolve it."""
    text = path.read_text()
    path.write_text(re.sub(r"<<<<<<< [^\n]*\n.*?\n=======\n(.*?)>>>>>>> [^\n]*\n", r"\1", text, flags=re.S))


def one(root: Path, code: Path, wheel: Path, committed: bool) -> list[tuple[float, int]]:
    """One whole sync: (wall, git processes) of each run."""
    down = fork(root, wheel)
    shim = root / "shim"
    shim.mkdir()
    log = shim / "log"
    real = shutil.which("git")
    assert real is not None
    script = f'#!/bin/sh\necho x >> {shlex.quote(str(log))}\nexec {shlex.quote(real)} "$@"\n'
    (shim / "git").write_text(script)
    (shim / "git").chmod(0o755)
    # who commits, not when: a carried commit dated before the upstream base is not looked at
    # by the carried gate's scan (it bounds the downstream's commits by date)
    who = {k: v for k, v in IDENTITY.items() if not k.endswith("_DATE")}
    env = {
        **os.environ,
        **who,
        "PYTHONPATH": str(code),
        "VIMESYNC_CACHE_DIR": str(root / "cache"),  # a new maintainer's: cold
        "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    wt = root / "vime.sync"

    def run(*args: str, cwd: Path = down) -> tuple[float, int]:
        log.write_text("")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "vimesync", *args], cwd=cwd, env=env, capture_output=True)
        return time.perf_counter() - t, len(log.read_text().splitlines())

    got = [run("sync", "--range", f"{BASE}..{TIP}", "--direct", "include", "--worktree", str(wt), *OFF)]
    for _ in range(2):
        theirs(wt / "vime/utils/arguments.py")
        git.run(wt, ["add", "vime/utils/arguments.py"])
        got.append(run("sync", "--continue"))
    base = git.resolve(down, "main")
    review = ["audit", "review", "--by", "maint", "--baseline", base, "--", "vime/utils/arguments.py"]
    cli = [sys.executable, "-m", "vimesync", *review]
    subprocess.run(cli, cwd=wt, env=env, check=True, stdout=subprocess.DEVNULL)
    if committed:
        git.run(wt, ["add", "sop"])
        git.run(wt, ["commit", "-qm", "review"], env=who)
    got.append(run("sync", "--continue"))
    state = (git.common_dir(down) / "vimesync-sync.json").read_text()
    assert '"finished": true' in state, state
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheel", type=Path, required=True, help="the sglang 0.5.15.post1 wheel")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--committed", action="store_true", help="commit the review before the last run")
    opts = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-continue-") as tmp:
        for i in range(opts.runs):
            results.append(one(Path(tmp) / str(i), opts.root.resolve(), opts.wheel, opts.committed))
    print(f"code benched: {opts.root.resolve()}, {opts.runs} runs, {os.cpu_count()} cores")
    for i, name in enumerate(RUNS):
        wall = statistics.median(r[i][0] for r in results)
        print(f"{name:26} wall {wall:6.2f} s   git processes {results[0][i][1]:4}")
    total = statistics.median(sum(w for w, _ in r) for r in results)
    print(f"{'whole sync':26} wall {total:6.2f} s   git processes {sum(g for _, g in results[0]):4}")


if __name__ == "__main__":
    main()
