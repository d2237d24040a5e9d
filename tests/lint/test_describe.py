"""``vimesync patches describe``: the header changes, the diff does not (real ``git apply --check``
and a byte-for-byte compare of the trees ``git apply`` makes), and hostile inputs are refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gitapply import git_apply
from tests.builders.stack import ENGINE, Stack
from vimesync.lint.describe import HeaderFields, describe
from vimesync.patches.diffparse import parse_patch
from vimesync.report.build import _purpose


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def _tree_after(tmp: Path, patch: Path, name: str) -> dict[str, bytes]:
    root = tmp / name
    for rel, text in ENGINE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    ok, err = git_apply(root, patch, 1)
    assert ok, err
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _describe(capsys: pytest.CaptureFixture[str], stack: Stack, *args: str) -> tuple[int, str, str]:
    return run(capsys, "patches", "describe", "--series", str(stack.dir / "series"), *args)


def test_a_headerless_patch_gets_a_header_and_applies_byte_identically(
    capsys: pytest.CaptureFixture[str], stack: Stack, tmp_path: Path
) -> None:
    patch = stack.dir / "0001-a.patch"
    before = patch.read_bytes()
    shutil.copy(patch, tmp_path / "before.patch")
    code, _, err = _describe(
        capsys,
        stack,
        "0001-a.patch",
        "--description",
        "Say there\nso callers know.\n\nMore.",
        "--origin",
        "o/r#12",
    )
    assert code == 0, err
    after = patch.read_bytes()
    assert after.endswith(before)  # the diff is kept byte for byte
    assert after[: len(after) - len(before)] == (
        b"Description: Say there\n so callers know.\n .\n More.\nOrigin: upstream, https://github.com/o/r/pull/12\n\n"
    )
    dep3 = parse_patch(after, name="x", strip=1).dep3
    assert dep3 is not None and _purpose(dep3) == "Say there"
    assert _tree_after(tmp_path, tmp_path / "before.patch", "t1") == _tree_after(tmp_path, patch, "t2")
    # idempotent
    code, _, err = _describe(
        capsys,
        stack,
        "0001-a.patch",
        "--description",
        "Say there\nso callers know.\n\nMore.",
        "--origin",
        "o/r#12",
    )
    assert code == 0 and "already up to date" in err and patch.read_bytes() == after


def test_an_existing_header_keeps_its_other_fields_and_text(stack: Stack) -> None:
    patch = stack.dir / "0001-a.patch"
    diff = patch.read_bytes()
    header = b"Author: Ann\nDescription: old\n old more\nOrigin: vendor\nBug: https://x/1\n"
    header += b"\nFree text stays.\n---\n"
    fields = HeaderFields("new one", refs=("https://github.com/o/r/pull/3",))
    new = describe(header + diff, name="p", strip=1, fields=fields)
    assert new == (
        b"Author: Ann\nDescription: new one\nOrigin: upstream, https://github.com/o/r/pull/3\nBug: https://x/1\n"
        b"\nFree text stays.\n---\n" + diff
    )
    assert describe(header + diff, name="p", strip=1, fields=HeaderFields("d")) == (
        b"Author: Ann\nDescription: d\nOrigin: vendor\nBug: https://x/1\n\nFree text stays.\n---\n" + diff
    )


def test_crlf_patches_get_crlf_header_lines(tmp_path: Path) -> None:
    """A patch whose every line ends in CRLF (one made against CRLF files) parses, its lines
    keeping their CR, and its new header is written in CRLF too; the diff stays as it was."""
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    data = (s.dir / "0001-a.patch").read_bytes().replace(b"\n", b"\r\n")
    (hunk,) = parse_patch(data, name="p", strip=1).files[0].hunks
    assert hunk.lines[-1] == ("+", b"    return 2\r\n")
    assert all(line.endswith(b"\r\n") for _, line in hunk.lines)
    new = describe(data, name="p", strip=1, fields=HeaderFields("d"))
    assert new == b"Description: d\r\n\r\n" + data
    described = parse_patch(new, name="p", strip=1)
    assert described.dep3 is not None and _purpose(described.dep3) == "d"
    assert [h.lines for h in described.files[0].hunks] == [hunk.lines]
    # git apply makes the same tree of the two, on the engine's files in CRLF
    (tmp_path / "before.patch").write_bytes(data)
    (tmp_path / "after.patch").write_bytes(new)
    trees = []
    for name in ("before", "after"):
        root = tmp_path / f"crlf-{name}"
        for rel, text in ENGINE.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(text.encode().replace(b"\n", b"\r\n"))
        ok, err = git_apply(root, tmp_path / f"{name}.patch", 1)
        assert ok, err
        trees.append((root / "eng/util.py").read_bytes())
    assert trees[0] == trees[1] and trees[0].endswith(b"def there():\r\n    return 2\r\n")


def test_a_description_line_that_looks_like_a_diff_stays_in_the_header(stack: Stack, tmp_path: Path) -> None:
    patch = stack.dir / "0001-a.patch"
    text = "d\ndiff --git a/eng/x.py b/eng/x.py\n--- a/eng/x.py\n+++ b/eng/x.py\n@@ -1 +1 @@"
    new = describe(patch.read_bytes(), name="p", strip=1, fields=HeaderFields(text))
    patch.write_bytes(new)
    _tree_after(tmp_path, patch, "t")  # git apply still applies exactly the one file
    assert len(parse_patch(new, name="p", strip=1).files) == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--description", "a\x00b"], "control characters"),
        (["--description", "a\x1b[31mb"], "control characters"),
        (["--description", "a\u202eb"], "control characters"),
        (["--description", "x" * 5000], "more than 4096"),
        (["--description", "  "], "empty"),
        (["--description", "d", "--origin", "javascript:alert(1)"], "expected one URL"),
        (["--description", "d", "--origin", "o/r#1 o/r#2"], "expected one URL"),
        (["--description", "d", "--origin", "o/r#1\n"], "expected one URL"),
        (["--description", "d", "--origin", "commit:0123456789ab"], "needs the engine pin's repo"),
        (["--description", "d", "--origin", "see the chat"], "expected one URL"),
    ],
)
def test_hostile_values_are_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], stack: Stack, args: list[str], needle: str
) -> None:
    patch = stack.dir / "0001-a.patch"
    before = patch.read_bytes()
    code, out, err = _describe(capsys, stack, "0001-a.patch", *args)
    assert code == 2 and needle in err and "Traceback" not in err, err
    assert "\x1b" not in err and patch.read_bytes() == before


def test_mails_symlinks_and_names_outside_the_series_are_refused(
    capsys: pytest.CaptureFixture[str], stack: Stack, tmp_path: Path
) -> None:
    patch = stack.dir / "0001-a.patch"
    diff = patch.read_bytes()
    patch.write_bytes(
        b"From 0123456789abcdef Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] x\n\n---\n" + diff
    )
    code, _, err = _describe(capsys, stack, "0001-a.patch", "--description", "d")
    assert code == 2 and "format-patch mail" in err
    patch.write_bytes(diff)

    code, _, err = _describe(capsys, stack, "../engine/eng/util.py", "--description", "d")
    assert code == 2 and "no patch" in err

    outside = tmp_path / "outside.patch"
    outside.write_bytes(diff)
    patch.unlink()
    patch.symlink_to(outside)
    code, _, err = _describe(capsys, stack, "0001-a.patch", "--description", "d")
    assert code == 2 and "symbolic link" in err
    assert outside.read_bytes() == diff


def test_json_output(capsys: pytest.CaptureFixture[str], stack: Stack) -> None:
    code, out, _ = _describe(capsys, stack, "0001-a.patch", "--description", "d", "--json")
    assert code == 0 and json.loads(out)["changed"] is True


def test_dep3_origin_category_and_forwarded_bug_applied_upstream(
    capsys: pytest.CaptureFixture[str], stack: Stack, tmp_path: Path
) -> None:
    """Issue 17, item 16: a correct DEP-3 Origin category by flag (a patch written downstream is
    ``vendor``, not ``upstream``), and Forwarded, Bug and Applied-Upstream; the diff unchanged."""
    patch = stack.dir / "0001-a.patch"
    tree_before = _tree_after(tmp_path / "before", patch, "0001-a.patch")
    code, out, err = _describe(
        capsys, stack, "0001-a.patch", "--description", "Say there",
        "--origin", "aoshen02/vllm#45", "--origin-kind", "vendor",
        "--forwarded", "vllm-project/vllm#53199", "--bug", "https://github.com/o/r/issues/7",
        "--applied-upstream", "commit:" + "a" * 40,
    )  # fmt: skip
    assert code == 0, err
    header = patch.read_bytes().split(b"diff --git", 1)[0].decode()
    assert header.splitlines()[:5] == [
        "Description: Say there",
        "Origin: vendor, https://github.com/aoshen02/vllm/pull/45",
        "Bug: https://github.com/o/r/issues/7",
        "Forwarded: https://github.com/vllm-project/vllm/pull/53199",
        "Applied-Upstream: commit:" + "a" * 40,
    ]
    dep3 = parse_patch(patch.read_bytes(), name="0001-a.patch", strip=1).dep3
    assert dep3 is not None and dep3.get("forwarded") and dep3.get("applied-upstream") == "commit:" + "a" * 40
    assert _tree_after(tmp_path / "after", patch, "0001-a.patch") == tree_before
    code, _, err = _describe(capsys, stack, "0001-a.patch", "--description", "x", "--forwarded", "not-needed")
    assert code == 0 and "Forwarded: not-needed" in patch.read_text()
    code, _, err = _describe(capsys, stack, "0001-a.patch", "--description", "x", "--origin-kind", "mine")
    assert code == 2 and "--origin-kind 'mine': expected one of upstream, backport, vendor, other" in err
    code, _, err = _describe(capsys, stack, "0001-a.patch", "--description", "x", "--forwarded", "a b")
    assert code == 2 and "--forwarded" in err
