"""The evidence model (issue 29 items 1-3): bookkeeping -- vimesync's own ledger and records files,
exactly -- does not move the evidence head, anything else does; no file name can forge the
evidence head; each record, as it is now, is named as the claim of the commit that made it so."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo, commit_env
from vimesync import git
from vimesync.audit.bookkeeping import DEFAULT, Bookkeeping, ChangedPath
from vimesync.audit.compare import classify
from vimesync.audit.owncommits import own_commits
from vimesync.safefs import MAX_CONFIG_BYTES
from vimesync.sop import binding
from vimesync.sop.binding import committers, evidence_head, parse_raw_log
from vimesync.sop.resultmodel import Evidence
from vimesync.sop.results import RunRecord, key_of, load_results, record_keys, record_run

SYNC = "4c193f1f..8c17b676"
REL = f"sop/records/{SYNC}.toml"
LEDGER = f"sop/reviews/{SYNC}.toml"
FILE, EXEC, LINK, GITLINK = 0o100644, 0o100755, 0o120000, 0o160000


# --- what is bookkeeping -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "old", "new", "expected"),
    [
        (REL, 0, FILE, True),
        (LEDGER, FILE, FILE, True),
        (REL, FILE, 0, True),  # a records file removed
        ("sop/records/8c17b676.toml", FILE, FILE, True),
        ("sop/reviews/-weird_name.toml", 0, FILE, True),  # ledger.file_safe writes such names
        ("sop/records/conftest.py", 0, FILE, False),
        ("sop/reviews/run.sh", 0, EXEC, False),
        ("sop/records/.hidden.toml", 0, FILE, False),
        ("sop/records/a b.toml", 0, FILE, False),
        ("sop/records/x.toml.py", 0, FILE, False),
        ("sop/records/sub/x.toml", 0, FILE, False),
        ("sop/records/" + "a" * 300 + ".toml", 0, FILE, False),
        ("sop/recordsx/x.toml", 0, FILE, False),
        ("sop/records.toml", 0, FILE, False),
        ("sop/Records/x.toml", 0, FILE, False),
        ("sop/gates.toml", FILE, FILE, False),
        (REL, 0, LINK, False),  # a symlink named as a records file
        (REL, LINK, FILE, False),  # a symlink replaced: the link was code
        (REL, FILE, EXEC, False),  # made executable
        (REL, 0, GITLINK, False),
        ("sop/records/\udcff.toml", 0, FILE, False),  # a non-UTF-8 name
        ("sop/records", 0, LINK, False),  # the folder itself as a symlink
        ("sop", 0, LINK, False),
    ],
)
def test_only_vimesyncs_own_files_are_bookkeeping(path: str, old: int, new: int, expected: bool) -> None:
    assert DEFAULT.is_change(path, old, new) is expected


def test_records_beside_a_config_in_a_sub_folder() -> None:
    sub = Bookkeeping.beside("sub/dir")
    assert sub.is_file(f"sub/dir/{REL}") and sub.is_file(LEDGER)  # the ledgers stay at the root
    assert not sub.is_file(REL)
    assert Bookkeeping.beside(".") == Bookkeeping.beside("") == DEFAULT
    assert DEFAULT.only([]) and not DEFAULT.only([ChangedPath("a.py", 0, FILE)])


def test_the_audit_reviews_everything_under_sop_but_the_ledgers_and_records() -> None:
    oid = "1" * 40
    head = {
        REL: (FILE, oid),
        LEDGER: (FILE, oid),
        "sop/records/conftest.py": (FILE, oid),
        "sop/reviews/other.py": (FILE, oid),
        f"sop/records/{SYNC}x.toml": (LINK, oid),
    }
    audited = {p.path for p in classify({}, head, {})}
    assert audited == {"sop/records/conftest.py", "sop/reviews/other.py", f"sop/records/{SYNC}x.toml"}


def test_the_sync_lists_commits_under_sop_that_are_not_bookkeeping(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    base = repo.commit("base", {"a.py": "1\n"})
    repo.commit("ledger", {LEDGER: "sync = 's'\n"})
    repo.commit("records", {REL: "# r\n"})
    repo.commit("a conftest", {"sop/records/conftest.py": "import os\n"})
    (repo.path / REL).chmod(0o755)
    repo.commit("executable", {REL: "# r\n"})
    own = own_commits(repo.path, base, "HEAD", pin_path=None)
    assert [(c.subject, c.added) for c in own.commits] == [("a conftest", 1), ("executable", 0)]
    assert own.bookkeeping == 2


# --- the evidence head ---------------------------------------------------------------------------


def test_the_ledger_and_the_records_keep_the_evidence_head_anything_else_moves_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    repo.commit("review ledger", {LEDGER: "sync = 's'\n"})
    repo.commit("records", {REL: "# x\n"})
    assert evidence_head(repo.path, "HEAD") == code
    moved = repo.commit("a conftest beside the records", {"sop/records/conftest.py": "import os\n"})
    assert evidence_head(repo.path, "HEAD") == moved
    for files in (
        {"sop/reviews/hook.sh": "#!/bin/sh\n"},
        {"sop/records/notes.txt": "x\n"},
        {"sop/records/deep/s.toml": "# x\n"},
    ):
        moved = repo.commit("not bookkeeping", files)
        assert evidence_head(repo.path, "HEAD") == moved
    (repo.path / REL).chmod(0o755)
    moved = repo.commit("an executable records file", {REL: "# x\n"})
    assert evidence_head(repo.path, "HEAD") == moved
    (repo.path / REL).unlink()
    (repo.path / REL).symlink_to("../../a.py")
    repo.git("add", "-A")
    moved = repo.commit("a symlink as the records file")
    assert evidence_head(repo.path, "HEAD") == moved


@pytest.mark.parametrize(
    "name",
    [
        b"sop/records/x\x01{older}\n",  # the old parser's separator, then an older sha
        b"sop/records/x\x01{older}",
        b"sop/records/x\x01\xff",  # a non-ASCII byte where the old parser read a sha: a traceback
        b"sop/records/{older}",  # a name that is a sha
        b"sop/records/\n:100644 100644 {older} {older} M",  # a name that reads as a change
        b"sop/records/\xff.toml",  # a non-UTF-8 name
        b"x\x01{older}\n",
    ],
)
def test_no_file_name_forges_the_evidence_head(tmp_path: Path, name: bytes) -> None:
    repo = Repo(tmp_path / "r")
    older = repo.commit("older code", {"vime/code.py": "1\n"})
    repo.commit("records", {REL: "# green at the older code\n"})
    path = name.replace(b"{older}", older.encode())
    (repo.path / "sop/records").mkdir(parents=True, exist_ok=True)
    with open(bytes(repo.path) + b"/" + path, "wb") as f:
        f.write(b"x\n")
    (repo.path / "vime/code.py").write_text("2\n")  # sorted after sop/: after the hostile name
    repo.git("add", "-A")
    new = repo.commit("new code and a file with a hostile name")
    assert evidence_head(repo.path, "HEAD") == new
    # nor is such a name bookkeeping in a records-only commit on top: the head stays
    repo.commit("records", {REL: "# y\n"})
    assert evidence_head(repo.path, "HEAD") == new


def test_the_raw_log_parser_takes_each_path_whole() -> None:
    sha, other = "a" * 40, "b" * 40
    out = (
        f"{sha}\0\n:100644 100644 {other} {other} M\0x\x01{other}\n\0"
        f":000000 120000 {'0' * 40} {other} A\0{other}\0{other}\0"
    ).encode()
    chunks = [out[i : i + 7] for i in range(0, len(out), 7)]  # split anywhere, even inside a token
    assert list(parse_raw_log(chunks)) == [
        (sha, [ChangedPath(f"x\x01{other}\n", FILE, FILE), ChangedPath(other, 0, LINK)]),
        (other, []),
    ]
    with pytest.raises(git.GitError):
        list(parse_raw_log([b"not a sha\0"]))
    with pytest.raises(git.GitError):
        list(parse_raw_log([f"{sha}\0:100644 100644 x y M\0".encode() + b"cut"]))


def test_a_walk_cut_short_trusts_nothing_older(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("code", {"a.py": "1\n"})
    for i in range(4):
        repo.commit(f"records {i}", {REL: f"# {i}\n"})
    monkeypatch.setattr(binding, "MAX_WALK", 3)
    assert evidence_head(repo.path, "HEAD") == repo.head()  # not the oldest records-only commit seen
    monkeypatch.setattr(binding, "MAX_WALK", 10)
    assert evidence_head(repo.path, "HEAD") == repo.git("rev-parse", "HEAD~4").strip()


# --- who a record is attributed to ---------------------------------------------------------------

MAINTAINER = ("Vime Maintainer", "maint@vime.example")
CONTRIBUTOR = ("Eve Contributor", "eve@fork.example")
_CLOCK = itertools.count(1_800_000_000, 60)


def _commit_as(repo: Repo, who: tuple[str, str], message: str) -> str:
    env = {**commit_env(next(_CLOCK)), "GIT_COMMITTER_NAME": who[0], "GIT_COMMITTER_EMAIL": who[1]}
    git.run(repo.path, ["add", "-A"], env=env)
    git.run(repo.path, ["commit", "-q", "--allow-empty", "-m", message], env=env)
    return repo.head()


def _run(repo: Repo, name: str, sha: str, exit: int, **figures: str) -> None:
    at = "2026-12-01T00:00:00Z"
    record_run(repo.path, SYNC, RunRecord(name, sha, exit, figures=tuple(figures.items()), recorded_at=at))


def _named(repo: Repo) -> dict[str, str | None]:
    who = committers(repo.path, "HEAD", REL, lambda t: record_keys(t, REL), max_bytes=MAX_CONFIG_BYTES)
    return {r.name: who.get(key_of(r)) for r in load_results(repo.path, SYNC).records}


def _who(person: tuple[str, str]) -> str:
    return f"{person[0]} <{person[1]}>"


def test_each_record_is_named_as_its_committers(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "maintainer run", code, 0)
    _commit_as(repo, MAINTAINER, "record")
    _run(repo, "contributor run", code, 0)
    _commit_as(repo, CONTRIBUTOR, "record")
    (repo.path / "NOTES").write_text("x\n")
    _commit_as(repo, MAINTAINER, "notes")
    _run(repo, "later", code, 0)
    _commit_as(repo, MAINTAINER, "record")
    _run(repo, "uncommitted", code, 0)
    assert _named(repo) == {
        "maintainer run": _who(MAINTAINER),
        "contributor run": _who(CONTRIBUTOR),  # the old parser named the maintainer who came next
        "later": _who(MAINTAINER),
        "uncommitted": None,
    }


def test_a_record_edited_to_green_is_the_editors_claim(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "GPU smoke", code, 3, loss="nan")
    _commit_as(repo, MAINTAINER, "red")
    text = (repo.path / REL).read_text()
    (repo.path / REL).write_text(text.replace("exit = 3", "exit = 0"))
    _commit_as(repo, CONTRIBUTOR, "green now")
    assert _named(repo) == {"GPU smoke": _who(CONTRIBUTOR)}
    # figures alone too
    (repo.path / REL).write_text((repo.path / REL).read_text().replace('"nan"', '"0.1"'))
    _commit_as(repo, MAINTAINER, "figures")
    assert _named(repo) == {"GPU smoke": _who(MAINTAINER)}
    (repo.path / REL).write_text((repo.path / REL).read_text().replace('"0.1"', '"0.2"'))
    _commit_as(repo, CONTRIBUTOR, "figures changed")
    (repo.path / REL).write_text((repo.path / REL).read_text().replace('"0.2"', '"0.1"'))
    _commit_as(repo, CONTRIBUTOR, "and changed back")
    assert _named(repo) == {"GPU smoke": _who(CONTRIBUTOR)}  # the latest commit that made it so


def test_a_record_from_a_merged_branch_names_its_committer(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    repo.branch("pr")
    _run(repo, "contributed", code, 0)
    _commit_as(repo, CONTRIBUTOR, "record")
    repo.checkout("main")
    _run(repo, "maintainer run", code, 0)
    _commit_as(repo, MAINTAINER, "record")
    # the merge keeps both tables: a resolution the maintainer commits, of records it did not make
    theirs = repo.git("show", f"pr:{REL}")
    repo.git("merge", "-q", "--no-commit", "-s", "ours", "pr")
    (repo.path / REL).write_text((repo.path / REL).read_text() + theirs.split("\n", 2)[2])
    _commit_as(repo, MAINTAINER, "merge")
    named = _named(repo)
    assert named["maintainer run"] == _who(MAINTAINER) and named["contributed"] == _who(CONTRIBUTOR)


def test_a_hostile_committer_is_shown_as_text(tmp_path: Path) -> None:
    from vimesync.report.evidencemd import render_evidence

    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "smoke", code, 0)
    repo.git("add", "-A")
    tree = repo.git("write-tree").strip()
    evil = "Eve](javascript:x) **@here** `#1` <img src=x>\r\u202e\x1b[31m <e@x>"
    body = f"tree {tree}\nparent {code}\nauthor a <a@x> 1 +0000\ncommitter {evil} 1 +0000\n\nrecord\n"
    sha = (
        git.run(repo.path, ["hash-object", "-t", "commit", "-w", "--stdin"], input=body.encode())
        .decode()
        .strip()
    )
    repo.git("update-ref", "HEAD", sha)
    results = load_results(repo.path, SYNC)
    who = committers(repo.path, "HEAD", REL, lambda t: record_keys(t, REL), max_bytes=MAX_CONFIG_BYTES)
    assert list(who.values()) == [evil]
    text = "\n".join(render_evidence(Evidence(SYNC, code, code, results, who)))
    line = next(line for line in text.splitlines() if "committed by" in line)
    assert "by Eve\\](javascript:x) \\*\\*@here\\*\\*" in line and "\\<img src=x\\>" in line
    for raw in ("\r", "\u202e", "\x1b"):
        assert raw not in line, raw


def test_a_huge_or_broken_records_version_claims_nothing(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "smoke", code, 0)
    good = (repo.path / REL).read_text()
    (repo.path / REL).write_text(good + "# " + "x" * (MAX_CONFIG_BYTES + 10) + "\n")
    _commit_as(repo, MAINTAINER, "too big")
    (repo.path / REL).write_text(good)
    _commit_as(repo, CONTRIBUTOR, "as it is now")
    assert _named(repo) == {"smoke": _who(CONTRIBUTOR)}


# --- a contributor's pull request that floods the history ----------------------------------------


def _flood(repo: Repo, count: int, text: str) -> None:
    """``count`` records-only commits by the contributor, each a new version of the file."""
    stream = []
    for i in range(count):
        data = f"{text}# {i}\n".encode()
        start = f"from {repo.head()}\n" if i == 0 else ""
        stream.append(
            f"commit refs/heads/main\ncommitter Eve <eve@fork.example> {1_900_000_000 + i} +0000\n"
            f"data 1\nx\n{start}M 100644 inline {REL}\ndata {len(data)}\n".encode()
            + data
            + b"\n"
        )
    git.run(repo.path, ["fast-import", "--quiet"], input=b"".join(stream))


def test_thousands_of_records_only_commits_keep_the_head_and_name_no_one_wrongly(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "smoke", code, 0)
    _commit_as(repo, MAINTAINER, "record")
    _flood(repo, 2_000, (repo.path / REL).read_text())
    repo.git("reset", "-q", "--hard")
    assert evidence_head(repo.path, "HEAD") == code
    # the maintainer's record was made beyond the 200 changes read: not the contributor's
    assert _named(repo) == {"smoke": binding.UNREAD}


def test_history_read_newest_first_stops_at_its_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repo(tmp_path / "r")
    code = repo.commit("code", {"a.py": "1\n"})
    _run(repo, "old", code, 0)
    _commit_as(repo, MAINTAINER, "record")
    for i in range(4):
        (repo.path / REL).write_text((repo.path / REL).read_text() + f"# {i}\n")
        _commit_as(repo, CONTRIBUTOR, "a comment")
    _run(repo, "new", code, 0)
    _commit_as(repo, CONTRIBUTOR, "record")
    assert _named(repo) == {"old": _who(MAINTAINER), "new": _who(CONTRIBUTOR)}
    monkeypatch.setattr(binding, "MAX_HISTORY", 3)
    assert _named(repo) == {"old": binding.UNREAD, "new": _who(CONTRIBUTOR)}
    monkeypatch.setattr(binding, "MAX_HISTORY", 200)
    monkeypatch.setattr(binding, "MAX_PARSED", 3 * len((repo.path / REL).read_bytes()))
    assert _named(repo) == {"old": binding.UNREAD, "new": _who(CONTRIBUTOR)}
