"""``patches check`` and ``audit`` as CI runs them: --junit, annotations, the job summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml

from tests.builders.hostile import SECRET, cli, make_checkout, make_stack
from tests.builders.stack import ENGINE, Stack

pytestmark = pytest.mark.slow  # the CLI as real processes


def _drifted_checkout(tmp_path: Path) -> tuple[Path, Stack]:
    stack = make_stack(tmp_path)
    checkout = make_checkout(tmp_path, stack)
    drifted = stack.drift({"eng/util.py": ENGINE["eng/util.py"].replace("os.getcwd()", "os.getcwdb()")})
    pin = checkout / "pins/engine.toml"
    pin.write_text(pin.read_text().replace(stack.pin, drifted))
    return checkout, stack


def test_github_actions_gets_annotations_junit_and_a_summary(tmp_path: Path) -> None:
    checkout, stack = _drifted_checkout(tmp_path)
    summary = tmp_path / "step_summary"
    summary.write_text("earlier\n")
    src = str(stack.repo.path)  # in CI, a location outside the checkout comes from the job only
    proc = cli(
        "patches",
        "check",
        "--source",
        src,
        "--junit",
        "out.xml",
        cwd=checkout,
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[stop].split("::")[2]
    resume = lines.index(f"::{token}::")
    assert stop == 0 and "FAILED" in "\n".join(lines[stop:resume])  # the human output, commands off
    (note,) = lines[resume + 1 :]
    hunk_line = next(
        i
        for i, t in enumerate((checkout / "patches/0001-a.patch").read_text().splitlines(), 1)
        if t.startswith("@@")
    )
    assert note.startswith(
        f"::error file=patches/0001-a.patch,line={hunk_line},title=0001-a.patch%3A hunk #1 "
    )
    xml = JUnitXml.fromfile(str(checkout / "out.xml"))
    assert xml.tests == 2 and xml.failures == 1
    text = summary.read_text()
    assert text.startswith("earlier\n\n## engine patch stack\n") and "1 of 1 patch fails" in text
    assert SECRET not in proc.stdout + proc.stderr


def test_json_mode_keeps_stdout_one_document(tmp_path: Path) -> None:
    import json

    checkout, _ = _drifted_checkout(tmp_path)
    proc = cli("patches", "check", "--json", "--annotations", "github", cwd=checkout)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["ok"] is False
    assert [line for line in proc.stderr.splitlines() if line.startswith("::error ")]


def test_no_annotations_outside_github(tmp_path: Path) -> None:
    checkout, _ = _drifted_checkout(tmp_path)
    proc = cli("patches", "check", cwd=checkout, GITHUB_ACTIONS="")
    assert proc.returncode == 1 and "::" not in proc.stdout


def test_a_hostile_patch_name_cannot_issue_a_command(tmp_path: Path) -> None:
    stack = make_stack(tmp_path)
    checkout = make_checkout(tmp_path, stack)
    evil = "::warning::forged,title=y"  # a series entry holds no blank
    (checkout / "patches" / "0001-a.patch").rename(checkout / "patches" / evil)
    (checkout / "patches/series").write_text(evil + "\n")
    drifted = stack.drift({"eng/util.py": ENGINE["eng/util.py"].replace("os.getcwd()", "os.getcwdb()")})
    pin = checkout / "pins/engine.toml"
    pin.write_text(pin.read_text().replace(stack.pin, drifted))
    proc = cli("patches", "check", "--annotations", "github", cwd=checkout)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    token = lines[0].split("::")[2]
    resume = lines.index(f"::{token}::")
    # Every line the runner would obey (after blanks) outside stop-commands is one of ours.
    obeyed = [line for line in lines[resume + 1 :] if line.lstrip().startswith("::")]
    assert len(obeyed) == 1 and obeyed[0].startswith(
        "::error file=patches/%3A%3Awarning%3A%3Aforged%2Ctitle=y,"
    )
    # Shown as text, with commands off (and inert even so: a table row may start with the name).
    assert any("\\x3a:warning::forged,title=y" in line for line in lines[1:resume])


def test_junit_through_a_symlink_is_refused_before_any_work(tmp_path: Path) -> None:
    checkout, _ = _drifted_checkout(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (checkout / "out.xml").symlink_to(victim)
    proc = cli("patches", "check", "--junit", "out.xml", cwd=checkout)
    assert proc.returncode == 2 and "--junit" in proc.stderr and "Traceback" not in proc.stderr
    assert victim.read_text() == "keep"


def test_bad_annotations_mode_is_bad_input(tmp_path: Path) -> None:
    checkout, _ = _drifted_checkout(tmp_path)
    proc = cli("patches", "check", "--annotations", "gitlab", cwd=checkout)
    assert proc.returncode == 2 and "'gitlab' is not one of 'auto', 'github', 'none'" in proc.stderr


def test_patches_lint_gets_junit_annotations_and_a_summary(tmp_path: Path) -> None:
    """A header-less patch (H001) and a series line naming no file (S001), as a GitHub job sees them."""
    stack = make_stack(tmp_path)
    checkout = make_checkout(tmp_path, stack)
    series = checkout / "patches/series"
    series.write_text(series.read_text() + "missing.patch\n")
    summary = tmp_path / "step_summary"
    proc = cli(
        "patches",
        "lint",
        "--junit",
        "lint.xml",
        cwd=checkout,
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    token = lines[0].split("::")[2]  # the human output runs with workflow commands stopped
    notes = lines[lines.index(f"::{token}::") + 1 :]
    assert any(n.startswith("::error file=patches/series,line=2,title=S001 ") for n in notes), notes
    xml = JUnitXml.fromfile(str(checkout / "lint.xml"))
    assert xml.failures == len(notes) >= 1
    assert "## Patch lint" in summary.read_text() and "`S001`" in summary.read_text()
    assert SECRET not in proc.stdout + proc.stderr
