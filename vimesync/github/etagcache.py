"""The on-disk cache of GET answers with their ETag: revalidated with ``If-None-Match``, so a 304
costs no rate limit and proves the cached copy current. The token is never part of an entry."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def entry_file(cache: Path, base_url: str, url: str, params: dict[str, Any]) -> Path:
    """The file holding the answer to GET ``url`` with ``params`` from the API at ``base_url``."""
    key = json.dumps([base_url, url, sorted(params.items())])
    return cache / (hashlib.sha256(key.encode()).hexdigest() + ".json")


def load(file: Path) -> dict[str, Any] | None:
    """The cached ``{"etag": ..., "data": ...}``, or None when there is none readable."""
    try:
        cached = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cached if isinstance(cached, dict) else None


def revalidation(cached: dict[str, Any] | None) -> dict[str, str]:
    """The request headers that ask whether ``cached`` is still current."""
    return {"If-None-Match": cached["etag"]} if cached and cached.get("etag") else {}


def store(file: Path, etag: str, data: Any) -> None:
    """Keep ``data`` under its ``etag`` (replaced whole); a cache that cannot be written only costs speed."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"etag": etag, "data": data}), encoding="utf-8")
        tmp.replace(file)
    except OSError:
        pass
