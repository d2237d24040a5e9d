"""`pin scan` and `pin bump` on an 80-column terminal (and piped with no $COLUMNS, laid out for
80): every patch and release name whole on one line, hostile names shown and never obeyed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from vimesync.check.bump import BumpReport, PatchBump
from vimesync.check.scan import Cell, Release, ScanReport
from vimesync.cli import output
from vimesync.patches.model import HunkFailure, HunkOffset, PatchResult
from vimesync.settings import Settings
from vimesync.sources.model import SourceInfo

PATCHES = ("sglang.patch", "megatron.patch", "sglang-router-weights.patch", "deepep-low-latency.patch")
RELEASES = ("v0.5.15.post1", "v0.5.16.post1", "v0.6.0rc1.dev20", "v0.6.1.post2", "v0.7.0.dev123")
VERDICTS = (
    ("applied", "applies"),
    ("offsets", "offsets ±12"),
    ("failed", "conflicts: 3 hunks in 2 files"),
    ("partly-applied", "partly applied (1 of 4 hunks); conflicts: 3 hunks in 1 file"),
)


@pytest.fixture()
def console(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """output.stdout as a command has it: piped (no $COLUMNS), or $COLUMNS as the test's param."""
    columns = getattr(request, "param", None)
    env = {} if columns is None else {"COLUMNS": str(columns)}
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    output.configure(Settings.of(env))
    yield
    output.configure(Settings.of({}))


def scan_report(patches: tuple[str, ...] = PATCHES, releases: tuple[str, ...] = RELEASES) -> ScanReport:
    rels = tuple(Release(r, r, "git", "/src/sglang", f"{i:040x}") for i, r in enumerate(releases))
    cells = tuple(
        Cell(p, r.label, *VERDICTS[(i + j) % len(VERDICTS)], short=VERDICTS[(i + j) % len(VERDICTS)][1])
        for i, p in enumerate(patches)
        for j, r in enumerate(rels)
    )
    return ScanReport("sglang", "patches/series", patches, rels, cells)


def render_scan(report: ScanReport) -> None:
    from vimesync.app.scan import ScanOutcome
    from vimesync.cli.render.scan import render_scan as render

    render(ScanOutcome(report))


def whole_on_a_line(out: str, names: tuple[str, ...]) -> None:
    lines = out.splitlines()
    for name in names:
        assert any(name in line for line in lines), f"{name!r} is not whole on one line:\n{out}"


@pytest.mark.parametrize("console", [None, 80], indirect=True)
@pytest.mark.usefixtures("console")
def test_scan_keeps_every_name_whole_at_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    render_scan(scan_report())
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines() if "git /src" not in line) <= 80
    whole_on_a_line(out, PATCHES + RELEASES)
    assert "…" not in out
    assert "conflicts: 3 hunks in 2 files" in out  # a verdict is said, whatever the layout


@pytest.mark.parametrize("console", [None, 200], indirect=True)
@pytest.mark.usefixtures("console")
def test_scan_is_a_matrix_where_it_fits(capsys: pytest.CaptureFixture[str]) -> None:
    """Two releases fit in 80 columns as a table; five in 200."""
    render_scan(scan_report(releases=RELEASES if output.stdout.width == 200 else RELEASES[:2]))
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if "Patch" in line)
    assert all(r in head for r in (RELEASES if output.stdout.width == 200 else RELEASES[:2]))
    whole_on_a_line(out, PATCHES)


def bump_report(names: tuple[str, ...] = PATCHES) -> BumpReport:
    def result(name: str, status: str) -> PatchResult:
        if status == "failed":
            failure = HunkFailure("python/sglang/srt/managers/scheduler.py", 2, "@@ -1 +1 @@", "context")
            return PatchResult(name, ok=False, files=2, hunks=4, failures=(failure,))
        offsets = (HunkOffset("a.py", 1, 12),) if status == "offsets" else ()
        return PatchResult(name, ok=True, files=2, hunks=4, offsets=offsets)

    patches = tuple(
        PatchBump(n, i + 1, result(n, "applied"), result(n, ("applied", "failed", "offsets")[i % 3]))
        for i, n in enumerate(names)
    )
    old = SourceInfo("git", "/src/sglang", "1" * 40)
    new = SourceInfo("git", "/src/sglang", "2" * 40)
    return BumpReport("sglang", Path("patches/series"), old, new, patches, None, None)


@pytest.mark.parametrize("console", [None, 80, 40], indirect=True)
@pytest.mark.usefixtures("console")
def test_bump_keeps_every_name_whole(capsys: pytest.CaptureFixture[str]) -> None:
    from vimesync.app.bump import BumpOutcome
    from vimesync.cli.render.bump import render_bump

    render_bump(BumpOutcome(bump_report(), to_rev="v0.5.15.post1"))
    out = capsys.readouterr().out
    whole_on_a_line(out, (*PATCHES, "v0.5.15.post1", "111111111111"))
    assert "…" not in out


HOSTILE = (
    "[bold]sglang[/bold].patch",
    "[link=https://x.example]m[/link]\x1b[31mred\x1b]8;;https://x\x07.patch",
    "**md** `x` <b>|</b> #12 @someone.patch",
    "very-" + "long-" * 60 + "name.patch",
)


@pytest.mark.parametrize("console", [None, 80], indirect=True)
@pytest.mark.usefixtures("console")
def test_hostile_names_stay_whole_and_inert(capsys: pytest.CaptureFixture[str]) -> None:
    """Markup stays text, an escape shows as ``\\x1b``, and the 300-character name is whole on its
    line (the list layout): nothing of theirs restyles the terminal or cuts the table."""
    render_scan(scan_report(patches=HOSTILE, releases=("[red]v1[/red]", *RELEASES[:2])))
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    whole_on_a_line(out, ("[bold]sglang[/bold].patch", "[red]v1[/red]", HOSTILE[3], "\\x1b[31mred"))
    whole_on_a_line(out, ("**md** `x` <b>|</b> #12 @someone.patch",))


@pytest.mark.parametrize("console", [80], indirect=True)
@pytest.mark.usefixtures("console")
def test_a_hostile_name_in_a_fitting_table_stays_whole(capsys: pytest.CaptureFixture[str]) -> None:
    render_scan(scan_report(patches=HOSTILE[:1], releases=("[red]v1[/red]",)))
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if "Patch" in line)
    assert "[red]v1[/red]" in head
    whole_on_a_line(out, ("[bold]sglang[/bold].patch",))


class _Tty:
    """A terminal as the consoles see one: isatty() is True; what is written is kept."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_a_long_line_wraps_between_words_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync's or sop status's long line on an 80-column terminal: broken between words (the
    terminal itself would cut one anywhere, "sglang.pa" / "tch"); piped, it stays one line."""
    line = (
        "status: 4 of 7 gates hold; not met: audit (unreviewed), tests (not run), ci (pending) -- "
        "see python/sglang/srt/managers/scheduler.py and sglang.patch at v0.5.15.post1"
    )
    tty = _Tty()
    monkeypatch.setattr("sys.stdout", tty)
    monkeypatch.setenv("COLUMNS", "80")
    output.configure(Settings.of({"COLUMNS": "80"}))
    try:
        output.stdout.print(output.styled(line))
    finally:
        output.configure(Settings.of({}))
    shown = [ln.rstrip() for ln in "".join(tty.parts).splitlines()]
    assert len(shown) == 3 and all(len(ln) <= 80 for ln in shown)
    assert " ".join(shown) == line  # every break at a space: no word cut


@pytest.mark.usefixtures("console")
def test_piped_a_long_line_stays_whole(capsys: pytest.CaptureFixture[str]) -> None:
    line = "status: " + " ".join(["word"] * 40)
    output.stdout.print(output.styled(line))
    assert capsys.readouterr().out == line + "\n"
