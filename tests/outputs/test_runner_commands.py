"""Nothing we print is obeyed by the GitHub Actions runner as a workflow command.

The runner reads every line of a step's stdout *and* stderr two ways (actions/runner,
src/Runner.Common/ActionCommand.cs): ``TryParseV2`` — the line, after .NET's ``TrimStart()``
(every Unicode white space, U+3000 and U+00A0 included), starts with ``::`` — and the legacy
``TryParse`` — ``##[`` *anywhere* in the line, up to the next ``]``. Our own annotations are the
only commands we mean to give; a context name, a description or a patch name must never be one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tests.builders.evidence import HEAD, ci_cli, evidence_server
from tests.builders.fakegithub import FakeGitHub
from vimesync.cli import output
from vimesync.settings import Settings

# The runner's registered commands (a subset is enough: any name would be looked up).
REGISTERED = {
    "add-mask", "add-path", "set-env", "set-output", "save-state", "add-matcher", "remove-matcher",
    "debug", "warning", "error", "notice", "group", "endgroup", "echo", "stop-commands",
}  # fmt: skip


def runner_command(line: str) -> str | None:
    """The command the runner would read in ``line`` (V2 first, then V1), or None."""
    trimmed = line.lstrip()  # str.isspace is a superset of .NET's Char.IsWhiteSpace here
    if trimmed.startswith("::"):
        end = trimmed.find("::", 2)
        if end >= 0:
            name = trimmed[2:end].split(" ", 1)[0]
            if name.lower() in REGISTERED:
                return name
    at = line.find("##[")
    if at >= 0:
        rb = line.find("]", at)
        if rb >= 0:
            name = line[at + 3 : rb].split(" ", 1)[0]
            if name.lower() in REGISTERED:
                return name
    return None


def commands_in(text: str) -> list[str]:
    # The runner reads lines with StreamReader.ReadLine: CR, LF and CRLF end a line.
    return [line for line in re.split(r"\r\n|\r|\n", text) if runner_command(line)]


HOSTILE = [
    "##[set-output name=verdict;]green",
    "x ##[add-mask]vimesync",
    "\u3000::set-output name=verdict::green",
    "\u00a0::add-matcher::patches/matcher.json",
    "  ::error file=a.py::forged",
    "##[stop-commands]tok",
]


def test_the_runner_model_reads_what_github_reads() -> None:
    assert runner_command("::error file=a,line=1::m") == "error"
    assert runner_command("  \u3000::set-output name=a::b") == "set-output"
    assert runner_command("error: patch x ##[add-mask]y") == "add-mask"
    assert runner_command("::nosuch::x") is None and runner_command("plain") is None


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_output_never_holds_a_command(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    output._console.cache_clear()
    try:
        output.out(text)
        output.out(f"a\n{text}")
        output.stdout.print(output.styled(text, (text, "bold")))
        output.error(text, hint=text)
        output.warn(text)
    finally:
        output._console.cache_clear()
    got = capsys.readouterr()
    assert commands_in(got.out + got.err) == []
    assert text[-5:] in got.out  # still shown


@pytest.mark.parametrize("text", HOSTILE)
def test_json_output_never_holds_a_command(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    output.emit_json({"name": text, text: [text]})
    got = capsys.readouterr().out
    assert commands_in(got) == []
    assert json.loads(got) == {"name": text, text: [text]}  # the same document, byte for byte in value


@pytest.fixture
def server() -> Iterator[tuple[FakeGitHub, str]]:
    with evidence_server() as served:
        yield served


@pytest.mark.slow
def test_vimesync_ci_shows_a_hostile_status_as_text(server: tuple[FakeGitHub, str], tmp_path) -> None:
    fake, url = server
    fake.statuses[HEAD] = [
        {"context": c, "state": "error", "description": d, "target_url": ""}
        for c, d in zip(HOSTILE, reversed(HOSTILE), strict=True)
    ]
    fake.check_runs[HEAD] = [
        {"name": n, "status": "completed", "conclusion": "failure", "app": {"name": n}, "html_url": ""}
        for n in HOSTILE
    ]
    for args in ((), ("--json",)):
        proc = ci_cli(url, tmp_path, "--repo", "vime-org/vime", "--sha", HEAD, "--require", HOSTILE[0], *args)
        assert proc.returncode == 1, proc.stderr
        assert commands_in(proc.stdout + proc.stderr) == [], args


@pytest.mark.parametrize("mode", ["none", "github", "auto"])
def test_on_a_runner_the_human_output_is_fenced_whatever_annotations_says(
    mode: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `report --annotations none` on GitHub Actions prints its Markdown raw: a failing context
    # quoted in a code span (`##[set-output name=verdict;]green`) must still not be obeyed.
    from vimesync.cli.cioutputs import CiOutputs

    ci = CiOutputs(None, mode, Settings.of({"GITHUB_ACTIONS": "true"}))
    with ci.human_output():
        print("- ❌ `##[set-output name=verdict;]green`: failure")
    lines = capsys.readouterr().out.splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::" and len(lines) == 3


def test_off_a_runner_nothing_is_fenced(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vimesync.cli.cioutputs import CiOutputs

    with CiOutputs(None, "none", Settings.of({})).human_output():
        print("text")
    assert capsys.readouterr().out == "text\n"


@pytest.mark.parametrize("cell", ["word word ::error::forged", "x" * 30 + "::error::forged"])
def test_on_a_runner_no_table_cell_is_wrapped_into_a_command(
    cell: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A job's COLUMNS=40 would make rich wrap (or fold) a cell so that "::error::..." starts a line.
    from rich import box
    from rich.table import Table

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("COLUMNS", "40")
    output._console.cache_clear()
    try:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("patch")
        table.add_column("result")
        table.add_row(output.styled(cell), output.styled(cell))
        output.stdout.print(table)
    finally:
        output._console.cache_clear()
    assert commands_in(capsys.readouterr().out) == []
