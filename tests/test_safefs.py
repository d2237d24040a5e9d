"""The one choke point for files a pull request names: real symlinks, FIFOs and /proc files."""

from __future__ import annotations

import inspect
import os
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from vimesync import safefs
from vimesync.errors import ConfigError


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A checkout (marked by .git) below a trusted folder that is itself reached by a symlink."""
    real = tmp_path / "real"
    (real / "repo/.git").mkdir(parents=True)
    (real / "repo/sop").mkdir()
    (real / "repo/sop/policy.toml").write_text("[[rule]]\n")
    (tmp_path / "work").symlink_to(real)  # above the repository: the job's, trusted
    (tmp_path / "secret").write_text("TOKEN=hunter2\n")
    return tmp_path / "work/repo"


def test_reads_a_regular_file_through_a_trusted_symlink_above_the_repository(repo: Path) -> None:
    assert safefs.read_input(repo / "sop/policy.toml", max_bytes=100) == b"[[rule]]\n"
    assert safefs.find_root(repo / "sop/policy.toml") == repo


def test_a_dotfiles_repository_at_home_is_no_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME comes from the job's settings snapshot: a repository at the home folder itself (a
    dotfiles checkout) does not make every file below it part of one checkout."""
    from vimesync.settings import Settings, install

    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "notes").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    target = home / "notes/policy.toml"
    with install(Settings.of({"HOME": str(home)})):
        assert safefs.find_root(target) == home / "notes"  # the file's own folder
    with install(Settings.of({"HOME": str(tmp_path / "other")})):
        assert safefs.find_root(target) == home  # not the job's home: a checkout like any


def test_symlink_at_the_file_is_refused(repo: Path, tmp_path: Path) -> None:
    (repo / "sop/link.toml").symlink_to(tmp_path / "secret")
    with pytest.raises(safefs.NotARegularFile, match="refusing to follow a symbolic link") as info:
        safefs.read_input(repo / "sop/link.toml", max_bytes=100)
    assert "hunter2" not in str(info.value)


def test_symlinked_folder_inside_the_repository_is_refused(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/policy.toml").write_text("x")
    (repo / "pins").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(safefs.NotARegularFile, match=r"refusing to follow .*pins: it is a symbolic link"):
        safefs.read_input(repo / "pins/policy.toml", max_bytes=100)
    # a marker planted deeper by the PR does not move the root down past the symlink
    (tmp_path / "elsewhere/vimesync.toml").write_text("")
    with pytest.raises(safefs.NotARegularFile, match="symbolic link"):
        safefs.read_input(repo / "pins/policy.toml", max_bytes=100)


def test_fifo_device_and_proc_are_refused_without_blocking(repo: Path) -> None:
    fifo = repo / "sop/fifo.toml"
    os.mkfifo(fifo)  # no writer: a blocking open would hang forever
    with pytest.raises(safefs.NotARegularFile, match="a FIFO"):
        safefs.read_input(fifo, max_bytes=100)
    for path in ("/proc/self/environ", "/dev/zero", "/sys/kernel/notes"):
        with pytest.raises(safefs.NotARegularFile, match="refusing to use a path under"):
            safefs.read_input(Path(path), max_bytes=100)
    with pytest.raises(safefs.NotARegularFile, match="directory"):
        safefs.read_input(repo / "sop", max_bytes=100)


def test_size_is_capped_before_reading(repo: Path) -> None:
    big = repo / "big.toml"
    with big.open("wb") as fh:
        fh.truncate(1 << 40)  # sparse 1 TiB: reading it would take hours
    with pytest.raises(ConfigError, match="over the 1000-byte limit"):
        safefs.read_input(big, max_bytes=1000)


def test_missing_file(repo: Path) -> None:
    with pytest.raises(safefs.Missing, match="no such file"):
        safefs.read_input(repo / "nope/x.toml", max_bytes=10)
    assert safefs.input_kind(repo / "nope") == "missing"
    assert safefs.input_kind(repo / "sop") == "dir"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a = " + "[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),
        ("a = " + "{b = " * 3000 + "1" + "}" * 3000, "nested deeper than 64 levels"),
        ("a = " + "1" * 5000, "a number is too long"),
        ('a = "x\nTOKEN=hunter2"', "invalid TOML: Illegal character"),
    ],
)
def test_toml_bombs_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        safefs.loads_toml(text, where="f.toml")
    assert str(info.value).startswith("f.toml") and "hunter2" not in str(info.value)


_MB = 1024 * 1024


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "message"),
    [
        # tomllib's work per dotted key grows with the square of its parts: 80 KB took 33 s
        ("a" + ".a" * _MB + " = 1", "more than 32 dotted parts"),
        ("[" + "a." * _MB + "a]", "more than 32 dotted parts"),
        ("[[" + '"a" . ' * (_MB // 4) + "a]]", "more than 32 dotted parts"),
        ("x = {" + "a." * _MB + "a = 1}", "more than 32 dotted parts"),
        # an unterminated string used to be rescanned from every later position (100 KB: 31 s)
        ('x = "' + '\\"' * _MB, "Unterminated string"),
        ('x = "' + '\\"' * 2000 + "\n" + "y = 1\n" * (_MB // 6), "Illegal character"),
        ("x = '" + "a'" * _MB, "Expected newline"),
        ('x = """' + '\\"' * _MB, "Unterminated string"),
        ("x = " + '"""\\"' * (_MB // 2), "Expected newline"),
        ("x = '''" + "''a" * (_MB // 2), "Expected \"'''\""),
        ('"' * 3 * _MB, "invalid TOML"),
        ("'" * 3 * _MB, "invalid TOML"),
        ('"\\' * _MB, "invalid TOML"),
        ("# \"'\"\"\"'''\n" * (_MB // 6) + "a = " + "[" * _MB, "nested deeper than 64 levels"),
        ("a = " + "{b = " * _MB, "nested deeper than 64 levels"),
    ],
    ids=lambda v: v[:12] if isinstance(v, str) and len(v) > 40 else None,
)
def test_hostile_toml_shapes_are_refused_in_one_pass(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        safefs.loads_toml(text, where="f.toml")
    assert str(info.value).startswith("f.toml")


def test_toml_keys_floats_and_multiline_strings_within_the_bounds_still_load() -> None:
    parts = ".".join(f"k{i}" for i in range(31))
    text = (
        f"{parts} = 1.5\n"
        'q = """ ""\\""" ""\n[ "" """\n'
        "r = ''''' '' ['''''\n"
        '"a"."b" = \'.\'\n'
        f"[t.{parts[3:]}]\n"
        f'x = [1.5, 07:32:00.999, "{".".join("abcdefghijklmnopqrstuvwxyz0123456789")}"]\n'
    )
    data = safefs.loads_toml(text, where="f")
    assert data["t"]["k1"]["k2"] and data["a"]["b"] == "."
    assert data["q"] == ' """"" ""\n[ "" ' and data["r"] == "'' '' [''"


def test_brackets_inside_toml_strings_do_not_count_as_nesting() -> None:
    text = (
        'title = "'
        + "[" * 500
        + '"\n'
        + "r = '"
        + "{" * 500
        + "'\n# "
        + "[" * 500
        + '\nm = """\n'
        + "[" * 500
        + '"""\n'
    )
    assert safefs.loads_toml(text, where="f")["title"] == "[" * 500


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ("[" * 65 + "]" * 65, "nested deeper than 64"),
        ('{"a": ' * 400_000, "nested deeper"),
        ('"' + '\\"' * 2 * _MB, "Unterminated string"),  # quadratic under the old regex pre-scan
        ("1" * 5000, "a number is too long"),
    ],
    ids=["deep-arrays", "65-levels", "deep-objects", "unterminated", "long-int"],
)
def test_json_bombs_are_config_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        safefs.loads_json(text, where="m.json")
    assert safefs.loads_json('["[[[[", {"a": "]"}]', where="m") == ["[[[[", {"a": "]"}]


def test_excerpt_is_short_and_shows_control_characters() -> None:
    shown = safefs.excerpt("a\x1b[31mred\u2028" + "x" * 200)
    assert "\x1b" not in shown and "\\x1b" in shown and "\\u2028" in shown
    assert len(shown) < 100 and shown.endswith("…")


def test_write_atomic_refuses_symlinks_and_keeps_mode(repo: Path, tmp_path: Path) -> None:
    out = repo / "report.md"
    out.write_text("old")
    out.chmod(0o640)
    safefs.write_atomic(out, b"new")
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in repo.iterdir()) == [".git", "report.md", "sop"]  # no temp file left
    (repo / "link.md").symlink_to(tmp_path / "secret")
    with pytest.raises(ConfigError, match="symbolic link; refusing to write through it"):
        safefs.write_atomic(repo / "link.md", b"pwned")
    (repo / "out").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="out: it is a symbolic link"):
        safefs.write_atomic(repo / "out/new.md", b"pwned", mkdirs=True)
    assert (tmp_path / "secret").read_text() == "TOKEN=hunter2\n" and not (tmp_path / "new.md").exists()


def test_write_atomic_creates_folders_when_asked(repo: Path) -> None:
    safefs.write_atomic(repo / "sop/reviews/x.toml", b"ok", mkdirs=True)
    assert (repo / "sop/reviews/x.toml").read_bytes() == b"ok"
    with pytest.raises(ConfigError, match="its folder does not exist"):
        safefs.write_atomic(repo / "nope/x.md", b"ok")


def test_output_dir(repo: Path, tmp_path: Path) -> None:
    safefs.ensure_output_dir(repo / "out/tree")
    assert (repo / "out/tree").is_dir()
    with pytest.raises(ConfigError, match="not an empty directory"):
        safefs.ensure_output_dir(repo / "sop")
    (repo / "exp").symlink_to(tmp_path / "real")
    with pytest.raises(ConfigError, match="symbolic link"):
        safefs.ensure_output_dir(repo / "exp")
    (repo / "sub").symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="symbolic link"):
        safefs.ensure_output_dir(repo / "sub/new")
    assert not (tmp_path / "new").exists()


def _deep_tree(top: Path, depth: int) -> None:
    """``a/a/.../a/f`` ``depth`` levels deep, built with descriptors (the path exceeds PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=fd)
        nfd = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)


@pytest.mark.slow
def test_scratch_dir_removes_a_tree_too_deep_for_rmtree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep/file").write_text("x")
    saved = sys.getrecursionlimit()
    try:
        with safefs.scratch_dir("vimesync-check-") as tmp:
            _deep_tree(Path(tmp), 400)
            (Path(tmp) / "link").symlink_to(tmp_path / "keep")
            # shutil.rmtree recurses once per level: a tree deeper than the limit defeats it
            # (as a 2,000-level tree does with the default limit).
            sys.setrecursionlimit(len(inspect.stack()) + 150)
    finally:
        sys.setrecursionlimit(saved)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]
    assert (tmp_path / "keep/file").exists()  # a symlink inside is removed, never followed


@pytest.mark.slow
def test_a_deep_tar_source_is_removed_on_close(tmp_path: Path) -> None:
    import io
    import tarfile

    from vimesync.sources import open_source

    archive = tmp_path / "engine.tar"
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tf:
        data = b"x = 1\n"
        info = tarfile.TarInfo("pkg/" + "a/" * 120 + "x.py")  # archives allow 128 levels
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    saved = sys.getrecursionlimit()
    try:
        with open_source(archive, scratch=scratch) as source:
            assert len(source.list_files()) == 1
            sys.setrecursionlimit(len(inspect.stack()) + 60)  # as 2,000 levels do at the default
    finally:
        sys.setrecursionlimit(saved)
    assert list(scratch.iterdir()) == []
