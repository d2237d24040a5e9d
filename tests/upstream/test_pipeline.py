from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.upstream import POLICY, Upstream, build_downstream
from tests.builders.workspaces import workspace
from vimesync.app.upstreamsteps import walk
from vimesync.config import Config, UpstreamPin
from vimesync.errors import BadInput
from vimesync.upstream.model import APPLICABLE, EXCLUDED, MIRRORED
from vimesync.upstream.pipeline import parse_range


@pytest.mark.parametrize(
    "range_,pin,branch,expected",
    [
        ("a..b", None, None, ("a", "b")),
        ("a..", None, "main", ("a", "main")),
        ("a..", None, None, ("a", "HEAD")),
        ("..b", "p", None, ("p", "b")),
        ("b", None, None, (None, "b")),
        (None, "p", "main", ("p", "main")),
    ],
)
def test_parse_range(range_: str | None, pin: str | None, branch: str | None, expected: tuple) -> None:
    cfg = Config(upstream_branch=branch, upstream_pin=UpstreamPin(synced=pin))
    assert parse_range(range_, cfg) == expected


@pytest.mark.parametrize("range_", ["a...b", None, "..b"])
def test_parse_range_refuses(range_: str | None) -> None:
    with pytest.raises(BadInput):
        parse_range(range_, Config())


@pytest.mark.slow
def test_everything_together(tmp_path: Path, upstream: Upstream) -> None:
    down = build_downstream(tmp_path / "down", upstream)
    pol = tmp_path / "policy.toml"
    pol.write_text(POLICY + '\n[[rule]]\naction = "exclude"\nreason = "labelled"\nlabels = ["skip"]\n')
    meta = tmp_path / "prs.json"
    meta.write_text(json.dumps([{"number": 10, "title": "Empty", "labels": [{"name": "skip"}]}]))
    cfg = Config(upstream_repo="THUDM/slime", path_map=(("slime/", "vime/"),), upstream_branch="main")
    ws = workspace(
        cfg,
        downstream=down.path,
        upstream=upstream.path,
        range_=f"{upstream.shas['root']}..",
        policy=pol,
        pr_metadata=meta,
    )
    r = walk(ws)
    status = {p.number: p.decision.status for p in r.prs if p.decision}
    assert status == {
        1: MIRRORED,
        2: MIRRORED,
        3: APPLICABLE,  # similar content: it looks mirrored, which is not counted (issue 18, 2)
        4: MIRRORED,
        5: APPLICABLE,
        6: EXCLUDED,
        8: EXCLUDED,
        9: APPLICABLE,
        10: EXCLUDED,
    }
    assert r.upstream == "THUDM/slime" and r.notes == ()
    three = next(p for p in r.prs if p.number == 3)
    assert three.decision is not None and three.decision.looks_mirrored is not None


def test_labels_rule_without_metadata_is_noted(tmp_path: Path, upstream: Upstream) -> None:
    pol = tmp_path / "policy.toml"
    pol.write_text('[[rule]]\naction = "exclude"\nreason = "labelled"\nlabels = ["skip"]\n')
    r = walk(workspace(upstream=upstream.path, range_="main", policy=pol))
    assert r.notes and "labels" in r.notes[0]


def test_config_supplies_upstream_pin_and_policy(tmp_path: Path, upstream: Upstream) -> None:
    pol = tmp_path / "policy.toml"
    pol.write_text(POLICY)
    cfg = Config(
        upstream_path=upstream.path,
        upstream_branch="main",
        upstream_pin=UpstreamPin(synced=upstream.shas["pr4b"]),
        policy=pol,
    )
    r = walk(workspace(cfg))
    assert [p.number for p in r.prs] == [5, 6, 8, 9, 10] and r.prs[1].decision.status == EXCLUDED


def test_walk_runs_without_the_engine_pin(
    tmp_path: Path, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """walk never uses the engine: a missing (or broken) engine pin does not stop it (issue 16)."""
    from tests.builders.cli import run

    (tmp_path / ".git").mkdir()
    cfg = tmp_path / "vimesync.toml"
    cfg.write_text(f'[upstream]\npath = "{upstream.path}"\n[engine]\npin = "pins/missing.toml"\n')
    code, out, err = run(capsys, "walk", "--config", str(cfg), "--range", "main", "--json")
    assert code == 0, err
    assert json.loads(out)["totals"]["prs"] > 0
    code, _, err = run(capsys, "patches", "check", "--config", str(cfg))
    assert code == 2 and "missing.toml" in err  # the engine's own command still says so
