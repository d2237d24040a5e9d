"""Benchmark: ``audit`` of a 150-path sync with translations and overlays (issue 20).

    python bench/bench_audit.py                # builds the pair in a temp dir
    python bench/bench_audit.py --paths 1500   # a larger sync

Every changed path has an upstream counterpart that is translated and compared (one cat-file
batch per repository), one in ten is an overlay (a residue diff and its comments). Target: the
audit of 150 paths takes under 2 s, in one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vimesync.audit.compare import run_audit
from vimesync.config import Config, TranslateSpec, VerifySpec
from vimesync.upstream.translate import load_transform

MAP = (("slime/", "vime/"),)


def _source(i: int) -> str:
    body = "".join(f"    # step {k} of f{i}\n    x{k} = slime.helper({k})\n" for k in range(60))
    return f'"""Module {i}."""\nimport slime\nfrom slime import utils\n\n\ndef f{i}():\n{body}    return 0\n'


def _commit(repo: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True)


def build(root: Path, paths: int) -> tuple[Path, Path, str]:
    up, down = root / "up", root / "down"
    for repo in (up, down):
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        subprocess.run(["git", "config", "user.email", "b@example.com"], cwd=repo, check=True)
        subprocess.run(["git", "config", "user.name", "bench"], cwd=repo, check=True)
    sources = {f"slime/m{i}.py": _source(i) for i in range(paths)}
    _commit(up, sources, "tip")
    _commit(down, {"README.md": "vime\n"}, "baseline")
    baseline = subprocess.run(["git", "rev-parse", "HEAD"], cwd=down, capture_output=True, text=True).stdout
    carried = {}
    for i, (name, text) in enumerate(sources.items()):
        text = text.replace("import slime", "import vime").replace("from slime", "from vime")
        text = text.replace("slime.helper", "vime.helper")
        if i % 10 == 0:  # an overlay: a changed line and a dropped comment
            text = text.replace("    # step 3 of", "    # (vime)").replace("x7 = ", "x7 = 1 + ")
        carried["vime/" + name.removeprefix("slime/")] = text
    _commit(down, carried, "sync")
    return up, down, baseline.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paths", type=int, default=150)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    config = Config(
        path_map=MAP,
        translate=(
            TranslateSpec(r"\b(from|import) slime\b", r"\1 vime", ("**/*.py",), 1),
            TranslateSpec(r"\bslime\.", "vime.", ("**/*.py",), 5),
        ),
        verify=(VerifySpec(r"\bimport slime\b", ("vime/**",), "not-match", 9),),
    )
    from vimesync.audit.verify import load_verify

    with tempfile.TemporaryDirectory() as tmp:
        up, down, baseline = build(Path(tmp), args.paths)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            result = run_audit(
                down,
                baseline,
                "HEAD",
                up,
                "main",
                sync="bench",
                path_map=MAP,
                transform=load_transform(config),
                verify=load_verify(config),
            )
            times.append(time.perf_counter() - start)
        counts = {k: v for k, v in result.counts().items() if v}
        best, median = min(times), statistics.median(times)
        print(f"audit of {len(result.paths)} changed paths: {counts}")
        print(f"best {best:.3f} s, median {median:.3f} s over {args.runs} runs (target < 2 s for 150)")
        return 0 if args.paths > 150 or median < 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
