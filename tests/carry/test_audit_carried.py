"""A carried sync audited end to end (issue 20): pure translations clear with their rule, one
deliberate overlay edit is the only review, the report lists the maintainer's commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import CONFIG, build_pair, cli

VERIFY = "[[upstream.verify]]\npattern = '\\bimport slime\\b'\npaths = [\"vime/**\"]\n\n"

pytestmark = pytest.mark.slow  # a carry, audits and a report in real repositories


def test_a_carried_sync_needs_one_review_the_overlay(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path, config=CONFIG.replace("[downstream]", VERIFY + "[downstream]"))
    code, doc = pair.carry(capsys)
    assert code == 0, doc
    work = pair.worktree()
    code, out, _ = cli(capsys, "audit", "--json", cwd=work)
    paths = {p["path"]: p for p in json.loads(out)["paths"]}
    assert code == 0, [p for p in paths.values() if p["review"] not in ("verified", "reviewed")]
    assert paths["vime/a.py"]["class"] == "translated-verified"  # from slime import x
    rule = r"vimesync.toml:8 '\b(from|import) slime\b' -> '\1 vime' (1 match)"
    assert paths["vime/a.py"]["rules"] == [rule]
    assert paths["pins/slime.toml"]["review"] == "verified"  # carry's pin bump

    (work / "vime/a.py").write_text("from vime import x\nprint(2)\nprint('vime')  # overlay\n")
    (work / "vime/d.py").write_text("import vime.c\nimport slime\n")
    pair.down.git("-C", str(work), "commit", "-qam", "Vime: print more")
    code, out, _ = cli(capsys, "audit", "--json", cwd=work)
    doc = json.loads(out)
    assert code == 1 and doc["overlays"] == ["vime/a.py", "vime/d.py"] == doc["unreviewed"]
    found = [(v["path"], v["line"], v["where"]) for v in doc["violations"]]
    assert found == [("vime/d.py", 2, "vimesync.toml:12")]
    code, out, _ = cli(capsys, "report", cwd=work)
    assert "- `vime/a.py`: +1/-0 lines of residue, unreviewed" in out
    assert "## Downstream changes in this sync" in out and "Vime: print more" in out and "net +2 lines" in out


def test_a_partial_carry_is_audited_against_what_it_carried(tmp_path: Path, capsys) -> None:
    """`carry --pr 1` moves synced to #1 only; the audit (no --upstream-tip) compares the head with
    upstream as of that commit, not the branch tip the carry never reached: before, #1's file read
    as needing review, since #3 renames it upstream (issue 20)."""
    pair = build_pair(tmp_path)
    code, doc = pair.carry(capsys, "--pr", "1")
    assert code == 0, doc
    code, out, err = cli(
        capsys, "audit", "--baseline", "main", "--head", doc["branch"], "--json", cwd=pair.down.path
    )
    audit = json.loads(out)
    assert code == 0, (err, [(p["path"], p["class"], p["review"]) for p in audit["paths"]])
    assert audit["upstream_tip"] == doc["carried"][0]["upstream_commit"]
