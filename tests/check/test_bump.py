"""``pin bump``: per-patch verdicts at two pins checked against real ``git apply --check``,
``git apply -R --check`` and ``git merge-file``; ``--refresh`` re-makes the stack so that it
applies with no offsets; ``--write`` edits the pin keeping its comments; all or nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from vimesync import git
from vimesync.check.bump import BumpOptions, plan_writes, run_bump, verdict
from vimesync.check.pinwrite import edit_toml, write_together
from vimesync.check.run import run_check
from vimesync.errors import VimesyncError

CORE = ENGINE["eng/core.py"]
UTIL = ENGINE["eng/util.py"]
HEADER = "Description: keep me\nOrigin: vendor, https://example.com/x\n---\n"


def _line(core: str, old: str, new: str) -> str:
    assert old in core
    return core.replace(old, new)


@pytest.fixture()
def bump(tmp_path: Path) -> tuple[Stack, str]:
    """Five patches on the pin, and a new upstream commit that moves, takes, nears and clashes."""
    s = Stack(tmp_path)
    moved = _line(CORE, "return x + 3\n", "return x + 3  # A\n")
    s.add("a-moves.patch", {"eng/core.py": moved}, header=HEADER)
    s.add("b-taken.patch", {"eng/util.py": UTIL + "\n\ndef there():\n    return 2\n"})
    near = _line(moved, "return x + 20\n", "return x + 20  # C\n")
    s.add("c-merges.patch", {"eng/core.py": near}, header=HEADER)
    clash = _line(near, "return x + 25\n", "return x + 25  # D\n")
    s.add("d-clashes.patch", {"eng/core.py": clash})
    s.add("e-kept.patch", {"README.md": "engine\npatched\n"})
    upstream = "# new upstream header\n" * 5 + CORE
    # C's context changes two lines above its own line: git merges it, git apply refuses it
    upstream = _line(upstream, "return x + 19\n\n", "return x + 19\n# upstream\n")
    upstream = _line(upstream, "return x + 25\n", "return x + 25  # upstream\n")  # D's line too
    new = s.drift({"eng/core.py": upstream, "eng/util.py": UTIL + "\n\ndef there():\n    return 2\n"})
    return s, new


def _git_verdicts(s: Stack, rev: str, tmp: Path) -> dict[str, tuple[bool, bool]]:
    """Per patch, alone on the tree at ``rev``: (git apply --check, git apply -R --check)."""
    tree = tmp / f"tree-{rev[:8]}"
    git.run(s.repo.path, ["worktree", "add", "-q", "--detach", str(tree), rev])
    env = {"GIT_CEILING_DIRECTORIES": str(tmp), "XDG_CONFIG_HOME": os.devnull}
    (tree / ".git").unlink()
    out = {}
    for name in s.names:
        patch = str(s.dir / name)
        fwd = git.run_status(tree, ["apply", "--check", patch], env=env)[0] == 0
        rev_ok = git.run_status(tree, ["apply", "-R", "--check", patch], env=env)[0] == 0
        out[name] = (fwd, rev_ok)
    return out


@pytest.mark.slow
def test_verdicts_match_git_at_both_pins(bump: tuple[Stack, str], tmp_path: Path) -> None:
    s, new = bump
    report = run_bump(BumpOptions(s.opts(), s.repo.path, new))
    words = {p.name: (verdict(p.old), verdict(p.new)) for p in report.patches}
    assert words["a-moves.patch"] == ("applies", "offsets ±5")
    assert words["b-taken.patch"] == ("applies", "already applied")
    assert words["c-merges.patch"][1] == "conflicts: eng/core.py #1"
    assert words["d-clashes.patch"][1] == "conflicts: eng/core.py #1"
    assert words["e-kept.patch"] == ("applies", "applies")
    git_new = _git_verdicts(s, new, tmp_path)
    for p in report.patches:
        fwd, back = git_new[p.name]
        assert (p.new.status in ("applied", "offsets")) == fwd, p.name
        assert (p.new.status == "already-applied") == (back and not fwd), p.name
    assert not report.ok and [p.name for p in report.conflicts] == ["c-merges.patch", "d-clashes.patch"]


@pytest.mark.slow
def test_refresh_makes_a_stack_that_applies_with_no_offsets(bump: tuple[Stack, str], tmp_path: Path) -> None:
    s, new = bump
    before = {n: (s.dir / n).read_bytes() for n in s.names}
    report = run_bump(BumpOptions(s.opts(), s.repo.path, new, refresh=True))
    actions = {p.name: p.refresh.action for p in report.patches if p.refresh}
    assert actions == {
        "a-moves.patch": "rewrite",
        "b-taken.patch": "drop",
        "c-merges.patch": "rewrite",
        "d-clashes.patch": "conflict",
        "e-kept.patch": "keep",
    }
    plan = plan_writes(report, refresh=True)
    (conflict,) = plan.conflicts
    assert conflict[:2] == ("d-clashes.patch", "eng/core.py") and b"<<<<<<<" in conflict[2]
    write_together(plan.files)
    for name in ("a-moves.patch", "c-merges.patch"):  # the header, byte for byte
        assert (s.dir / name).read_bytes().startswith(HEADER.encode())
        assert (s.dir / name).read_bytes() != before[name]
    assert (s.dir / "d-clashes.patch").read_bytes() == before["d-clashes.patch"]
    assert (s.dir / "e-kept.patch").read_bytes() == before["e-kept.patch"]
    series = (s.dir / "series").read_text()
    assert "# b-taken.patch  # dropped by vimesync pin bump: already applied in" in series
    after = run_check(s.opts(rev=new, keep_going=True))
    status = {p.name: p.status for p in after.patches}
    assert status == {
        "a-moves.patch": "applied",
        "c-merges.patch": "applied",
        "d-clashes.patch": "failed",
        "e-kept.patch": "applied",
    }
    # the merged file is what git merge-file makes of base (pin), ours (new) and theirs (pin + patches)
    scratch = tmp_path / "m"
    scratch.mkdir()
    show = {
        k: git.run(s.repo.path, ["show", f"{r}:eng/core.py"]) for k, r in (("base", s.pin), ("ours", new))
    }
    theirs = _line(
        _line(CORE, "return x + 3\n", "return x + 3  # A\n"), "return x + 20\n", "return x + 20  # C\n"
    )
    for k, data in {**show, "theirs": theirs.encode()}.items():
        (scratch / k).write_bytes(data)
    want = git.run(scratch, ["merge-file", "-p", "ours", "base", "theirs"])
    export = tmp_path / "export"
    run_check(s.opts(rev=new, keep_going=True, export=export))
    assert (export / "eng/core.py").read_bytes() == want


def test_write_keeps_the_pin_files_comments(tmp_path: Path) -> None:
    pin = tmp_path / "engine.toml"
    pin.write_text(
        '# the engine we patch\n[engine]\nname = "eng"  # shown in reports\nrev = "aaaa"\nstrip = 1\n'
    )
    new = edit_toml(pin, "engine", {"rev": "b" * 40})
    assert new.decode() == (
        f'# the engine we patch\n[engine]\nname = "eng"  # shown in reports\nrev = "{"b" * 40}"\nstrip = 1\n'
    )


def test_nothing_is_written_when_one_target_is_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a.patch", tmp_path / "b.patch"
    a.write_bytes(b"old a")
    (tmp_path / "elsewhere").write_bytes(b"not ours")
    b.symlink_to(tmp_path / "elsewhere")  # a pull request may commit a symlink where a patch was
    with pytest.raises(VimesyncError):
        write_together({a: b"new a", b: b"new b"})
    assert a.read_bytes() == b"old a" and (tmp_path / "elsewhere").read_bytes() == b"not ours"


@pytest.mark.slow
def test_cli_bump_writes_pin_and_stack_together(
    capsys: pytest.CaptureFixture[str], bump: tuple[Stack, str]
) -> None:
    s, new = bump
    pin = s.dir / "engine.toml"
    pin.write_text(
        f'# pinned by hand\n[engine]\nname = "eng"\nrev = "{s.pin}"  # the release\nseries = "series"\n'
    )
    cfg = s.dir / "vimesync.toml"
    cfg.write_text(f'[engine]\npin = "engine.toml"\nsource = "{s.repo.path}"\n')
    conflicts = s.dir.parent / "conflicts"
    args = ["pin", "bump", "--config", str(cfg), "--to", new]
    code, out, _ = run(capsys, *args, "--json")
    assert code == 1 and json.loads(out)["patches"][1]["new"]["status"] == "already-applied"
    assert f'rev = "{s.pin}"' in pin.read_text()  # nothing written without --write/--refresh
    code, out, _ = run(capsys, *args, "--write", "--refresh", "--conflicts", str(conflicts))
    assert code == 1 and "CONFLICT" in out and "d-clashes.patch" in out
    assert (
        pin.read_text()
        == f'# pinned by hand\n[engine]\nname = "eng"\nrev = "{new}"  # the release\nseries = "series"\n'
    )
    assert (conflicts / "d-clashes.patch/eng/core.py").read_bytes().count(b"<<<<<<<") == 1
    code, out, _ = run(capsys, "patches", "check", "--config", str(cfg), "--keep-going", "--json")
    doc = json.loads(out)
    assert [p["status"] for p in doc["patches"]] == ["applied", "applied", "failed", "applied"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--to", "no-such-rev"], "unknown revision"),
        ([], "needs --to"),
        (["--to", "HEAD", "--conflicts", "x"], "--conflicts DIR goes with --refresh"),
    ],
)
def test_cli_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], bump: tuple[Stack, str], extra: list[str], needle: str
) -> None:
    s, _ = bump
    args = ["pin", "bump", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series")]
    code, _, err = run(capsys, *args, *extra)
    assert code == 2 and needle in err and "Traceback" not in err


def test_cli_refuses_a_non_empty_conflicts_dir_before_any_work(
    capsys: pytest.CaptureFixture[str], bump: tuple[Stack, str]
) -> None:
    s, new = bump
    busy = s.dir.parent / "busy"
    busy.mkdir()
    (busy / "x").write_text("mine")
    args = ["pin", "bump", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series")]
    code, _, err = run(capsys, *args, "--to", new, "--refresh", "--conflicts", str(busy))
    assert code == 2 and "not an empty directory" in err
    assert (busy / "x").read_text() == "mine"


def test_comment_out_keeps_line_endings_and_flattens_the_reason() -> None:
    from vimesync.check.bump import comment_out

    series = b"a.patch\r\nb.patch -p2\r\n# note\r\nc.patch"
    out = comment_out(series, {2: "already applied in\nx\x1b[31m", 4: "gone"})
    lines = out.split(b"\r\n")
    assert lines[0] == b"a.patch" and lines[2] == b"# note"
    assert lines[1] == b"# b.patch -p2  # dropped by vimesync pin bump: already applied in x?[31m"
    assert lines[3] == b"# c.patch  # dropped by vimesync pin bump: gone\n"
    with pytest.raises(VimesyncError):
        comment_out(series, {9: "x"})


def _wheel(path: Path, files: dict[str, str]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.mark.slow
def test_cli_bump_between_wheels_writes_the_source_where_it_was_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = _wheel(tmp_path / "eng-1.0-py3-none-any.whl", {"eng/core.py": CORE, "eng/util.py": UTIL})
    new = _wheel(
        tmp_path / "eng-1.1-py3-none-any.whl", {"eng/core.py": "# 1.1\n" + CORE, "eng/util.py": UTIL}
    )
    repo = tmp_path / "down"
    (repo / "pins").mkdir(parents=True)
    (repo / "patches").mkdir()
    diff = (
        "--- a/eng/core.py\n+++ b/eng/core.py\n@@ -13,3 +13,3 @@\n"
        " def f3(x):\n-    return x + 3\n+    return x + 3  # p\n \n"
    )
    (repo / "patches/p.patch").write_text("Description: p\n---\n" + diff)
    (repo / "patches/series").write_text("p.patch\n")
    pin = repo / "pins/eng.toml"
    pin.write_text('[engine]\nname = "eng"\nseries = "../patches/series"\n')
    cfg = repo / "vimesync.toml"
    cfg.write_text(f'[engine]\npin = "pins/eng.toml"\nsource = "{old}"  # machine-local\n')
    code, out, err = run(
        capsys, "pin", "bump", "--config", str(cfg), "--to", str(new), "--write", "--refresh"
    )
    assert code == 0, err
    assert "offsets ±1" in out and "rewritten: hunks moved" in out
    assert pin.read_text() == '[engine]\nname = "eng"\nseries = "../patches/series"\n'  # no rev to write
    assert 'source = "../eng-1.1-py3-none-any.whl"  # machine-local' in cfg.read_text()
    assert "@@ -14,3 +14,3 @@" in (repo / "patches/p.patch").read_text()  # its one line of context kept


def test_cli_bump_output_cannot_be_broken_by_a_source_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The table's column headers name the two pins: rich markup and control characters in a
    source's name are shown, never obeyed."""
    odd = "1.0[link=https:evil.example][bold]\x1b[2J\u202e"
    old = _wheel(tmp_path / f"eng-{odd}-py3-none-any.whl", {"eng/core.py": CORE, "eng/util.py": UTIL})
    new = _wheel(
        tmp_path / "eng-[red]1.1-py3-none-any.whl", {"eng/core.py": "# 1.1\n" + CORE, "eng/util.py": UTIL}
    )
    repo = tmp_path / "down"
    (repo / "patches").mkdir(parents=True)
    diff = (
        "--- a/eng/core.py\n+++ b/eng/core.py\n@@ -13,3 +13,3 @@\n"
        " def f3(x):\n-    return x + 3\n+    return x + 3  # p\n \n"
    )
    (repo / "patches/p.patch").write_text("Description: p\n---\n" + diff)
    (repo / "patches/series").write_text("p.patch\n")
    args = ["pin", "bump", "--source", str(old), "--series", str(repo / "patches/series"), "--to", str(new)]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "\x1b" not in out + err and "\u202e" not in out + err
    assert "[red]1.1" in out and "[link=https:evil.example][bold]" in out


def test_cli_bump_junit_has_a_case_per_patch_and_a_conflict_fails(
    capsys: pytest.CaptureFixture[str], bump: tuple[Stack, str], tmp_path: Path
) -> None:
    import xml.etree.ElementTree as ET

    s, new = bump
    (s.dir / "engine-junit.toml").write_text(f'[engine]\nname = "eng"\nrev = "{s.pin}"\nseries = "series"\n')
    cfg = s.dir / "vimesync-junit.toml"
    cfg.write_text(f'[engine]\npin = "engine-junit.toml"\nsource = "{s.repo.path}"\n')
    junit = tmp_path / "bump.xml"
    code, out, _ = run(
        capsys, "pin", "bump", "--config", str(cfg), "--to", new, "--json", "--junit", str(junit)
    )
    doc = json.loads(out)
    assert code == 1 and doc["kind"] == "pin-bump" and doc["ok"] is False and doc["exit_code"] == 1
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert len([n for n in cases if n.endswith(".patch")]) == len(doc["patches"])
    assert cases["d-clashes.patch"].find("failure") is not None


def _resolve(merged: bytes, edit: tuple[bytes, bytes]) -> bytes:
    """What a maintainer does with a --diff3 conflict: keep the new pin's side, redo the patch's edit."""
    out, side = [], "outside"
    for line in merged.splitlines(keepends=True):
        if line.startswith(b"<<<<<<< "):
            side = "ours"
        elif line.startswith(b"||||||| "):
            side = "base"
        elif line == b"=======\n":
            side = "theirs"
        elif line.startswith(b">>>>>>> "):
            side = "outside"
        elif side in ("outside", "ours"):
            out.append(line.replace(*edit))
    return b"".join(out)


@pytest.mark.slow
def test_the_refresh_loop_finishes_a_conflicting_bump(
    capsys: pytest.CaptureFixture[str], bump: tuple[Stack, str]
) -> None:
    """Issue 17.3: bump --refresh leaves the merged file (diff3) in the work folder; the
    maintainer resolves it; `patches refresh NAME` re-makes the patch; the bump then goes through."""
    s, new = bump
    (s.dir / "engine.toml").write_text(f'[engine]\nname = "eng"\nrev = "{s.pin}"\nseries = "series"\n')
    cfg = s.dir / "vimesync.toml"
    cfg.write_text(f'[engine]\npin = "engine.toml"\nsource = "{s.repo.path}"\n')
    header = (s.dir / "d-clashes.patch").read_bytes().split(b"diff --git")[0]
    args = ["pin", "bump", "--config", str(cfg), "--to", new, "--refresh"]
    code, out, _ = run(capsys, *args)
    work = s.dir / ".vimesync/bump"  # the default work folder, at the checkout's root
    merged = (work / "d-clashes.patch/eng/core.py").read_bytes()
    assert code == 1 and "patches refresh d-clashes.patch" in out
    assert merged.count(b"||||||| ") == 1  # the base section: what the patch changed
    code, _, err = run(capsys, "patches", "refresh", "d-clashes.patch", "--config", str(cfg))
    assert code == 2 and "still has a conflict marker" in err  # nothing half-resolved goes in
    fixed = _resolve(merged, (b"return x + 25  # upstream\n", b"return x + 25  # upstream  # D\n"))
    (work / "d-clashes.patch/eng/core.py").write_bytes(fixed)
    code, out, err = run(capsys, "patches", "refresh", "d-clashes.patch", "--config", str(cfg), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["kind"] == "patches-refresh" and doc["verdict"] == "applies", err
    assert (s.dir / "d-clashes.patch").read_bytes().startswith(header)  # the header, byte for byte
    assert not (work / "d-clashes.patch").exists()
    code, out, err = run(capsys, *args, "--write")
    assert code == 0, out + err
    assert f'rev = "{new}"' in (s.dir / "engine.toml").read_text()
    code, out, _ = run(capsys, "patches", "check", "--config", str(cfg), "--json")
    assert code == 0 and {p["status"] for p in json.loads(out)["patches"]} == {"applied"}


def test_a_file_gone_at_the_new_pin_says_where_it_moved(tmp_path: Path) -> None:
    s = Stack(tmp_path)
    s.add("u.patch", {"eng/util.py": UTIL.replace("getcwd()", "getcwd()  # mine")})
    new = s.drift({"eng/util.py": None, "eng/helpers.py": UTIL + "\n# moved\n"})
    report = run_bump(BumpOptions(s.opts(), s.repo.path, new, refresh=True))
    (p,) = report.patches
    assert p.refresh is not None and p.refresh.action == "conflict"
    assert p.refresh.moved == (("eng/util.py", "eng/helpers.py"),)
    assert f"eng/util.py is gone at {new[:12]}: moved to eng/helpers.py" in p.refresh.why
