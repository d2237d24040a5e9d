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
import re
from collections.abc import Iterable
from pathlib import Path

from vimesync import safefs
from vimesync.audit.model import Ledger, Review
from vimesync.config import read_toml
from vimesync.errors import BadInput, ConfigError
from vimesync.text import visible

LEDGER_DIR = "sop/reviews"


def file_safe(sync: str) -> str:
    """``4c193f1f..8c17b676`` stays as is; anything but ``[A-Za-z0-9._-]`` becomes ``-``; no leading dot."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", sync).lstrip(".")
    return safe or "sync"


def ledger_relpath(sync: str) -> str:
    """Where the ledger of ``sync`` lives, relative to the downstream root."""
    return f"{LEDGER_DIR}/{file_safe(sync)}.toml"


def _root(path: Path) -> Path | None:
    """The downstream root of a ledger at ``<root>/sop/reviews/<name>.toml``: from there down no
    folder may be a symlink (a committed ``sop/reviews -> /elsewhere`` is refused)."""
    depth = len(Path(LEDGER_DIR).parts)
    if path.parent.parts[-depth:] == Path(LEDGER_DIR).parts:
        return path.parents[depth]
    return None


def read_ledger(path: Path, sync: str) -> Ledger:
    """Load a ledger; an absent file is an empty ledger. ConfigError on a malformed one, and on a
    symlink at the file or at a folder on its way (``safefs``)."""
    if safefs.input_kind(path, root=_root(path)) == "missing":
        return Ledger(sync=sync)
    data = read_toml(path, root=_root(path))
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
    """Write atomically: a reader sees the old ledger or the new one, never half of one. Missing
    folders are created; a symlink at the file or a folder on its way is refused. A path (or
    name) that is not UTF-8 cannot be written as TOML: BadInput naming it, nothing written."""
    for r in ledger.reviews:
        for what, value in (("path", r.path), ("--by", r.by)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise BadInput(
                    f"{visible(value)}: {what} is not UTF-8, so the review ledger cannot record it",
                    hint="rename the file to a UTF-8 name" if what == "path" else None,
                ) from None
    data = dumps(ledger).encode("utf-8")
    safefs.write_atomic(path, data, root=_root(path), mkdirs=True, what="review ledger")
