"""Benchmark: ``vimesync carry`` vs ``git cherry-pick -m 1`` of the same first-parent commits.

    python bench/bench_carry.py                                   # the slime mirror, a default range
    python bench/bench_carry.py --repo PATH --range BASE..TIP --runs 3

The downstream is the upstream at BASE with ``slime/`` mapped to ``vime/`` and
``from/import slime`` translated to ``vime`` in every ``*.py`` file (as a renamed fork is); the
carry applies the same map and translation to BASE..TIP (``--direct include``: every first-parent
commit, like the cherry-picks). The baseline is one ``git cherry-pick -m 1`` process picking the
same commits in a plain clone at BASE (no map, no translation, a checkout per commit). Both run
side by side in one run; the figure is the ratio of the medians (goal: <= 1.0x). The carried tree
is also compared with the mapped + translated upstream at TIP.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from vimesync import git

MIRROR = Path("/work/.mirror/THUDM+slime/repo")
PY = re.compile(rb"\b(from|import) slime\b")
CONFIG = """\
[upstream]
name = "Slime"
repo = "THUDM/slime"
path = "{upstream}"
pin = "pins/slime.toml"
map = ["slime/=vime/"]

[[upstream.translate]]
pattern = '\\b(from|import) slime\\b'
replace = '\\1 vime'
paths = ["**/*.py"]

[downstream]
path = "."
"""
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


def default_range(repo: Path, start: int = 1482, steps: int = 140) -> str:
    """BASE..TIP over ``steps`` first-parent commits of the mid-2025 history (merge PRs there)."""
    line = git.run(repo, ["rev-list", "--first-parent", "HEAD"]).decode().split()
    return f"{line[start - 1]}..{line[start - 1 - steps]}"


def mapped_tree(repo: Path, rev: str, dest: Path) -> None:
    """The upstream at ``rev``, mapped and translated, written into ``dest``."""
    data = git.run(repo, ["archive", "--format=tar", rev])
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = "vime/" + member.name[len("slime/") :] if member.name.startswith("slime/") else member.name
            target = dest / name
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.issym():
                os.symlink(member.linkname, target)
                continue
            f = tar.extractfile(member)
            assert f is not None
            content = f.read()
            if name.endswith(".py") and b"\0" not in content[:8000]:
                content = PY.sub(rb"\1 vime", content)
            target.write_bytes(content)
            os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)


def make_downstream(repo: Path, base: str, path: Path) -> None:
    path.mkdir()
    git.run(path, ["init", "-q", "--initial-branch=main"])
    mapped_tree(repo, base, path)
    (path / "pins").mkdir(exist_ok=True)
    (path / "pins/slime.toml").write_text(f'[upstream]\nrepo = "THUDM/slime"\nsynced = "{base}"\n')
    (path / "vimesync.toml").write_text(CONFIG.format(upstream=repo))
    git.run(path, ["add", "-A"])
    git.run(path, ["commit", "-q", "-m", "import"], env=IDENTITY)


def run_carry(down: Path, range_: str, branch: str) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    args = [sys.executable, "-m", "vimesync", "carry", "--range", range_, "--direct", "include", "--json"]
    args += ["--branch", branch, "--worktree", str(down.parent / branch)]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=down, capture_output=True, env=env)
    took = time.perf_counter() - start
    doc = json.loads(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"carry exited {proc.returncode}: {doc.get('conflict') or doc}")
    return took, doc


def run_cherry_pick(repo: Path, base: str, shas: list[str], path: Path) -> float:
    git.run(path.parent, ["clone", "-q", "--no-checkout", str(repo), str(path)])
    git.run(path, ["checkout", "-q", "-b", "pick", base])
    start = time.perf_counter()
    git.run(
        path,
        ["cherry-pick", "-m", "1", "--allow-empty", "--keep-redundant-commits", *shas],
        env=IDENTITY,
    )
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=MIRROR)
    ap.add_argument("--range", dest="range_")
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    range_ = opts.range_ or default_range(opts.repo)
    base, tip = (git.resolve(opts.repo, r) for r in range_.split(".."))
    shas = git.run(opts.repo, ["rev-list", "--first-parent", "--reverse", f"{base}..{tip}"]).decode().split()
    merges = git.run(opts.repo, ["rev-list", "--first-parent", "--merges", "--count", f"{base}..{tip}"])
    print(f"range {base[:12]}..{tip[:12]}: {len(shas)} first-parent commits, {int(merges)} merges")
    carry_times, pick_times = [], []
    root = Path(tempfile.mkdtemp(prefix="bench-carry-"))
    try:
        down = root / "down"
        make_downstream(opts.repo, base, down)
        for i in range(opts.runs):
            took, doc = run_carry(down, f"{base}..{tip}", f"bench-{i}")
            carry_times.append(took)
            pick_times.append(run_cherry_pick(opts.repo, base, shas, root / f"plain-{i}"))
            print(
                f"run {i + 1}: carry {took:.2f} s ({len(doc['carried'])} carried,"
                f" {len(doc['skipped'])} skipped),"
                f" cherry-pick -m 1 {pick_times[-1]:.2f} s"
            )
        expected = root / "expected"
        expected.mkdir()
        git.run(expected, ["init", "-q"])
        mapped_tree(opts.repo, tip, expected)
        git.run(expected, ["add", "-A"])
        want = git.run(expected, ["write-tree"]).decode().strip()
        got = {e.path: e.oid for e in git.ls_tree(down, "bench-0~1") if e.kind == "blob"}
        exp = {e.path: e.oid for e in git.ls_tree(expected, want) if e.kind == "blob"}
        got = {p: o for p, o in got.items() if p not in ("vimesync.toml", "pins/slime.toml")}
        print(f"carried tree == mapped + translated TIP: {got == exp} ({len(exp)} files)")
        if got != exp:
            diff = sorted(set(got.items()) ^ set(exp.items()))[:10]
            print("  differs:", diff)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    c, p = statistics.median(carry_times), statistics.median(pick_times)
    print(f"median: carry {c:.2f} s, cherry-pick {p:.2f} s, ratio {c / p:.2f}x")


if __name__ == "__main__":
    main()
