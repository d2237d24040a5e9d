"""A file the stack never touches that fails at the pin itself is labelled so, with the newer
grammar that parses it (found with the interpreters vimesync finds: the running one at least)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.builders.stack import Stack
from vimesync.check.run import run_check
from vimesync.cli.app import main
from vimesync.report.validationmd import render_validation

# except* is 3.11 grammar: the 3.10 target (requires-python >= 3.10) refuses it.
GROUPS = "try:\n    pass\nexcept* ValueError:\n    pass\n"
BROKEN = "def f(:\n    pass\n"  # no grammar parses it

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="needs a 3.11+ interpreter to tell")


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.repo.commit("newer grammar upstream", {"eng/groups.py": GROUPS, "eng/broken.py": BROKEN})
    s.pin = s.repo.head()
    s.add("0001-touch.patch", {"eng/util.py": "X = (\n"})  # the stack breaks a file too
    return s


@pytest.mark.slow
def test_untouched_failures_are_labelled_with_the_grammar_that_parses_them(stack: Stack) -> None:
    report = run_check(stack.opts(rev=stack.pin, use_cache=False))
    assert report.python is not None and report.python.version == "3.10"
    failed = {f.path: f for f in report.python.failed}
    assert set(failed) == {"eng/groups.py", "eng/broken.py", "eng/util.py"}
    assert failed["eng/groups.py"].untouched and failed["eng/groups.py"].parses_with == "3.11"
    assert failed["eng/broken.py"].untouched and failed["eng/broken.py"].parses_with is None
    assert not failed["eng/util.py"].untouched and failed["eng/util.py"].parses_with is None
    md = "\n".join(render_validation(report))
    assert "(untouched by the stack: fails at the pin itself; the 3.11 grammar parses it: try" in md


@pytest.mark.slow
def test_the_label_in_the_terminal_and_in_json(stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["patches", "check", "--source", str(stack.repo.path), "--rev", stack.pin]
    args += ["--series", str(stack.dir / "series"), "--no-cache"]
    with pytest.raises(SystemExit) as exc:
        main(args)
    out = capsys.readouterr().out
    assert exc.value.code == 1
    line = next(x for x in out.splitlines() if "eng/groups.py" in x)
    assert line.endswith(
        "(untouched by the stack: fails at the pin itself; the 3.11 grammar parses it: try --python 3.11)"
    )
    assert "eng/broken.py:1: SyntaxError" in out and "untouched by the stack: fails at the pin itself)" in out
    util = next(x for x in out.splitlines() if "eng/util.py" in x)
    assert "untouched" not in util
    with pytest.raises(SystemExit):
        main([*args, "--json"])
    doc = json.loads(capsys.readouterr().out)
    groups = next(f for f in doc["python"]["failed"] if f["path"] == "eng/groups.py")
    assert groups["untouched"] is True and groups["parses_with"] == "3.11"
