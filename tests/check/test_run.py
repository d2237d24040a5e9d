"""``run_check`` end to end on real sources: git (work tree and bare mirror), directory, wheel."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.builders.cli import run_cli
from tests.builders.gitrepo import Repo
from tests.builders.stack import ENGINE, Stack
from tests.builders.trees import git_diff
from vimesync import git
from vimesync.check.model import check_to_dict
from vimesync.check.run import changed_files, export_tree, run_check, source_provider
from vimesync.errors import BadInput, GitError, PatchError
from vimesync.patches.tree import MODE_FILE, MODE_LINK
from vimesync.report.validationmd import render_validation
from vimesync.sources import open_source
from vimesync.sources.directory import DirectorySource


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    core = ENGINE["eng/core.py"]
    s.add(
        "0001-feature.patch",
        {
            "eng/core.py": core.replace("return x + 3\n", "return x + 3  # patched\n"),
            "eng/new.py": "NEW = 1\n",
        },
        header="Description: add a feature\nOrigin: https://github.com/o/r/pull/5\n---\n",
    )
    s.add("0002-util.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def test_stack_applies_and_every_file_parses(stack: Stack) -> None:
    report = run_check(stack.opts())
    assert report.ok
    assert report.source.kind == "git" and report.source.rev == stack.pin
    assert [p.name for p in report.patches] == ["0001-feature.patch", "0002-util.patch"]
    assert report.patches[0].files == 2 and report.patches[0].hunks == 2
    assert report.patches[0].dep3 is not None and report.patches[0].dep3.description == "add a feature"
    assert report.python is not None
    assert report.python.files == 4  # __init__, core, util, and new.py created by the stack
    assert report.python.version == "3.10"


def test_pin_is_read_from_objects_not_the_work_tree(stack: Stack) -> None:
    # The work tree is at the stack's tip (the patches are already "applied" there): checking
    # the pin must ignore it, and must not touch it.
    before = git.run(stack.repo.path, ["status", "--porcelain"])
    head = stack.repo.head()
    assert run_check(stack.opts()).ok
    assert git.run(stack.repo.path, ["status", "--porcelain"]) == before
    assert stack.repo.head() == head


def test_bare_mirror_and_short_rev(stack: Stack, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror.git"
    git.run(tmp_path, ["clone", "-q", "--mirror", str(stack.repo.path), str(mirror)])
    report = run_check(stack.opts(source=mirror, rev=stack.pin[:8]))
    assert report.ok and report.source.rev == stack.pin


def test_failing_hunk_is_named_and_later_patches_skipped(stack: Stack) -> None:
    drifted = stack.drift({"eng/core.py": ENGINE["eng/core.py"].replace("return x + 3\n", "return x + 33\n")})
    report = run_check(stack.opts(rev=drifted))
    assert not report.ok
    first, second = report.patches
    assert not first.ok and not first.skipped
    (failure,) = first.failures
    assert failure.file == "eng/core.py" and failure.hunk == 1 and failure.header.startswith("@@ ")
    assert (failure.expected, failure.found) == ("    return x + 3\n", "    return x + 33\n")
    assert second.skipped and report.python is None


def test_keep_going_applies_the_rest_and_parses(stack: Stack) -> None:
    drifted = stack.drift({"eng/core.py": ENGINE["eng/core.py"].replace("return x + 3\n", "return x + 33\n")})
    report = run_check(stack.opts(rev=drifted, keep_going=True))
    assert not report.ok
    assert [p.ok for p in report.patches] == [False, True]
    assert report.python is not None and report.python.ok


def test_syntax_error_in_patched_file_fails_the_check(stack: Stack) -> None:
    stack.add("0003-broken.patch", {"eng/util.py": "def broken(:\n    pass\n"})
    report = run_check(stack.opts())
    assert report.patches_ok and not report.ok
    assert report.python is not None
    (bad,) = report.python.failed
    assert bad.path == "eng/util.py" and bad.line == 1


def test_conflict_markers_in_touched_files(stack: Stack) -> None:
    stack.add("0003-markers.patch", {"eng/notes.txt": "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"})
    stack.add("0004-markers-py.patch", {"eng/m.py": "x = 1\n<<<<<<< HEAD\n"})
    report = run_check(stack.opts())
    assert report.python is not None
    assert {(c.path, c.line) for c in report.python.conflict_markers} >= {("eng/m.py", 2)}
    assert not report.ok


def test_export_writes_the_whole_patched_tree(stack: Stack, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_check(stack.opts(export=out)).ok
    assert (out / "eng/new.py").read_text() == "NEW = 1\n"
    assert "# patched" in (out / "eng/core.py").read_text()
    assert (out / "README.md").read_text() == "engine\n"


def test_export_refuses_a_non_empty_folder(stack: Stack, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("mine")
    with pytest.raises(BadInput, match="not an empty directory"):
        run_check(stack.opts(export=out))
    assert (out / "keep").read_text() == "mine"


def test_directory_and_wheel_sources(stack: Stack, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for name, text in ENGINE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    report = run_check(stack.opts(source=tree, rev=None))
    assert report.ok and report.source.kind == "directory"
    assert (tree / "eng/new.py").exists() is False  # the source is never modified

    wheel = tmp_path / "eng-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in ENGINE.items():
            if name.startswith("eng/"):
                z.writestr(name, text)
    # A wheel holds the package only: patches made against the repo root apply with the same -p1.
    report = run_check(stack.opts(source=wheel, rev=None))
    assert report.ok and report.source.kind == "archive"


@pytest.mark.parametrize(
    ("mutate", "error", "needle"),
    [
        (lambda s: (s.dir / "series").write_text("missing.patch\n"), BadInput, "missing.patch"),
        (
            lambda s: (s.dir / "0002-util.patch").write_text("this is not a patch\n"),
            PatchError,
            "0002-util.patch",
        ),
        (
            lambda s: (s.dir / "0002-util.patch").write_text(
                "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n"
            ),
            PatchError,
            "0002-util.patch",
        ),
    ],
)
def test_bad_stacks_are_bad_input(stack: Stack, mutate, error: type[Exception], needle: str) -> None:  # type: ignore[no-untyped-def]
    mutate(stack)
    with pytest.raises(error) as exc:
        run_check(stack.opts())
    assert needle in str(exc.value)


def test_unknown_rev_is_bad_input(stack: Stack) -> None:
    with pytest.raises(GitError, match="unknown revision"):
        run_check(stack.opts(rev="no-such-branch"))


# ---------------------------------------------------------------------------------------------
# hostile stacks and sources: nothing outside the scratch tree is read, nothing outside --export
# written (end to end through the CLI, as CI runs it)

SECRET = b"<<<<<<< SECRET-hunter2\nTOKEN = (\n"  # a marker and a syntax error: any read shows


def _outside(tmp_path: Path) -> tuple[Path, dict[str, tuple[int, int, bytes]]]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_bytes(SECRET)
    os.utime(outside / "secret.py", ns=(1_000_000_000, 1_000_000_000))
    return outside, _state(outside)


def _state(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[str(p)] = (st.st_mtime_ns, st.st_mode, p.read_bytes() if p.is_file() else b"")
    return out


def _check_cli(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "vimesync", "patches", "check", "--json", "--no-cache", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=False)


def _series(folder: Path, patches: list[bytes]) -> Path:
    folder.mkdir()
    names = []
    for i, data in enumerate(patches):
        names.append(f"{i:04d}.patch")
        (folder / names[-1]).write_bytes(data)
    (folder / "series").write_text("".join(n + "\n" for n in names))
    return folder / "series"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["git", "directory"])
def test_a_file_below_a_folder_turned_symlink_is_gone(stack: Stack, tmp_path: Path, kind: str) -> None:
    """Issue 7 item 4: patch 1 creates L/secret.py, patch 2 deletes it and makes L a symlink to a
    folder outside holding a secret.py. In git's tree L/secret.py does not exist: it is neither
    parsed nor exported, and nothing outside is read, written or chmodded."""
    outside, before = _outside(tmp_path)
    target = os.fsencode(outside)
    one = git_diff({}, {"L/secret.py": b"x = 1\n"})
    two = git_diff({"L/secret.py": b"x = 1\n"}, {"L": ("l", target)})
    series = _series(tmp_path / "p", [one, two])
    out = tmp_path / "out"
    source: Path = stack.repo.path
    if kind == "directory":
        source = tmp_path / "tree"
        for name, text in ENGINE.items():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_text(text)
    rev = ["--rev", stack.pin] if kind == "git" else []
    run = _check_cli("--source", source, *rev, "--series", series, "--export", out)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["ok"] is True and b"hunter2" not in run.stdout + run.stderr
    assert os.readlink(out / "L") == os.fsdecode(target) and (out / "eng/core.py").is_file()
    assert _state(outside) == before


@pytest.mark.slow
def test_a_symlink_replacing_a_folder_that_keeps_files_fails(stack: Stack, tmp_path: Path) -> None:
    """git refuses to put a symlink where a folder still holds a file the patch keeps: the check
    fails (exit 1), and --export never writes that file through the symlink."""
    outside, before = _outside(tmp_path)
    util = ENGINE["eng/util.py"].encode()
    series = _series(tmp_path / "p", [git_diff({"eng/util.py": util}, {"eng": ("l", os.fsencode(outside))})])
    run = _check_cli(
        "--source", stack.repo.path, "--rev", stack.pin, "--series", series, "--export", tmp_path / "o"
    )
    assert run.returncode == 1, run.stderr
    assert b"hunter2" not in run.stdout + run.stderr and _state(outside) == before


@pytest.mark.slow
def test_a_git_tree_with_a_file_and_a_folder_of_one_name_is_refused(tmp_path: Path) -> None:
    """A tree holding a symlink ``L`` and a tree ``L`` (a duplicate entry name, which git itself
    never writes) would have --export write ``L/x.py`` through the link: refused, naming it."""
    outside, before = _outside(tmp_path)
    repo = Repo(tmp_path / "engine")
    repo.commit("base", {"a.py": "a = 1\n"})
    blob = git.run(repo.path, ["hash-object", "-w", "--stdin"], input=b"x = 1\n").decode().strip()
    link = git.run(repo.path, ["hash-object", "-w", "--stdin"], input=os.fsencode(outside)).decode().strip()
    inner = git.run(repo.path, ["mktree"], input=f"100644 blob {blob}\tsecret.py\n".encode()).decode().strip()
    raw = b"120000 L\0" + bytes.fromhex(link) + b"40000 L\0" + bytes.fromhex(inner)
    tree = git.run(repo.path, ["hash-object", "-t", "tree", "-w", "--literally", "--stdin"], input=raw)
    commit = repo.git("commit-tree", "-m", "evil", tree.decode().strip()).strip()
    series = _series(tmp_path / "p", [git_diff({"a.py": b"a = 1\n"}, {"a.py": b"a = 2\n"})])
    run = _check_cli("--source", repo.path, "--rev", commit, "--series", series, "--export", tmp_path / "o")
    assert run.returncode == 2 and b"'L' is both a file and a folder" in run.stderr, run.stderr
    assert _state(outside) == before and not list((tmp_path / "o").rglob("secret.py"))


def test_changed_files_never_reach_through_a_symlink(tmp_path: Path) -> None:
    """The final tree as the parser and --export see it: a touched path below a symlink does not
    exist (never read through it), and neither does a source file below a path the stack made a
    file or symlink (the second line of defence, should the tree ever let such a stack through)."""
    src, scratch = tmp_path / "src", tmp_path / "scratch"
    (src / "L").mkdir(parents=True)
    (src / "L" / "x.py").write_bytes(SECRET)
    scratch.mkdir()
    (scratch / "L").symlink_to(src / "L")
    with DirectorySource(src) as source:
        changed = changed_files(scratch, {"L", "L/x.py"}, source_provider(source))
    assert changed == {"L": (os.fsencode(src / "L"), MODE_LINK), "L/x.py": None}
    with DirectorySource(src) as source:
        assert changed_files(scratch, {"L"}, source_provider(source)) == changed


def test_export_never_writes_through_a_symlink_it_created(stack: Stack, tmp_path: Path) -> None:
    """The last line of defence: changes that would put a file below a symlink they also write
    (no checked stack produces them) stop with bad input, and nothing outside is touched."""
    outside, before = _outside(tmp_path)
    changes = {"L": (os.fsencode(outside), MODE_LINK), "L/secret.py": (b"pwned\n", MODE_FILE)}
    with open_source(stack.repo.path, stack.pin) as source, pytest.raises(BadInput, match="symbolic link"):
        export_tree(source, changes, tmp_path / "out")
    assert _state(outside) == before


def test_a_git_tree_with_a_name_twice_is_refused(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "engine")
    repo.commit("base", {"a.py": "a = 1\n"})
    one = git.run(repo.path, ["hash-object", "-w", "--stdin"], input=b"a = 1\n").decode().strip()
    two = git.run(repo.path, ["hash-object", "-w", "--stdin"], input=b"a = 2\n").decode().strip()
    raw = b"100644 a.py\0" + bytes.fromhex(one) + b"100644 a.py\0" + bytes.fromhex(two)
    tree = git.run(repo.path, ["hash-object", "-t", "tree", "-w", "--literally", "--stdin"], input=raw)
    commit = repo.git("commit-tree", "-m", "twice", tree.decode().strip()).strip()
    with pytest.raises(BadInput, match="'a.py' appears twice"):
        open_source(repo.path, commit)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_applied_patches_are_dropped_before_the_tree_is_read_back(stack: Stack) -> None:
    # Three patches, each creating a 24 MiB binary file. The parsed stack used to stay alive while
    # the changed files were read back from the scratch tree: every byte held twice (a series at
    # the old 1 GiB binary cap peaked over 2 GB). A fresh interpreter reports its own peak
    # (VmHWM: unlike ru_maxrss, not inherited from the process that started it).
    for i in range(3):
        stack.add(f"000{i + 3}-blob.patch", {f"data/blob{i}.bin": b"\0" + bytes([i + 1]) * (24 << 20)})
    code = (
        "import re, sys\n"
        "from pathlib import Path\n"
        "from vimesync.check.run import run_check\n"
        "from vimesync.check.model import CheckOptions\n"
        "r = run_check(CheckOptions(source=Path(sys.argv[1]), series=Path(sys.argv[2]), rev=sys.argv[3],"
        " use_cache=False))\n"
        "assert all(p.ok for p in r.patches), r.patches\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) >> 10)\n"
    )
    args = [str(stack.repo.path), str(stack.dir / "series"), stack.pin]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=stack.dir
    )
    assert done.returncode == 0, done.stderr
    # MiB: 72 read back (or parsed) plus the interpreter; holding the patches too made it 72 more.
    assert int(done.stdout) < 72 + 70


@pytest.mark.slow
def test_lines_of_the_whole_series_are_capped_before_parsing(tmp_path: Path) -> None:
    # Each patch under its own line cap; together over the series' (here lowered to 100,000
    # lines): refused at the patch that crosses it, before it is parsed (the real cap, 2M lines,
    # bounds what the parsed stack holds to ~0.5 GB; 256 MiB of patches could hold ~24 GB).
    from vimesync.check.run import load_stack

    for i in range(3):
        body = b"+\n" * 40_000
        head = b"--- /dev/null\n+++ b/f%d.txt\n@@ -0,0 +1,40000 @@\n" % i
        (tmp_path / f"p{i}.patch").write_bytes(head + body)
    (tmp_path / "series").write_text("p0.patch\np1.patch\np2.patch\n")
    assert len(load_stack(tmp_path / "series", strip=1, max_lines=3 * 40_003)) == 3
    with pytest.raises(PatchError, match=r"p2\.patch: the series' patches come to over 100000 lines"):
        load_stack(tmp_path / "series", strip=1, max_lines=100_000)


def test_files_the_whole_series_changes_are_capped(tmp_path: Path) -> None:
    # 300,000 one-line files in a 32 MB patch took 43 s to parse, check and write (the real cap,
    # MAX_STACK_FILES, is lowered here to 5): refused at the section that crosses the cap.
    from vimesync.check.run import MAX_STACK_FILES, load_stack

    for i in range(2):
        sections = [
            b"diff --git a/f%d/%d.txt b/f%d/%d.txt\nnew file mode 100644\n--- /dev/null\n"
            b"+++ b/f%d/%d.txt\n@@ -0,0 +1 @@\n+x\n" % ((i, j) * 3)
            for j in range(3)
        ]
        (tmp_path / f"p{i}.patch").write_bytes(b"".join(sections))
    (tmp_path / "series").write_text("p0.patch\np1.patch\n")
    assert len(load_stack(tmp_path / "series", strip=1, max_files=6)) == 2
    with pytest.raises(PatchError, match=r"p1\.patch:13: the series' patches change more than 5 files"):
        load_stack(tmp_path / "series", strip=1, max_files=5)
    assert MAX_STACK_FILES == 50_000


@pytest.mark.slow
def test_source_notes_reach_the_text_json_and_report(stack: Stack, tmp_path: Path) -> None:
    """What opening the source decided (here: an sdist's top folder stripped) is shown under the
    source line, in ``source.notes`` of the JSON, and in the report's Validation section."""
    sdist = tmp_path / "eng-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in ENGINE.items():
            info = tarfile.TarInfo(f"eng-1.0/{name}")
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    note = "stripped the archive's top-level folder 'eng-1.0'"
    report = run_check(stack.opts(source=sdist, rev=None))
    assert report.ok and report.source_notes == (note,)
    doc = check_to_dict(report)["source"]
    assert doc == {"kind": "archive", "path": str(sdist), "rev": None, "notes": [note]}
    assert f"- {note}" in render_validation(report)
    args = ["patches", "check", "--source", str(sdist), "--series", str(stack.dir / "series"), "--no-cache"]
    text = run_cli(*args)
    lines = text.stdout.splitlines()
    assert text.returncode == 0 and lines[0].startswith("eng source: archive")  # named after the sdist
    assert lines[1] == f"  note: {note}"
    assert json.loads(run_cli(*args, "--json").stdout)["source"]["notes"] == [note]
    # A git source at an exact revision has nothing to say.
    assert check_to_dict(run_check(stack.opts()))["source"]["notes"] == []


@pytest.mark.slow
def test_a_hostile_top_folder_name_in_a_source_note_stays_text(stack: Stack, tmp_path: Path) -> None:
    top = "eng-\x1b[31m[bold]x\u202e|*"  # one folder: no "/" in it
    sdist = tmp_path / "eng.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name, text in ENGINE.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    report = run_check(stack.opts(source=sdist, rev=None))
    (note,) = report.source_notes
    assert "\x1b" not in note  # the name is shown as its repr
    md = "\n".join(render_validation(report))
    assert "[bold]" not in md and "\\|\\*" in md  # Markdown-escaped
    args = ["patches", "check", "--source", str(sdist), "--series", str(stack.dir / "series"), "--no-cache"]
    text = run_cli(*args)
    assert text.returncode == 0 and "\x1b" not in text.stdout and "\u202e" not in text.stdout
    assert "  note: stripped the archive's top-level folder" in text.stdout.splitlines()[1]
    assert json.loads(run_cli(*args, "--json").stdout)["source"]["notes"] == [note]
