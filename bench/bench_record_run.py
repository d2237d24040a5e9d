"""Benchmark ``vimesync sop record run -- CMD``: what vimesync adds around the job it runs.

The issue's targets: around a no-op job (``true``) vimesync adds at most 0.15 s (the command
in-process, interpreter start-up aside: the clean-tree check, the host probe, the run through the
process runner, the record written), and a figures file of 10,000 keys is read and judged
(refused: at most 100 are recorded) quickly. A demo downstream to record into is built in a
scratch folder:

    python bench/bench_record_run.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.15  # seconds of overhead around a no-op job


def _once(argv: list[str]) -> tuple[int, float]:
    from vimesync.cli.app import main

    start = time.perf_counter()
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "vimesync", "demo", "--keep", str(work / "d")],
            env=env,
            capture_output=True,
            check=True,
        )
        downstream = next((work / "d").glob("vime.sync-*"))
        os.chdir(downstream)
        devnull = os.open(os.devnull, os.O_WRONLY)
        saved = os.dup(1)
        overheads = []
        try:
            os.dup2(devnull, 1)  # the command's one-line result, not the bench's
            for i in range(args.repeat):
                again = ["--again"] if i else []
                code, wall = _once(["sop", "record", "run", "--name", "noop", *again, "--json", "--", "true"])
                assert code == 0, code
                overheads.append(wall)
        finally:
            os.dup2(saved, 1)
        records = next((downstream / "sop/records").glob("*.toml"))
        from vimesync.sop.results import load_results

        jobs = [r.duration or 0.0 for r in load_results(downstream, records.stem).runs]
        added = [w - j for w, j in zip(overheads, jobs, strict=True)]
        figures = work / "figures.json"
        figures.write_text(json.dumps({f"figure {i}": i * 1.5 for i in range(10_000)}))
        from vimesync.errors import BadInput
        from vimesync.sop.jobfigures import read_job_figures

        start = time.perf_counter()
        try:
            read_job_figures(figures, downstream)
            verdict = "accepted"
        except BadInput as exc:
            verdict = f"refused ({exc.message.split(': ')[-1]})"
        figures_s = time.perf_counter() - start
    median = statistics.median(added)
    target = f"median of {len(added)}; target {TARGET} s"
    print(f"sop record run -- true: {median:.3f} s added around the job ({target})")
    print(f"  each: {', '.join(f'{a:.3f}' for a in added)}; the job itself: {statistics.median(jobs):.3f} s")
    print(f"figures file of 10,000 keys: {figures_s * 1000:.1f} ms, {verdict}")
    sys.exit(0 if median <= TARGET else 1)


if __name__ == "__main__":
    main()
