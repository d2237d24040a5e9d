"""Benchmark ``vimesync pin scan`` of N releases against N cold ``patches check`` runs.

The issue's target (issue 21): a scan of 5 releases takes at most 5x one cold ``patches check``
(one walk over the series, one scratch tree per release, the parse cache shared between releases
where files did not change). Every run here is cold: its own fresh cache folder
(``VIMESYNC_CACHE_DIR``).

- cold checks: ``patches check --keep-going --source R`` for each release R, empty cache each;
- scan: ``pin scan --source R1 --to R1 ... --to RN``, empty cache.

Releases are the ``--to`` sources given; ``--unpack`` adds the first wheel's Python files
unpacked as a directory source, and ``--releases N`` fills up to N with hard-linked copies of the
given ones under other names (the same content: the best case for the shared cache, said in the
output).

    python bench/bench_scan.py --series /tmp/stack/series --strip 2 \\
        --to /work/wheels/sglang-0.5.15.post1-cp311-cp311-manylinux_2_34_x86_64.whl --unpack --releases 5

Nothing large is committed: sources and stacks are given on the command line.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import zipfile
from pathlib import Path

from timing import vimesync


def _link_copy(src: Path, dst: Path) -> None:
    """``src`` under another name: hard links where the file system allows, else a copy."""
    if src.is_dir():
        shutil.copytree(src, dst, copy_function=_link_or_copy)
    else:
        _link_or_copy(str(src), str(dst))


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _unpack_python(wheel: Path, into: Path) -> Path:
    """The wheel's ``.py`` files (and top-level metadata) as a folder: a directory source."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith(".py"):
                z.extract(name, into)
    return into


def releases(given: list[Path], root: Path, *, unpack: bool, count: int) -> tuple[list[Path], int]:
    """The sources to scan, and how many of them are copies of another."""
    out = list(given)
    if unpack:
        wheel = next((p for p in given if p.suffix == ".whl"), None)
        if wheel is not None:
            out.append(_unpack_python(wheel, root / f"{wheel.name.split('-')[0]}-unpacked"))
    copies = 0
    i = 0
    originals = len(out)
    while len(out) < count:
        src = out[i % originals]
        dst = root / f"copy{copies + 1}-{src.name}"
        _link_copy(src, dst)
        out.append(dst)
        copies += 1
        i += 1
    return out[: max(count, len(given))], copies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=Path, required=True)
    ap.add_argument("--strip", type=int, default=1)
    ap.add_argument("--to", type=Path, action="append", required=True, help="a release's source (repeat)")
    ap.add_argument("--unpack", action="store_true", help="add the first wheel's .py files as a folder")
    ap.add_argument("--releases", type=int, default=5, help="fill up to N releases with copies")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    scans, sums, medians = [], [], []
    with tempfile.TemporaryDirectory(prefix="vimesync-bench-scan-", dir=a.to[0].parent) as tmp:
        root = Path(tmp)
        sources, copies = releases(a.to, root, unpack=a.unpack, count=a.releases)
        common = ["--series", str(a.series), "--strip", str(a.strip)]
        for n in range(a.repeat):
            cold = [
                vimesync(
                    ["patches", "check", "--source", str(s), *common, "--keep-going"], root / f"c{n}-{i}"
                )
                for i, s in enumerate(sources)
            ]
            tos = [arg for s in sources for arg in ("--to", str(s))]
            scan = vimesync(["pin", "scan", "--source", str(sources[0]), *common, *tos], root / f"s{n}")
            scans.append(scan)
            sums.append(sum(cold))
            medians.append(statistics.median(cold))
            print(
                f"run {n + 1}: cold checks " + ", ".join(f"{x:.2f}" for x in cold) + f" s; scan {scan:.2f} s"
            )
    k = len(sources)
    s, total, one = statistics.median(scans), statistics.median(sums), statistics.median(medians)
    print(f"releases: {k} ({copies} of them hard-linked copies of another)")
    for src in sources:
        print(f"  {src.name}")
    print(f"pin scan of {k} releases, cold: {s:.2f} s")
    print(f"{k} cold patches check runs: {total:.2f} s in all; one (median): {one:.2f} s")
    print(
        f"ratio: scan / {k}x one cold check = {s / (k * one):.2f} (target <= 1.0);"
        f" scan / their sum = {s / total:.2f}"
    )


if __name__ == "__main__":
    main()
