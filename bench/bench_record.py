"""Benchmark ``vimesync sop record tests`` on a large JUnit file.

The issue's target: a 50,000-testcase JUnit file (~20 MB, pytest's shape: a long classname, a
parametrised name, a failure with its traceback every 100th case, a skip every 50th) recorded in
under 2 s and 200 MB (peak RSS of the whole ``vimesync`` process, its start-up included).
The file and a demo downstream to record into are built in a scratch folder:

    python bench/bench_record.py [--cases 50000] [--repeat 3]
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


def junit(path: Path, cases: int) -> None:
    tb = "E   AssertionError: assert 1 == 2\n" + "    frame line of a traceback\n" * 12
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" time="812.5">\n'
        )
        for i in range(cases):
            name = f"test_rollout_matrix[engine-{i % 7}-tp{i % 4}-{'x' * 160}-{i}]"
            out.write(f'<testcase classname="tests.rollout.test_matrix.T{i % 13}" name="{name}" time="0.01">')
            if i % 100 == 99:
                out.write(f'<failure message="assert 1 == 2">{tb}</failure>')
            elif i % 50 == 49:
                out.write('<skipped type="pytest.skip" message="no gpu">no gpu</skipped>')
            out.write(f"<system-out>{'captured output line ' * 6}</system-out></testcase>\n")
        out.write("</testsuite></testsuites>\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
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
        xml = work / "big.xml"
        junit(xml, args.cases)
        size = xml.stat().st_size
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "vimesync",
                    "sop",
                    "record",
                    "tests",
                    "--suite",
                    "bench",
                    "--junit",
                    str(xml),
                ],
                env=env,
                cwd=downstream,
                capture_output=True,
                text=True,
                check=False,
            )
            times.append(time.perf_counter() - start)
            if proc.returncode != 0:
                raise SystemExit(f"sop record tests failed ({proc.returncode}): {proc.stderr[-500:]}")
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(proc.stdout.strip().splitlines()[0])
        print(
            f"{args.cases:,} testcases, {size / 1e6:.1f} MB: median {statistics.median(times):.2f} s "
            f"(min {min(times):.2f}, max {max(times):.2f}), peak RSS {rss_mb:.0f} MB"
        )


if __name__ == "__main__":
    main()
