"""Benchmark: ``walk`` (paths + policy) vs a bare ``git log --first-parent -m --name-only``.

    python bench/bench_walk.py                 # builds a ~1,500-commit history in a temp dir
    python bench/bench_walk.py --repo PATH     # e.g. a bare mirror of the real upstream
    python bench/bench_walk.py --repo PATH --range BASE..TIP --policy sop/policy.toml

Target: the walk takes at most 4x the bare log on the same range, in one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vimesync import git
from vimesync.config import Config
from vimesync.upstream.pipeline import UpstreamRange, WalkSpec, parse_range, walk_and_classify

DEFAULT_POLICY = """\
[[rule]]
action = "include"
reason = "mirrored as requested"
prs = [12, 2199]

[[rule]]
action = "exclude"
reason = "Ascend/NPU is not carried downstream"
title = "(?i)\\\\b(npu|ascend)\\\\b"

[[rule]]
action = "exclude"
reason = "NPU-only files"
paths = ["docker/npu_patch/**", "**/npu/**", "**/*_npu.py", "**/*_npu.sh"]

[[rule]]
action = "exclude"
reason = "docs are rewritten downstream"
paths = ["docs/**", "*.md"]
"""


def build_history(path: Path, commits: int = 1500) -> None:
    """A synthetic upstream through one ``git fast-import``: squash PRs, merge PRs with side
    commits (some carrying fork-PR merges), rebase-merged pairs, direct pushes and reverts."""
    path.mkdir(parents=True)
    git.run(path, ["init", "-q", "--bare", "--initial-branch=main"])
    out: list[str] = []
    mark = 0
    when = 1_600_000_000
    dirs = [
        "slime/backends",
        "slime/rollout",
        "slime/utils",
        "docs/en",
        "docker/npu_patch",
        "examples/npu",
        "tests",
    ]

    def blob(text: str) -> int:
        nonlocal mark
        mark += 1
        data = text.encode()
        out.append(f"blob\nmark :{mark}\ndata {len(data)}\n{text}\n")
        return mark

    def commit(branch: str, msg: str, parents: list[int], nfiles: int) -> int:
        nonlocal mark, when
        files = [
            (f"{dirs[(mark + k) % len(dirs)]}/f{(mark * 7 + k) % 400}.py", blob(f"{mark} {k}\n"))
            for k in range(nfiles)
        ]
        mark += 1
        when += 60
        data = msg.encode()
        lines = [
            f"commit refs/heads/{branch}",
            f"mark :{mark}",
            f"committer u <u@x> {when} +0000",
            f"data {len(data)}",
        ]
        lines.append(msg)
        if parents:
            lines.append(f"from :{parents[0]}")
            lines += [f"merge :{p}" for p in parents[1:]]
        lines += [f"M 100644 :{b} {p}" for p, b in files]
        out.append("\n".join(lines) + "\n\n")
        return mark

    tip = commit("main", "init", [], 5)
    n = 0
    pr = 1
    while n < commits:
        kind = pr % 10
        if kind in (0, 1, 2, 3, 4, 5):
            tip = commit(
                "main", f"feat: change {pr} of the {'npu' if pr % 37 == 0 else 'core'} code (#{pr})", [tip], 3
            )
            n += 1
        elif kind == 6:  # merge PR with 2 side commits, sometimes carrying a fork PR merge
            a = commit("side", f"work a {pr}", [tip], 2)
            b = commit("side", f"work b {pr}", [a], 2)
            if pr % 3 == 0:
                c = commit("fork", f"fork part {pr}", [a], 1)
                b = commit("side", f"Merge pull request #{pr % 50} from fork/part", [b, c], 0)
                n += 2
            tip = commit(
                "main", f"Merge pull request #{pr} from dev/branch-{pr}\n\nMerged work {pr}", [tip, b], 0
            )
            n += 3
        elif kind == 7:  # rebase-merged pair
            tip = commit("main", f"part one (#{pr})", [tip], 2)
            tip = commit("main", f"part two (#{pr})", [tip], 2)
            n += 2
        elif kind == 8:
            tip = commit("main", f"[docker] direct push {n}", [tip], 1)
            n += 1
        else:
            tip = commit("main", f'Revert "feat: change {pr - 3} of the core code" (#{pr})', [tip], 1)
            n += 1
        pr += 1
    git.run(path, ["fast-import", "--quiet"], input="".join(out).encode())


def time_it(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, help="an existing clone or bare mirror (default: build one)")
    ap.add_argument("--range", default="HEAD", help="BASE..TIP, or TIP for the whole history (default: HEAD)")
    ap.add_argument("--policy", type=Path, help="policy TOML (default: a realistic NPU/docs policy)")
    ap.add_argument("--commits", type=int, default=1500)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "upstream.git"
            t = time.perf_counter()
            build_history(repo, args.commits)
            print(f"built {repo} in {time.perf_counter() - t:.1f}s")
        policy = args.policy
        if policy is None:
            policy = Path(tmp) / "policy.toml"
            policy.write_text(DEFAULT_POLICY)
        base, sep, tip = args.range.partition("..")
        git_range = [tip, f"^{base}"] if sep else [args.range]
        # git_env() points GIT_GRAFT_FILE at /dev/null (see vimesync.git), which git advises about.
        bare = [
            "git",
            "-c",
            "advice.graftFileDeprecated=false",
            "log",
            "--first-parent",
            "-m",
            "--name-only",
            *git_range,
        ]
        count = git.run(repo, ["rev-list", "--count", *git_range]).decode().strip()
        fp = git.run(repo, ["rev-list", "--first-parent", "--count", *git_range]).decode().strip()

        def run_git() -> None:
            subprocess.run(bare, cwd=repo, stdout=subprocess.PIPE, check=True, env=git.git_env())

        result = None

        def run_walk() -> None:
            nonlocal result
            base, tip = parse_range(args.range, Config())
            rng = UpstreamRange(base, tip, explicit=True)
            result = walk_and_classify(WalkSpec(upstream=repo, range=rng, policy=policy), Config())

        run_git(), run_walk()  # warm the page cache for both
        g = time_it(run_git, args.repeat)
        w = time_it(run_walk, args.repeat)
        assert result is not None
        gm, wm = statistics.median(g), statistics.median(w)
        excluded = len(result.by_status("excluded"))
        print(f"range {args.range}: {count} commits, {fp} first-parent")
        print(
            f"walk: {len(result.prs)} PRs ({excluded} excluded), {len(result.direct_commits)} direct commits"
        )
        print(f"git log --first-parent -m --name-only: median {gm * 1000:.0f} ms over {args.repeat}")
        print(f"vimesync walk (paths + policy):        median {wm * 1000:.0f} ms over {args.repeat}")
        ratio = wm / gm
        print(f"ratio {ratio:.2f}x (target <= 4x): {'OK' if ratio <= 4 else 'TOO SLOW'}")
        return 0 if ratio <= 4 else 1


if __name__ == "__main__":
    sys.exit(main())
