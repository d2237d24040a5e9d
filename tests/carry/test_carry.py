"""``vimesync carry`` end to end in real repositories: commits, provenance, pin, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import CONFIG, Pair, build_pair, cli, tree
from vimesync import git
from vimesync.audit.model import IDENTICAL

pytestmark = pytest.mark.slow  # carries end to end in real repositories


@pytest.fixture()
def pair(tmp_path: Path) -> Pair:
    return build_pair(tmp_path)


def test_carry_commits_each_pr_with_provenance_and_bumps_the_pin(pair: Pair, capsys) -> None:
    head_before = pair.down.head()
    code, doc = pair.carry(capsys)
    assert code == 0, doc
    assert [c["pr"] for c in doc["carried"]] == [1, 2, 3]
    assert doc["conflict"] is None
    assert [s["pr"] for s in doc["skipped"]] == [None]  # the direct push
    branch = doc["branch"]
    assert branch == f"sync/{pair.tip[:8]}"
    wt = Path(doc["worktree"])
    assert wt == pair.worktree()
    # The user's checkout and branch are untouched.
    assert pair.down.head() == head_before
    assert pair.down.git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert pair.down.git("status", "--porcelain") == ""
    # One commit per PR, oldest first, then the pin bump.
    log = pair.down.git(
        "log", "--reverse", "--format=%H%x00%an%x00%ae%x00%ad%x00%B%x01", "--date=raw", f"main..{branch}"
    )
    recs = [r.strip("\n").split("\0") for r in log.split("\x01") if r.strip()]
    assert len(recs) == 4
    up_log = pair.up.git(
        "log", "--first-parent", "--format=%H %an %ae %ad", "--date=raw", pair.tip
    ).splitlines()
    up_meta = {line.split()[0]: line.split(None, 1)[1] for line in up_log}
    for rec, carried in zip(recs, doc["carried"], strict=False):
        sha, name, email, date, message = rec
        assert sha == carried["commit"]
        assert f"{name} {email} {date}" == up_meta[carried["upstream_commit"]]
        trailers = message.strip().splitlines()[-2:]
        assert trailers == [
            f"Upstream-PR: THUDM/slime#{carried['pr']}",
            f"Upstream-Commit: {carried['upstream_commit']}",
        ]
    assert recs[1][4].startswith("Change a and util\n\nLonger text.")  # a merge PR: its title, then the body
    # The tree is the mapped + translated upstream at TIP (the direct push left out).
    got = tree(pair.down.path, branch)
    assert got["vime/a.py"][1] == b"from vime import x\nprint(2)\n"
    assert got["vime/d.py"][1] == b"import vime.c\n"
    assert "vime/c.py" not in got
    assert got["README.md"][1] == b"Slime\n"
    pin = got["pins/slime.toml"][1].decode()
    assert f'synced = "{pair.tip}"' in pin
    assert pin.startswith("# Last upstream commit") and "# owner/name" in pin  # comments kept
    # The worktree is at the branch tip, clean.
    assert git.resolve(wt, "HEAD") == git.resolve(pair.down.path, branch)
    assert git.run(wt, ["status", "--porcelain"]) == b""
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_walk_sees_every_carried_pr_mirrored_and_a_second_carry_does_nothing(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys)
    assert code == 0
    branch = doc["branch"]
    walked = pair.walked(capsys, branch)
    assert {p["number"]: p["status"] for p in walked} == {1: "mirrored", 2: "mirrored", 3: "mirrored"}
    assert all("trailer" in p["mirrored_by"] for p in walked)
    # Again, from the sync branch's worktree: the pin says TIP, nothing to carry, no commit, no branch.
    wt = Path(doc["worktree"])
    refs = pair.down.git("for-each-ref")
    code, again = pair.carry(capsys, cwd=wt)
    assert code == 0 and again["status"] == "nothing" and again["message"] == "nothing to carry"
    # The same range again onto the branch: every PR mirrored, nothing to carry.
    code, again = pair.carry(capsys, "--range", f"{pair.base}..{pair.tip}", "--onto", branch, "--branch", "x")
    assert code == 0 and again["status"] == "nothing"
    assert {s["pr"] for s in again["skipped"] if s["pr"]} == {1, 2, 3}
    assert pair.down.git("for-each-ref") == refs


def test_dry_run_prints_the_plan_and_changes_nothing(pair: Pair, capsys) -> None:
    pair.down.write({"vime/a.py": "from vime import x\nprint('mine')\n"})
    pair.down.commit("diverge")
    refs = pair.down.git("for-each-ref")
    objects = pair.down.git("count-objects", "-v")
    code, doc = pair.carry(capsys, "--dry-run")
    assert code == 0 and doc["status"] == "planned"
    plan = {p["pr"]: p for p in doc["planned"]}
    assert plan[2]["conflict"] == ["vime/a.py"]
    assert (
        plan[1]["conflict"] == [] and plan[1]["paths"] == ["vime/c.py"] and plan[1]["translation_hits"] == 1
    )
    assert plan[3]["paths"] == ["vime/c.py", "vime/d.py"]
    assert pair.down.git("for-each-ref") == refs
    assert objects == pair.down.git("count-objects", "-v")  # not even an object written
    assert not pair.worktree().exists()


def test_empty_after_merge_is_skipped_never_an_empty_commit(pair: Pair, capsys) -> None:
    # Along with other work, so no patch-id says #1 is there: only the merge finds it empty.
    pair.down.commit("already has c", {"vime/c.py": "import vime.c\n", "vime/mine.py": "x = 1\n"})
    code, doc = pair.carry(capsys)
    assert code == 0
    reasons = {s["pr"]: s["reason"] for s in doc["skipped"]}
    assert [c["pr"] for c in doc["carried"]] == [2, 3]
    assert "empty after the merge" in reasons[1]
    # Recorded in the pin bump, so the walk sees it mirrored like the carried ones.
    assert "Upstream-PR: THUDM/slime#1" in pair.down.git("log", "-1", "--format=%B", doc["branch"])
    assert {p["number"]: p["status"] for p in pair.walked(capsys, doc["branch"])} == {
        1: "mirrored",
        2: "mirrored",
        3: "mirrored",
    }


def test_squash_makes_one_commit_with_every_trailer(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys, "--squash")
    assert code == 0
    log = pair.down.git("log", "--format=%B%x01", f"main..{doc['branch']}").split("\x01")
    assert len([m for m in log if m.strip()]) == 2  # the squash commit, the pin bump
    squash = log[1]
    for n in (1, 2, 3):
        assert f"Upstream-PR: THUDM/slime#{n}" in squash
    assert tree(pair.down.path, doc["branch"])["vime/d.py"][1] == b"import vime.c\n"


def test_pr_picks_and_direct_include(pair: Pair, capsys) -> None:
    code, doc = pair.carry(capsys, "--pr", "2")
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [2]
    cli(capsys, "carry", "--abort", cwd=pair.down.path)  # nothing in progress: still fine
    code, doc = pair.carry(capsys, "--direct", "include", "--branch", "all")
    assert [c["pr"] for c in doc["carried"]] == [1, 2, 3, None]
    msg = pair.down.git("log", "-1", "--format=%B", "all~1")
    assert "Upstream-PR" not in msg and f"Upstream-Commit: {pair.tip}" in msg
    assert tree(pair.down.path, "all")["README.md"][1] == b"Slime 2\n"


def test_existing_branch_or_worktree_is_refused(pair: Pair, capsys) -> None:
    pair.down.git("branch", f"sync/{pair.tip[:8]}")
    code, out, err = cli(capsys, "carry", cwd=pair.down.path)
    assert code == 2 and "already exists" in err
    code, out, err = cli(
        capsys, "carry", "--branch", "other", "--worktree", str(pair.root), cwd=pair.down.path
    )
    assert code == 2 and "already exists" in err
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_a_file_merged_twice_reads_the_first_merge_before_it_lands(tmp_path: Path, capsys) -> None:
    # The downstream diverged at the end of a file; two PRs change its start in turn. The second
    # merge reads the first one's result, which fast-import has not made readable yet.
    pair = build_pair(tmp_path)
    lines = [f"line {i}\n" for i in range(30)]
    pair.up.commit("add long (#10)", {"slime/long.py": "".join(lines)})
    pair.up.commit("edit 1 (#11)", {"slime/long.py": "".join(["first\n", *lines[1:]])})
    pair.up.commit("edit 2 (#12)", {"slime/long.py": "".join(["first\n", "second\n", *lines[2:]])})
    tip = pair.up.head()
    # #10 is carried already (by hand, with its trailer); similar content alone would only suggest it.
    pair.down.commit(
        "mine\n\nUpstream-PR: THUDM/slime#10", {"vime/long.py": "".join([*lines[:-1], "downstream\n"])}
    )
    code, doc = pair.carry(capsys, "--range", f"{pair.tip}..{tip}", "--branch", "twice")
    assert code == 0, doc
    got = tree(pair.down.path, "twice")["vime/long.py"][1].decode()
    assert got == "".join(["first\n", "second\n", *lines[2:-1], "downstream\n"])


def test_the_committer_is_the_job_or_the_repository_user(pair: Pair, capsys, monkeypatch) -> None:
    pair.down.git("config", "user.name", "Vime Maintainer")
    pair.down.git("config", "user.email", "maint@vime.example")
    code, doc = pair.carry(capsys)
    assert code == 0
    who = pair.down.git("log", "--format=%cn <%ce>", f"main..{doc['branch']}").splitlines()
    assert set(who) == {"Vime Maintainer <maint@vime.example>"}
    pin_author = pair.down.git("log", "-1", "--format=%an", doc["branch"]).strip()
    assert pin_author == "Vime Maintainer"  # the pin bump is ours
    monkeypatch.setenv("GIT_COMMITTER_NAME", "CI Job")
    code, doc = pair.carry(capsys, "--branch", "ci", "--worktree", str(pair.root / "ci"))
    assert {
        line.split(" <")[0] for line in pair.down.git("log", "--format=%cn", "main..ci").splitlines()
    } == {"CI Job"}


def test_carry_and_audit_agree_where_a_map_without_slash_ends(tmp_path: Path, capsys) -> None:
    # `slime=vime` names the folder slime/: slimeextra/ is outside it. The carry once renamed
    # it by plain prefix (vimeextra/) while the audit looked for vimeextra/ upstream and found
    # nothing; both now keep its name, so the audit finds the identical upstream file.
    pair = build_pair(tmp_path, config=CONFIG.replace('map = ["slime/=vime/"]', 'map = ["slime=vime"]'))
    pair.up.commit("Add extra (#4)", {"slimeextra/x.py": "x = 1\n", "slime/e.py": "e = 1\n"})
    pair.tip = pair.up.head()
    code, doc = pair.carry(capsys)
    assert code == 0, doc
    branch = doc["branch"]
    got = tree(pair.down.path, branch)
    assert got["slimeextra/x.py"][1] == b"x = 1\n" and got["vime/e.py"][1] == b"e = 1\n"
    assert not any(p.startswith("vimeextra") for p in got)
    code, out, _ = cli(
        capsys,
        "audit",
        "--json",
        "--baseline",
        "main",
        "--head",
        branch,
        "--upstream-tip",
        pair.tip,
        cwd=pair.down.path,
    )
    paths = {p["path"]: p for p in json.loads(out)["paths"]}
    assert (paths["slimeextra/x.py"]["upstream_path"], paths["slimeextra/x.py"]["cls"]) == (
        "slimeextra/x.py",
        IDENTICAL,
    )
    assert (paths["vime/e.py"]["upstream_path"], paths["vime/e.py"]["cls"]) == ("slime/e.py", IDENTICAL)


def test_a_selection_moves_synced_only_to_before_the_first_pr_left_behind(pair: Pair, capsys) -> None:
    """--pr 1 --pr 3 leaves the applicable #2 behind: synced stops before it (not at TIP), the
    result says so, and the next default carry still walks #2."""
    code, doc = pair.carry(capsys, "--pr", "1", "--pr", "3")
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 3]
    pr1 = doc["carried"][0]["upstream_commit"]
    got = tree(pair.down.path, doc["branch"])
    assert f'synced = "{pr1}"'.encode() in got["pins/slime.toml"][1]
    assert any(f"synced moves to {pr1[:12]}" in n and "#2" in n for n in doc["notes"]), doc["notes"]
    pair.down.git("merge", "-q", "--ff-only", doc["branch"])
    code, doc = pair.carry(capsys, "--dry-run")
    assert code == 0 and [p["pr"] for p in doc["planned"]] == [2]


def test_a_carried_direct_push_reads_as_mirrored_by_its_trailer(pair: Pair, capsys) -> None:
    # Issue 17.5: a second carry onto the sync branch tried the direct push again.
    code, doc = pair.carry(capsys, "--direct", "include")
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [1, 2, 3, None]
    branch = doc["branch"]
    code, again = pair.carry(
        capsys,
        "--range",
        f"{pair.base}..{pair.tip}",
        "--onto",
        branch,
        "--branch",
        "x",
        "--direct",
        "include",
    )
    assert code == 0 and again["status"] == "nothing", again
    direct = [s for s in again["skipped"] if s["pr"] is None]
    assert [s["upstream_commit"] for s in direct] == [pair.tip]
    assert direct[0]["reason"].startswith("already downstream: trailer Upstream-Commit")
    _, out, _ = cli(
        capsys,
        "walk",
        "--json",
        "--downstream",
        ".",
        "--downstream-rev",
        branch,
        "--range",
        f"{pair.base}..{pair.tip}",
        cwd=pair.down.path,
    )
    (walked,) = json.loads(out)["direct_commits"]
    assert walked["mirrored_by"].startswith("trailer Upstream-Commit")


def test_a_pr_ported_by_hand_translated_is_mirrored_for_walk_carry_and_report(pair: Pair, capsys) -> None:
    # Issue 17.9: the port has the translated content (import vime.c); its patch-id is that of
    # the mapped AND translated upstream diff. Carry once skipped it as empty after the merge
    # while walk kept it applicable, so the report's carried gate could never hold.
    pair.down.commit("port c by hand", {"vime/c.py": "import vime.c\n"})
    walked = pair.walked(capsys, "main")
    assert walked[0]["number"] == 1 and walked[0]["status"] == "mirrored", walked[0]
    assert walked[0]["mirrored_by"] == "patch-id of the PR"
    code, doc = pair.carry(capsys)
    assert code == 0 and [c["pr"] for c in doc["carried"]] == [2, 3]
    (skip,) = [s for s in doc["skipped"] if s["pr"] == 1]
    assert skip["reason"].startswith("already downstream: patch-id of the PR")
    code, out, _ = cli(capsys, "report", "--json", "--head", doc["branch"], cwd=pair.down.path)
    report = json.loads(out)
    assert [p["number"] for p in report["summary"]["not_carried"]] == [], report["summary"]
