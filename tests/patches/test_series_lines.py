"""One line splitter wherever a file is numbered (issue 18, finding 5).

The series loader numbered lines with ``str.splitlines()`` (which also breaks at ``\\f``, ``\\v``,
``\\x1c-\\x1e``, U+0085, U+2028/9) and ``pin bump``'s rewriter with ``bytes.splitlines()``: a form
feed in a comment made ``--refresh --write`` report one patch dropped and comment out the next.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vimesync.check.bump import comment_out
from vimesync.patches.series import load_series

ODD = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r"]


def _series(tmp_path: Path, text: str, names: list[str]) -> Path:
    for name in names:
        (tmp_path / name).write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
    path = tmp_path / "series"
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("odd", ODD)
def test_the_line_pin_bump_comments_out_is_the_entry_the_loader_numbered(tmp_path: Path, odd: str) -> None:
    text = f"# a comment with a{odd}separator\n0001.patch\n# another{odd}\n0002.patch\n"
    path = _series(tmp_path, text, ["0001.patch", "0002.patch"])
    entries = {e.name: e.line for e in load_series(path).entries}
    assert entries == {"0001.patch": 2, "0002.patch": 4}
    out = comment_out(path.read_bytes(), {entries["0001.patch"]: "already applied"}).decode()
    assert "# 0001.patch  # dropped by vimesync pin bump: already applied\n" in out
    assert "\n0002.patch\n" in out  # the next entry is left alone
    assert out.count("\n") == text.count("\n")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["0001.patch", "# c", "", *(f"# {c}" for c in ODD), " 0002.patch -p1"]), max_size=12
    )
)
def test_every_entry_is_numbered_as_the_rewriter_numbers_it(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        names = [ln.split()[0] for ln in lines if ln.strip() and not ln.startswith("#")]
        if len(set(names)) != len(names):
            return  # a duplicate entry is refused, not numbered
        path = _series(Path(tmp), "\n".join(lines) + "\n", ["0001.patch", "0002.patch"])
        for entry in load_series(path).entries:
            out = comment_out(path.read_bytes(), {entry.line: "x"}).decode().split("\n")
            assert out[entry.line - 1].startswith(f"# {lines[entry.line - 1]}")
