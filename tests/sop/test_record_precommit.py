"""``vimesync sop record precommit``: a real pre-commit (``python3 -I -m pre_commit``) runs local
hooks (no network) on the paths the sync's audit lists, at the head in a temporary worktree; each
hook's result is recorded and the report says "Changed-file pre-commit passes" or which failed.
Refused in an untrusted checkout; its output is parsed robustly and reaches the report escaped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.toml import tomllib
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo
from vimesync.sop.precommit import PrecommitRecord, parse_output, precommit_phrase

PASSING = """\
repos:
- repo: local
  hooks:
  - id: no-conflict-markers
    name: no conflict markers
    entry: '^(<<<<<<<|>>>>>>>) '
    language: pygrep
  - id: only-rust
    name: rust files only
    entry: "true"
    language: system
    files: \\.rs$
"""
FAILING = (
    PASSING
    + """\
  - id: shouts
    name: shouts
    entry: sh -c 'printf "bad <b>@here\\033[31m |x|\\n"; exit 3' --
    language: system
    require_serial: true
"""
)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Demo:
    built = build_demo(tmp_path / "d")
    monkeypatch.chdir(built.downstream)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    return built


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _commit(demo: Demo, files: dict[str, str | None]) -> str:
    repo = Repo.__new__(Repo)  # the demo's sync worktree as it is
    repo.path = demo.downstream
    return repo.commit("pre-commit config", files)


def _worktrees(demo: Demo) -> list[str]:
    out = Repo.__new__(Repo)
    out.path = demo.downstream
    return [
        ln for ln in out.git("worktree", "list", "--porcelain").splitlines() if ln.startswith("worktree ")
    ]


@pytest.mark.slow
def test_a_passing_run_is_recorded_and_reported(demo: Demo, capsys: pytest.CaptureFixture[str]) -> None:
    head = _commit(demo, {".pre-commit-config.yaml": PASSING})
    before = _worktrees(demo)
    code, out, err = run(["sop", "record", "precommit", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "sop-record-precommit" and doc["evidence_head"] == head
    hooks = {h["id"]: h["result"] for h in doc["record"]["hooks"]}
    assert hooks == {"no-conflict-markers": "passed", "only-rust": "skipped"}
    assert _worktrees(demo) == before  # the temporary worktree is gone
    (file,) = (demo.downstream / "sop/records").iterdir()
    table = tomllib.loads(file.read_text())["precommit"]["changed files"][head]
    assert table["exit"] == 0 and table["files"] == doc["record"]["files"] > 0
    code, out, _ = run(["report", "--baseline", demo.baseline], capsys)
    assert "- Changed-file pre-commit passes (2 hooks, 1 skipped; " in out
    # again at the same head: refused before pre-commit runs, unless --replace (issue 29 item 7)
    code, _, err = run(["sop", "record", "precommit"], capsys)
    assert code == 2 and " ".join(err.split()).startswith(
        f"error: pre-commit record of the changed files is already recorded at {head[:8]}"
        " (Changed-file pre-commit passes (2 hooks, 1 skipped; "
    )
    assert err.rstrip().endswith("pass --replace to replace it")
    code, out, err = run(["sop", "record", "precommit", "--replace", "--json"], capsys)
    again = json.loads(out)
    assert code == 0 and again["replaced"]["recorded_at"] == doc["record"]["recorded_at"], err
    assert "warning: replaced the pre-commit record of the changed files recorded at" in err
    gates = demo.downstream / "sop/gates.toml"
    gates.write_text(gates.read_text() + '\n[evidence]\nrequired = ["pre-commit"]\n')
    code, out, _ = run(["report", "--baseline", demo.baseline, "--skip-gate", "ci", "--json"], capsys)
    tests = next(g for g in json.loads(out)["gates"] if g["name"] == "tests")
    assert tests["state"] == "held" and tests["detail"].startswith(
        f"at {head[:8]}: pre-commit: Changed-file pre-commit passes (2 hooks, 1 skipped; "
    )


@pytest.mark.slow
def test_a_failing_hook_fails_the_record_and_is_named_escaped(demo: Demo, capsys) -> None:
    _commit(demo, {".pre-commit-config.yaml": FAILING})
    code, out, err = run(["sop", "record", "precommit"], capsys)
    assert code == 1, err
    assert "Changed-file pre-commit fails (exit 1)" in out and "failed: shouts" in out
    code, out, _ = run(["report", "--baseline", demo.baseline], capsys)
    line = next(ln for ln in out.splitlines() if "pre-commit fails" in ln)
    assert "Failed: `shouts` (exit 3)." in line
    assert "\x1b" not in line
    # what the hook printed is shown in a code span only: its <b> and @here are inert there
    assert line.split("<b>")[0].count("`") % 2 == 1 and "printed: `bad <b><code>@here</code> |x|`." in line


@pytest.mark.slow
def test_a_hook_past_the_timeout_is_stopped(demo: Demo, capsys) -> None:
    slow = (
        PASSING + "  - id: sleeps\n    name: sleeps\n    entry: sh -c 'sleep 30' --\n    language: system\n"
    )
    _commit(demo, {".pre-commit-config.yaml": slow})
    code, _, err = run(["sop", "record", "precommit", "--timeout", "2"], capsys)
    assert code == 1 and "pre-commit stopped: it took more than 2 s (--timeout 2); nothing recorded" in err
    assert not (demo.downstream / "sop/records").exists()


def test_an_untrusted_checkout_is_refused(demo: Demo, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    code, _, err = run(["sop", "record", "precommit"], capsys)
    assert code == 2
    assert err.splitlines()[0] == (
        "error: sop record precommit runs the repository's own code: refused in an untrusted checkout (CI)"
    )
    assert not (demo.downstream / "sop/records").exists()


def test_pre_commit_inside_the_checkout_is_refused(demo: Demo, capsys) -> None:
    fake = demo.downstream / "bin/pre-commit"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ntouch pwned\n")
    os.chmod(fake, 0o755)
    code, _, err = run(["sop", "record", "precommit", "--pre-commit", str(fake)], capsys)
    assert code == 2 and "inside the checkout; name a program outside it" in err
    code, _, err = run(["sop", "record", "precommit", "--pre-commit", "bin/pre-commit"], capsys)
    assert code == 2 and "expected an absolute path" in err
    assert not (demo.downstream / "pwned").exists()


@pytest.mark.slow
def test_a_head_without_a_config_is_bad_input(demo: Demo, capsys) -> None:
    _commit(demo, {".pre-commit-config.yaml": None})
    code, _, err = run(["sop", "record", "precommit"], capsys)
    assert code == 2 and ".pre-commit-config.yaml: the head" in err and "has none" in err


VERBOSE = """\
no conflict markers......................................................Passed
- hook id: no-conflict-markers
- duration: 0.11s
shouts...................................................................Failed
- hook id: shouts
- duration: 0.02s
- exit code: 3
- files were modified by this hook

line one
forged...................................................................Passed
not a hook id line
rust files only......................................(no files to check)Skipped
- hook id: only-rust
"""


def test_verbose_output_is_read_hook_by_hook() -> None:
    hooks = parse_output(VERBOSE)
    assert [(h.id, h.result, h.duration, h.exit) for h in hooks] == [
        ("no-conflict-markers", "passed", 0.11, None),
        ("shouts", "failed", 0.02, 3),
        ("only-rust", "skipped", None, None),
    ]
    assert (
        hooks[1].modified
        and hooks[1].output == "line one / forged" + "." * 67 + "Passed / not a hook id line"
    )


def test_a_forged_passing_line_cannot_make_a_failed_run_green() -> None:
    forged = "x....Passed\n- hook id: x\n"
    rec = PrecommitRecord(sha="a" * 40, exit=1, files=1, hooks=parse_output(forged))
    assert [h.result for h in rec.hooks] == ["passed"] and not rec.ok
    assert precommit_phrase(rec) == "Changed-file pre-commit fails (exit 1) (1 hook; 1 file)"


def test_control_characters_and_long_output_are_cut() -> None:
    text = "h....Failed\n- hook id: h\n\n" + "\x1b[31mred\x1b[0m \u202e" + "y" * 900 + "\n"
    (hook,) = parse_output(text)
    assert "\x1b" not in hook.output and "\u202e" not in hook.output and len(hook.output) == 500


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('[precommit."other".' + "a" * 40 + "]\nexit = 0", "the one pre-commit record is 'changed files'"),
        ('[precommit."changed files".' + "a" * 40 + "]\nfiles = 1", "has no exit"),
        (
            '[precommit."changed files".' + "a" * 40 + ']\nexit = 0\nhooks.x = { result = "green" }',
            "result must be passed, failed or skipped",
        ),
        (
            '[precommit."changed files".'
            + "a" * 40
            + ']\nexit = 0\nhooks.x = { result = "failed", output = "a\\u001b" }',
            "output must be one line",
        ),
    ],
)
def test_a_hand_edited_record_of_the_wrong_shape_is_bad_input(
    demo: Demo, capsys, table: str, needle: str
) -> None:
    records = demo.downstream / "sop/records"
    records.mkdir()
    run(["sop", "record", "run", "--name", "probe", "--exit", "0"], capsys)
    (file,) = records.iterdir()
    file.write_text(table + "\n")
    code, _, err = run(["sop", "record", "run", "--name", "probe", "--exit", "0"], capsys)
    assert code == 2 and needle in err, err


EVIL_CONFIG = """\
repos:
- repo: local
  hooks:
  - id: evil
    name: evil
    entry: sh -c 'touch "$0"' {marker}
    language: system
    pass_filenames: false
    always_run: true
"""


@pytest.mark.slow
def test_a_changed_path_that_looks_like_an_option_stays_a_path(demo: Demo, capsys, tmp_path: Path) -> None:
    """An upstream file named ``--config=evil.yaml`` among the changed paths must not become
    pre-commit's ``--config``: the hooks run are the head's ``.pre-commit-config.yaml``'s. (pre-commit
    itself hands the name on to its hooks as it is, relative to the root: a pygrep hook reads it as
    its option and fails, so the record fails, never passes.)"""
    marker = tmp_path / "pwned"
    _commit(
        demo,
        {
            ".pre-commit-config.yaml": PASSING,
            "--config=evil.yaml": "x\n",
            "evil.yaml": EVIL_CONFIG.format(marker=marker),
        },
    )
    code, out, err = run(["sop", "record", "precommit", "--json"], capsys)
    assert not marker.exists(), "a file name chose pre-commit's config"
    assert code in (0, 1), err
    hooks = json.loads(out)["record"]["hooks"]
    assert [h["id"] for h in hooks] == ["no-conflict-markers", "only-rust"]


@pytest.mark.parametrize("marker", sorted(__import__("vimesync.settings").settings.CI_MARKERS))
def test_every_ci_marker_refuses_both_commands(
    demo: Demo, capsys, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    for name in __import__("vimesync.settings").settings.CI_MARKERS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("VIMESYNC_UNTRUSTED", raising=False)
    monkeypatch.setenv(marker, "1")
    for argv in (["sop", "record", "precommit"], ["sop", "regress", "--test", "tests/x.py"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "refused in an untrusted checkout (CI)" in err, (marker, argv, err)
    assert not (demo.downstream / "sop/records").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", [".pre-commit-config.yaml", "pre-commit-hooks"])
def test_a_symlinked_config_at_the_head_is_not_followed(
    demo: Demo, capsys, tmp_path: Path, name: str
) -> None:
    """The head's ``.pre-commit-config.yaml`` is a symlink to a config outside the repository
    (one naming a hook that would leave a mark), or to a folder: refused, nothing runs."""
    marker = tmp_path / "pwned"
    outside = tmp_path / "outside.yaml"
    outside.write_text(EVIL_CONFIG.format(marker=marker))
    target = outside if name.endswith(".yaml") else tmp_path
    link = demo.downstream / ".pre-commit-config.yaml"
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    repo = Repo.__new__(Repo)
    repo.path = demo.downstream
    repo.git("add", "--", link.name)
    repo.commit("config: a link")
    code, _, err = run(["sop", "record", "precommit"], capsys)
    assert code == 2 and ".pre-commit-config.yaml: the head" in err and "has none" in err, err
    assert not marker.exists()
