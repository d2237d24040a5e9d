"""``sop record image --blocked REASON``: why an architecture has no image, bound to the head,
shown by ``sop status`` and the report; the reason is user text (one line, capped, escaped)."""

from __future__ import annotations

import json

import pytest

from tests.builders.cli import run
from vimesync.demo.build import Demo

A = "sha256:" + "a" * 64
WHY = "no approved ARM64 host"


def _images_gate(demo: Demo, capsys) -> dict:
    code, out, _ = run(capsys, "sop", "status", "--baseline", demo.baseline, "--skip-gate", "ci", "--json")
    return next(g for g in json.loads(out)["gates"] if g["name"] == "images")


@pytest.mark.slow
def test_a_blocked_arch_is_accounted_for_and_said_so(demo: Demo, capsys) -> None:
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    code, out, _ = run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", WHY)
    assert code == 0 and f"recorded arm64 as blocked at {demo.head[:8]}: {WHY}" in " ".join(out.split())
    (file,) = (demo.downstream / "sop/records").iterdir()
    text = file.read_text()
    assert f'blocked = "{WHY}"' in text and text.count("digest =") == 1
    images = _images_gate(demo, capsys)
    assert images["state"] == "blocked"  # its own state: accounted for, not done (issue 29)
    assert images["detail"] == f"arm64: {WHY} (recorded at {demo.head[:8]}: amd64 {A[:19]}…)"
    code, out, _ = run(capsys, "sop", "status", "--baseline", demo.baseline, "--skip-gate", "ci")
    assert f"blocked images arm64: {WHY}" in " ".join(out.split()) and "all gates hold" not in out
    code, md, _ = run(
        capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests"
    )
    assert f"- arm64: no candidate image built or validated at {demo.head[:8]}; blocked: {WHY}." in md
    assert f"Images: **blocked** — arm64: {WHY}." in md
    # An image recorded later replaces the blocked record.
    assert run(capsys, "sop", "record", "image", "--arch", "arm64", "--digest", A)[0] == 0
    assert "blocked" not in file.read_text() and file.read_text().count("digest =") == 2


def test_blocked_is_its_own_state_and_pending_ci_is_pending() -> None:
    """Blocked lets the sync go on (exit 0, documented in docs/report.md) but is never summed up
    as "all gates hold"; CI still running makes the images gate pending, not failed."""
    from vimesync.report.checklist import images_gate
    from vimesync.sop.gates import Gate, gate, gates_verdict
    from vimesync.sop.records import ImageRecord

    head = "f" * 40
    records = {"amd64": ImageRecord("amd64", A, head), "arm64": ImageRecord("arm64", "", head, blocked=WHY)}
    held_ci = gate("ci", "held", f"green at {head[:8]}")
    images = images_gate(records, head, ("amd64", "arm64"), held_ci)
    assert (images.state, images.ok) == ("blocked", True)
    assert images.detail == f"arm64: {WHY} (recorded at ffffffff: amd64 {A[:19]}…)"
    assert gates_verdict([held_ci, images]) == f"all gates hold but images: blocked — {images.detail}"
    assert gates_verdict([held_ci, gate("images", "held", "x")]) == "all gates hold"
    assert gates_verdict([gate("ci", "failed", "x"), images]) == "1 gate not met"
    pending = images_gate(records, head, ("amd64", "arm64"), gate("ci", "pending", "pending at ffffffff"))
    assert (pending.state, pending.ok) == ("pending", False)
    assert pending.detail == "recorded, but exact-head CI is not green (pending)"
    failing = images_gate(records, head, ("amd64", "arm64"), Gate("ci", "failed", "failing at ffffffff"))
    assert failing.state == "failed"


@pytest.mark.slow
def test_blocked_amd64_does_not_let_arm64_images_in_and_all_blocked_fails(demo: Demo, capsys) -> None:
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--blocked", "no builder")[0] == 0
    code, _, err = run(capsys, "sop", "record", "image", "--arch", "arm64", "--digest", A)
    assert code == 2 and "arm64 is recorded only after amd64" in err
    assert run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", WHY)[0] == 0
    images = _images_gate(demo, capsys)
    assert images["state"] == "failed" and images["detail"].startswith("every architecture is blocked")


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--arch", "arm64", "--blocked", WHY, "--digest", A], "--blocked and --digest: give one"),
        (["--arch", "arm64"], "--digest sha256:... is required (or --blocked REASON"),
        (["--arch", "arm64", "--blocked", "two\nlines"], "--blocked: expected one line"),
        (["--arch", "arm64", "--blocked", "\x1b[2Jwipe"], "--blocked: expected one line"),
        (["--arch", "arm64", "--blocked", "bidi \u202e txt"], "--blocked: expected one line"),
        (["--arch", "arm64", "--blocked", "x" * 201], "at most 200 characters"),
        (["--arch", "arm64", "--blocked", "   "], "--blocked: expected one line"),
        (["--arch", "arm64", "--blocked", WHY, "--ref", "ghcr.io/v/v:1"], "--ref: a blocked architecture"),
    ],
)
def test_bad_blocked_records_are_refused(demo: Demo, capsys, args: list[str], needle: str) -> None:
    code, _, err = run(capsys, "sop", "record", "image", *args)
    assert code == 2 and needle in err and "Traceback" not in err and "\x1b" not in err
    assert not (demo.downstream / "sop/records").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "value, needle",
    [
        ('blocked = "a\\u001b[2J"', "blocked must be one line"),
        ('blocked = "a\\u2028b"', "blocked must be one line"),
        (f'blocked = "{"x" * 300}"', "blocked must be one line of at most 200"),
        ("blocked = 3", "blocked must be one line"),
        (f'blocked = "x"\ndigest = "{A}"', "holds a digest or is blocked, not both"),
        (f'digest = "{A}"\nverified = "a b"', "verified must name a registry (host[:port]) of an image"),
        (f'digest = "{A}"\nverified = "ghcr.io\\u001b[2J"', "verified must name a registry"),
        (f'digest = "{A}"\nverified = 1', "verified must name a registry"),
        (
            'blocked = "no host"\nverified = "ghcr.io"',
            "verified must name a registry (host[:port]) of an image",
        ),
    ],
)
def test_a_hostile_blocked_record_is_refused_when_read(demo: Demo, capsys, value: str, needle: str) -> None:
    records = demo.downstream / "sop/records"
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    (file,) = records.iterdir()
    file.write_text(file.read_text() + f'\n[images.arm64]\n{value}\nsha = "{demo.head}"\n')
    code, _, err = run(capsys, "sop", "status", "--baseline", demo.baseline)
    assert code == 2 and needle in err and "\x1b" not in err and "Traceback" not in err


@pytest.mark.slow
def test_markdown_in_a_reason_is_escaped_in_the_report(demo: Demo, capsys) -> None:
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    hostile = "see <img src=x> [link](http://e) `@alice` | *x*"
    assert run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", hostile)[0] == 0
    code, md, _ = run(
        capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci", "--skip-gate", "tests"
    )
    line = next(ln for ln in md.splitlines() if ln.startswith("- arm64:"))
    assert "\\<img src=x\\>" in line and "\\[link\\](http" in line and "\\| \\*x\\*" in line
    assert "<code>@alice</code>" in line  # no mention pings anyone
    code, out, _ = run(capsys, "sop", "status", "--baseline", demo.baseline, "--skip-gate", "ci")
    assert "see <img src=x> [link](http://e)" in " ".join(
        out.split()
    )  # the terminal shows it as text (rich markup escaped)


def test_a_sync_done_with_a_blocked_gate_says_so_on_its_last_line(capsys) -> None:
    """``sync`` ends "done: every gate holds" only when none is blocked."""
    from vimesync.app.result import Kind
    from vimesync.app.syncresult import Step, SyncResult
    from vimesync.cli.render.sync import render_sync

    figure = f"all gates hold but images: blocked — arm64: {WHY}"
    steps = (Step("status", Kind.STATUS, True, 0, figure), Step("report", Kind.REPORT, True, 0, "written"))
    render_sync(SyncResult(steps=steps, report="sync.md"))
    out = " ".join(capsys.readouterr().out.split())
    assert f"done: {figure}; the report is in sync.md" in out and "every gate holds" not in out
    render_sync(SyncResult(steps=(Step("status", Kind.STATUS, True, 0, "every gate holds"),), report="s.md"))
    assert "done: every gate holds; the report is in s.md" in " ".join(capsys.readouterr().out.split())
