from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.audits import run_audit
from tests.builders.gitrepo import Repo
from vimesync.audit.ledger import file_safe, ledger_relpath, read_ledger, record, write_ledger
from vimesync.audit.model import (
    ABSENT,
    DELETED,
    DOWNSTREAM_ONLY,
    EXCLUDED,
    IDENTICAL,
    OVERLAY,
    REVIEWED,
    STALE,
    UNREVIEWED,
    VERIFIED,
)
from vimesync.audit.run import load_excluded_globs, reviews_for
from vimesync.audit.syncname import default_sync_name
from vimesync.errors import BadInput, ConfigError

POLICY = """
[[rule]]
action = "exclude"
reason = "Ascend is not supported downstream"
paths = ["slime/backends/ascend/**"]

[[rule]]
action = "include"
reason = "requested"
prs = [7]
"""


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Repo, Repo, str, str, str]:
    up = Repo(tmp_path / "up")
    up.commit("upstream base", {"slime/a.py": "a = 1\n", "slime/old.py": "old\n"})
    tip = up.commit(
        "upstream tip",
        {
            "slime/a.py": "a = 2\n",
            "slime/b.py": "from slime import a\n",
            "slime/backends/ascend/x.py": "npu = 2\n",
            "README.md": "readme v2\n",
            "slime/old.py": None,
        },
    )
    down = Repo(tmp_path / "down")
    baseline = down.commit(
        "baseline",
        {
            "vime/a.py": "a = 1\n",
            "vime/old.py": "old\n",
            "vime/backends/ascend/x.py": "npu = 1\n",
            "README.md": "readme v1\n",
            "vime/untouched.py": "same\n",
        },
    )
    head = down.commit(
        "sync",
        {
            "vime/a.py": "a = 2\n",  # identical to slime/a.py
            "vime/b.py": "from vime import a\n",  # translated
            "vime/own.py": "overlay\n",  # downstream-only
            "vime/old.py": None,  # deleted
            "vime/backends/ascend/x.py": "npu = 3\n",  # excluded
            "README.md": "readme v2\n",  # identical, unmapped path
        },
    )
    return up, down, tip, baseline, head


def test_every_changed_path_is_classified(repos, tmp_path: Path) -> None:
    up, down, tip, baseline, head = repos
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    result = run_audit(
        down.path,
        baseline,
        head,
        up.path,
        "main",
        sync="s",
        path_map=(("slime/", "vime/"),),
        excluded_globs=load_excluded_globs(policy),
    )
    got = {p.path: p.cls for p in result.paths}
    assert got == {
        "README.md": IDENTICAL,
        "vime/a.py": IDENTICAL,
        "vime/b.py": OVERLAY,
        "vime/own.py": DOWNSTREAM_ONLY,
        "vime/old.py": DELETED,
        "vime/backends/ascend/x.py": EXCLUDED,
    }
    assert result.upstream_tip == tip
    assert {p.path: p.review for p in result.paths}["vime/a.py"] == VERIFIED
    assert not result.ok
    assert {p.path for p in result.unreviewed} == {
        "vime/b.py",
        "vime/own.py",
        "vime/old.py",
        "vime/backends/ascend/x.py",
    }


@pytest.mark.slow
def test_reviews_make_the_audit_pass_and_later_changes_make_them_stale(repos) -> None:
    up, down, tip, baseline, head = repos
    sync = default_sync_name("4c193f1f" * 5, tip)
    ledger_file = down.path / ledger_relpath(sync)
    reviews = reviews_for(down.path, ["vime/"], by="alice", at="2026-11-29T21:00:00Z", baseline=baseline)
    assert {r.path: r.oid for r in reviews}["vime/old.py"] == ABSENT
    assert "vime/untouched.py" not in {r.path for r in reviews}
    write_ledger(ledger_file, record(read_ledger(ledger_file, sync), reviews))
    audit = run_audit(down.path, baseline, head, up.path, tip, sync=sync, path_map=(("slime/", "vime/"),))
    assert audit.ok, [p for p in audit.paths if not p.ok]
    assert audit.ledger_path == f"sop/reviews/4c193f1f..{tip[:8]}.toml"

    down.git("add", ledger_relpath(sync))  # the committed ledger is not itself audited
    head2 = down.commit("fix after review", {"vime/b.py": "from vime import a  # fixed\n"})
    audit2 = run_audit(down.path, baseline, head2, up.path, tip, sync=sync, path_map=(("slime/", "vime/"),))
    state = {p.path: p.review for p in audit2.paths}
    assert state["vime/b.py"] == STALE
    assert state["vime/own.py"] == REVIEWED
    assert [p.path for p in audit2.stale] == ["vime/b.py"]
    assert not any(p.path.startswith("sop/") for p in audit2.paths)


@pytest.mark.slow
def test_review_of_unknown_path_is_bad_input(repos) -> None:
    _up, down, _tip, baseline, _head = repos
    with pytest.raises(BadInput, match="nope.py"):
        reviews_for(down.path, ["nope.py"], by="a", at="", baseline=baseline)
    with pytest.raises(BadInput, match="--by"):
        reviews_for(down.path, ["vime/b.py"], by=" ", at="")


def test_unreviewed_without_ledger(repos) -> None:
    up, down, tip, baseline, head = repos
    audit = run_audit(down.path, baseline, head, up.path, tip, sync="x")
    # without the path map, vime/a.py has no upstream counterpart
    assert {p.path: p.cls for p in audit.paths}["vime/a.py"] == DOWNSTREAM_ONLY
    assert {p.path: p.review for p in audit.paths}["vime/b.py"] == UNREVIEWED


def test_ledger_round_trip_and_file_safe_names(tmp_path: Path) -> None:
    assert file_safe("4c193f1f..8c17b676") == "4c193f1f..8c17b676"
    assert file_safe("../../etc/passwd") == "-..-etc-passwd"
    assert ledger_relpath("a b") == "sop/reviews/a-b.toml"
    path = tmp_path / "sop/reviews/x.toml"
    from vimesync.audit.model import Ledger, Review

    ledger = record(Ledger("x"), [Review("b.py", "1" * 40, 'Zoë "z"', "t"), Review("a.py", "2" * 40, "al")])
    ledger = record(ledger, [Review("b.py", "3" * 40, "bo")])
    write_ledger(path, ledger)
    again = read_ledger(path, "x")
    assert again == ledger
    assert [r.path for r in again.reviews] == ["a.py", "b.py"]
    assert again.get("b.py").by == "bo"
    assert list(path.parent.iterdir()) == [path]  # no temp file left behind


def test_malformed_ledger_is_config_error(tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    path.write_text('[[review]]\npath = "a"\n')
    with pytest.raises(ConfigError, match="oid"):
        read_ledger(path, "x")


@pytest.mark.slow
def test_deletions_mirroring_upstream_are_verified(repos) -> None:
    up, down, tip, baseline, head = repos
    pm = (("slime/", "vime/"),)
    without = run_audit(down.path, baseline, head, up.path, tip, sync="x", path_map=pm)
    assert {p.path: p.review for p in without.paths}["vime/old.py"] == UNREVIEWED
    audit = run_audit(
        down.path, baseline, head, up.path, tip, sync="x", path_map=pm, upstream_base=f"{tip}~1"
    )
    old = {p.path: p for p in audit.paths}["vime/old.py"]
    assert (old.cls, old.review) == (DELETED, VERIFIED)
    assert audit.upstream_base == up.git("rev-parse", "HEAD~1").strip()


def test_baseline_equal_to_head_audits_nothing(repos) -> None:
    up, down, tip, _baseline, head = repos
    assert run_audit(down.path, head, "HEAD", up.path, tip, sync="x").paths == ()


def test_reversed_baseline_and_head_are_refused(repos) -> None:
    up, down, tip, baseline, head = repos
    with pytest.raises(BadInput) as exc:
        run_audit(down.path, "HEAD", "HEAD~1", up.path, tip, sync="x")
    msg = str(exc.value)
    assert f"--head HEAD~1 ({baseline[:12]}) is an ancestor of --baseline HEAD ({head[:12]})" in msg
    assert "the range is reversed; did you mean --baseline HEAD~1 --head HEAD?" in msg
    with pytest.raises(BadInput, match="reversed"):
        reviews_for(down.path, ["vime/"], by="a", at="", head="HEAD~1", baseline="HEAD")


@pytest.mark.slow
def test_baseline_off_the_heads_history_is_refused(repos) -> None:
    up, down, tip, _baseline, _head = repos
    down.branch("side", "HEAD~1")
    side = down.commit("side work", {"side.py": "x\n"})
    with pytest.raises(BadInput) as exc:
        run_audit(down.path, side, "main", up.path, tip, sync="x")
    assert f"--baseline {side} ({side[:12]}) is not an ancestor of --head main" in str(exc.value)
    assert exc.value.hint and "merge-base" in exc.value.hint


@pytest.mark.parametrize("pair", [("", "x/"), ("slime/", ""), ("/", "vime/")])
def test_path_map_with_an_empty_side_is_refused(repos, pair: tuple[str, str]) -> None:
    up, down, tip, baseline, head = repos
    with pytest.raises(BadInput, match="SRC and DST must both name a path"):
        run_audit(down.path, baseline, head, up.path, tip, sync="x", path_map=(("slime/", "vime/"), pair))
