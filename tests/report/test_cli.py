"""End-to-end runs of ``vimesync audit`` and ``vimesync report`` on the demo repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vimesync import git
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _config_without_engine(demo: Demo, tmp_path: Path) -> Path:
    # Inside the downstream: a config may only name pins and policies in its own repository.
    cfg = demo.downstream / f"vimesync-{tmp_path.name}.toml"
    cfg.write_text(
        f"""
[upstream]
name = "Slime"
repo = "THUDM/slime"
path = "{demo.upstream}"
branch = "main"
pin = "{demo.downstream}/pins/slime.toml"
policy = "{demo.downstream}/sop/policy.toml"
map = ["slime/=vime/"]

# as the demo's own config: the replay of its carry translates as the carry did
[[upstream.translate]]
pattern = '\\b(from|import) slime\\b'
replace = '\\1 vime'
paths = ["**/*.py"]

[downstream]
path = "{demo.downstream}"
"""
    )
    return cfg


@pytest.mark.slow
def test_audit_then_review_then_audit_passes(demo: Demo, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(demo.downstream)
    cfg = str(_config_without_engine(demo, tmp_path))
    sync = ["--sync", "cli-test"]
    code, out, _ = run(["audit", "--config", cfg, "--baseline", demo.baseline, *sync], capsys)
    assert code == 1
    assert "11 changed paths" in out and "unreviewed" in out

    code, out, _ = run(
        ["audit", "review", ".", "--by", "alice", "--config", cfg, "--baseline", demo.baseline, *sync], capsys
    )
    assert code == 0 and "by alice in sop/reviews/cli-test.toml" in out

    code, out, _ = run(["audit", "--json", "--config", cfg, "--baseline", demo.baseline, *sync], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["ok"] and doc["changed"] == 11 and doc["unreviewed"] == []
    (demo.downstream / "sop/reviews/cli-test.toml").unlink()


@pytest.mark.slow
def test_report_markdown_without_engine_inputs(demo: Demo, tmp_path: Path, capsys) -> None:
    cfg = str(_config_without_engine(demo, tmp_path))
    argv = ["report", "--config", cfg, "--baseline", demo.baseline, "--sync", "none-yet"]
    code, out, err = run(argv, capsys)
    assert code == 1  # paths are unreviewed
    # What moves each unmet gate goes to the maintainer (stderr), not into the PR body.
    assert "next" not in out and "next (audit): vimesync audit review" in err
    assert "next (ci): set GITHUB_TOKEN" in err
    assert out.startswith(f"## Summary\n\nMirror Slime from {demo.base[:8]} through {demo.tip[:8]}: ")
    assert "applicable merged PRs" in out
    assert "No engine source or series was given" in out
    assert "still need review" in out


@pytest.mark.slow
def test_report_json_to_file(demo: Demo, tmp_path: Path, capsys) -> None:
    cfg = str(_config_without_engine(demo, tmp_path))
    target = tmp_path / "report.json"
    code, out, _ = run(["report", "--config", cfg, "--format", "json", "--output", str(target)], capsys)
    assert code == 1  # nothing failed, but the patches, audit and CI gates were not checked
    doc = json.loads(target.read_text())
    assert out == ""
    assert doc["summary"]["tip"] == demo.tip
    # No --baseline: the downstream is on its sync branch, so the baseline is where it left main.
    assert doc["audit"]["baseline"] == git.resolve(demo.checkout, "HEAD")
    states = {g["name"]: g["state"] for g in doc["gates"]}
    assert states == {
        "classified": "held",
        "carried": "held",  # every applicable PR of the range is on the sync branch
        "patches": "not checked",
        "audit": "held",  # the baseline found from the sync branch; the demo reviewed every path
        "tests": "not checked",  # no suite named in sop/gates.toml [evidence] required
        "ci": "not checked",
    }
    assert doc["gates_ok"] is False
    # Switched off, the gates that could not be computed no longer hold the report back.
    skips = ["--skip-gate", "patches", "--skip-gate", "ci", "--skip-gate", "tests"]
    code, _, _ = run(["report", "--config", cfg, "--format", "json", "--output", str(target), *skips], capsys)
    doc = json.loads(target.read_text())
    assert code == 0 and doc["gates_ok"] is True
    assert [g["state"] for g in doc["gates"]] == ["held", "held", "off", "held", "off", "off"]
    assert doc["gates"][2]["detail"] == "switched off with --skip-gate"


def test_report_terminal_messages_show_names_as_text(demo: Demo, tmp_path: Path, capsys) -> None:
    cfg = str(_config_without_engine(demo, tmp_path))
    target = tmp_path / "[bold]r[red] [link=x]y \x1b[2J\u202e.md"  # no "/": one file
    code, out, err = run(["report", "--config", cfg, "--output", str(target)], capsys)
    assert code == 1 and out == "" and target.is_file()  # 1: gates not checked (no baseline...)
    assert f"wrote {tmp_path}/[bold]r[red] [link=x]y \\x1b[2J\\u202e.md" in err
    assert "\x1b" not in err and "\u202e" not in err


def test_bad_inputs_exit_2(demo: Demo, tmp_path: Path, capsys) -> None:
    cfg = str(_config_without_engine(demo, tmp_path))
    assert run(["report", "--config", cfg, "--format", "html"], capsys)[0] == 2
    assert run(["report", "--config", cfg, "--upstream-repo", "not a repo"], capsys)[0] == 2
    assert run(["report", "--config", cfg, "--publish", "nope"], capsys)[0] == 2
    code, _, err = run(["report", "--config", cfg, "--publish", "a/b#1"], capsys)  # no token
    assert code == 2 and "GITHUB_TOKEN" in err
    assert run(["audit", "--config", cfg, "--baseline", "no-such-rev"], capsys)[0] == 2


@pytest.mark.slow
def test_report_publish_through_the_cli(demo: Demo, tmp_path: Path, capsys, monkeypatch, github) -> None:
    state, api = github
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_cli_token")
    monkeypatch.setenv("VIMESYNC_GITHUB_API", api)
    cfg = str(_config_without_engine(demo, tmp_path))
    code, out, err = run(["report", "--config", cfg, "--publish", "vime/vime#7"], capsys)
    assert code == 1  # published; but the audit, the stack and CI (the PR has no head here) not checked
    assert "CI not checked: GitHub returned an unexpected answer for /repos/vime/vime/pulls/7" in out
    assert "updated https://github.com/vime/vime/pull/7 (title: [Sync] Mirror Slime through" in err
    assert state.title.startswith("[Sync] Mirror Slime through")  # the PR title is the report's
    assert "ghp_cli_token" not in out + err
    assert state.body.startswith("Written by a human.")
    assert out.replace("\n", "\r\n").rstrip() in state.body  # the same markdown, in the body's CRLF
    code, _, err = run(["report", "--config", cfg, "--publish", "vime/vime#7"], capsys)
    assert "already up to date" in err
    assert [m for m, _, _ in state.requests].count("PATCH") == 1


def test_report_publish_over_githubs_limit_exits_2(
    demo: Demo, tmp_path: Path, capsys, monkeypatch, github
) -> None:
    state, api = github
    state.body = "Written by a human.\n" + "h" * 65_400
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_cli_token")
    monkeypatch.setenv("VIMESYNC_GITHUB_API", api)
    cfg = str(_config_without_engine(demo, tmp_path))
    code, _, err = run(["report", "--config", cfg, "--publish", "vime/vime#7"], capsys)
    assert code == 2 and "Traceback" not in err
    flat = " ".join(err.split())
    assert "over GitHub's limit of 65,536; nothing was published" in flat and "--output" in flat
    assert "PATCH" not in [m for m, _, _ in state.requests]  # never sent


def test_report_engine_table_from_the_series_without_a_source(demo: Demo, tmp_path: Path, capsys) -> None:
    cfg = _config_without_engine(demo, tmp_path)
    cfg.write_text(cfg.read_text() + f'\n[engine]\npin = "{demo.downstream}/pins/vllm.toml"\n')
    code, out, _ = run(["report", "--config", str(cfg), "--baseline", demo.baseline, "--sync", "t"], capsys)
    engine = out.split("## Engine patches")[1].split("## Final audit")[0]
    assert f"The vLLM source pin remains {demo.engine_rev}." in engine
    assert "| Patch | Purpose / PR |" in engine
    rows = [line for line in engine.splitlines() if line.startswith("| `")]
    series = (demo.downstream / "patches/series").read_text().split()
    assert [r.split("`")[1] for r in rows] == [s for s in series if s.endswith(".patch")]
    assert "No engine source was given (--source): the patch stack was not applied." in out


@pytest.mark.slow
def test_full_demo_report(demo: Demo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(demo.downstream)  # ./vimesync.toml: upstream, policy, pins, engine source
    code, out, _ = run(
        ["report", "--baseline", demo.baseline, "--sync", "full-demo", "--format", "json"], capsys
    )
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False  # a fresh demo has unreviewed paths
    assert doc["validation"]["ok"] is True
    assert doc["engine"]["pin"] == demo.engine_rev and doc["engine"]["pin_changed"] is False
    assert doc["audit"]["unreviewed"]
    assert doc["summary"]["applicable_count"] == len(doc["summary"]["applicable"]) > 0
    code, md, _ = run(["report", "--baseline", demo.baseline, "--sync", "full-demo"], capsys)
    assert (
        f"All {len(doc['engine']['patches'])} patches apply sequentially to the exact pin {demo.engine_rev}"
        in md
    )


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_report_refuses_a_reversed_range(demo: Demo, capsys, monkeypatch, fmt: str) -> None:
    # git walks nothing for TIP..BASE; the report must not call that "0 applicable merged PRs".
    monkeypatch.chdir(demo.downstream)
    code, out, err = run(["report", "--range", f"{demo.tip}..{demo.base}", "--format", fmt], capsys)
    assert code == 2 and "applicable merged PR" not in out
    assert f"the range is reversed; did you mean {demo.base}..{demo.tip}?" in " ".join(err.split())


def test_audit_and_report_refuse_a_reversed_baseline(demo: Demo, capsys, monkeypatch) -> None:
    monkeypatch.chdir(demo.downstream)
    for cmd in (["audit", "--sync", "t"], ["report", "--sync", "t"]):
        code, out, err = run([*cmd, "--baseline", demo.head, "--head", demo.baseline], capsys)
        assert code == 2, (cmd, err)
        assert f"did you mean --baseline {demo.baseline} --head {demo.head}?" in " ".join(err.split())


def test_report_with_no_inputs_at_all_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No config, no repository, no engine: exit 2 as every other command (it was 1, a report whose
    every gate read "not checked"), one line, one JSON document with --json (issue 17, item 12)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["report"], capsys)
    assert code == 2 and out == "" and "nothing to report on: pass --upstream PATH" in err
    code, out, _ = run(["report", "--json"], capsys)
    assert code == 2 and json.loads(out)["kind"] == "error"
