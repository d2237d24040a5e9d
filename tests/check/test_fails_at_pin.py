"""A file that fails to parse at the pin itself, untouched by the stack, is the engine's problem,
not the stack's: reported apart, it fails the check only under --strict (issue 17, item 4; the
real case: Megatron-LM at 1dcf0daf, whose tests/ hold a 3.12-only f-string)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.stack import Stack
from vimesync.check.run import run_check
from vimesync.cli.app import main
from vimesync.report.validationmd import render_validation

BROKEN = "def f(:\n    pass\n"  # no grammar parses it


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.repo.commit("a broken file upstream", {"eng/broken.py": BROKEN})
    s.pin = s.repo.head()
    s.add("0001-touch.patch", {"eng/util.py": "X = 2\n"})
    return s


def _check(stack: Stack, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    args = ["patches", "check", "--source", str(stack.repo.path), "--rev", stack.pin]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--series", str(stack.dir / "series"), "--no-cache", *extra])
    return int(exc.value.code or 0), capsys.readouterr().out


def test_a_failure_at_the_pin_is_reported_apart_and_does_not_fail_the_check(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _check(stack, capsys)
    assert code == 0
    assert "eng/broken.py:1: SyntaxError" in out and "fails at the pin itself" in out
    assert out.rstrip().splitlines()[-1].startswith("OK: the only patch applies to the exact pin")
    assert "1 file fails at the pin itself (untouched by the stack; --strict counts it)" in out
    code, out = _check(stack, capsys, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["python"]["ok"] is True
    assert doc["python"]["failed_at_pin"] == 1 and doc["python"]["failed"][0]["untouched"] is True


def test_strict_fails_it(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(stack, capsys, "--strict")
    assert code == 1 and "FAILED: 1 Python file does not parse." in out


def test_a_failure_the_stack_makes_still_fails(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    stack.add("0002-break.patch", {"eng/util.py": "X = (\n"})
    code, out = _check(stack, capsys)
    assert code == 1
    assert "FAILED: 1 Python file does not parse; 1 file fails at the pin itself" in out


def test_the_report_says_it_apart(stack: Stack) -> None:
    report = run_check(stack.opts(rev=stack.pin, use_cache=False))
    assert report.ok and report.python is not None and not report.python.ok
    md = "\n".join(render_validation(report))
    assert "parse but 1 fails at the pin itself, untouched by the stack." in md
