"""Benchmark ``vimesync patches check`` against the by-hand baseline, side by side in one run.

The by-hand baseline is what a maintainer scripts today: copy the pinned tree, ``git apply``
each patch in order, then ``ast.parse`` every Python file serially. vimesync is measured cold
(empty parse cache) and warm (cache filled, then one patch's DEP-3 header edited — the
common case of a PR that touches the stack but not the code it produces).

Targets (issue 30): cold <= 1.15x the physical floor, warm <= 0.05x baseline, on the real sglang
tree with slime's real sglang stack. Issue 12's cold <= 0.30x baseline was set when the check only
parsed (``ast.parse``, as the baseline does); it now compiles to bytecode, which rejects more, and
the floor alone is about 0.35x the baseline, so that ratio is printed for comparison, not judged:

    unzip -q sglang-0.5.15.post1-cp311-cp311-manylinux_2_34_x86_64.whl -d /tmp/sgltree
    python bench/bench_check.py --tree /tmp/sgltree --series SLIME/docker/patch/v0.5.15.post1/series --strip 2
    python bench/bench_check.py --tree /tmp/sgltree  # generated patches; --repeat 5 for the spread
    python bench/bench_check.py                     # or synthesize ~2,500 files / ~40 MB
    python bench/bench_check.py --files 500         # a quicker run

The physical floor is measured in the same run: the CPU time of compiling every Python file of
the patched tree serially (``compile()`` in the interpreter the check parses with), divided by the
CPUs this process may use. No parallel check can beat it; the ratio says what the rest costs.

Each figure is the best of ``--repeat`` runs, and the spread (slowest run) is printed next to it:
the machine may be shared, so read the best as what the code costs and the spread as the noise.

Nothing large is committed: the tree is generated (or given) under a temp folder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FUNC = '''

def {name}(data: list[int], scale: float = {scale}) -> dict[str, float]:
    """Compute summary statistics for {name} (generated benchmark code)."""
    total = 0.0
    for i, value in enumerate(data):
        if value % {mod} == 0:
            total += value * scale
        elif value > {thr}:
            total -= (value - {thr}) / (i + 1)
        else:
            total += sum(x for x in range(value % 7))
    result = {{"total": total, "count": float(len(data))}}
    result["mean"] = total / max(len(data), 1)
    return result
'''

CLASS = '''

class {name}:
    """A generated class with a few methods."""

    def __init__(self, size: int = {size}) -> None:
        self.size = size
        self.items: list[tuple[int, str]] = [(i, f"item-{{i}}") for i in range(size)]

    def find(self, key: int) -> str | None:
        for k, v in self.items:
            if k == key:
                return v
        return None

    @property
    def labels(self) -> list[str]:
        return [v.upper() for _, v in self.items if len(v) > {thr}]
'''


def synthesize(root: Path, files: int, target_bytes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    per_file = target_bytes // files
    for n in range(files):
        pkg = root / "engine" / f"pkg{n % 40:02d}" / f"sub{n % 7}"
        pkg.mkdir(parents=True, exist_ok=True)
        parts = [f'"""Generated module {n}."""\n\nimport math\nimport os\n']
        size = len(parts[0])
        k = 0
        while size < per_file:
            tmpl = FUNC if k % 3 else CLASS
            text = tmpl.format(
                name=(f"func_{n}_{k}" if tmpl is FUNC else f"Class{n}x{k}"),
                scale=rng.randint(1, 9) / 10,
                mod=rng.randint(2, 9),
                thr=rng.randint(10, 99),
                size=rng.randint(1, 50),
            )
            parts.append(text)
            size += len(text)
            k += 1
        (pkg / f"mod{n}.py").write_text("".join(parts))
    (root / "pyproject.toml").write_text('[project]\nname = "engine"\nrequires-python = ">=3.10"\n')


def git(args: list[str], cwd: Path) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def make_patches(tree: Path, out: Path, count: int = 4, seed: int = 11) -> Path:
    """Generate ``count`` stacked patches, each editing a few files, with DEP-3 headers."""
    rng = random.Random(seed)
    work = out / "work"
    shutil.copytree(tree, work, symlinks=True)
    git(["init", "-q"], work)
    git(["add", "-A"], work)
    git(["commit", "-qm", "base"], work)
    py = sorted(p for p in work.rglob("*.py"))
    series = out / "patches"
    series.mkdir()
    names = []
    for i in range(count):
        for path in rng.sample(py, 5):
            lines = path.read_text().splitlines(keepends=True)
            at = rng.randrange(2, max(3, len(lines) - 2))
            lines.insert(at, f"# patched by bench patch {i}\n")
            path.write_text("".join(lines))
        new = work / f"bench_added_{i}.py"
        new.write_text(f'"""Added by patch {i}."""\n\nVALUE = {i}\n')
        git(["add", "-A"], work)
        diff = subprocess.run(["git", "diff", "--cached"], cwd=work, capture_output=True, check=True).stdout
        git(["commit", "-qm", f"p{i}"], work)
        name = f"{i:04d}-bench.patch"
        (series / name).write_bytes(f"Description: bench patch {i}\nOrigin: bench\n---\n".encode() + diff)
        names.append(name)
    (series / "series").write_text("\n".join(names) + "\n")
    shutil.rmtree(work)
    return series / "series"


BASELINE = r"""
import ast, pathlib, shutil, subprocess, sys
src, dst, series = map(pathlib.Path, sys.argv[1:4])
strip = sys.argv[4]
shutil.copytree(src, dst, symlinks=True)
for name in series.read_text().split():
    if not name.startswith("#"):
        subprocess.run(["git", "apply", f"-p{strip}", str(series.parent / name)], cwd=dst, check=True)
bad = 0
for p in dst.rglob("*.py"):
    try:
        ast.parse(p.read_bytes(), str(p))
    except SyntaxError:
        bad += 1
print(bad)
"""


# The physical floor: compile() every Python file of the patched tree, serially, in the check's
# interpreter; prints the CPU seconds (process time) that took.
FLOOR = r"""
import pathlib, sys, time
t0 = time.process_time()
for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    if p.is_file() and not p.is_symlink():
        try:
            compile(p.read_bytes(), str(p), "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            pass
print(time.process_time() - t0)
"""


def check_interpreter(argv: list[str], env: dict[str, str]) -> str:
    """The interpreter the check parses with, from its JSON ("/path/python3.10 (3.10.13)")."""
    out = subprocess.run(argv, capture_output=True, text=True, env=env).stdout
    shown = json.loads(out)["python"]["interpreter"]
    return str(shown).rsplit(" (", 1)[0]


PEAK_MB: dict[str, float] = {}  # label -> largest peak RSS seen (MB), of the process or any it waited for
CPU_S: dict[
    str, list[float]
] = {}  # label -> CPU seconds (user + system, with the children it reaped) per run


def timed(argv: list[str], env: dict[str, str] | None = None, *, label: str = "") -> float:
    """Wall time of one run; its peak RSS (wait4's ru_maxrss: the largest of the process and the
    children it reaped, i.e. the parse workers) goes into PEAK_MB[label]."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            out.seek(0)
            sys.stderr.write(out.read().decode(errors="replace"))
            raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}")
    PEAK_MB[label] = max(PEAK_MB.get(label, 0.0), usage.ru_maxrss / 1024)
    CPU_S.setdefault(label, []).append(usage.ru_utime + usage.ru_stime)
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, help="a real unpacked engine tree to use instead of a synthetic one")
    ap.add_argument("--series", type=Path, help="a real quilt series to check instead of generated patches")
    ap.add_argument("--strip", type=int, default=1, help="-pN of --series (default 1)")
    ap.add_argument("--files", type=int, default=2500)
    ap.add_argument("--mb", type=float, default=40.0)
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="vimesync-bench-") as tmp_s:
        tmp = Path(tmp_s)
        tree = args.tree
        if tree is None:
            tree = tmp / "tree"
            synthesize(tree, args.files, int(args.mb * 1024 * 1024))
        nfiles = sum(1 for _ in tree.rglob("*.py"))
        nbytes = sum(p.stat().st_size for p in tree.rglob("*.py"))
        if args.series is not None:
            series = tmp / "series-copy" / "series"  # the warm run edits a header: never the user's
            shutil.copytree(args.series.parent, series.parent)
            series.write_bytes(args.series.read_bytes())
        else:
            series = make_patches(tree, tmp)
        print(
            f"tree: {nfiles:,} Python files, {nbytes / 1e6:.1f} MB; {len(series.read_text().split())} patches"
        )

        def baseline() -> float:
            dst = tmp / "baseline-copy"
            shutil.rmtree(dst, ignore_errors=True)
            argv = [sys.executable, "-c", BASELINE, str(tree), str(dst), str(series), str(args.strip)]
            return timed(argv, label="baseline")

        cache = tmp / "cache"
        env = {**os.environ, "VIMESYNC_CACHE_DIR": str(cache)}
        check = [
            sys.executable,
            "-m",
            "vimesync",
            "patches",
            "check",
            "--source",
            str(tree),
            "--series",
            str(series),
            "--strip",
            str(args.strip),
            "--json",
        ]
        interp = check_interpreter(check, {**env, "VIMESYNC_CACHE_DIR": str(tmp / "probe-cache")})
        cpus = len(os.sched_getaffinity(0))

        def floor() -> float:
            """The serial compile CPU time of the patched tree (the baseline's copy), over the CPUs."""
            dst = tmp / "baseline-copy"
            out = subprocess.run([interp, "-c", FLOOR, str(dst)], capture_output=True, text=True, check=True)
            return float(out.stdout) / cpus

        def cold() -> float:
            shutil.rmtree(cache, ignore_errors=True)
            return timed(check, env, label="cold")

        def warm() -> float:
            timed(check, env)  # fill the cache
            first = series.parent / series.read_text().split()[0]
            first.write_bytes(
                first.read_bytes().replace(b"Description: bench", b"Description: edited bench", 1)
            )
            return timed(check, env, label="warm")

        # Interleaved, so that a burst of load elsewhere on the machine hits all three alike.
        runs: dict[str, list[float]] = {"baseline": [], "cold": [], "warm": [], "floor": []}
        for _ in range(args.repeat):
            runs["baseline"].append(baseline())
            runs["floor"].append(floor())
            runs["cold"].append(cold())
            runs["warm"].append(warm())
        base_t, cold_t, warm_t = (min(runs[k]) for k in ("baseline", "cold", "warm"))

        def spread(k: str) -> str:
            return f"(runs {min(runs[k]):.2f}-{max(runs[k]):.2f} s)"

        floor_t = min(runs["floor"])
        print(f"baseline (copy, git apply, ast.parse): {base_t:6.2f} s {spread('baseline')}")
        print(
            f"physical floor (serial compile CPU / {cpus} CPUs, {Path(interp).name}): {floor_t:6.2f} s"
            f" {spread('floor')}; cold = {cold_t / floor_t:.3f}x the floor (target <= 1.15x)"
        )
        # The best of each against the best of each; the rounds interleave, so each round's own
        # ratio shows how much of that is the machine's noise.
        rounds = sorted(c / f for c, f in zip(runs["cold"], runs["floor"], strict=True))
        print(
            f"cold / floor, round by round: median {rounds[len(rounds) // 2]:.3f}x"
            f" (rounds {rounds[0]:.3f}-{rounds[-1]:.3f}x)"
        )
        print(
            f"vimesync cold (empty cache):        {cold_t:6.2f} s = {cold_t / base_t:.2f}x"
            f" (the floor: {floor_t / base_t:.2f}x) {spread('cold')}"
        )
        print(
            f"vimesync warm (one header edited):  {warm_t:6.2f} s = {warm_t / base_t:.2f}x (target <= 0.05x)"
            f" {spread('warm')}"
        )
        # CPU time barely moves with the load of other processes on the machine: a second view.
        cpu = {k: min(CPU_S[k]) for k in ("baseline", "cold", "warm")}
        print(
            "CPU seconds (best): "
            + ", ".join(
                f"{k} {v:.2f} s" + (f" = {v / cpu['baseline']:.2f}x" if k != "baseline" else "")
                for k, v in cpu.items()
            )
        )
        peaks = ", ".join(f"{k} {v:,.0f} MB" for k, v in PEAK_MB.items() if k)
        print(f"peak RSS of the largest process (main or a parse worker): {peaks}")
        ok = cold_t <= 1.15 * floor_t and warm_t <= 0.05 * base_t
        print("targets met" if ok else "targets NOT met")


if __name__ == "__main__":
    main()
