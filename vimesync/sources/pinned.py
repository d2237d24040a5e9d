"""Archive pins: a wheel or sdist checked against the ``sha256`` its pin records, and packages
named ``pypi:NAME==VERSION`` fetched once into the cache with pip and verified the same way.

The pin is repository content (a stranger writes it in CI), so the fetch is bounded and runs
nothing of the package: pip is this interpreter's (``sys.executable -m pip``, never one found on
``PATH``), asked for a wheel only (``--only-binary=:all:``: an sdist would make pip build its
metadata, i.e. run the package's code), with ``--no-deps``, a requirement that is a name,
``==`` and an exact version (validated twice: in the config and here), in a scratch folder as
its working directory, within a time and a size budget (the process runner's deadline, and a
watch on the scratch folder's size: :mod:`vimesync.procrun`). Where pip looks (an index, a mirror, a
``--find-links`` folder) is the job's choice, made with pip's own environment
(``PIP_INDEX_URL``, ``PIP_NO_INDEX``, ``PIP_FIND_LINKS``), never the pin's.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from vimesync.config import pypi_requirement
from vimesync.errors import BadInput
from vimesync.procrun import Bounds, Command, child_env, last_line, run
from vimesync.safefs import excerpt, remove_tree

MAX_DOWNLOAD_BYTES = 4 << 30  # what pip may write before it is stopped (vLLM wheels are ~0.5 GiB)
_CHUNK = 1 << 20


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file, read in chunks (a wheel of any size, in bounded memory)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise BadInput(f"{path}: cannot read the archive ({exc.strerror})") from None
    return digest.hexdigest()


def verify_archive(path: Path, sha256: str, *, pin: str) -> None:
    """BadInput naming the pin and both digests when ``path`` is not the archive ``pin`` records."""
    got = sha256_of(path)
    if got != sha256.lower():
        raise BadInput(
            f"{pin}: the archive {path} does not match the pin: "
            f"sha256 {got}, the pin records {sha256.lower()}"
        )


def archives(cache_dir: Path | None) -> Path:
    """Where fetched archives live: ``<vimesync cache>/archives/<sha256>/<file name>``; BadInput
    when the job keeps no cache folder (a fetched wheel must be kept to be checked and reused)."""
    if cache_dir is None:
        raise BadInput("a pypi: pin needs vimesync's cache folder", hint="set VIMESYNC_CACHE_DIR or HOME")
    return cache_dir / "archives"


def fetch_package(requirement: str, sha256: str | None, *, pin: str, cache: Path, timeout: float) -> Path:
    """The wheel ``requirement`` names, from the cache or fetched with pip, verified against
    ``sha256``. Without a digest the file is fetched but not used: BadInput says the digest to
    write (after checking it), so a pin never trusts whatever the index serves today."""
    req = pypi_requirement(requirement, where=pin, key="source")
    folder = cache
    if sha256 is not None:
        cached = _cached(folder / sha256.lower())
        if cached is not None:
            verify_archive(cached, sha256, pin=pin)  # a cache is a folder anyone on the box may edit
            return cached
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(_mkdtemp(folder))
    try:
        wheel = _download(req, scratch, pin=pin, timeout=timeout)
        got = sha256_of(wheel)
        if sha256 is None:
            raise BadInput(
                f"{pin}: source pypi:{req} has no sha256: pip fetched {wheel.name} with sha256 {got}; "
                f'check it against the index and write sha256 = "{got}"'
            )
        if got != sha256.lower():
            raise BadInput(
                f"{pin}: pip fetched {wheel.name} for pypi:{req} with sha256 {got}, "
                f"the pin records {sha256.lower()}"
            )
        return _keep(folder, wheel, got, pin=pin)
    finally:
        remove_tree(scratch)


def fetch_new_package(requirement: str, *, pin: str, cache: Path, timeout: float) -> tuple[Path, str]:
    """The wheel ``requirement`` names, fetched with pip (as :func:`fetch_package`) and kept in
    the cache under its digest, and that digest: what ``pin bump --to pypi:NAME==VER`` records.
    The maintainer who moves the pin vouches for the wheel; every later use checks the digest."""
    req = pypi_requirement(requirement, where=pin, key="--to")
    folder = cache
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(_mkdtemp(folder))
    try:
        wheel = _download(req, scratch, pin=pin, timeout=timeout)
        got = sha256_of(wheel)
        return _keep(folder, wheel, got, pin=pin), got
    finally:
        remove_tree(scratch)


def _keep(folder: Path, wheel: Path, digest: str, *, pin: str) -> Path:
    """``wheel`` moved to ``folder/<digest>/`` (a wheel already there is kept as it is)."""
    final = folder / digest
    try:
        final.mkdir(exist_ok=True)
        os.replace(wheel, final / wheel.name)
    except OSError as exc:  # the cache is a folder anyone on the box (or a restored cache) shapes
        raise BadInput(f"{pin}: cannot keep {wheel.name} in the cache {final}: {exc.strerror}") from None
    return final / wheel.name


def wheel_name_version(path: Path) -> tuple[str, str] | None:
    """(name, version) from a wheel's file name (``name-version-pyver-abi-platform.whl``), the
    name normalised as PEP 503 compares them; None for anything else."""
    import re

    if not path.name.endswith(".whl"):
        return None
    parts = path.name[: -len(".whl")].split("-")
    if len(parts) not in (5, 6) or not parts[0] or not parts[1]:
        return None
    return re.sub(r"[-_.]+", "-", parts[0]).lower(), parts[1]


def _mkdtemp(folder: Path) -> str:
    import tempfile

    return tempfile.mkdtemp(prefix=".fetch-", dir=folder)


def _cached(folder: Path) -> Path | None:
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".whl")]
    except OSError:
        return None
    path = folder / names[0] if len(names) == 1 else None
    return path if path is not None and path.is_file() and not path.is_symlink() else None


def _download(req: str, scratch: Path, *, pin: str, timeout: float) -> Path:
    """Run pip in ``scratch`` (its cwd) into ``scratch/out``; the one wheel it wrote."""
    out = scratch / "out"
    out.mkdir()
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-input",
        "--disable-pip-version-check",
        "--progress-bar=off",
        "--no-cache-dir",
        "--quiet",
        "--dest",
        str(out),
        "--",
        req,
    ]
    tmp = scratch / "tmp"  # pip's temporary files count against the size budget too
    tmp.mkdir()
    # The job's own program, configured by the job: its whole environment (a private index's
    # keyring plugin reads names like *_TOKEN), pip's temporary folder in our scratch folder.
    command = Command(cmd, scratch, child_env(secrets=True, extra={"TMPDIR": str(tmp)}))
    bounds = Bounds(timeout=timeout, watch=lambda: _over_size(scratch))
    done = run(command, bounds, log=scratch / "pip.log")
    if done.stop is not None:
        why = done.stop.reason + (" (VIMESYNC_PIP_TIMEOUT)" if done.stop.kind == "deadline" else "")
        raise BadInput(f"{pin}: pip download pypi:{req} stopped: {why}")
    if done.code != 0:
        why = excerpt(last_line(done.output), 160)
        raise BadInput(f"{pin}: pip download pypi:{req} failed (exit {done.code}): {why}")
    files = sorted(os.listdir(out))
    wheels = [n for n in files if n.endswith(".whl")]
    if len(files) != 1 or len(wheels) != 1:
        shown = ", ".join(excerpt(n, 60) for n in files[:3]) or "nothing"
        raise BadInput(f"{pin}: pip download pypi:{req} did not give one wheel (got {shown})")
    wheel = out / wheels[0]
    if wheel.is_symlink() or not wheel.is_file():
        raise BadInput(f"{pin}: pip download pypi:{req} wrote something other than a file")
    return wheel


def _over_size(scratch: Path) -> str | None:
    """pip's scratch folder (its downloads, temporary files and log) past the size budget."""
    return f"wrote more than {MAX_DOWNLOAD_BYTES >> 30} GiB" if _size(scratch) > MAX_DOWNLOAD_BYTES else None


def _size(folder: Path) -> int:
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
