"""``vimesync patches lint``: each code on a stack built to show it, the ruff-like text, the JSON,
exit codes, --strict against a real source, and hostile inputs (huge, CRLF, NUL and control
characters in headers, symlinked patch files, names escaping the folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from vimesync.lint import CODES, lint_series

HEADER = (
    "Description: make util say there\n"
    " A longer text.\n"
    "Origin: upstream, https://github.com/o/r/pull/5\n"
    "Forwarded: not-needed\n"
    "\n"
)


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add(
        "0001-a.patch",
        {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"},
        header=HEADER,
    )
    return s


def codes(series: Path, **kw: object) -> list[tuple[str, str, int]]:
    result = lint_series(series, **kw)  # type: ignore[arg-type]
    return [(f.code, Path(f.path).name, f.line) for f in result.findings]


def test_a_clean_stack_has_no_findings(stack: Stack) -> None:
    assert codes(stack.dir / "series") == []


def test_series_against_its_folder(stack: Stack) -> None:
    (stack.dir / "orphan.patch").write_text("x")
    (stack.dir / "notes.txt").write_text("not a patch")
    (stack.dir / "sub").mkdir()
    (stack.dir / "sub/deeper.diff").write_text("x")
    (stack.dir / "series").write_text(
        "0001-a.patch\nmissing.patch\n0001-a.patch\n../../escape.patch\n/etc/passwd\n0001-a.patch -R\n"
    )
    found = codes(stack.dir / "series")
    assert ("S002", "orphan.patch", 1) in found and ("S002", "deeper.diff", 1) in found
    assert ("S001", "series", 2) in found and ("S003", "series", 3) in found
    assert ("S004", "series", 4) in found and ("S004", "series", 5) in found
    assert ("S005", "series", 6) in found
    assert not any(c == "S002" and n == "notes.txt" for c, n, _ in found)


def test_a_symlinked_patch_is_refused_not_followed(stack: Stack, tmp_path: Path) -> None:
    secret = tmp_path / "secret.patch"
    secret.write_text("SECRET-CONTENT\n")
    os.symlink(secret, stack.dir / "link.patch")
    (stack.dir / "series").write_text("0001-a.patch\nlink.patch\n")
    result = lint_series(stack.dir / "series")
    s004 = [f for f in result.findings if f.code == "S004"]
    assert s004 and "symbolic link" in s004[0].message
    assert all("SECRET" not in f.message for f in result.findings)


def test_header_rules(stack: Stack) -> None:
    patch = stack.dir / "0001-a.patch"
    diff = patch.read_text().split("\n\n", 1)[1]
    cases = {
        "": "H001",
        "Origin: upstream, https://github.com/o/r/pull/5\n\n": "H002",
        "Description: x\nOrigin: from my laptop\n\n": "H003",
        "Description: x\nBug: see the chat\n\n": "H004",
        "Description: x\nForwarded: maybe later\n\n": "H005",
        "Description: x\nApplied-Upstream: when pigs fly\n\n": "H006",
        "Description: x\nOrigin: upstream\n\n": "H007",
        "Description: x\nApplied-Upstream: commit:0123456789abcdef\n\n": "H007",  # no engine repo known
        "Description: x\x1b[31m red\n\n": "H008",
        "Description: x\x00\n\n": "H008",
    }
    for header, code in cases.items():
        patch.write_text(header + diff)
        got = [c for c, _, _ in codes(stack.dir / "series")]
        assert got == [code], (header, got)
    # With the engine's repo, commit:<sha> becomes a link: no finding.
    patch.write_text("Description: x\nApplied-Upstream: commit:0123456789abcdef\n\n" + diff)
    assert codes(stack.dir / "series", repo="o/r") == []
    # Lines point at the field.
    patch.write_text("Description: x\nAuthor: me\nBug: nope\n\n" + diff)
    assert codes(stack.dir / "series") == [("H004", "0001-a.patch", 3)]
    patch.write_bytes(b"Description: caf\xe9\n\n" + diff.encode())
    assert [c for c, _, _ in codes(stack.dir / "series")] == ["H008"]


def test_whitespace_and_index_rules(stack: Stack) -> None:
    patch = stack.dir / "0001-a.patch"
    text = patch.read_text()
    patch.write_text(text.replace("+def there():\n", "+def there():  \n"))
    assert [c for c, _, _ in codes(stack.dir / "series")] == ["W003"]
    patch.write_text(text.rstrip("\n"))  # git apply calls that corrupt too
    assert {"W004", "P001"} & {c for c, _, _ in codes(stack.dir / "series")}
    patch.write_text("\n".join(ln for ln in text.split("\n") if not ln.startswith("index ")))
    assert [c for c, _, _ in codes(stack.dir / "series")] == ["I001"]
    patch.write_bytes(text.replace("\n", "\r\n").encode())
    found = [c for c, _, _ in codes(stack.dir / "series")]
    assert "W001" in found or "P001" in found


def test_w002_added_lines_with_another_line_ending(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    crlf = "a\r\nb\r\nc\r\n"
    s.repo.commit("crlf", {"eng/win.txt": crlf})
    s.pin = s.repo.head()
    s.add("0001-win.patch", {"eng/win.txt": "a\r\nb\r\nnew\nc\r\n"}, header=HEADER)
    found = codes(s.dir / "series")
    assert [c for c, _, _ in found] == ["W002"]


def test_trailing_whitespace_findings_are_capped(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    s.add("0001-ws.patch", {"eng/ws.py": "".join(f"x{i} = 1 \n" for i in range(100))}, header=HEADER)
    w003 = [f for f in lint_series(s.dir / "series").findings if f.code == "W003"]
    assert len(w003) == 21 and "and 80 more" in w003[-1].message


@pytest.mark.slow
def test_a_huge_header_is_bounded(stack: Stack) -> None:
    patch = stack.dir / "0001-a.patch"
    diff = patch.read_text().split("\n\n", 1)[1]
    patch.write_text("Description: x\n" + ("Bug: nope\n" * 200_000) + "\n" + diff)
    found = lint_series(stack.dir / "series").findings
    assert all(f.code == "H004" for f in found) and len(found) == 21  # capped per code
    assert "more like it" in found[-1].message


def test_strict_flags_offsets_with_a_source(capsys: pytest.CaptureFixture[str], stack: Stack) -> None:
    drifted = stack.drift({"eng/util.py": "# moved\n# down\n" + ENGINE["eng/util.py"]})
    args = [
        "patches",
        "lint",
        "--series",
        str(stack.dir / "series"),
        "--strict",
        "--source",
        str(stack.repo.path),
    ]
    code, out, err = run(capsys, *args, "--rev", drifted)
    assert code == 1, err
    assert "0001-a.patch:" in out and "O001 'eng/util.py' hunk #1 applies at offset +2" in out
    code, out, err = run(capsys, *args, "--rev", stack.pin)
    assert code == 0, err


def test_cli_text_json_and_exit_codes(capsys: pytest.CaptureFixture[str], stack: Stack) -> None:
    series = str(stack.dir / "series")
    code, out, _ = run(capsys, "patches", "lint", "--series", series)
    assert code == 0 and "All checks passed: 1 patch." in out
    (stack.dir / "0001-a.patch").write_text((stack.dir / "0001-a.patch").read_text().split("\n\n", 1)[1])
    (stack.dir / "[bold]evil\x1b[31m.patch").write_text("x")
    code, out, _ = run(capsys, "patches", "lint", "--series", series)
    assert code == 1
    lines = out.splitlines()
    h001 = "0001-a.patch:1: H001 no DEP-3 header (Description, Origin, ...): the report's Purpose / PR cell"
    assert any(h001 in ln for ln in lines)
    assert "\x1b" not in out and "[bold]evil" in out  # markup shown as text, escapes escaped
    code, out, _ = run(capsys, "patches", "lint", "--series", series, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and {f["code"] for f in doc["findings"]} == {"H001", "S002"}
    code, out, err = run(capsys, "patches", "lint", "--series", str(stack.dir / "nope"))
    assert code == 2 and "series file not found" in err


def test_every_code_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs/lint.md").read_text()
    for code in CODES:
        assert f"`{code}`" in doc, code


def test_a_series_symlinked_outside_and_symlinked_folders_are_not_followed(
    capsys: pytest.CaptureFixture[str], stack: Stack, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.patch").write_text("SECRET\n")
    os.symlink(outside, stack.dir / "linked")
    found = lint_series(stack.dir / "series").findings
    assert not any("secret" in f.path or "SECRET" in f.message for f in found)
    series = stack.dir / "series"
    series.unlink()
    series.symlink_to("/proc/self/environ")
    code, out, err = run(capsys, "patches", "lint", "--series", str(series))
    assert code == 2 and out == "" and "symbolic link" in err and "Traceback" not in err


def test_index_lines_missing_in_every_section_are_one_finding(tmp_path: Path) -> None:
    """I001 once per patch: a `diff -u` patch lacks index lines in every section (70 of the 84
    findings on a real stack were I001, one per file)."""
    s = Stack(tmp_path)
    s.add("0001.patch", {f"eng/m{i}.py": f"x = {i}\n" for i in range(4)})
    patch = s.dir / "0001.patch"
    patch.write_text("\n".join(ln for ln in patch.read_text().split("\n") if not ln.startswith("index ")))
    found = [(c, msg) for c, msg in ((f.code, f.message) for f in lint_series(s.dir / "series").findings)]
    index = [msg for c, msg in found if c == "I001"]
    assert len(index) == 1 and "and 3 more files" in index[0]


def test_a_new_blank_line_at_eof_is_flagged_as_git_apply_warns(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    s.add("0001.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\n"})
    assert "W005" in [c for c, _, _ in codes(s.dir / "series")]
    # git apply agrees: on the pinned file it warns about exactly this
    import subprocess

    pinned = tmp_path / "pinned"
    (pinned / "eng").mkdir(parents=True)
    (pinned / "eng/util.py").write_text(ENGINE["eng/util.py"])
    warn = subprocess.run(
        ["git", "apply", "--check", "--whitespace=error", "-p1", str(s.dir / "0001.patch")],
        cwd=pinned,
        capture_output=True,
        text=True,
    )
    assert "new blank line at EOF" in warn.stderr


def test_select_and_ignore_codes(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    patch = stack.dir / "0001-a.patch"
    text = patch.read_text()
    patch.write_text(
        "\n".join(ln for ln in text.split("\n") if not ln.startswith("index ")).replace(
            "+def there():\n", "+def there():  \n"
        )
    )
    series = str(stack.dir / "series")
    code, out, _ = run(capsys, "patches", "lint", "--series", series, "--json")
    assert {f["code"] for f in json.loads(out)["findings"]} == {"I001", "W003"}
    code, out, _ = run(capsys, "patches", "lint", "--series", series, "--json", "--ignore", "I001")
    assert {f["code"] for f in json.loads(out)["findings"]} == {"W003"}
    code, out, _ = run(capsys, "patches", "lint", "--series", series, "--json", "--select", "I")
    assert {f["code"] for f in json.loads(out)["findings"]} == {"I001"}
    code, out, _ = run(capsys, "patches", "lint", "--series", series, "--ignore", "W", "--ignore", "I")
    assert code == 0
    code, _, err = run(capsys, "patches", "lint", "--series", series, "--select", "X999")
    assert code == 2 and "--select 'X999': no such lint code" in err
