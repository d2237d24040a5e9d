"""Which Python version a tree targets: ``--python``, else what the tree declares, else the running one."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import excerpt, loads_toml

FROM_FLAG = "--python"
FROM_PYPROJECT = "requires-python in pyproject.toml"
FROM_PYTHON_VERSION = ".python-version"
FROM_METADATA = "Requires-Python in {}"  # a wheel's *.dist-info/METADATA or an sdist's PKG-INFO
FROM_RUNNING = "running interpreter"

MAX_PYPROJECT_BYTES = 4 * 1024 * 1024
HEADER_BYTES = 64 * 1024  # of .python-version and core metadata: the version is near the top
MAX_SPEC_CHARS = 1000  # a requires-python specifier
_PATCHED = "(patched tree)"

Reader = Callable[[str], bytes | None]  # relative path -> bytes, None when the tree has no such file


@dataclass(frozen=True)
class Target:
    version: tuple[int, int]
    source: str  # one of the FROM_* strings: where the version came from

    @property
    def text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"


def parse_version(text: str, *, what: str = "--python") -> tuple[int, int]:
    """``"3.12"`` (also ``"3.12.1"``, ``"python3.12"``) -> (3, 12); BadInput otherwise."""
    m = re.fullmatch(r"\s*(?:python|py|cpython-?)?(\d{1,4})\.(\d{1,4})(?:\.\d+\S*)?\s*", text, re.IGNORECASE)
    if not m:
        raise BadInput(f"{what}: {excerpt(text, 40)} is not a Python version like 3.12")
    return int(m.group(1)), int(m.group(2))


def metadata_files(paths: Iterable[str]) -> list[str]:
    """Core-metadata files that declare Requires-Python: a wheel's top-level ``*.dist-info/METADATA``
    and an sdist's ``PKG-INFO`` (sorted, so the choice is stable)."""
    return sorted(
        p for p in paths if p == "PKG-INFO" or (p.count("/") == 1 and p.endswith(".dist-info/METADATA"))
    )


def resolve_target(explicit: str | None, read: Reader, metadata: Iterable[str] = ()) -> Target:
    """The grammar target for a tree whose root files ``read`` returns (patched content, ideally).

    Order: ``--python``; ``requires-python`` in pyproject.toml; ``.python-version``; Requires-Python
    in the core metadata files named by ``metadata`` (wheels have no pyproject.toml); the running one.
    """
    if explicit:
        return Target(parse_version(explicit), FROM_FLAG)
    pyproject = read("pyproject.toml")
    if pyproject is not None:
        if len(pyproject) > MAX_PYPROJECT_BYTES:
            raise ConfigError(f"pyproject.toml {_PATCHED}", f"larger than {MAX_PYPROJECT_BYTES} bytes")
        spec = requires_python(pyproject)
        low = lower_bound(spec) if spec else None
        if low is not None:
            return Target(low, FROM_PYPROJECT)
    pinned = read(".python-version")
    if pinned is not None:
        # The first lines only, and short numbers: int() of a 5,000-digit run raises ValueError.
        m = re.search(rb"(?m)^[^#\n]*?(?<!\d)(\d{1,4})\.(\d{1,4})(?!\d)", pinned[:HEADER_BYTES])
        if m:
            return Target((int(m.group(1)), int(m.group(2))), FROM_PYTHON_VERSION)
    for name in metadata:
        data = read(name)
        # The header is at the top; the Description after it may be megabytes long.
        m = re.search(rb"(?im)^Requires-Python:[ \t]*([^\r\n]+)", (data or b"")[:HEADER_BYTES])
        low = lower_bound(m.group(1).decode("utf-8", "replace").strip()) if m else None
        if low is not None:
            return Target(low, FROM_METADATA.format(name))
    return Target(sys.version_info[:2], FROM_RUNNING)


def requires_python(pyproject: bytes) -> str | None:
    """``[project] requires-python`` of a pyproject.toml, or None (also for a file that is not TOML)."""
    try:
        text = pyproject.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        data = loads_toml(text, where=f"pyproject.toml {_PATCHED}")
    except ConfigError as exc:
        if "nested" in exc.message or "number is too long" in exc.message:
            raise  # hostile, not merely broken: say so
        return None
    project = data.get("project")
    spec = project.get("requires-python") if isinstance(project, dict) else None
    return spec if isinstance(spec, str) else None


def lower_bound(spec: str) -> tuple[int, int] | None:
    """The lowest X.Y a PEP 440 specifier admits (``">=3.10,<3.14"`` -> (3, 10), ``">=3.10,!=3.10.*"``
    -> (3, 11)); None when unbounded below (``"<3.14"``) or not a valid specifier (then the next
    source decides). ``packaging`` is a declared dependency, so the answer never depends on what
    happens to be installed."""
    if len(spec) > MAX_SPEC_CHARS:
        return None
    try:
        specs = SpecifierSet(spec)
    except (InvalidSpecifier, ValueError):
        return None
    bounds = [s for s in specs if s.operator in (">=", ">", "==", "~=", "===")]
    # The answer is the X.Y of some lower bound, or the minor after it (">=3.10,!=3.10.*").
    candidates = set()
    for s in bounds:
        m = re.match(r"(\d{1,4})(?:\.(\d{1,4}))?(?!\d)", s.version)
        if m:
            major, minor = int(m.group(1)), int(m.group(2) or 0)
            candidates |= {(major, minor), (major, minor + 1)}
    for major, minor in sorted(candidates):
        # X.Y.0 for ">=X.Y", X.Y.99 for ">X.Y" or ">=X.Y.3": some release of X.Y is admitted.
        if any(specs.contains(f"{major}.{minor}{patch}", prereleases=True) for patch in ("", ".99")):
            return major, minor
    return None
