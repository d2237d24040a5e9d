"""GIT binary patches: literal and delta, verified against the index line like git does."""

from __future__ import annotations

import base64
import dataclasses
import os
import random
import resource
import subprocess
import sys
import textwrap
import zlib

import pytest

from tests.builders.trees import compare_with_git, git_diff
from vimesync.errors import PatchError
from vimesync.git import blob_oid
from vimesync.patches.binary import MAX_RESULT, BinaryPatchError, apply_binary, apply_delta
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import BinaryHunk, FilePatch

RNG = random.Random(7)
BLOB = bytes(RNG.randrange(256) for _ in range(20_000)) + b"\0"
EDITED = BLOB[:5000] + b"\0patched\0" + BLOB[5100:]


def _binary_section(before: dict, after: dict) -> FilePatch:
    patch = parse_patch(git_diff(before, after), name="bin.patch")
    (fp,) = patch.files
    assert fp.binary is not None
    return fp


def test_blob_oid_is_git_hash_object() -> None:
    assert blob_oid(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert blob_oid(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_delta_patch_applies_exactly() -> None:
    fp = _binary_section({"b.bin": BLOB}, {"b.bin": EDITED})
    assert fp.binary is not None and fp.binary.method == "delta"
    assert apply_binary(BLOB, fp) == EDITED


def test_literal_patch_creates_file() -> None:
    fp = _binary_section({}, {"new.bin": BLOB[:300]})
    assert fp.binary is not None and fp.binary.method == "literal"
    assert apply_binary(None, fp) == BLOB[:300]


def test_wrong_preimage_is_refused() -> None:
    fp = _binary_section({"b.bin": BLOB}, {"b.bin": EDITED})
    with pytest.raises(BinaryPatchError, match="does not match the current contents"):
        apply_binary(BLOB[:-1] + b"\1", fp)


def test_abbreviated_index_is_refused() -> None:
    fp = _binary_section({"b.bin": BLOB}, {"b.bin": EDITED})
    short = dataclasses.replace(fp, old_oid=(fp.old_oid or "")[:7])
    with pytest.raises(BinaryPatchError, match="full index line"):
        apply_binary(BLOB, short)


def test_missing_data_is_refused_but_deletion_needs_none() -> None:
    old = blob_oid(BLOB)
    fp = FilePatch(old_path="b", new_path="b", old_oid=old, new_oid="1" * 40, binary_without_data=True)
    with pytest.raises(BinaryPatchError, match="missing binary patch data"):
        apply_binary(BLOB, fp)
    gone = FilePatch(old_path="b", new_path=None, old_oid=old, new_oid="0" * 40, binary_without_data=True)
    assert apply_binary(BLOB, gone) == b""


def test_result_is_verified_against_new_oid() -> None:
    fp = FilePatch(
        old_path=None,
        new_path="b",
        old_oid="0" * 40,
        new_oid=blob_oid(b"right"),
        binary=BinaryHunk("literal", 5, b"wrong"),
    )
    with pytest.raises(BinaryPatchError, match="incorrect result"):
        apply_binary(None, fp)


@pytest.mark.parametrize(
    "delta",
    [
        b"\x03",  # too short
        b"\x04\x04\x00\x00",  # opcode 0
        b"\x04\x04\x90\x09",  # copy beyond the source
        b"\x04\x04\x05abcde",  # insert more than announced
        b"\x05\x04\x04abcd",  # source size mismatch
        b"\x04\x05\x04abcd",  # result shorter than announced
        b"\x04\x04\x91",  # copy parameters cut short
    ],
)
def test_corrupt_delta_is_refused(delta: bytes) -> None:
    with pytest.raises(BinaryPatchError):
        apply_delta(b"wxyz", delta)


def test_delta_copy_and_insert_opcodes() -> None:
    # src "wxyz" -> "yzAB": copy off=2 len=2, insert "AB"
    assert apply_delta(b"wxyz", b"\x04\x04\x91\x02\x02\x02AB") == b"yzAB"


def test_huge_announced_result_is_refused_before_allocating() -> None:
    with pytest.raises(BinaryPatchError, match="too large"):
        apply_delta(b"wxyz", b"\x04\xff\xff\xff\xff\x0f\x01a")


def test_binary_patches_match_git_apply() -> None:
    before = {"b.bin": BLOB, "gone.bin": BLOB[:100], "m.bin": BLOB[100:400]}
    after = {"b.bin": EDITED, "new.bin": BLOB[:300], "m.bin": BLOB[100:400] + b"\0tail"}
    compare_with_git(before, [git_diff(before, after)])
    # Applied to the wrong preimage: both refuse.
    drifted = {**before, "b.bin": BLOB + b"x"}
    compare_with_git(drifted, [git_diff(before, after)])


@pytest.mark.parametrize("extra", [(), ("--full-index",)])
def test_binary_without_data_matches_git(extra: tuple[str, ...]) -> None:
    before = {"b.bin": BLOB, "gone.bin": b"\0" + BLOB[:100]}
    change = git_diff(before, {"b.bin": EDITED, "gone.bin": b"\0" + BLOB[:100]}, extra=extra)
    (r,) = compare_with_git(before, [change])
    assert not r.ok
    # Deleting needs no data, but git still wants the full preimage id.
    delete = git_diff(before, {"b.bin": BLOB}, extra=extra)
    (r,) = compare_with_git(before, [delete])
    assert r.ok == bool(extra)


# ---------------------------------------------------------------------------------------------
# hostile deltas: bounded work before anything is allocated


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value >> 7 else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _delta_patch(src: bytes, delta: bytes, path: str = "b.bin") -> bytes:
    """A ``GIT binary patch`` section carrying ``delta`` (zlib + base85, as git writes it)."""
    z = zlib.compress(delta, 9)
    lines = []
    for i in range(0, len(z), 52):
        chunk = z[i : i + 52]
        n = len(chunk)
        lines.append(chr(ord("A") + n - 1 if n <= 26 else ord("a") + n - 27).encode())
        lines[-1] += base64.b85encode(chunk + b"\0" * (-n % 4)) + b"\n"
    return (
        f"diff --git a/{path} b/{path}\n".encode()
        + f"index {blob_oid(src)}..{'1' * 40} 100644\n".encode()
        + b"GIT binary patch\n"
        + f"delta {len(delta)}\n".encode()
        + b"".join(lines)
        + b"\nliteral 0\nHcmV?d00001\n\n"
    )


def test_endless_size_varint_is_refused_while_parsing() -> None:
    # 2 MB of continuation bytes: the old decoder was quadratic in them (1 MB took 37 s).
    patch = _delta_patch(b"wxyz", b"\x04" + b"\xff" * (2 << 20) + b"\x01")
    assert len(patch) < 4000
    with pytest.raises(PatchError, match=r"evil\.patch:4: b\.bin: .*delta size longer than 10 bytes"):
        parse_patch(patch, name="evil.patch")


def test_delta_announcing_a_huge_result_is_refused_before_allocating() -> None:
    # 214 bytes of "copy 64 KiB" opcodes announcing 1 GiB: used to be built (and held twice).
    src = b"\0" * 0x10000
    delta = _varint(len(src)) + _varint(1 << 30) + b"\x80" * (1 << 14)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(PatchError, match=r"evil\.patch:4: b\.bin: .*1024 MiB, over the 64 MiB cap"):
        parse_patch(_delta_patch(src, delta), name="evil.patch")
    with pytest.raises(BinaryPatchError, match="over the 64 MiB cap"):
        apply_delta(src, delta)
    # sanity bound only (the peak of the whole test process): nothing near 1 GiB was touched
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 << 10


@pytest.mark.parametrize("ops", [b"\x80" * 3, b"\x80"])  # 192 KiB into 128 KiB; 64 KiB of 128 KiB
def test_opcodes_overrunning_or_underrunning_the_announced_size_are_refused(ops: bytes) -> None:
    src = b"s" * 0x10000
    with pytest.raises(BinaryPatchError, match="gone wild"):
        apply_delta(src, _varint(len(src)) + _varint(0x20000) + ops)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_large_delta_result_is_held_once() -> None:
    # 64 MiB built from 64 KiB copies, in a fresh interpreter so its peak RSS is this run's own.
    code = textwrap.dedent(
        """
        import resource, sys
        from vimesync.patches.binary import apply_delta
        src = bytes(range(256)) * 256
        size = 64 << 20
        head = bytearray()
        for value in (len(src), size):
            while True:
                head.append(value & 0x7F | (0x80 if value >> 7 else 0))
                value >>= 7
                if not value:
                    break
        out = apply_delta(src, bytes(head) + b"\\x80" * (size >> 16))
        assert type(out) is bytes and len(out) == size and out[-256:] == src[:256]
        with open("/proc/self/status") as f:  # VmHWM: ru_maxrss would inherit the parent's peak
            print(int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) >> 10)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert int(done.stdout) < 64 + 48  # MiB: one copy plus the interpreter, not two
    assert MAX_RESULT == 64 << 20


def test_binary_data_and_results_held_by_one_patch_are_capped() -> None:
    # Three 40-byte deltas, each announcing a 50 MiB result: the patch would hold 150 MiB.
    src = b"\0" * 0x10000
    delta = _varint(len(src)) + _varint(50 << 20) + b"\x80"
    sections = [_delta_patch(src, delta, f"f{i}.bin") for i in range(3)]
    assert len(parse_patch(b"".join(sections[:2]), name="two.patch").files) == 2
    with pytest.raises(PatchError, match=r"three\.patch:\d+: f2\.bin: .*over 128 MiB"):
        parse_patch(b"".join(sections), name="three.patch")


def test_binary_data_held_by_the_whole_series_is_capped(tmp_path) -> None:
    # Each patch holds 100 MiB of announced delta results (under its own 128 MiB cap); three of
    # them would hold 300 MiB, so the series is refused at the third's first hunk over the cap.
    from vimesync.check.run import MAX_STACK_BINARY, load_stack

    src = b"\0" * 0x10000
    delta = _varint(len(src)) + _varint(50 << 20) + b"\x80"
    for i in range(3):
        (tmp_path / f"p{i}.patch").write_bytes(
            b"".join(_delta_patch(src, delta, f"f{i}{j}.bin") for j in range(2))
        )
    (tmp_path / "series").write_text("p0.patch\np1.patch\n")
    assert len(load_stack(tmp_path / "series", strip=1)) == 2
    (tmp_path / "series").write_text("p0.patch\np1.patch\np2.patch\n")
    with pytest.raises(
        PatchError,
        match=rf"p2\.patch:\d+: f21\.bin: the series' binary data comes to over {MAX_STACK_BINARY >> 20} MiB",
    ):
        load_stack(tmp_path / "series", strip=1)
