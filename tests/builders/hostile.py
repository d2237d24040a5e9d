"""A downstream checkout a pull request controls, and the real CLI run in it as CI runs it
(with a secret in the environment that must never reach stdout or stderr); hostile text
(rich markup, terminal controls) and the check that our output shows it inert."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.builders.cli import run_cli
from tests.builders.stack import ENGINE, Stack

SECRET = "ghs_NotARealTokenButSecret0123456789"

# Text a commit, file, path or config can carry into our human output.
MARKUP = "[bold]B[/bold] [/tmp] [link=https://x]y[/link] list[str]"
CONTROLS = "\x1b[31mRED \rCR \u202eRLO \x08BS \x9bCSI"
SHOWN = ["\\x1b[31mRED", "\\rCR", "\\u202eRLO", "\\x08BS", "\\x9bCSI"]  # how CONTROLS is printed


def cli(*args: str, cwd: Path | None = None, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, GITHUB_TOKEN=SECRET, **extra_env)


def assert_refused(proc: subprocess.CompletedProcess[str], *expect: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for text in expect:
        assert text in proc.stderr


def make_stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def make_checkout(tmp_path: Path, stack: Stack) -> Path:
    """A downstream checkout whose config and pin name the stack, the PR's playground."""
    repo = tmp_path / "checkout"
    (repo / "pins").mkdir(parents=True)
    (repo / ".git").mkdir()  # marks the repository root (no git command needs it)
    (repo / "patches").mkdir()
    for name in ("0001-a.patch", "series"):
        (repo / "patches" / name).write_bytes((stack.dir / name).read_bytes())
    (repo / "pins/engine.toml").write_text(
        f'[engine]\nrev = "{stack.pin}"\nseries = "../patches"\nsource = "{stack.repo.path}"\n'
    )
    (repo / "vimesync.toml").write_text('[engine]\npin = "pins/engine.toml"\n')
    return repo


def assert_inert(text: str) -> None:
    """No control character a terminal would act on; the markup is there as written."""
    assert not any(c in text for c in "\x1b\r\x08\x9b\u202e"), repr(text)
    assert "Traceback" not in text
