"""``sop/records/<sync>.toml``: evidence a maintainer records by hand (container images per
architecture), kept with its comments (``vimesync.tomledit``), written atomically, never through a symlink::

    # Evidence of sync 4c193f1f..8c17b676, recorded with `vimesync sop record`.

    [images.amd64]
    digest = "sha256:…"          # the pushed manifest
    ref = "ghcr.io/vime/vime:sync-8c17b676"
    sha = "…"                    # the sync head the image was built from
    recorded_at = "2026-11-30T19:00:00Z"
    host = "build-amd64-01"      # where it was built (checked against [images] allowed_hosts)
    verified = "ghcr.io"         # --verify read ref there naming digest (absent: typed only)

    [images.arm64]
    blocked = "no approved ARM64 host"   # why no image exists: no digest then
    sha = "…"
    recorded_at = "2026-11-30T19:05:00Z"

The file is repository content: read through safefs with its size and shape bounded, and every
value re-checked when it is read, not only when it is written."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vimesync.audit.bookkeeping import RECORDS as RECORDS_DIR
from vimesync.errors import BadInput, ConfigError
from vimesync.safefs import MAX_CONFIG_BYTES, Missing, loads_toml, read_text_input

RECORDS = Path(RECORDS_DIR)  # one spelling: audit/bookkeeping.py says what in it is bookkeeping
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
IMAGE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}")
SYNC = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,99}")
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
REGISTRY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?")  # host[:port]
MAX_BLOCKED = 200  # a blocked architecture's reason: one line
# What a reason may not hold: control characters, line and paragraph separators, zero-width and
# bidirectional marks (shown escaped elsewhere, refused here: the reason is one plain line).
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class ImageRecord:
    arch: str
    digest: str  # "" when the architecture is blocked
    sha: str
    ref: str = ""
    recorded_at: str = ""
    blocked: str = ""  # why no image exists for this architecture at ``sha`` (one line)
    host: str = ""  # where the image was built
    verified: str = ""  # the registry (host[:port]) `--verify` read it in ("": typed, not verified)

    @property
    def is_blocked(self) -> bool:
        return bool(self.blocked)


def check_blocked(reason: str, what: str = "--blocked") -> str:
    """A blocked architecture's reason as a flag gives it: one line of plain text, capped."""
    text = reason.strip()
    if not text or len(reason) > MAX_BLOCKED or _UNPRINTABLE.search(reason):
        raise BadInput(
            f"{what}: expected one line of at most {MAX_BLOCKED} characters, no control characters"
        )
    return text


def check_host(host: str, what: str = "--host") -> str:
    if not HOST.fullmatch(host):
        raise BadInput(f"{what} {host[:60]!r}: expected a host name (letters, digits, . _ -)")
    return host


@dataclass(frozen=True)
class Promotion:
    """A floating tag moved to an image of the sync head (``sop promote``; sop/promotions.py)."""

    ref: str
    digest: str
    sha: str
    images: tuple[tuple[str, str], ...] = ()  # (arch, digest)
    promoted_at: str = ""
    # The registry (host[:port]) ``sop promote --verify`` read the tag from, naming ``digest``:
    # the move is then verified, not only recorded ("" : recorded, the tag not read there).
    verified: str = ""


@dataclass(frozen=True)
class ImageEvidence:
    """The image records of a sync, read for its head (what the report's Validation shows)."""

    sync: str
    head: str
    architectures: tuple[str, ...]
    records: tuple[ImageRecord, ...]  # those recorded, in ``architectures`` order
    promote: tuple[str, ...] = ()  # the floating references the report speaks of ([images] promote)
    promotions: tuple[Promotion, ...] = ()  # recorded, at any head

    def at_head(self, arch: str) -> ImageRecord | None:
        return next((r for r in self.records if r.arch == arch and r.sha == self.head), None)

    def promoted(self, ref: str) -> Promotion | None:
        """The promotion of ``ref`` recorded at this head with exactly the images recorded for it
        (None: the tag did not move for it). A promotion whose images are not the head's (a
        hand-edited record, or images recorded again since) is no claim the report repeats."""
        images = {r.arch: r.digest for r in self.records if r.sha == self.head and not r.is_blocked}
        return next(
            (p for p in self.promotions if p.ref == ref and p.sha == self.head and dict(p.images) == images),
            None,
        )

    @property
    def floating(self) -> tuple[str, ...]:
        """Every reference to speak of: those configured, then any other promoted."""
        return tuple(dict.fromkeys((*self.promote, *(p.ref for p in self.promotions))))


def records_file(root: Path, sync: str) -> Path:
    if not SYNC.fullmatch(sync.replace("..", "_")) or "/" in sync:
        raise BadInput(
            f"sync name {sync[:60]!r}: expected letters, digits, '.', '_', '-' (e.g. 4c193f1f..8c17b676)"
        )
    return root / RECORDS / f"{sync}.toml"


def read_records_text(path: Path, root: Path) -> str | None:
    """The file's text, None when it (or sop/records/) does not exist; a symlink is refused."""
    try:
        return read_text_input(path, root=root, max_bytes=MAX_CONFIG_BYTES)
    except Missing:
        return None


def load_images(root: Path, sync: str) -> dict[str, ImageRecord]:
    """The image records of ``sync`` by architecture ({} when none were recorded)."""
    path = records_file(root, sync)
    text = read_records_text(path, root)
    if text is None:
        return {}
    data = loads_toml(text, where=str(path))
    images = data.get("images", {})
    if not isinstance(images, dict):
        raise ConfigError(str(path), "[images] must be a table")
    out = {}
    for arch, rec in images.items():
        if not isinstance(rec, dict):
            raise ConfigError(str(path), f"[images.{arch[:32]}] must be a table")
        out[arch] = _image_record(path, arch, rec)
    return out


def _image_record(path: Path, arch: str, rec: dict[str, Any]) -> ImageRecord:
    where = f"[images.{arch[:32]}]"
    digest, sha, blocked = rec.get("digest"), rec.get("sha"), rec.get("blocked")
    if blocked is not None:
        if digest is not None:
            raise ConfigError(str(path), f"{where} holds a digest or is blocked, not both")
        if (
            not isinstance(blocked, str)
            or not blocked.strip()
            or len(blocked) > MAX_BLOCKED
            or _UNPRINTABLE.search(blocked)
        ):
            raise ConfigError(
                str(path), f"{where} blocked must be one line of at most {MAX_BLOCKED} characters"
            )
        digest = ""
    elif not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        raise ConfigError(str(path), f"{where} digest must be sha256:<64 hex digits>")
    if not isinstance(sha, str) or not SHA.fullmatch(sha):
        raise ConfigError(str(path), f"{where} sha must be a full commit sha")
    ref, at, host = rec.get("ref", ""), rec.get("recorded_at", ""), rec.get("host", "")
    verified = rec.get("verified", "")
    if not isinstance(verified, str) or (
        verified and (not REGISTRY.fullmatch(verified) or blocked is not None)
    ):
        raise ConfigError(str(path), f"{where} verified must name a registry (host[:port]) of an image")
    return ImageRecord(
        arch,
        digest,
        sha,
        ref if isinstance(ref, str) and IMAGE_REF.fullmatch(ref) else "",
        at if isinstance(at, str) and len(at) < 40 else str(at)[:40],
        blocked=blocked.strip() if isinstance(blocked, str) else "",
        host=host if isinstance(host, str) and HOST.fullmatch(host) else "",
        verified=verified,
    )


def check_image(
    arch: str,
    digest: str,
    sha: str,
    head: str,
    ref: str | None,
    *,
    architectures: tuple[str, ...],
    existing: dict[str, ImageRecord],
    blocked: bool = False,
) -> None:
    """BadInput unless the record may be written: a known architecture, a well-formed digest and
    ref, the sync head itself, and (for every architecture but the first) the first already
    recorded at this same head. A blocked architecture has no image: no digest, no order."""
    if arch not in architectures:
        raise BadInput(f"--arch {arch[:40]!r}: expected one of {', '.join(architectures)} (sop/gates.toml)")
    if blocked:
        if sha != head:
            raise BadInput(
                f"--sha {sha[:12]} is not the sync head {head[:12]}: evidence is recorded for the head only"
            )
        return
    if not DIGEST.fullmatch(digest):
        raise BadInput(f"--digest {digest[:80]!r}: expected sha256: and 64 lowercase hex digits")
    if ref is not None and not IMAGE_REF.fullmatch(ref):
        raise BadInput(f"--ref {ref[:80]!r}: expected an image reference (registry/name:tag or @digest)")
    if sha != head:
        raise BadInput(
            f"--sha {sha[:12]} is not the sync head {head[:12]}: evidence is recorded for the head only"
        )
    first = architectures[0]
    if arch != first:
        done = existing.get(first)
        if done is None or done.sha != head or done.is_blocked:
            raise BadInput(
                f"{arch} is recorded only after {first} at the same head: "
                f"no {first} image is recorded at {head[:12]}",
                hint=f"record {first} first: vimesync sop record image --arch {first} --digest sha256:...",
            )


def recorded_digests(images: dict[str, ImageRecord], evidence_head: str) -> dict[str, str]:
    """The digests of the images recorded at the evidence head (``sop record image``), each with
    its architecture: what a run "ran in" is checked against (typed or measured)."""
    return {r.digest: r.arch for r in images.values() if r.sha == evidence_head and r.digest}


def check_recorded_image(images: dict[str, ImageRecord], evidence_head: str, image: str) -> str:
    """``image`` (a test record's ``--image``) when an image of that digest is recorded at the
    evidence head (``sop record image``); BadInput otherwise, saying how to record it: a suite
    "ran in" only an image the records name, not any digest typed."""
    here = recorded_digests(images, evidence_head)
    if not image or image in here:
        return image
    shown = ", ".join(f"{a} {d[:19]}…" for d, a in here.items()) or "none"
    raise BadInput(
        f"--image {image[:19]}…: no image of this digest is recorded at the evidence head"
        f" {evidence_head[:12]} (recorded there: {shown})",
        hint="record it first: vimesync sop record image --arch ARCH --digest sha256:..."
        " --ref REGISTRY/NAME:TAG --verify",
    )


def new_records_doc(doc: Any, sync: str) -> Any:
    """``doc`` with the file's opening comment when it is new (empty)."""
    import tomlkit

    if not doc.body:
        doc.add(tomlkit.comment(f"Evidence of sync {sync}, recorded with `vimesync sop record`."))
        doc.add(tomlkit.nl())
    return doc


def record_image(root: Path, sync: str, rec: ImageRecord) -> Path:
    """Write ``rec`` into the sync's records file, keeping everything else (comments included)."""
    import tomlkit

    from vimesync import tomledit

    path = records_file(root, sync)
    doc = new_records_doc(tomledit.load(path, root=root), sync)
    images = tomledit.standard_tables(doc, "images")
    table = images.get(rec.arch)
    if table is None:
        table = tomlkit.table()
        images[rec.arch] = table
    for key, value in (
        ("digest", rec.digest),
        ("blocked", rec.blocked),
        ("ref", rec.ref),
        ("host", rec.host),
        ("verified", rec.verified),
    ):
        if value:
            table[key] = value
        elif key in table:
            del table[key]
    table["sha"] = rec.sha
    table["recorded_at"] = rec.recorded_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    tomledit.write(path, doc, root=root, mkdirs=True, what="record")
    return path
