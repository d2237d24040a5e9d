"""``vimesync patches check`` and ``vimesync demo`` as a user runs them: exit codes, one JSON
document, clean one-line errors (never a traceback), config and pins as defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import cli, run
from tests.builders.stack import ENGINE, Stack


def check_args(stack: Stack) -> list[str]:
    """``patches check`` on the stack's pinned engine and its series."""
    series = str(stack.dir / "series")
    return ["patches", "check", "--source", str(stack.repo.path), "--rev", stack.pin, "--series", series]


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def test_json_is_one_document_with_the_contract_fields(
    capsys: pytest.CaptureFixture[str], stack: Stack
) -> None:
    code, out, err = run(
        capsys,
        *check_args(stack),
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["ok"] is True
    assert doc["source"] == {"kind": "git", "path": str(stack.repo.path), "rev": stack.pin, "notes": []}
    (patch,) = doc["patches"]
    assert {"name", "ok", "skipped", "files", "hunks", "offsets", "failures"} <= set(patch)
    assert doc["python"]["files"] == 3 and doc["python"]["failed"] == []


def test_failure_exits_1_and_names_the_hunk(capsys: pytest.CaptureFixture[str], stack: Stack) -> None:
    drifted = stack.drift({"eng/util.py": "import os\n\n\ndef here():\n    return os.getcwd() + '/'\n"})
    code, out, _ = run(
        capsys,
        "patches",
        "check",
        "--source",
        str(stack.repo.path),
        "--rev",
        drifted,
        "--series",
        str(stack.dir / "series"),
        "--json",
    )
    assert code == 1
    (failure,) = json.loads(out)["patches"][0]["failures"]
    assert failure["file"] == "eng/util.py" and failure["hunk"] == 1 and failure["reason"]


def test_pin_and_config_supply_the_defaults(
    capsys: pytest.CaptureFixture[str], stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    down = tmp_path  # the downstream checkout: holds patches/ (the stack) and the config
    (down / "pins").mkdir(parents=True)
    (down / "pins/eng.toml").write_text(
        f'[engine]\nname = "Eng"\nrev = "{stack.pin}"\nseries = "{stack.dir / "series"}"\n'
    )
    (down / "vimesync.toml").write_text(f'[engine]\npin = "pins/eng.toml"\nsource = "{stack.repo.path}"\n')
    monkeypatch.chdir(down)
    code, out, err = run(capsys, "patches", "check")
    assert code == 0, err
    assert "Eng source: git" in out and "OK: the only patch applies to the exact pin" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--series", "{dir}/nope"], "nope"),
        (["--rev", "deadbeefdeadbeef"], "unknown revision"),
        (["--source", "{dir}/missing-source"], "missing-source"),
        (["--python", "banana"], "banana"),
    ],
)
def test_bad_input_exits_2_without_traceback(stack: Stack, args: list[str], needle: str) -> None:
    base = {"--source": str(stack.repo.path), "--rev": stack.pin, "--series": str(stack.dir / "series")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value.format(dir=stack.dir)
    argv = ["patches", "check"] + [x for kv in base.items() for x in kv]
    proc = cli(*argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and needle in proc.stderr
    assert proc.stderr.strip().startswith("error:")


@pytest.mark.slow
def test_unsafe_patch_is_refused_naming_it(stack: Stack) -> None:
    (stack.dir / "0001-a.patch").write_text(
        "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
        "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+rm -rf /\n"
    )
    proc = cli(
        *check_args(stack),
    )
    assert proc.returncode == 2 and "0001-a.patch" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_demo_runs_end_to_end() -> None:
    proc = cli("demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Mirror Slime from " in out and "applicable merged PRs" in out
    assert "| Patch | Purpose / PR |" in out
    assert "11 changed paths against the Slime tip and the pre-sync baseline: 9 verified" in out
    assert "All 4 patches apply sequentially to the exact pin" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["bogus"],
        ["walk", "--bogus"],
        ["walk", "--range"],
        ["patches", "check", "--strip", "-1"],
        ["audit", "review"],
    ],
)
def test_usage_errors_exit_2_without_traceback(argv: list[str]) -> None:
    proc = cli(*argv)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "Error" in proc.stderr


@pytest.mark.slow
def test_json_callers_get_a_json_error_document(stack: Stack) -> None:
    proc = cli(
        "patches", "check", "--source", str(stack.repo.path), "--series", str(stack.dir / "nope"), "--json"
    )
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False and doc["exit_code"] == 2 and "nope" in doc["error"]


@pytest.mark.slow
def test_unwritable_export_is_refused_before_any_work(stack: Stack, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    proc = cli(*check_args(stack), "--export", str(blocker / "out"))
    assert proc.returncode == 2 and "--export" in proc.stderr and "Traceback" not in proc.stderr


def test_a_wrong_strip_gets_the_hint_from_the_failure_not_its_wording(
    capsys: pytest.CaptureFixture[str], stack: Stack
) -> None:
    code, out, _ = run(capsys, *check_args(stack), "--strip", "0", "--json")
    (failure,) = json.loads(out)["patches"][0]["failures"]
    assert code == 1 and "missing" not in failure  # the document is as it was: the reason says it
    code, out, _ = run(capsys, *check_args(stack), "--strip", "0")
    assert code == 1 and "check --strip (-pN)" in out
