"""Pinned sources: real git repos (work tree, bare mirror), directories, wheels, sdists, hostile archives."""

from __future__ import annotations

import io
import os
import re
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync import git
from vimesync.errors import BadInput, GitError
from vimesync.git import MODE_EXEC, MODE_FILE, MODE_LINK
from vimesync.pycheck.model import StatKey
from vimesync.sources import archive as archives
from vimesync.sources import open_source
from vimesync.sources.model import Limits

# ---------------------------------------------------------------------------------------------
# git


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "engine")
    r.commit("one", {"pkg/__init__.py": "", "pkg/a.py": "A = 1\n", "README": "v1\n"})
    r.git("tag", "v1")
    (r.path / "run.sh").write_text("#!/bin/sh\n")
    (r.path / "run.sh").chmod(0o755)
    os.symlink("pkg/a.py", r.path / "link.py")
    r.git("add", "run.sh", "link.py")
    r.commit("two", {"pkg/a.py": "A = 2\n"})
    return r


def test_git_work_tree_at_head(repo: Repo) -> None:
    with open_source(repo.path) as src:
        assert src.info.kind == "git" and src.info.rev == repo.head()
        assert any("HEAD" in n for n in src.notes)
        files = src.list_files()
        assert set(files) == {"pkg/__init__.py", "pkg/a.py", "README", "run.sh", "link.py"}
        assert files["run.sh"].mode == MODE_EXEC and files["README"].mode == MODE_FILE
        assert files["link.py"].mode == MODE_LINK and src.read("link.py") == b"pkg/a.py"
        assert src.read("pkg/a.py") == b"A = 2\n"
        assert dict(src.read_many(["README", "pkg/a.py"])) == {"README": b"v1\n", "pkg/a.py": b"A = 2\n"}
        py = {f.path: f for f in src.python_files()}
        assert set(py) == {"pkg/__init__.py", "pkg/a.py"}  # the symlink is not parsed
        assert py["pkg/a.py"].oid == files["pkg/a.py"].oid and py["pkg/a.py"].size == 6


@pytest.mark.parametrize("rev", ["v1", "main~1", "HEAD^"])
def test_git_rev_resolves_to_full_sha(repo: Repo, rev: str) -> None:
    first = repo.git("rev-parse", "v1^{commit}").strip()
    with open_source(repo.path, rev) as src:
        assert src.info.rev == first and src.notes == ()
        assert src.read("pkg/a.py") == b"A = 1\n" and "run.sh" not in src.list_files()


def test_git_short_sha(repo: Repo) -> None:
    with open_source(repo.path, repo.head()[:8]) as src:
        assert src.info.rev == repo.head()


def test_git_unknown_rev_is_named(repo: Repo) -> None:
    with pytest.raises(GitError, match="nope"):
        open_source(repo.path, "nope")


def test_git_reads_objects_not_the_work_tree_or_index(repo: Repo) -> None:
    (repo.path / "pkg/a.py").write_text("dirty\n")
    (repo.path / "untracked.py").write_text("x\n")
    index = repo.path / ".git" / "index"
    before = (index.stat().st_mtime_ns, index.read_bytes())
    refs = repo.git("for-each-ref")
    with open_source(repo.path) as src:
        assert src.read("pkg/a.py") == b"A = 2\n" and "untracked.py" not in src.list_files()
        src.export(repo.path.parent / "out")
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before
    assert repo.git("for-each-ref") == refs
    assert (repo.path / "pkg/a.py").read_text() == "dirty\n"


def test_bare_mirror(repo: Repo, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror.git"
    git.run(tmp_path, ["clone", "-q", "--mirror", str(repo.path), str(mirror)])
    with open_source(mirror, "v1") as src:
        assert src.info.kind == "git" and src.info.path == str(mirror)
        assert src.read("pkg/a.py") == b"A = 1\n"
    with open_source(mirror) as src:
        assert src.info.rev == repo.head()


def test_subdirectory_of_a_work_tree_is_a_directory(repo: Repo) -> None:
    with open_source(repo.path / "pkg") as src:
        assert src.info.kind == "directory" and set(src.list_files()) == {"__init__.py", "a.py"}


def test_submodules_are_skipped_and_counted(repo: Repo) -> None:
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head()},vendor/sub")
    repo.commit("add a gitlink")
    with open_source(repo.path) as src:
        assert "vendor/sub" not in src.list_files()
        assert any("1 submodule" in n for n in src.notes)


def test_export_writes_modes_and_symlinks(repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open_source(repo.path) as src:
        assert src.export(out, skip={"README"}) == 4
        assert (out / "pkg/a.py").read_bytes() == b"A = 2\n" and not (out / "README").exists()
        assert os.readlink(out / "link.py") == "pkg/a.py"
        assert (out / "run.sh").stat().st_mode & 0o111
        with pytest.raises(FileExistsError):
            src.export(out, only=["pkg/a.py"])  # never overwrites


# ---------------------------------------------------------------------------------------------
# directories and bad input


def test_directory_source(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/m.py").write_text("x = 1\n")
    (root / "tool").write_text("#!/bin/sh\n")
    (root / "tool").chmod(0o755)
    os.symlink("/etc/passwd", root / "pkg/outside")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n")
    os.mkfifo(root / "fifo")
    with open_source(root) as src:
        files = src.list_files()
        assert set(files) == {"pkg/m.py", "tool", "pkg/outside"}
        assert files["tool"].mode == MODE_EXEC and files["pkg/outside"].mode == MODE_LINK
        assert src.read("pkg/outside") == b"/etc/passwd"  # the link, never its target
        [py] = src.python_files()
        assert py.file is not None and Path(py.file) == root / "pkg/m.py" and py.oid is None


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        open_source(tmp_path / "nope")


def test_rev_for_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        open_source(tmp_path, "v1")


def test_unknown_file_kind(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(BadInput, match="not a git repository, a directory or an archive"):
        open_source(tmp_path / "notes.txt")


# ---------------------------------------------------------------------------------------------
# archives


def make_zip(path: Path, members: dict[str, bytes], *, modes: dict[str, int] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (modes or {}).get(name, 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                info.mode = 0o644
                tf.addfile(info, io.BytesIO(m[1]))
    return path


def tar_link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def test_wheel_keeps_its_layout(tmp_path: Path) -> None:
    whl = make_zip(
        tmp_path / "eng-1.0-py3-none-any.whl",
        {"eng/__init__.py": b"", "eng/cli.py": b"x = 1\n", "eng-1.0.dist-info/METADATA": b"Name: eng\n"},
        modes={"eng/cli.py": 0o100755},
    )
    with open_source(whl) as src:
        assert src.info.kind == "archive" and src.info.rev is None
        files = src.list_files()
        assert set(files) == {"eng/__init__.py", "eng/cli.py", "eng-1.0.dist-info/METADATA"}
        assert files["eng/cli.py"].mode == MODE_EXEC
        assert src.read("eng/cli.py") == b"x = 1\n"
        assert {f.path for f in src.python_files()} == {"eng/__init__.py", "eng/cli.py"}


def test_zip_project_folder_is_stripped_only_with_a_project_marker(tmp_path: Path) -> None:
    gh = make_zip(tmp_path / "eng-main.zip", {"eng-main/pyproject.toml": b"", "eng-main/eng/a.py": b""})
    with open_source(gh) as src:
        assert set(src.list_files()) == {"pyproject.toml", "eng/a.py"} and src.notes
    pkg = make_zip(tmp_path / "pkg.zip", {"eng/__init__.py": b"", "eng/a.py": b""})
    with open_source(pkg) as src:
        assert set(src.list_files()) == {"eng/__init__.py", "eng/a.py"}


def test_sdist_strips_the_top_folder_and_keeps_inside_links(tmp_path: Path) -> None:
    dev = tarfile.TarInfo("eng-1.0/dev")
    dev.type = tarfile.CHRTYPE
    fifo = tarfile.TarInfo("eng-1.0/fifo")
    fifo.type = tarfile.FIFOTYPE
    sdist = make_tar(
        tmp_path / "eng-1.0.tar.gz",
        [
            ("eng-1.0/PKG-INFO", b"Name: eng\n"),
            ("eng-1.0/eng/a.py", b"A = 1\n"),
            tar_link("eng-1.0/eng/b.py", "a.py"),
            tar_link("eng-1.0/eng/c.py", "eng-1.0/eng/a.py", tarfile.LNKTYPE),
            dev,
            fifo,
        ],
    )
    with open_source(sdist, scratch=tmp_path) as src:
        files = src.list_files()
        assert set(files) == {"PKG-INFO", "eng/a.py", "eng/b.py", "eng/c.py"}
        assert files["eng/b.py"].mode == MODE_LINK and src.read("eng/b.py") == b"a.py"
        assert src.read("eng/c.py") == b"A = 1\n"
        assert any("device/fifo" in n for n in src.notes)
        unpacked = [p for p in tmp_path.iterdir() if p.name.startswith("vimesync-src-")]
        assert len(unpacked) == 1 and not any(p.is_symlink() for p in unpacked[0].rglob("*"))
    assert not unpacked[0].exists()  # close() removes the scratch copy


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.py", "'..'"),
        ("pkg/../../evil.py", "'..'"),
        ("/etc/evil.py", "absolute"),
        ("C:/evil.py", "drive letter"),
        ("pkg\\..\\evil.py", "backslash"),
        ("pkg/.git/config", ".git"),
        ("pkg//x.py", "empty"),
    ],
)
@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_unsafe_member_names_are_refused(tmp_path: Path, kind: str, name: str, why: str) -> None:
    members = {"pkg/ok.py": b"", name: b"boom"}
    if kind == "zip":
        archive = make_zip(tmp_path / "bad.whl", members)
    else:
        archive = make_tar(tmp_path / "bad.tar.gz", list(members.items()))
    with pytest.raises(BadInput, match=why) as exc:
        open_source(archive, scratch=tmp_path)
    assert repr(name)[1:-1] in str(exc.value) or name in str(exc.value)
    assert not (tmp_path.parent / "evil.py").exists() and not Path("/etc/evil.py").exists()


@pytest.mark.parametrize("target", ["../../outside", "/etc/passwd", "../sibling/x"])
def test_links_out_of_the_tree_are_refused(tmp_path: Path, target: str) -> None:
    archive = make_tar(tmp_path / "eng-1.0.tgz", [("eng-1.0/a.py", b""), tar_link("eng-1.0/l", target)])
    with pytest.raises(BadInput, match="'eng-1.0/l'.*points outside"):
        open_source(archive, scratch=tmp_path)
    whl = make_zip(tmp_path / "x.whl", {"pkg/l": target.encode()}, modes={"pkg/l": 0o120777})
    if not target.startswith("../sibling"):  # in a wheel "pkg/../sibling" is still inside the tree
        with pytest.raises(BadInput, match="points outside"):
            open_source(whl)


def test_a_member_below_a_link_is_refused(tmp_path: Path) -> None:
    archive = make_tar(
        tmp_path / "eng.tar.gz", [tar_link("eng/d", "sub"), ("eng/sub/x.py", b""), ("eng/d/x.py", b"")]
    )
    with pytest.raises(BadInput, match="'eng/d/x.py'"):
        open_source(archive, scratch=tmp_path)


def test_caps_are_checked_before_extracting(tmp_path: Path) -> None:
    bomb = make_zip(tmp_path / "bomb.whl", {"pkg/a.py": b"\0" * (4 << 20)})
    assert bomb.stat().st_size < 64 << 10
    with pytest.raises(BadInput, match="exceed the cap"):
        open_source(bomb, limits=Limits(max_total_size=1 << 20))
    many = make_zip(tmp_path / "many.whl", {f"pkg/m{i}.py": b"" for i in range(5)})
    with pytest.raises(BadInput, match="5 members exceed the cap of 4"):
        open_source(many, limits=Limits(max_members=4))
    tbomb = make_tar(tmp_path / "bomb.tar.gz", [("eng/a.py", b"\0" * (4 << 20))])
    with pytest.raises(BadInput, match="bytes uncompressed"):
        open_source(tbomb, scratch=tmp_path, limits=Limits(max_total_size=1 << 20))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("vimesync-src-")]  # cleaned up


def test_corrupt_archives(tmp_path: Path) -> None:
    (tmp_path / "garbage.whl").write_bytes(b"not a zip at all")
    with pytest.raises(BadInput, match="corrupt"):
        open_source(tmp_path / "garbage.whl")
    good = make_tar(tmp_path / "t.tar.gz", [("eng/a.py", os.urandom(50_000))])
    (tmp_path / "cut.tar.gz").write_bytes(good.read_bytes()[:20_000])
    with pytest.raises(BadInput, match="corrupt"):
        open_source(tmp_path / "cut.tar.gz", scratch=tmp_path)
    z = make_zip(tmp_path / "crc.whl", {"pkg/a.py": b"A = 1\n" * 100})
    raw = bytearray(z.read_bytes())
    at = raw.index(b"pkg/a.py") + len("pkg/a.py")  # first byte of the compressed data
    raw[at + 5] ^= 0xFF
    z.write_bytes(bytes(raw))
    with open_source(z) as src, pytest.raises(BadInput, match="corrupt member 'pkg/a.py'"):
        src.read("pkg/a.py")


def test_archive_export_never_leaves_dest(tmp_path: Path) -> None:
    whl = make_zip(tmp_path / "e.whl", {"pkg/a.py": b"A\n", "pkg/run": b"#!"}, modes={"pkg/run": 0o100755})
    with open_source(whl) as src:
        src.export(tmp_path / "out")
    assert (tmp_path / "out/pkg/a.py").read_bytes() == b"A\n"
    assert stat.S_IMODE((tmp_path / "out/pkg/run").stat().st_mode) == 0o755


def test_hard_links_count_toward_the_cap(tmp_path: Path) -> None:
    links = [tar_link(f"eng/c{i}.py", "./eng/a.py", tarfile.LNKTYPE) for i in range(20)]
    archive = make_tar(tmp_path / "eng.tar.gz", [("eng/a.py", b"x" * 100_000), *links])
    with pytest.raises(BadInput, match="bytes uncompressed"):
        open_source(archive, scratch=tmp_path, limits=Limits(max_total_size=1_000_000))
    with open_source(archive, scratch=tmp_path) as src:
        assert src.read("c19.py") == b"x" * 100_000  # the single folder "eng" was stripped


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_link_chains_climbing_out_are_refused(tmp_path: Path, kind: str) -> None:
    # Each target alone stays inside ("l1/.." is "."), but on disk l1 is the tree itself, so
    # l2 is its parent: an export would write a link out of the destination.
    chains = [
        {"l1": ".", "l2": "l1/.."},
        {"l1": "sub", "sub/l2": "../l1/../.."},
        {"l1": ".", "l2": "l1/l1/l1/../x"},
        {"a": "b", "b": "a"},  # a loop
    ]
    for n, chain in enumerate(chains):
        if kind == "tar":
            members = [("eng/sub/x.py", b""), *(tar_link(f"eng/{k}", v) for k, v in chain.items())]
            archive = make_tar(tmp_path / f"c{n}.tar.gz", members)
        else:
            names = {k: v.encode() for k, v in chain.items()}  # a wheel's root is the tree's
            modes = dict.fromkeys(names, 0o120777)
            archive = make_zip(tmp_path / f"c{n}.whl", {"sub/x.py": b"", **names}, modes=modes)
        with pytest.raises(
            BadInput, match=r"unsafe member .*(points outside the archive|more than 40 links)"
        ):
            open_source(archive, scratch=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("c")) == []


def test_link_chains_inside_the_tree_are_kept_and_exported_inside(tmp_path: Path) -> None:
    chain = {"l1": "sub", "l2": "l1/x.py", "l3": "l1/../a.py", "sub/up": "../l1/../sub"}
    members = [
        ("eng/a.py", b"A"),
        ("eng/sub/x.py", b"X"),
        *(tar_link(f"eng/{k}", v) for k, v in chain.items()),
    ]
    archive = make_tar(tmp_path / "eng.tar.gz", members)
    dest = tmp_path / "out"
    with open_source(archive, scratch=tmp_path) as src:
        src.export(dest)
    assert (dest / "l2").read_bytes() == b"X" and (dest / "l3").read_bytes() == b"A"
    for name in chain:
        assert Path(os.path.realpath(dest / name)).is_relative_to(dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eng.tar.gz", "out"]


@pytest.mark.parametrize("suffix,mode", [(".tar.gz", "w:gz"), (".tar.xz", "w:xz"), (".tar.bz2", "w:bz2")])
def test_truncated_or_corrupt_tarballs_are_errors(tmp_path: Path, suffix: str, mode: str) -> None:
    good = tmp_path / f"good{suffix}"
    with tarfile.open(good, mode) as tf:
        for i in range(50):
            data = b"x = %d\n" % i * 100
            info = tarfile.TarInfo(f"eng/m{i}.py")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    raw = good.read_bytes()
    with open_source(good, scratch=tmp_path) as src:
        assert len(src.list_files()) == 50
    flipped = bytearray(raw)
    flipped[-9] ^= 0x55  # the stream's check value: only a read to the very end sees it
    bad = {"cut": raw[:-12], "flipped": bytes(flipped), "half": raw[: len(raw) // 2]}
    for name, content in bad.items():
        (tmp_path / f"{name}{suffix}").write_bytes(content)
        with pytest.raises(BadInput, match=rf"{name}{re.escape(suffix)}: corrupt"):
            open_source(tmp_path / f"{name}{suffix}", scratch=tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("vimesync-src-")]


def test_tar_without_its_end_block_is_truncated(tmp_path: Path) -> None:
    plain = make_tar(tmp_path / "t.tar.gz", [("eng/a.py", b"A" * 600), ("eng/b.py", b"B")])
    import gzip

    raw = gzip.decompress(plain.read_bytes())
    (tmp_path / "cut.tar").write_bytes(raw[: 512 + 1024])  # a.py complete, b.py's header gone
    with pytest.raises(BadInput, match="cut.tar: corrupt or truncated archive: no end-of-archive block"):
        open_source(tmp_path / "cut.tar", scratch=tmp_path)


def test_one_zip_member_read_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBER_READ", 1 << 20)
    whl = make_zip(tmp_path / "x.whl", {"pkg/big.bin": b"\0" * (2 << 20), "pkg/a.py": b"A"})
    with open_source(whl) as src:
        assert src.read("pkg/a.py") == b"A"
        with pytest.raises(BadInput, match="'pkg/big.bin' is 2097152 bytes, over the 1 MiB cap"):
            src.read("pkg/big.bin")


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_member_names_too_deep_or_long_are_refused_before_writing(tmp_path: Path, kind: str) -> None:
    # 2,000 folders deep: creating the folders used to end in a RecursionError traceback.
    for n, name in enumerate(["a/" * 2000 + "x.py", "eng/" + "n" * 3000 + ".py"]):
        if kind == "tar":
            archive = make_tar(tmp_path / f"d{n}.tar.gz", [(name, b"x = 1\n"), ("eng/b.py", b"")])
        else:
            archive = make_zip(tmp_path / f"d{n}.zip", {name: b"x = 1\n", "eng/b.py": b""})
        with pytest.raises(
            BadInput, match=r"unsafe member .*\.\.\.': more than 2048 characters or 128 folders"
        ):
            open_source(archive, scratch=tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("vimesync-src-")]


@pytest.mark.parametrize("where", ["/proc/self", "/proc/self/cwd", "/sys/kernel", "/dev"])
def test_pseudo_file_systems_are_never_sources(where: str) -> None:
    # A pin naming /proc/self would put the job's environment into a hunk diagnostic.
    with pytest.raises(BadInput, match="refusing a source under"):
        open_source(Path(where))


def test_a_symlink_to_proc_is_not_a_source(tmp_path: Path) -> None:
    (tmp_path / "engine").symlink_to("/proc/self")
    with pytest.raises(BadInput, match="refusing a source under /proc"):
        open_source(tmp_path / "engine")


def test_a_directory_source_has_a_file_cap(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}.py").write_text("x = 1\n")
    assert len(open_source(tmp_path, limits=Limits(max_members=30)).list_files()) == 30
    with pytest.raises(BadInput, match="holds over 29 files"):
        open_source(tmp_path, limits=Limits(max_members=29))


def gnu_sparse_tar(path: Path, name: str, real_size: int) -> Path:
    """A .tar.gz holding one GNU sparse member of ``real_size`` bytes that are all a hole."""
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    header = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    header[156:157] = tarfile.GNUTYPE_SPARSE
    header[386:410] = b"%011o\0%011o\0" % (real_size, 0)  # one map entry: (offset, 0 bytes)
    header[483:495] = b"%011o\0" % real_size  # the size the member unpacks to
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header[:512])
    with tarfile.open(path, "w:gz") as tf:  # a well-formed archive around the raw member
        tf.addfile(tarfile.TarInfo("pkg/a.py"))
        assert tf.fileobj is not None
        tf.fileobj.write(bytes(header))
        tf.offset += len(header)
    return path


def test_sparse_members_are_refused_before_writing(tmp_path: Path) -> None:
    # ~4 GB of zeros under the size cap: unpacking it would take seconds and fill the scratch disk.
    archive = gnu_sparse_tar(tmp_path / "sparse.tar.gz", "pkg/huge.bin", (4 << 30) - (1 << 20))
    assert archive.stat().st_size < 4096
    with tarfile.open(archive) as tf:
        assert [m.issparse() for m in tf] == [False, True]  # what the fixture claims
    with pytest.raises(BadInput, match=r"sparse\.tar\.gz: unsafe member 'pkg/huge\.bin': a sparse file"):
        open_source(archive, scratch=tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("vimesync-src-")]  # cleaned up


def test_a_folder_lists_its_files_stat_keys_an_unpacked_archive_does_not(tmp_path: Path) -> None:
    """The parse cache keys files by stat only in a tree that stays where it is across runs."""
    tree = tmp_path / "tree"
    (tree / "eng").mkdir(parents=True)
    (tree / "eng/a.py").write_bytes(b"x = 1\n")
    st = os.lstat(tree / "eng/a.py")
    with open_source(tree) as src:
        (f,) = src.python_files()
        assert f.stat == StatKey(6, st.st_mtime_ns, st.st_ino) and Path(f.file) == tree / "eng/a.py"
    sdist = tmp_path / "eng-1.0.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        tar.add(tree / "eng/a.py", arcname="eng-1.0/eng/a.py")
    with open_source(sdist, scratch=tmp_path) as src:
        (f,) = src.python_files()
        assert f.file is not None and f.stat is None
