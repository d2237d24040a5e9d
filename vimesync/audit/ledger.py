"""The review ledger ``sop/reviews/<sync>.toml``: who reviewed which path at which content hash.

One ``[[review]]`` per path (a re-review replaces the earlier entry), sorted by path so the
file diffs cleanly. Written atomically (temp file in the same folder, then rename)::

    # vimesync review ledger: edit with `vimesync audit review PATH... --by NAME`
    sync = "4c193f1f..8c17b676"

    [[review]]
    path = "vime/rollout.py"
    oid = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
    by = "alice"
    at = "2026-11-29T21:00:00Z"
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from vimesync.audit.model import Ledger, Review
from vimesync.config import read_toml
from vimesync.errors import ConfigError

LEDGER_DIR = "sop/reviews"


def file_safe(sync: str) -> str:
    """``4c193f1f..8c17b676`` stays as is; anything but ``[A-Za-z0-9._-]`` becomes ``-``; no leading dot."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", sync).lstrip(".")
    return safe or "sync"


def ledger_relpath(sync: str) -> str:
    """Where the ledger of ``sync`` lives, relative to the downstream root."""
    return f"{LEDGER_DIR}/{file_safe(sync)}.toml"


def read_ledger(path: Path, sync: str) -> Ledger:
    """Load a ledger; an absent file is an empty ledger. ConfigError on a malformed one."""
    if not path.exists():
        return Ledger(sync=sync)
    data = read_toml(path)
    raw = data.get("review", [])
    if not isinstance(raw, list):
        raise ConfigError(str(path), "review must be an array of tables ([[review]])")
    reviews: dict[str, Review] = {}
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            raise ConfigError(str(path), f"review #{i} must be a table")
        values = {}
        for key in ("path", "oid", "by"):
            value = item.get(key)
            if not isinstance(value, str) or not value:
                raise ConfigError(str(path), f"review #{i}: {key} must be a non-empty string")
            values[key] = value
        at = item.get("at", "")
        if not isinstance(at, str):
            raise ConfigError(str(path), f"review #{i}: at must be a string")
        reviews[values["path"]] = Review(path=values["path"], oid=values["oid"], by=values["by"], at=at)
    name = data.get("sync", sync)
    return Ledger(sync=str(name), reviews=tuple(reviews[p] for p in sorted(reviews)))


def record(ledger: Ledger, reviews: Iterable[Review]) -> Ledger:
    """A new ledger with ``reviews`` added, each replacing any earlier review of its path."""
    by_path = {r.path: r for r in ledger.reviews}
    for r in reviews:
        by_path[r.path] = r
    return Ledger(sync=ledger.sync, reviews=tuple(by_path[p] for p in sorted(by_path)))


def _toml_str(value: str) -> str:
    # A JSON string (non-ASCII kept) is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=False)


def dumps(ledger: Ledger) -> str:
    """The ledger as TOML text (stable: same ledger, same bytes)."""
    lines = [
        "# vimesync review ledger: edit with `vimesync audit review PATH... --by NAME`",
        f"sync = {_toml_str(ledger.sync)}",
    ]
    for r in ledger.reviews:
        lines += ["", "[[review]]", f"path = {_toml_str(r.path)}", f"oid = {_toml_str(r.oid)}"]
        lines += [f"by = {_toml_str(r.by)}"]
        if r.at:
            lines.append(f"at = {_toml_str(r.at)}")
    return "\n".join(lines) + "\n"


def write_ledger(path: Path, ledger: Ledger) -> None:
    """Write atomically: a reader sees the old ledger or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps(ledger))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
