"""Verified translations, overlays and their residue, verification rules (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.audits import run_audit
from tests.builders.gitrepo import Repo
from vimesync.audit.ledger import ledger_relpath, write_ledger
from vimesync.audit.model import (
    OVERLAY,
    REVIEWED,
    STALE,
    TRANSLATED_VERIFIED,
    UNREVIEWED,
    VERIFIED,
    Ledger,
    Review,
)
from vimesync.audit.residue import residue
from vimesync.audit.verify import load_verify
from vimesync.config import Config, TranslateSpec, VerifySpec
from vimesync.upstream.translate import load_transform

MAP = (("slime/", "vime/"),)
CONFIG = Config(
    path_map=MAP,
    translate=(TranslateSpec(r"\b(from|import) slime\b", r"\1 vime", None, 9),),
    verify=(VerifySpec(r"\bimport slime\b", ("vime/**",), "not-match", 14),),
)
TRANSFORM = load_transform(CONFIG)

UP_B = '"""Module b."""\n# keep this note\nfrom slime import a\n\n\ndef f():\n    return a\n'
OVERLAID = '"""Module b."""\nfrom vime import a\n\n\ndef f():\n    return a + 1  # vime\n'


@pytest.fixture
def sync(tmp_path: Path) -> tuple[Repo, Repo, str, str]:
    up = Repo(tmp_path / "up")
    up.commit("tip", {"slime/a.py": "import slime.x\nfrom slime import y\n", "slime/b.py": UP_B})
    down = Repo(tmp_path / "down")
    baseline = down.commit("baseline", {"README.md": "vime\n"})
    down.commit("sync", {"vime/a.py": "import vime.x\nfrom vime import y\n", "vime/b.py": OVERLAID})
    return up, down, baseline, "HEAD"


def _audit(up: Repo, down: Repo, baseline: str, sync: str = "s1", **kw):
    return run_audit(
        down.path, baseline, "HEAD", up.path, "main", sync=sync, path_map=MAP, transform=TRANSFORM, **kw
    )


def test_a_pure_translation_is_verified_with_its_rule_and_an_overlay_needs_review(sync) -> None:
    up, down, baseline, _ = sync
    paths = {p.path: p for p in _audit(up, down, baseline).paths}
    a, b = paths["vime/a.py"], paths["vime/b.py"]
    assert (a.cls, a.review) == (TRANSLATED_VERIFIED, VERIFIED)
    assert a.rules == (r"vimesync.toml:9 '\b(from|import) slime\b' -> '\1 vime' (2 matches)",)
    assert (b.cls, b.review) == (OVERLAY, UNREVIEWED)
    # The residue is what is left after the translation: the comment dropped, the return changed.
    assert (b.residue_added, b.residue_removed) == (1, 2)
    assert "-# keep this note\n" in b.residue_diff and "+    return a + 1  # vime\n" in b.residue_diff
    assert "+from vime import a" not in b.residue_diff  # the translation explains that line
    assert b.dropped_comments == ("2: # keep this note",)


def test_without_translations_the_whole_difference_is_residue(sync) -> None:
    up, down, baseline, _ = sync
    audit = run_audit(down.path, baseline, "HEAD", up.path, "main", sync="s", path_map=MAP)
    assert {p.path: p.cls for p in audit.paths} == {"vime/a.py": OVERLAY, "vime/b.py": OVERLAY}


def test_an_overlay_review_survives_a_later_sync_while_its_residue_holds(sync) -> None:
    up, down, baseline, _ = sync
    first = {p.path: p for p in _audit(up, down, baseline).paths}["vime/b.py"]
    write_ledger(
        down.path / ledger_relpath("s1"),
        Ledger("s1", (Review("vime/b.py", first.head_oid, "alice", residue=first.residue or ""),)),
    )
    assert {p.path: p.review for p in _audit(up, down, baseline).paths}["vime/b.py"] == REVIEWED

    # Upstream moves on around the overlay; the next sync carries that and keeps the overlay.
    up.commit("tip 2", {"slime/b.py": "# header\n" + UP_B + "\n\ndef g():\n    return 2\n"})
    down.commit("sync 2", {"vime/b.py": "# header\n" + OVERLAID + "\n\ndef g():\n    return 2\n"})
    later = {p.path: p for p in _audit(up, down, baseline, sync="s2").paths}["vime/b.py"]
    assert later.head_oid != first.head_oid and later.residue == first.residue
    assert (later.review, later.reviewed_by, later.reviewed_in) == (REVIEWED, "alice", "s1")

    # The overlay itself changes: the residue differs, the review is stale.
    down.commit("sync 3", {"vime/b.py": "# header\n" + OVERLAID.replace("+ 1", "+ 2")})
    stale = {p.path: p for p in _audit(up, down, baseline, sync="s2").paths}["vime/b.py"]
    assert (stale.review, stale.reviewed_in) == (STALE, "s1")


def test_a_verify_rule_finds_what_must_not_remain(sync) -> None:
    up, down, baseline, _ = sync
    down.commit("plant", {"vime/c.py": "x = 1\nimport slime\n", "docs/ok.md": "import slime\n"})
    audit = _audit(up, down, baseline, verify=load_verify(CONFIG))
    assert [(v.path, v.line, v.text, v.where) for v in audit.violations] == [
        ("vime/c.py", 2, "import slime", "vimesync.toml:14")
    ]
    assert not audit.ok


def test_residue_key_ignores_line_numbers_and_context() -> None:
    one = residue("x.py", b"a\nb\nc\n", b"a\nB\nc\n")
    moved = residue("x.py", b"z\nz\na\nb\nc\nq\n", b"z\nz\na\nB\nc\nq\n")
    other = residue("x.py", b"a\nb\nc\n", b"a\nC\nc\n")
    assert one.key == moved.key != other.key
    assert (one.added, one.removed) == (1, 1)
    binary = residue("x.bin", b"\0a", b"\0b")
    assert (binary.diff, binary.added) == ("", 0)


def test_a_broken_rule_is_a_junit_failure_and_an_annotation_on_its_line(sync) -> None:
    from vimesync.outputs.findings import audit_findings

    up, down, baseline, _ = sync
    down.commit("plant", {"vime/c.py": "x = 1\nimport slime\n"})
    findings = audit_findings(_audit(up, down, baseline, verify=load_verify(CONFIG)))
    failed = [c for c in findings.suites[0].cases if c.classname == "audit.verify"]
    assert [(c.file, c.line) for c in failed] == [("vime/c.py", 2)]
    assert [(n.file, n.line, n.title) for n in findings.annotations if n.line] == [
        ("vime/c.py", 2, "verification rule broken")
    ]
    assert "`vime/c.py:2`" in findings.summary


def test_carrys_pin_bump_is_verified_and_any_other_pin_edit_is_not(tmp_path: Path) -> None:
    from vimesync.audit.compare import PIN_BUMP_RULE, is_pin_bump

    up = Repo(tmp_path / "up")
    old = up.commit("base", {"slime/a.py": "a\n"})
    tip = up.commit("tip", {"slime/a.py": "b\n"})
    pin = '# last carried\n[upstream]\nrepo = "THUDM/slime"\nsynced = "{}"  # carry bumps it\n'
    down = Repo(tmp_path / "down")
    baseline = down.commit("baseline", {"pins/slime.toml": pin.format(old)})
    down.commit("Sync upstream through x", {"pins/slime.toml": pin.format(tip)})
    audit = run_audit(
        down.path, baseline, "HEAD", up.path, tip, sync="s", path_map=MAP, upstream_pin="pins/slime.toml"
    )
    (p,) = audit.paths
    assert (p.review, p.rules) == (VERIFIED, (PIN_BUMP_RULE,))

    def resolve(rev: str) -> str | None:
        return tip if rev == tip else None

    base = pin.format(old).encode()
    assert is_pin_bump(base, pin.format(tip).encode(), resolve, tip)
    assert not is_pin_bump(base, pin.format(old[:12]).encode(), resolve, tip)  # not the tip
    assert not is_pin_bump(base, pin.format(tip).replace("THUDM", "eve").encode(), resolve, tip)
    assert not is_pin_bump(base, pin.format("--output=x").encode(), lambda r: tip, tip)  # no option
