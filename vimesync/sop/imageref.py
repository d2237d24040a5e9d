"""An image reference as a registry reads it, ``[host[:port]/]path[:tag][@sha256:...]``, and
which tags *float* (move from image to image): ``latest`` (also what a reference without tag or
digest means) and any tag ``sop/gates.toml [images] floating`` names. A floating tag is moved
only by ``vimesync sop promote``; ``sop record image`` records immutable references.

The first component is the registry host when it holds a ``.`` or a ``:`` or is ``localhost``
(the Docker reference grammar); otherwise the image lives on Docker Hub."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from vimesync.errors import BadInput

DEFAULT_REGISTRY = "registry-1.docker.io"
FLOATING = "latest"
# The distribution spec's grammar, bounded: path components, a tag, a sha256 digest.
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9-]{1,63})*(?::[0-9]{1,5})?"
)
TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
MAX_REF = 255


@dataclass(frozen=True)
class ImageRef:
    registry: str  # host[:port]; DEFAULT_REGISTRY for Docker Hub
    repository: str  # the path inside the registry (library/x for a Hub name without a slash)
    tag: str  # "" with a digest only
    digest: str = ""
    text: str = ""  # as given

    def is_floating(self, floating: Iterable[str] = ()) -> bool:
        """A tag that moves: ``latest`` or one of ``floating``; a digest pins nothing else."""
        return bool(self.tag) and (self.tag == FLOATING or self.tag in set(floating))


def parse_ref(text: str, what: str = "--ref") -> ImageRef:
    """``text`` as an image reference (BadInput naming ``what`` when it is none)."""
    bad = BadInput(f"{what} {text[:80]!r}: expected an image reference (registry/name:tag or @sha256:...)")
    if not text or len(text) > MAX_REF or text != text.strip():
        raise bad
    rest, _, digest = text.partition("@")
    if digest and not _DIGEST.fullmatch(digest):
        raise bad
    first, slash, after = rest.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, after
        if not _HOST.fullmatch(registry):
            raise bad
    else:
        registry, path = DEFAULT_REGISTRY, rest
    name, colon, tag = path.rpartition(":") if ":" in path else (path, "", "")
    if colon and not TAG.fullmatch(tag):
        raise bad
    parts = name.split("/")
    if not name or not all(_COMPONENT.fullmatch(p) for p in parts):
        raise bad
    if registry == DEFAULT_REGISTRY and len(parts) == 1:
        name = f"library/{name}"
    return ImageRef(registry, name, tag or ("" if digest else FLOATING), digest, text)
