"""``GIT binary patch`` application, exactly as git's ``apply_binary`` does it.

git insists on a full ``index <old>..<new>`` line for binary patches: it checks that the
current content hashes to ``<old>`` (or that the file is empty for a creation), applies the
literal or delta data, and checks that the result hashes to ``<new>``. We do the same, so a
binary patch either applies exactly or is refused with a clear reason, never skipped.
"""

from __future__ import annotations

import io

from vimesync.git import NULL_SHA, blob_oid
from vimesync.patches.model import FilePatch

# A delta announcing a bigger result is refused before anything is allocated. A literal is at most
# as large (diffbinary.MAX_BINARY_BYTES); engine patch stacks carry no binary file near this.
MAX_RESULT = 64 << 20
MAX_VARINT_BYTES = 10  # a 64-bit size in 7-bit groups
_DELTA_SIZE_MIN = 4
_HEX = frozenset("0123456789abcdef")


class BinaryPatchError(ValueError):
    """A binary patch that cannot be applied; the message says why (git's wording where any)."""


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
    if fp.new_oid == NULL_SHA:
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


def read_varint(delta: bytes, i: int) -> tuple[int, int]:
    """git's ``get_delta_hdr_size`` at ``delta[i]``: little-endian 7-bit groups; (value, next index).

    At most ``MAX_VARINT_BYTES`` bytes are read (a 64-bit size never needs more), so a hostile run
    of continuation bytes costs nothing; a longer one is refused.
    """
    size = shift = 0
    end = min(len(delta), i + MAX_VARINT_BYTES)
    while i < end:
        byte = delta[i]
        i += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return size, i
    if i < len(delta):
        raise BinaryPatchError(f"corrupt binary patch: delta size longer than {MAX_VARINT_BYTES} bytes")
    return size, i  # git stops at the end of the data too


def delta_sizes(delta: bytes, *, max_size: int = MAX_RESULT) -> tuple[int, int, int]:
    """The (source size, result size, index of the first opcode) a delta announces; raise
    BinaryPatchError for a delta too short, a size varint too long or a result over ``max_size``."""
    if len(delta) < _DELTA_SIZE_MIN:
        raise BinaryPatchError("binary patch does not apply: delta too short")
    src_size, i = read_varint(delta, 0)
    size, i = read_varint(delta, i)
    if size > max_size:
        raise BinaryPatchError(
            f"binary patch result too large: the delta announces {_mib(size)}, over the {_mib(max_size)} cap"
        )
    return src_size, size, i


def _mib(n: int) -> str:
    return f"{n} bytes" if n < 1 << 20 else f"{n / (1 << 20):.0f} MiB"


def apply_delta(src: bytes, delta: bytes, *, max_size: int = MAX_RESULT) -> bytes:
    """git's ``patch_delta``: replay copy/insert opcodes against ``src``; raise on any defect.

    The result is built in one buffer of the announced size, allocated only after that size is
    checked against ``max_size``; every opcode is checked against the room left before it copies.
    """
    src_size, size, i = delta_sizes(delta, max_size=max_size)
    if src_size != len(src):
        raise BinaryPatchError(
            f"binary patch does not apply: delta expects {_mib(src_size)}, file has {_mib(len(src))}"
        )
    # One buffer of exactly ``size`` bytes that getvalue() hands back as bytes without a copy
    # (a bytearray would need bytes(out): the result held twice).
    out = io.BytesIO()
    if size:
        out.seek(size - 1)
        out.write(b"\0")
    view = out.getbuffer()
    source = memoryview(src)
    data = memoryview(delta)
    at = 0
    top = len(delta)
    wild = "binary patch does not apply: delta replay has gone wild"
    while i < top:
        cmd = delta[i]
        i += 1
        if cmd & 0x80:
            off = length = 0
            for bit, shift, is_off in _COPY_FIELDS:
                if cmd & bit:
                    if i >= top:
                        raise BinaryPatchError(wild)
                    if is_off:
                        off |= delta[i] << shift
                    else:
                        length |= delta[i] << shift
                    i += 1
            if length == 0:
                length = 0x10000
            if off + length > len(src) or length > size - at:
                raise BinaryPatchError(wild)
            view[at : at + length] = source[off : off + length]
            at += length
        elif cmd:
            if cmd > size - at or cmd > top - i:
                raise BinaryPatchError(wild)
            view[at : at + cmd] = data[i : i + cmd]
            at += cmd
            i += cmd
        else:
            raise BinaryPatchError("binary patch does not apply: unexpected delta opcode 0")
    view.release()
    source.release()
    data.release()
    if at != size:
        raise BinaryPatchError(wild)
    return out.getvalue()


_COPY_FIELDS = (
    (0x01, 0, True),
    (0x02, 8, True),
    (0x04, 16, True),
    (0x08, 24, True),
    (0x10, 0, False),
    (0x20, 8, False),
    (0x40, 16, False),
)
