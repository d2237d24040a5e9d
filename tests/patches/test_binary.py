"""GIT binary patches: literal and delta, verified against the index line like git does."""

from __future__ import annotations

import dataclasses
import random

import pytest

from tests.patches.treehelp import compare_with_git, git_diff
from vimesync.patches.binary import BinaryPatchError, apply_binary, apply_delta, blob_oid
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
