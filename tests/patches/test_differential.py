"""The central guarantee: the builtin applier gives the tree ``git apply -pN`` gives, patch by
patch — same verdict, same bytes, same modes — on generated files and edits (CRLF, missing final
newlines, duplicate lines that make the position search ambiguous), diffs made by real
``git diff``, and targets that drifted so hunks land at offsets or fail."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders.trees import compare_with_git, git_diff
from vimesync.demo.build import data_dir
from vimesync.patches.series import load_series, read_patch

pytestmark = pytest.mark.slow  # differential: generated stacks against git apply

# A small alphabet so lines repeat and hunks have several candidate positions.
WORDS = ["a", "b", "c", "x = 1", "", "}", "  pass", "a ", "b\t"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_demo_stack_matches_git() -> None:
    """The shipped example stack against the shipped engine source, patch by patch."""
    engine = data_dir() / "engine"
    start = {p.relative_to(engine).as_posix(): p.read_bytes() for p in engine.rglob("*") if p.is_file()}
    series = load_series(data_dir() / "patches" / "series")
    strips = {e.strip for e in series.entries}
    assert len(strips) == 1
    results = compare_with_git(start, [read_patch(e) for e in series.entries], strip=strips.pop())
    assert all(r.ok for r in results) and sum(r.hunks for r in results) > 0


@st.composite
def text_files(draw: st.DrawFn, min_size: int = 0) -> bytes:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=min_size, max_size=60))
    style = draw(st.sampled_from(["lf", "lf", "crlf", "mixed"]))
    ends = ["\r\n" if style == "crlf" or (style == "mixed" and draw(st.booleans())) else "\n" for _ in words]
    text = "".join(w + e for w, e in zip(words, ends, strict=True))
    if words and draw(st.integers(0, 3)) == 0:
        text = text[: -len(ends[-1])]  # no newline at end of file
    return text.encode()


@st.composite
def edited(draw: st.DrawFn, data: bytes, *, max_ops: int = 6) -> bytes:
    """Random line edits (replace, insert, delete) and sometimes a changed final newline."""
    lines = data.splitlines(keepends=True)
    for _ in range(draw(st.integers(0, max_ops))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        at = draw(st.integers(0, len(lines)))
        word = draw(st.sampled_from(WORDS)) + draw(st.sampled_from(["\n", "\n", "\r\n"]))
        if op == "insert":
            lines.insert(at, word.encode())
        elif lines and at < len(lines):
            if op == "delete":
                del lines[at]
            else:
                lines[at] = word.encode()
    out = b"".join(lines)
    if out and draw(st.integers(0, 5)) == 0:
        out = out.rstrip(b"\r\n") if out.endswith(b"\n") else out + b"\n"
    return out


@st.composite
def drifted(draw: st.DrawFn, data: bytes) -> bytes:
    """The target moved on since the patch was made: lines inserted (hunks land at an offset,
    maybe on a duplicate) and sometimes one deleted (hunks may fail)."""
    lines = data.splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 4))):
        word = draw(st.sampled_from(WORDS)) + "\n"
        lines.insert(draw(st.integers(0, len(lines))), word.encode())
    if lines and draw(st.integers(0, 3)) == 0:
        del lines[draw(st.integers(0, len(lines) - 1))]
    if draw(st.integers(0, 4)) == 0:  # a big block: hunks move farther than the line-by-line search
        block = [
            w.encode() + b"\n" for w in draw(st.lists(st.sampled_from(WORDS), min_size=70, max_size=150))
        ]
        at = draw(st.integers(0, len(lines)))
        lines[at:at] = block
    return b"".join(lines)


@SETTINGS
@given(data=st.data())
def test_single_file_with_drift_matches_git(data: st.DataObject) -> None:
    base = data.draw(text_files(min_size=data.draw(st.sampled_from([0, 20]))), label="base")
    target = data.draw(edited(base), label="target")
    context = data.draw(st.sampled_from([3, 3, 2, 1, 0]), label="context")
    patch = git_diff({"f.txt": base}, {"f.txt": target}, extra=(f"-U{context}",))
    target_now = data.draw(st.one_of(drifted(base), edited(base, max_ops=4)), label="drifted")
    compare_with_git({"f.txt": target_now}, [patch])


def _spec(tree: dict[str, tuple[bytes, bool]]) -> dict:
    return {n: ("x", c) if exe else c for n, (c, exe) in tree.items()}


@SETTINGS
@given(data=st.data())
def test_stacks_of_multi_file_patches_match_git(data: st.DataObject) -> None:
    names = ["f.txt", "d/g.txt", "d/e/h.txt"]
    base = {n: (data.draw(text_files(), label=n), False) for n in names}
    trees = [base]
    patches = []
    for _ in range(data.draw(st.integers(1, 3), label="patches")):
        prev = trees[-1]
        nxt = {n: (data.draw(edited(c), label=f"edit {n}"), exe) for n, (c, exe) in prev.items()}
        for n in list(nxt):
            action = data.draw(st.sampled_from(["keep"] * 6 + ["delete", "rename", "exec", "copy"]))
            if action == "delete":
                del nxt[n]
            elif action == "rename":
                nxt[n.replace(".txt", ".moved")] = nxt.pop(n)
            elif action == "copy":
                nxt[n + ".copy"] = prev[n]
            elif action == "exec":
                nxt[n] = (nxt[n][0], not nxt[n][1])
        if data.draw(st.booleans()):
            nxt["new/" + str(len(trees)) + ".txt"] = (data.draw(text_files()), False)
        patches.append(git_diff(_spec(prev), _spec(nxt)))
        trees.append(nxt)
    moved = data.draw(st.sampled_from([None, *names]), label="drifted file")
    start = {n: data.draw(drifted(c)) if n == moved else c for n, (c, _) in base.items()}
    compare_with_git(start, patches)


@st.composite
def hand_written_patch(draw: st.DrawFn, data: bytes) -> bytes:
    """A unified diff written by hand (or by a hostile PR): hunks cut from anywhere in the file,
    header positions that may lie, hunks out of order, overlapping or without context."""
    lines = data.splitlines(keepends=True)
    out = [b"--- a/f.txt\n", b"+++ b/f.txt\n"]
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lines)))
        old = lines[start : start + draw(st.integers(0, 6))]
        body: list[tuple[bytes, bytes]] = []
        for line in old:
            tag = draw(st.sampled_from([b" ", b" ", b"-"]))
            body.append((tag, line))
            if draw(st.integers(0, 4)) == 0:
                body.append((b"+", draw(st.sampled_from(WORDS)).encode() + b"\n"))
        if not any(t != b" " for t, _ in body):
            body.insert(draw(st.integers(0, len(body))), (b"+", b"added\n"))
        n_old = sum(1 for t, _ in body if t != b"+")
        n_new = sum(1 for t, _ in body if t != b"-")
        lie = draw(st.sampled_from([0, 0, 0, 1, -1, 5, -5]))
        old_pos = max(0, start + 1 + lie) if n_old else max(0, start + lie)
        new_pos = max(0, old_pos + draw(st.sampled_from([0, 0, 2, -2])))
        out.append(b"@@ -%d,%d +%d,%d @@\n" % (old_pos, n_old, new_pos, n_new))
        for i, (tag, line) in enumerate(body):
            if line.endswith(b"\n"):
                out.append(tag + line)
            else:  # the file's last line has no newline: only legal as the last old line
                out.append(tag + line + b"\n\\ No newline at end of file\n")
                if tag != b"-" or any(t != b"+" for t, _ in body[i + 1 :]):
                    return b""
    return b"".join(out)


@SETTINGS
@given(data=st.data())
def test_hand_written_hunks_match_git(data: st.DataObject) -> None:
    base = data.draw(text_files(min_size=5), label="base")
    patch = data.draw(hand_written_patch(base), label="patch")
    present = data.draw(st.sampled_from([True, True, True, False]), label="file present")
    compare_with_git({"f.txt": base} if present else {}, [patch])
