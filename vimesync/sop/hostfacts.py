"""The host a job runs on, as ``sop record run -- CMD`` measures it: host name, OS and kernel, CPU
count, the Python vimesync runs with, and the GPUs ``nvidia-smi`` or ``rocm-smi`` list -- only a
program found on the job's PATH outside the checkout (never one the repository holds), run through
the one process runner with a short deadline and an output cap; no answer in time is no GPUs."""

from __future__ import annotations

import os
import platform
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vimesync.sop.resultvalues import HOST, MAX_VALUE, UNPRINTABLE

GPU_TIMEOUT = 10.0  # seconds one GPU tool may take
GPU_OUTPUT = 64 * 1024
MAX_GPUS = 64
_GPU_TOOLS = (
    ("nvidia-smi", ("--query-gpu=name", "--format=csv,noheader")),
    ("rocm-smi", ("--showproductname", "--csv")),
)


@dataclass(frozen=True)
class HostFacts:
    host: str
    os: str
    kernel: str
    cpus: int
    python: str
    gpus: tuple[str, ...] = ()


def host_facts(*, path: str, checkout: Path, env: Mapping[str, str]) -> HostFacts:
    """This host's facts; GPUs from the first GPU tool on ``path`` (outside ``checkout``) that answers."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname())[:253].lstrip("._-") or "unknown"
    return HostFacts(
        host=name if HOST.fullmatch(name) else "unknown",
        os=_line(platform.system()),
        kernel=_line(platform.release()),
        cpus=os.cpu_count() or 0,
        python=_line(f"{platform.python_implementation()} {platform.python_version()}"),
        gpus=gpus(path=path, checkout=checkout, env=env),
    )


def program_on_path(name: str, path: str, checkout: Path) -> str | None:
    """``name`` as the job's PATH finds it, skipping every folder inside ``checkout``."""
    import shutil

    inside = os.path.realpath(checkout)
    dirs = [
        d
        for d in path.split(os.pathsep)
        if d and os.path.isabs(d) and not _within(os.path.realpath(d), inside)
    ]
    found = shutil.which(name, path=os.pathsep.join(dirs)) if dirs else None
    return found if found is None or not _within(os.path.realpath(found), inside) else None


def gpus(*, path: str, checkout: Path, env: Mapping[str, str]) -> tuple[str, ...]:
    from vimesync.procrun import Bounds, Command, capture

    for tool, args in _GPU_TOOLS:
        exe = program_on_path(tool, path, checkout)
        if exe is None:
            continue
        bounds = Bounds(timeout=GPU_TIMEOUT, max_output=GPU_OUTPUT)
        run = capture(Command([exe, *args], Path("/"), dict(env)), bounds)
        if run.code != 0:
            continue
        names = [_line(ln) for ln in run.output.decode("utf-8", "replace").splitlines() if ln.strip()]
        if tool == "rocm-smi":  # csv: device,Card series,...; the header first
            names = [n.split(",")[1].strip() if "," in n else n for n in names[1:]]
        return tuple(n for n in names if n)[:MAX_GPUS]
    return ()


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _line(text: str) -> str:
    return UNPRINTABLE.sub("?", text).strip()[:MAX_VALUE]
