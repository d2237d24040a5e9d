"""Real, minimal wheels of the test engine (pip reads their metadata, so they must be valid)
(tests only)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from tests.builders.stack import ENGINE


def make_wheel(
    folder: Path,
    name: str = "eng",
    version: str = "1.0",
    extra: str = "",
    files: dict[str, str] | None = None,
) -> Path:
    """``folder/<name>-<version>-py3-none-any.whl``: the engine's ``eng/`` files (``files`` on
    top), ``eng/extra.py`` holding ``extra``, and the dist-info pip needs."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    members = {k: v for k, v in ENGINE.items() if k.startswith("eng/")}
    members["eng/extra.py"] = extra
    members.update(files or {})
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    members[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    members[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in members) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as z:
        for n, text in members.items():
            z.writestr(n, text)
    return wheel


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
