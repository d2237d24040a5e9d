"""``GIT binary patch`` application, exactly as git's ``apply_binary`` does it.

git insists on a full ``index <old>..<new>`` line for binary patches: it checks that the
current content hashes to ``<old>`` (or that the file is empty for a creation), applies the
literal or delta data, and checks that the result hashes to ``<new>``. We do the same, so a
binary patch either applies exactly or is refused with a clear reason, never skipped.
"""

from __future__ import annotations

import hashlib

from vimesync.patches.model import FilePatch

NULL_OID = "0" * 40
MAX_RESULT = 1 << 30  # a delta announcing a bigger result is refused before allocating
_DELTA_SIZE_MIN = 4
_HEX = frozenset("0123456789abcdef")


class BinaryPatchError(ValueError):
    """A binary patch that cannot be applied; the message says why (git's wording where any)."""


def blob_oid(data: bytes) -> str:
    """The git blob id (sha1) of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _full_oid(oid: str | None) -> bool:
    return oid is not None and len(oid) == 40 and set(oid) <= _HEX


def apply_binary(original: bytes | None, fp: FilePatch, *, creating: bool | None = None) -> bytes:
    """The new content of ``fp``'s file (``b""`` for a deletion); raise BinaryPatchError.

    ``creating`` (default: ``fp.is_new``) makes git's check "the preimage is empty" instead of
    "the preimage hashes to the old oid".
    """
    if not (_full_oid(fp.old_oid) and _full_oid(fp.new_oid)):
        raise BinaryPatchError("cannot apply binary patch without full index line")
    current = original or b""
    if creating is None:
        creating = fp.is_new
    if not creating:
        oid = blob_oid(current)
        if oid != fp.old_oid:
            raise BinaryPatchError(
                f"the patch applies to ({fp.old_oid}), which does not match the current contents ({oid})"
            )
    elif current:
        raise BinaryPatchError("the patch applies to an empty file but it is not empty")
    if fp.new_oid == NULL_OID:
        return b""  # deletion: git needs no data for it
    hunk = fp.binary
    if hunk is None:
        raise BinaryPatchError("missing binary patch data")
    if hunk.method == "literal":
        if len(hunk.data) != hunk.size:
            raise BinaryPatchError(f"corrupt binary patch: {len(hunk.data)} bytes, {hunk.size} announced")
        result = hunk.data
    elif hunk.method == "delta":
        result = apply_delta(current, hunk.data)
    else:
        raise BinaryPatchError(f"unknown binary patch method {hunk.method!r}")
    oid = blob_oid(result)
    if oid != fp.new_oid:
        raise BinaryPatchError(f"binary patch creates incorrect result (expecting {fp.new_oid}, got {oid})")
    return result


def _varint(delta: bytes, i: int) -> tuple[int, int]:
    # git's get_delta_hdr_size: little-endian 7-bit groups, stops at the end of the data.
    size = shift = 0
    while i < len(delta):
        byte = delta[i]
        i += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return size, i


def apply_delta(src: bytes, delta: bytes, *, max_size: int = MAX_RESULT) -> bytes:
    """git's ``patch_delta``: replay copy/insert opcodes against ``src``; raise on any defect."""
    if len(delta) < _DELTA_SIZE_MIN:
        raise BinaryPatchError("binary patch does not apply: delta too short")
    src_size, i = _varint(delta, 0)
    if src_size != len(src):
        raise BinaryPatchError(
            f"binary patch does not apply: delta expects {src_size} bytes, file has {len(src)}"
        )
    size, i = _varint(delta, i)
    if size > max_size:
        raise BinaryPatchError(f"binary patch result too large ({size} bytes)")
    out = bytearray()
    top = len(delta)
    while i < top:
        cmd = delta[i]
        i += 1
        if cmd & 0x80:
            off = length = 0
            for bit, shift, is_off in (
                (0x01, 0, True),
                (0x02, 8, True),
                (0x04, 16, True),
                (0x08, 24, True),
                (0x10, 0, False),
                (0x20, 8, False),
                (0x40, 16, False),
            ):
                if cmd & bit:
                    if i >= top:
                        raise BinaryPatchError("binary patch does not apply: delta replay has gone wild")
                    if is_off:
                        off |= delta[i] << shift
                    else:
                        length |= delta[i] << shift
                    i += 1
            if length == 0:
                length = 0x10000
            if off + length > len(src) or length > size - len(out):
                raise BinaryPatchError("binary patch does not apply: delta replay has gone wild")
            out += src[off : off + length]
        elif cmd:
            if cmd > size - len(out) or cmd > top - i:
                raise BinaryPatchError("binary patch does not apply: delta replay has gone wild")
            out += delta[i : i + cmd]
            i += cmd
        else:
            raise BinaryPatchError("binary patch does not apply: unexpected delta opcode 0")
    if len(out) != size:
        raise BinaryPatchError("binary patch does not apply: delta replay has gone wild")
    return bytes(out)
