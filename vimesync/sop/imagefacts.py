"""The container image a job ran in, as ``sop record run -- CMD`` measures it: what the container
or the job's setup declares, read by vimesync (a measured fact, kept in the run's ``measured``
table), never what someone typed (``--image``). Two sources, the first that declares one wins:

- ``VIMESYNC_IMAGE`` in the job's environment: an image reference with a digest,
  ``REGISTRY/NAME[:TAG]@sha256:...``, that the job's setup sets from what it pulled (a
  Kubernetes pod spec's ``env``, a Buildkite step's ``env`` or its docker plugin's
  ``environment``). A value that is not such a reference is not recorded (a note says so).
- podman's ``/run/.containerenv`` inside the container: its ``image="..."`` line (the reference
  the container was created from: its digest when it was run by digest) and its ``imageid="..."``
  line (the image's id, the sha256 of its config; not a registry digest). The file is read
  bounded (:data:`MAX_CONTAINERENV`), as a regular file only and never through a symlink; one
  that cannot be read so, is not UTF-8, or whose values are not a reference and an id is not
  recorded (a fixed note, nothing of its content echoed).

Docker's ``/.dockerenv`` is empty: a Docker container declares no image. The root the file is
looked for under is :data:`ROOT` (a test points it elsewhere)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vimesync.errors import BadInput, VimesyncError

IMAGE_ENV = "VIMESYNC_IMAGE"
CONTAINERENV = "run/.containerenv"
MAX_CONTAINERENV = 64 * 1024
ROOT = Path("/")
_IMAGE_ID = re.compile(r"(?:sha256:)?([0-9a-f]{64})")
_LINE = re.compile(r"(?P<key>image|imageid)=(?P<value>.*)")


@dataclass(frozen=True)
class ImageFacts:
    """The image a job ran in, as declared to it."""

    ref: str = ""  # the reference as declared, checked (REGISTRY/NAME[:TAG][@sha256:...])
    digest: str = ""  # sha256:<64 hex> of the reference: the manifest digest a registry serves
    id: str = ""  # sha256:<64 hex>: podman's image id (of its config), when it declares one
    source: str = ""  # where it was declared: IMAGE_ENV or "/" + CONTAINERENV


def image_facts(
    declared: str | None, *, root: Path | None = None
) -> tuple[ImageFacts | None, tuple[str, ...]]:
    """The image the job runs in (None: nothing declares one) and notes on what declared one that
    could not be used (fixed phrases). ``declared``: :data:`IMAGE_ENV`'s value in the job's
    environment (None: unset)."""
    notes: list[str] = []
    if declared is not None:
        facts = _from_env(declared)
        if facts is not None:
            return facts, ()
        notes.append(
            f"{IMAGE_ENV} is not an image reference with a digest (REGISTRY/NAME@sha256:...): not recorded"
        )
    facts, note = _from_containerenv(ROOT if root is None else root)
    if note:
        notes.append(note)
    return facts, tuple(notes)


def _from_env(value: str) -> ImageFacts | None:
    from vimesync.sop.imageref import parse_ref

    try:
        ref = parse_ref(value, IMAGE_ENV)
    except BadInput:
        return None
    if not ref.digest:  # a tag names no image for sure: not a measured digest
        return None
    return ImageFacts(ref=ref.text, digest=ref.digest, source=IMAGE_ENV)


def _from_containerenv(root: Path) -> tuple[ImageFacts | None, str]:
    """podman's declaration, or None and why not ("" when there is no such file)."""
    from vimesync.safefs import Missing, read_input
    from vimesync.sop.imageref import parse_ref

    where = "/" + CONTAINERENV
    try:
        data = read_input(root / CONTAINERENV, max_bytes=MAX_CONTAINERENV, root=root, what="container file")
    except Missing:
        return None, ""
    except VimesyncError:
        return None, f"{where}: not read (a symlink, not a regular file, or over 64 KiB); no image recorded"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"{where}: not UTF-8; no image recorded"
    values: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.fullmatch(line.strip())
        if m is not None:  # its value checked below, quoted or not
            value = m["value"]
            quoted = len(value) >= 2 and value[0] == value[-1] == '"'
            values.setdefault(m["key"], value[1:-1] if quoted else value)
    ref_text, id_text = values.get("image", ""), values.get("imageid", "")
    if not ref_text and not id_text:
        return None, ""  # a container that declares no image
    ref = digest = image_id = ""
    if ref_text:
        try:
            parsed = parse_ref(ref_text, "image")
        except BadInput:
            return None, f"{where}: its image is not an image reference; no image recorded"
        ref, digest = parsed.text, parsed.digest
    if id_text:
        m = _IMAGE_ID.fullmatch(id_text)
        if m is None:
            return None, f"{where}: its imageid is not a sha256; no image recorded"
        image_id = f"sha256:{m[1]}"
    return ImageFacts(ref=ref, digest=digest, id=image_id, source=where), ""


def image_phrase(ref: str, digest: str, image_id: str) -> str:
    """``registry/x:1@sha256:abcd1234`` (the reference, its digest cut to 8 hex digits), or with an
    id only ``registry/x:1 (image id sha256:abcd1234)``; plain (the caller escapes it)."""
    name = ref.partition("@")[0]
    if digest:
        return f"{name}@{digest[:15]}"
    shown = f"image id {image_id[:15]}" if image_id else ""
    if name and shown:
        return f"{name} ({shown})"
    return name or shown
