"""Promotions in ``sop/records/<sync>.toml``: a floating tag moved to an image of the sync head
by ``vimesync sop promote``, beside the image records (:mod:`vimesync.sop.records`)::

    [promotions."vllm/vime:latest"]
    digest = "sha256:…"                       # what the tag now names
    images = { amd64 = "sha256:…" }           # the architectures' images it was promoted with
    sha = "…"                                 # the evidence head
    promoted_at = "2026-11-30T21:00:00Z"
    verified = "ghcr.io"                      # optional: the registry read naming digest

A promotion says the tag *moved* only with ``verified``: ``sop promote --verify`` read the tag
in that registry naming the digest. Without it the move is recorded, not verified: the report
says the tag is "to be moved to" the digest. (Like every record, ``verified`` is the claim of
whoever commits it.) Repository content: every value re-checked when read; at most 32
promotions per sync."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vimesync.errors import ConfigError
from vimesync.sop.records import (
    DIGEST,
    IMAGE_REF,
    REGISTRY,
    SHA,
    ImageEvidence,
    Promotion,
    load_images,
    new_records_doc,
    read_records_text,
    records_file,
)

MAX_PROMOTIONS = 32
_ARCH_KEY = r"[a-z0-9_]{1,32}"


def load_promotions(root: Path, sync: str) -> dict[str, Promotion]:
    """The promotions of ``sync`` by reference ({} when none were recorded)."""
    path = records_file(root, sync)
    text = read_records_text(path, root)
    if text is None:
        return {}
    from vimesync.safefs import loads_toml

    table = loads_toml(text, where=str(path)).get("promotions", {})
    if not isinstance(table, dict) or len(table) > MAX_PROMOTIONS:
        raise ConfigError(str(path), f"[promotions] must be a table of at most {MAX_PROMOTIONS} references")
    out = {}
    for ref, rec in table.items():
        where = f"[promotions.{ref[:60]!r}]"
        if not IMAGE_REF.fullmatch(ref) or not isinstance(rec, dict):
            raise ConfigError(str(path), f"{where}: expected an image reference holding a table")
        digest, sha, images = rec.get("digest"), rec.get("sha"), rec.get("images", {})
        if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
            raise ConfigError(str(path), f"{where} digest must be sha256:<64 hex digits>")
        if not isinstance(sha, str) or not SHA.fullmatch(sha):
            raise ConfigError(str(path), f"{where} sha must be a full commit sha")
        if (
            not isinstance(images, dict)
            or len(images) > 8
            or not all(
                re.fullmatch(_ARCH_KEY, a) and isinstance(d, str) and DIGEST.fullmatch(d)
                for a, d in images.items()
            )
        ):
            raise ConfigError(str(path), f"{where} images must map architectures to sha256 digests")
        at, verified = rec.get("promoted_at", ""), rec.get("verified", "")
        if not isinstance(verified, str) or (verified and not REGISTRY.fullmatch(verified)):
            raise ConfigError(str(path), f"{where} verified must name a registry (host[:port])")
        out[ref] = Promotion(
            ref,
            digest,
            sha,
            tuple(images.items()),
            at if isinstance(at, str) and len(at) < 40 else "",
            verified=verified,
        )
    return out


def record_promotion(root: Path, sync: str, promotion: Promotion) -> Path:
    """Write ``promotion`` (replacing that reference's earlier one), keeping everything else."""
    import tomlkit

    from vimesync import tomledit

    load_images(root, sync)  # a malformed file is refused (naming it) before it is edited
    load_promotions(root, sync)
    path = records_file(root, sync)
    doc = new_records_doc(tomledit.load(path, root=root), sync)
    table = tomledit.standard_tables(doc, "promotions")
    if promotion.ref in table:
        del table[promotion.ref]
    rec = tomlkit.table()
    rec["digest"] = promotion.digest
    images = tomlkit.inline_table()
    images.update(dict(promotion.images))
    rec["images"] = images
    rec["sha"] = promotion.sha
    rec["promoted_at"] = promotion.promoted_at
    if promotion.verified:
        rec["verified"] = promotion.verified
    table[promotion.ref] = rec
    tomledit.write(path, doc, root=root, mkdirs=True, what="record")
    return path


def promotion_to_dict(p: Promotion) -> dict[str, Any]:
    return {
        "ref": p.ref,
        "digest": p.digest,
        "sha": p.sha,
        "images": dict(p.images),
        "promoted_at": p.promoted_at,
        "verified": p.verified or None,
    }


def image_evidence(
    root: Path, sync: str, head: str, architectures: tuple[str, ...], promote: tuple[str, ...] = ()
) -> ImageEvidence:
    found = load_images(root, sync)
    records = tuple(found[a] for a in architectures if a in found)
    promotions = tuple(load_promotions(root, sync).values())
    return ImageEvidence(sync, head, architectures, records, promote, promotions)
