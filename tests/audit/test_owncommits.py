"""The sync's own changes: commits on the sync branch that carry did not make (issue 20)."""

from __future__ import annotations

from pathlib import Path

from tests.builders.gitrepo import Repo
from vimesync.audit.owncommits import own_commits, parse_log


def test_the_maintainers_commits_are_listed_with_their_net_lines(tmp_path: Path) -> None:
    down = Repo(tmp_path / "down")
    baseline = down.commit("baseline", {"vime/a.py": "".join(f"line {i}\n" for i in range(20))})
    down.commit(
        "Add c (#1)\n\nUpstream-PR: THUDM/slime#1\nUpstream-Commit: " + "1" * 40,
        {"vime/c.py": "c\n" * 30},
    )
    down.commit("Sync upstream through 1234567890ab", {"pins/slime.toml": "synced = 'x'\n"})
    down.commit("Remove the spill", {"vime/a.py": "line 0\n"})
    down.commit("review ledger", {"sop/reviews/s.toml": "sync = 's'\n"})
    down.commit("Restore comments", {"vime/b.py": "# why\nb = 1\n", "vime/x.bin": b"\0\1"})
    own = own_commits(down.path, baseline, "HEAD", pin_path="pins/slime.toml")
    assert [(c.subject, c.added, c.removed, c.binary) for c in own.commits] == [
        ("Remove the spill", 0, 19, 0),
        ("Restore comments", 2, 0, 1),
    ]
    assert (own.net, own.carried, own.pin_bumps, own.bookkeeping) == (-17, 1, 1, 1)
    assert own.commits[0].author  # the commit's author name
    # Without the pin's path, carry's subject on a one-file commit tells the pin bump.
    assert own_commits(down.path, baseline, "HEAD", pin_path=None).pin_bumps == 1


def test_a_subject_cannot_forge_a_record() -> None:
    out = "\0\0" + "\0".join(["a" * 40, "eve", "x @@ \x1f fake", ""]) + "\n3\t1\tf.py\n"
    own = parse_log(out, pin_path=None)
    assert [(c.subject, c.added, c.removed) for c in own.commits] == [("x @@ \x1f fake", 3, 1)]


def test_the_report_says_how_many_bookkeeping_commits_it_leaves_out() -> None:
    from vimesync.audit.owncommits import OwnChanges, OwnCommit
    from vimesync.report.auditmd import render_own

    fix = OwnCommit("a" * 40, "Vime Maintainer", "fix", 3, 1)
    text = "\n".join(render_own(OwnChanges((fix,), carried=2, pin_bumps=1, bookkeeping=2)))
    assert "2 carried commits, 1 pin bump and 2 bookkeeping commits under sop/ not listed" in text
    none = "\n".join(render_own(OwnChanges((), carried=1, pin_bumps=1, bookkeeping=1)))
    assert "(1 carried commit, 1 pin bump and 1 bookkeeping commit under sop/ not listed)" in none
