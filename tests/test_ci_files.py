"""The files a downstream uses from this repository in CI: the pre-commit hooks manifest (checked
by pre-commit itself), the composite action (its script run for real) and docs/ci.md."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.builders.hostile import make_checkout, make_stack
from tests.builders.stack import ENGINE

ROOT = Path(__file__).resolve().parents[1]


def test_hook_manifest_is_valid_for_pre_commit() -> None:
    exe = shutil.which("pre-commit")
    cmd = [exe] if exe else [sys.executable, "-m", "pre_commit"]
    proc = subprocess.run(
        [*cmd, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hooks_run_the_gate_on_patches_and_pins_without_file_names() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    check = hooks["vimesync-patches-check"]
    assert check["entry"] == "vimesync patches check" and check["pass_filenames"] is False
    assert hooks["vimesync-patches-lint"]["entry"] == "vimesync patches lint"
    files = re.compile(check["files"])
    assert files.search("patches/0001-x.patch") and files.search("pins/vllm.toml")
    assert not files.search("vime/patches/x.py") and not files.search("src/pins.py")


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_action_inputs_never_reach_a_script_as_text() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"source", "series"} <= set(action["inputs"])
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]  # inputs only through env
    install = action["runs"]["steps"][0]["run"]
    assert '"$GITHUB_ACTION_PATH"' in install  # the action's own ref, not a name on an index


@pytest.mark.slow
def test_action_check_step_runs_as_github_would(tmp_path: Path) -> None:
    """The check step's script under bash, with the inputs as GitHub passes them (env), one of
    them hostile: the stack fails, an annotation and a JUnit file come out, nothing is injected."""
    stack = make_stack(tmp_path)
    checkout = make_checkout(tmp_path, stack)
    drifted = stack.drift({"eng/util.py": ENGINE["eng/util.py"].replace("os.getcwd()", "os.getcwdb()")})
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "vimesync").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vimesync "$@"\n')
    (shim / "vimesync").chmod(0o755)
    outputs = tmp_path / "github_output"
    summary = tmp_path / "summary"
    step = _action()["runs"]["steps"][1]
    env = {
        **os.environ,
        "PATH": f"{shim}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "INPUT_SOURCE": str(stack.repo.path),
        "INPUT_SERIES": "",
        "INPUT_REV": drifted,
        "INPUT_STRIP": "",
        "INPUT_CONFIG": "",
        "INPUT_JUNIT": "out $(touch pwned).xml\nforged=1",
    }
    proc = subprocess.run(
        ["bash", "-c", step["run"]], cwd=checkout, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1, proc.stderr
    assert not (checkout / "pwned").exists()
    assert outputs.read_text() == "junit=out $(touch pwned).xmlforged=1\n"  # one output, no second line
    assert (checkout / "out $(touch pwned).xml\nforged=1").is_file()
    assert any(
        line.startswith("::error file=patches/0001-a.patch,line=") for line in proc.stdout.splitlines()
    )
    assert "1 of 1 patch fails" in summary.read_text()


@pytest.mark.parametrize("block", [0, 1])
def test_docs_workflow_and_buildkite_step_are_valid_yaml(block: int) -> None:
    text = (ROOT / "docs/ci.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    doc = yaml.safe_load(blocks[block])
    if block == 0:
        assert set(doc["jobs"]) == {"patches", "gate"}
        uses = [s.get("uses", "") for s in doc["jobs"]["patches"]["steps"]]
        assert "<org>/vimesync@<ref>" in uses
    else:
        (step,) = doc["steps"]
        assert "vimesync patches check" in step["command"] and step["artifact_paths"] == "vimesync-junit.xml"


def test_docs_sync_bot_schedules_are_valid_yaml() -> None:
    text = (ROOT / "docs/ci.md").read_text()
    actions, buildkite = (yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)[-2:])
    on = actions[True]  # YAML 1.1 reads the key "on" as true
    assert set(on) == {"schedule", "workflow_dispatch"} and on["schedule"][0]["cron"]
    assert actions["permissions"] == {"contents": "write", "pull-requests": "write", "issues": "write"}
    (job,) = actions["jobs"].values()
    assert any("vimesync bot" in s.get("run", "") for s in job["steps"])
    assert all("GITHUB_TOKEN" not in s.get("run", "") for s in job["steps"])  # only in env:
    (step,) = buildkite["steps"]
    assert "schedule" in step["if"] and "vimesync bot" in step["command"]


def test_python_dash_m_in_the_checkout_imports_the_checkouts_module_unless_isolated(tmp_path: Path) -> None:
    """Why every ``python -m`` in the action (and the docs' workflows) has ``-I``: its working
    folder is the pull request's checkout, and ``-m`` looks there first."""
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv/__init__.py").write_text("")
    (tmp_path / "venv/__main__.py").write_text("open('MARKER', 'w').write('ran')\n")
    subprocess.run([sys.executable, "-m", "venv", "--help"], cwd=tmp_path, capture_output=True, timeout=30)
    assert (tmp_path / "MARKER").exists()  # the hole, shown
    (tmp_path / "MARKER").unlink()
    proc = subprocess.run(
        [sys.executable, "-I", "-m", "venv", "--help"], cwd=tmp_path, capture_output=True, timeout=30
    )
    assert proc.returncode == 0 and not (tmp_path / "MARKER").exists()


def test_every_python_dash_m_in_the_action_and_the_docs_is_isolated() -> None:
    scripts = [step.get("run", "") for step in _action()["runs"]["steps"]]
    docs = [
        block
        for name in ("README.md", "docs/SECURITY.md", "docs/ci.md")
        for block in re.findall(r"```yaml\n(.*?)```", (ROOT / name).read_text(), re.DOTALL)
    ]
    found = 0
    for text in scripts + docs:
        for m in re.finditer(r"(\S+) +-m +(pip|venv)\b", text):
            found += 1
            assert m.group(1) == "-I", m.group(0)  # python -I -m pip
    assert found >= 5
