"""``sop/gates.toml``: which gates of the sync procedure apply, the required CI contexts and the
container image architectures. Repository content, so read through safefs and bounded::

    [off]                       # gates switched off, each with the reason shown in their place
    images = "this downstream publishes no container images"

    [ci]
    required = ["buildkite/vime"]

    [images]
    architectures = ["amd64", "arm64"]   # the first is recorded first: the others follow it
    allowed_hosts = ["build-amd64-01"]   # where a build may run (absent: anywhere)
    floating = ["stable"]                # tags that move besides latest: only `sop promote` moves them
    promote = ["vllm/vime:latest"]       # the floating references the report speaks of

    [evidence]                  # suites, runs, matrices, "pre-commit": green at the evidence head
    required = ["CPU regressions", "PipelineRL four-GPU"]
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.config import Config, read_toml
from vimesync.errors import ConfigError
from vimesync.sop.gates import GATE_NAMES
from vimesync.sop.imageref import TAG
from vimesync.sop.records import HOST  # as `sop record image --host` takes it

GATES_FILE = Path("sop") / "gates.toml"
# Every key it accepts, by table (docs/config.md documents each: tests/test_docs_config.py).
KNOWN_KEYS: dict[str, frozenset[str]] = {
    "sop/gates.toml": frozenset({"off", "ci", "images", "evidence"}),
    "sop/gates.toml [ci]": frozenset({"required"}),
    "sop/gates.toml [images]": frozenset({"architectures", "allowed_hosts", "floating", "promote"}),
    "sop/gates.toml [evidence]": frozenset({"required"}),
}
ARCHITECTURES = ("amd64", "arm64")
_ARCH = re.compile(r"[a-z0-9_]{1,32}")
MAX_HOSTS = 64
MAX_FLOATING = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class GatesConfig:
    file: Path | None = None
    off: tuple[tuple[str, str], ...] = ()  # (gate, why)
    required: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ARCHITECTURES
    evidence: tuple[str, ...] = ()  # the suites and runs the tests gate requires green
    allowed_hosts: tuple[str, ...] | None = None  # where an image may be built (None: anywhere)
    floating: tuple[str, ...] = ()  # tags that move besides ``latest`` (sop/imageref.py)
    promote: tuple[str, ...] = ()  # floating references the report says stay or move

    def host_allowed(self, host: str) -> bool:
        """Host names compare as DNS does: case-insensitively."""
        return self.allowed_hosts is None or host.lower() in {h.lower() for h in self.allowed_hosts}


def sop_root(config: Config, cwd: Path) -> Path:
    """The folder holding sop/: the one of vimesync.toml, else the working folder ``cwd``."""
    return config.file.parent if config.file is not None else cwd


def ignored_off(config: GatesConfig, *, untrusted: bool) -> tuple[str, ...]:
    """The gates ``[off]`` names that an untrusted checkout does not honour (for a warning)."""
    return tuple(g for g, _ in config.off) if untrusted else ()


def gates_of(config: Config) -> GatesConfig:
    """The gates file beside the config (none without a vimesync.toml: every gate on)."""
    return load_gates(config.file.parent) if config.file is not None else GatesConfig()


def _strings(
    file: Path, key: str, value: Any, *, limit: int, pattern: re.Pattern[str] | None = None
) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or len(value) > limit
        or not all(isinstance(v, str) and 0 < len(v) <= 255 and not _CONTROL.search(v) for v in value)
        or (pattern is not None and not all(pattern.fullmatch(v) for v in value))
    ):
        raise ConfigError(str(file), f"{key} must be a list of at most {limit} names")
    return tuple(dict.fromkeys(value))


def load_gates(root: Path) -> GatesConfig:
    """``<root>/sop/gates.toml``, or the defaults (every gate on) when there is none."""
    file = root / GATES_FILE
    if not os.path.lexists(file):
        return GatesConfig()
    data = read_toml(file, root=root)
    unknown = sorted(set(data) - KNOWN_KEYS["sop/gates.toml"])
    if unknown:
        raise ConfigError(
            str(file), f"unknown table [{unknown[0][:40]!r}]", hint="tables: off, ci, images, evidence"
        )
    off = data.get("off", {})
    ci = data.get("ci", {})
    images = data.get("images", {})
    evidence = data.get("evidence", {})
    for name, table in (("off", off), ("ci", ci), ("images", images), ("evidence", evidence)):
        if not isinstance(table, dict):
            raise ConfigError(str(file), f"[{name}] must be a table")
    for gate, why in off.items():
        if gate not in GATE_NAMES:
            raise ConfigError(str(file), f"[off] {gate[:40]!r} is no gate (gates: {', '.join(GATE_NAMES)})")
        if not isinstance(why, str) or not why.strip() or len(why) > 500 or _CONTROL.search(why):
            raise ConfigError(str(file), f"[off] {gate}: give the reason as one line of text")
    if (
        set(ci) - KNOWN_KEYS["sop/gates.toml [ci]"]
        or set(images) - KNOWN_KEYS["sop/gates.toml [images]"]
        or set(evidence) - KNOWN_KEYS["sop/gates.toml [evidence]"]
    ):
        raise ConfigError(
            str(file),
            "known keys: [ci] required, [images] architectures, allowed_hosts, floating, promote,"
            " [evidence] required",
        )
    arches = _strings(
        file,
        "[images] architectures",
        images.get("architectures", list(ARCHITECTURES)),
        limit=8,
        pattern=_ARCH,
    )
    if not arches:
        raise ConfigError(str(file), "[images] architectures must name at least one (or switch the gate off)")
    return GatesConfig(
        file=file,
        off=tuple((g, f"{why.strip()} ({GATES_FILE.as_posix()})") for g, why in off.items()),
        required=_strings(file, "[ci] required", ci.get("required", []), limit=100),
        architectures=arches,
        evidence=_evidence_names(file, evidence.get("required", [])),
        allowed_hosts=(
            None
            if "allowed_hosts" not in images
            else _strings(
                file, "[images] allowed_hosts", images["allowed_hosts"], limit=MAX_HOSTS, pattern=HOST
            )
        ),
        floating=_strings(
            file, "[images] floating", images.get("floating", []), limit=MAX_FLOATING, pattern=TAG
        ),
        promote=_promote_refs(file, images.get("promote", [])),
    )


def _promote_refs(file: Path, value: Any) -> tuple[str, ...]:
    """``[images] promote``: image references with a tag and no digest, as ``sop promote`` takes them."""
    from vimesync.errors import BadInput
    from vimesync.sop.imageref import parse_ref

    refs = _strings(file, "[images] promote", value, limit=MAX_FLOATING)
    for ref in refs:
        try:
            parsed = parse_ref(ref, "[images] promote")
        except BadInput:
            parsed = None
        if parsed is None or parsed.digest:
            raise ConfigError(str(file), f"[images] promote: {ref[:60]!r} is no image reference name:tag")
    return refs


def _evidence_names(file: Path, value: Any) -> tuple[str, ...]:
    """``[evidence] required``: names as ``sop record tests --suite``, ``record run --name`` and
    ``sop regress --name`` take them (``pre-commit`` is one)."""
    from vimesync.sop.results import NAME

    names = _strings(file, "[evidence] required", value, limit=100)
    bad = next((n for n in names if not NAME.fullmatch(n) or n != n.strip()), None)
    if bad is not None:
        raise ConfigError(
            str(file),
            f"[evidence] required: {bad[:60]!r} is no suite, run or matrix name (1-80 plain characters)",
        )
    return names


def skip_flags(
    names: list[str] | None, config: GatesConfig, *, untrusted: bool
) -> tuple[tuple[str, str], ...]:
    """``config.off`` plus the gates named by ``--skip-gate`` (BadInput for an unknown name).

    In an untrusted checkout ``[off]`` is a pull request's to edit, so only ``--skip-gate`` (the
    job's) switches a gate off there; see :func:`ignored_off`."""
    from vimesync.errors import BadInput

    off = {} if untrusted else dict(config.off)
    for n in names or ():
        if n not in GATE_NAMES:
            raise BadInput(f"--skip-gate {n[:40]!r}: no such gate (gates: {', '.join(GATE_NAMES)})")
        off.setdefault(n, "switched off with --skip-gate")
    return tuple(off.items())
