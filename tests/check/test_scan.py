"""``pin scan``: the stack at several releases in one walk; every cell checked against a real
``git apply --check`` / ``git apply -R --check`` of the stack, patch after patch, at that release."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from vimesync import git
from vimesync.check.scan import ScanTarget, merge_scans, report_from_dict, run_scan, scan_to_dict
from vimesync.report.matrix import scan_markdown, scan_svg

CORE = ENGINE["eng/core.py"]
UTIL = ENGINE["eng/util.py"]
THERE = UTIL + "\n\ndef there():\n    return 2\n"


def _line(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.fixture()
def history(tmp_path: Path) -> Stack:
    """Four patches on the pin; releases v2 (lines moved), v3 (one patch taken upstream, one
    clashing), v4 (a file the stack patches gone)."""
    s = Stack(tmp_path)
    s.add("a-moves.patch", {"eng/core.py": _line(CORE, "return x + 3\n", "return x + 3  # A\n")})
    s.add("b-taken.patch", {"eng/util.py": THERE})
    core_a = _line(CORE, "return x + 3\n", "return x + 3  # A\n")
    s.add("c-clashes.patch", {"eng/core.py": _line(core_a, "return x + 25\n", "return x + 25  # C\n")})
    s.add("d-readme.patch", {"README.md": "engine\npatched\n"})
    moved = "# header\n" * 4 + CORE
    s.release("v2", {"eng/core.py": moved})
    s.release(
        "v3", {"eng/core.py": _line(moved, "return x + 25\n", "return x + 25  # up\n"), "eng/util.py": THERE}
    )
    s.release("v4", {"README.md": None})
    return s


def _git_stack(s: Stack, rev: str, tmp: Path) -> dict[str, tuple[bool, bool]]:
    """Per patch, in series order on the tree at ``rev`` with the patches before it that applied:
    (git apply --check, git apply -R --check)."""
    tree = tmp / f"tree-{rev[:8]}"
    git.run(s.repo.path, ["worktree", "add", "-q", "--detach", str(tree), rev])
    env = {"GIT_CEILING_DIRECTORIES": str(tmp), "XDG_CONFIG_HOME": os.devnull}
    (tree / ".git").unlink()
    out = {}
    for name in s.names:
        patch = str(s.dir / name)
        fwd = git.run_status(tree, ["apply", "--check", patch], env=env)[0] == 0
        back = git.run_status(tree, ["apply", "-R", "--check", patch], env=env)[0] == 0
        if fwd:
            git.run(tree, ["apply", patch], env=env)
        out[name] = (fwd, back)
    return out


@pytest.mark.slow
def test_every_cell_is_what_git_apply_says_at_that_release(history: Stack, tmp_path: Path) -> None:
    s = history
    tags = ["v2", "v3", "v4"]
    targets = [ScanTarget(t, s.repo.path, t) for t in tags]
    report = run_scan(s.opts(), targets, parse=False)
    assert [r.label for r in report.releases] == tags
    words = {(c.patch, c.release): c.verdict for c in report.cells}
    v2, v3, v4 = (r.label for r in report.releases)
    assert words["a-moves.patch", v2] == "offsets ±4"
    assert words["b-taken.patch", v3] == "already applied"
    assert words["c-clashes.patch", v3] == "conflicts: eng/core.py #1"
    assert words["d-readme.patch", v4].startswith("conflicts: README.md")
    for tag, rel in zip(tags, report.releases, strict=True):
        for name, (fwd, back) in _git_stack(s, git.resolve(s.repo.path, tag), tmp_path).items():
            c = report.cell(name, rel.label)
            assert (c.status in ("applied", "offsets")) == fwd, (tag, name, c)
            assert (c.status == "already-applied") == (back and not fwd), (tag, name, c)
    assert not report.ok


@pytest.mark.slow
def test_per_release_documents_merge_into_the_whole_matrix(history: Stack, tmp_path: Path) -> None:
    s = history
    whole = run_scan(s.opts(), [ScanTarget(t, s.repo.path, t) for t in ("v2", "v3")], parse=False)
    parts = [run_scan(s.opts(), [ScanTarget(t, s.repo.path, t)], parse=False) for t in ("v2", "v3")]
    docs = [json.loads(json.dumps({"kind": "pin-scan", **scan_to_dict(p)})) for p in parts]
    merged = merge_scans([report_from_dict(d, where=f"doc{i}") for i, d in enumerate(docs)])
    assert merged.cells == whole.cells and merged.patches == whole.patches


def test_markdown_and_svg_escape_every_label() -> None:
    from vimesync.check.scan import Cell, Release, ScanReport

    evil = "<b>x</b>|&#1 `y`\x1b"
    report = ScanReport(
        "eng",
        "series",
        (evil,),
        (Release(evil, "v", "git", "/p", "a" * 40),),
        (Cell(evil, evil, "failed", f"conflicts: {evil} #1"),),
    )
    md = scan_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| `"))
    assert row.count(" | ") == 1  # two cells: no pipe from a name splits the row
    assert "<b>" not in md.replace("`<b>x</b>", "")  # only inside code spans
    svg = scan_svg(report)
    import xml.dom.minidom

    xml.dom.minidom.parseString(svg)  # well-formed: every label escaped
    assert "<b>" not in svg and "\x1b" not in svg


HOSTILE_NAMES = (
    "a<b&c.patch",
    "]]><!--x-->.patch",
    "q\"uo'te.patch",
    "pipe|`tick``|.patch",
    "<script>alert(1)</script>@someone.patch",
    "ctrl\x1b[31m\x00\ud800.patch",
    "long-" + "n" * 5000 + ".patch",
)


def test_svg_and_markdown_hold_hostile_names_in_exactly_their_cells() -> None:
    """Every patch name and release label hostile: the SVG parses as XML (defusedxml, as a wiki
    or a browser would refuse a broken one) with one cell per patch x release, and the GFM table
    has one row per patch and one column per release."""
    from defusedxml import ElementTree

    from tests.builders.gfm import html, tables
    from vimesync.check.scan import Cell, Release, ScanReport

    releases = tuple(
        Release(n, "v", "git", "/p", f"{i:040x}", pinned=i == 1) for i, n in enumerate(HOSTILE_NAMES[:4])
    )
    statuses = ("applied", "offsets", "failed", "already-applied", "partly-applied", "skipped")
    cells = tuple(
        Cell(p, r.label, statuses[(i + j) % len(statuses)], f"conflicts: {p} #1", "c")
        for i, p in enumerate(HOSTILE_NAMES)
        for j, r in enumerate(releases)
    )
    report = ScanReport("eng<&>", "series", HOSTILE_NAMES, releases, cells)
    root = ElementTree.fromstring(scan_svg(report).encode())
    ns = "{http://www.w3.org/2000/svg}"
    grid = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(grid) == len(HOSTILE_NAMES) * len(releases)
    tips = [r.find(f"{ns}title").text or "" for r in grid]  # type: ignore[union-attr]
    assert tips[0].startswith("a<b&c.patch at a<b&c.patch: conflicts")  # the names, unescaped back
    assert all(len(t) <= 400 for t in tips)
    md = scan_markdown(report)
    (table,) = tables(md)
    assert len(table) == 1 + len(HOSTILE_NAMES) and all(len(row) == 1 + len(releases) for row in table)
    assert [row[0].strip("`") for row in table[1:4]] == ["a<b&c.patch", "]]><!--x-->.patch", "q\"uo'te.patch"]
    page = html(md)
    assert "<script>" not in page and "<!--x-->" not in page.replace("&lt;!--x--&gt;", "")


@pytest.mark.slow
def test_cli_text_json_markdown_svg_and_merge(
    history: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = history
    base = ["pin", "scan", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series")]
    code, out, err = run(capsys, *base, "--to", "v2", "--to", "v3", "--svg", str(tmp_path / "m.svg"))
    assert code == 1 and "already applied" in out and "NEEDS WORK" in out, err
    assert (tmp_path / "m.svg").read_text().startswith("<svg")
    code, out, _ = run(capsys, *base, "--to", "v2", "--format", "markdown")
    assert code == 0 and "| Patch |" in out and "offsets ±4" in out
    files = []
    for tag in ("v2", "v3"):
        code, out, _ = run(capsys, *base, "--to", tag, "--json")
        doc = json.loads(out)
        assert doc["kind"] == "pin-scan" and {c["status"] for c in doc["cells"]} <= {
            "applied",
            "offsets",
            "already-applied",
            "failed",
            "partly-applied",
        }
        files.append(tmp_path / f"{tag}.json")
        files[-1].write_text(out)
    code, out, err = run(capsys, "pin", "scan", "--merge", str(files[0]), "--merge", str(files[1]), "--json")
    doc = json.loads(out)
    assert code == 1 and len(doc["releases"]) == 2 and len(doc["cells"]) == 8, err
    code, out, err = run(capsys, "pin", "scan", "--merge", str(files[0]), "--to", "v2")
    assert code == 2 and "not both" in err


def test_scan_markdown_pings_nobody_and_closes_nothing() -> None:
    # Issue 29 item 16: pin scan --format markdown neutralised no mention or closing reference.
    from tests.builders.gfm import html
    from vimesync.check.scan import Cell, Release, ScanReport

    name = "eng @octocat fixes vime-org/vime#3"
    verdict = "conflicts: closes vime-org/vime#4 in @org/team.py"
    report = ScanReport(
        name,
        "series",
        ("a.patch",),
        (Release("v2", "v", "git", "/p", "a" * 40),),
        (Cell("a.patch", "v2", "failed", verdict),),
    )
    md = scan_markdown(report)
    page = html(md)
    assert "<code>@octocat</code>" in md and "<code>@org</code>/team.py" in md
    assert md.startswith(
        "### Patch stack of eng <code>@octocat</code> fixes <code>vime-org/vime#3</code> at 1 release\n"
    )
    assert "fixes <code>vime-org/vime#3</code>" in md and "closes <code>vime-org/vime#4</code>" in md
    assert "@octocat" not in page.replace("<code>@octocat</code>", "")


def test_the_current_pin_is_marked_in_the_text_the_json_the_markdown_and_the_svg(
    history: Stack, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Scanned with the pin itself among the releases, its column says so: "(the current pin)"
    in the text, ``pinned`` in the JSON (kept by --merge), "(pin)" in the Markdown header, and
    one framed column in the SVG."""
    from defusedxml import ElementTree

    s = history
    base = ["pin", "scan", "--source", str(s.repo.path), "--rev", s.pin, "--series", str(s.dir / "series")]
    svg = tmp_path / "m.svg"
    code, out, err = run(capsys, *base, "--to", "v2", "--to", s.pin, "--svg", str(svg))
    assert code == 0, err  # v2 moved lines only: the stack applies at both
    lines = out.splitlines()
    assert "(the current pin)" in next(ln for ln in lines if ln.startswith(f"  {s.pin[:12]}"))
    assert "(the current pin)" not in next(ln for ln in lines if ln.startswith("  v2:"))
    root = ElementTree.fromstring(svg.read_bytes())
    frames = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "pin"]
    assert len(frames) == 1
    assert float(frames[0].get("x") or 0) > 150  # the second column's, not the first's
    code, out, _ = run(capsys, *base, "--to", "v2", "--to", s.pin, "--json")
    doc = json.loads(out)
    assert [r["pinned"] for r in doc["releases"]] == [False, True]
    merged = merge_scans([report_from_dict(doc, where="doc")])
    assert [r.pinned for r in merged.releases] == [False, True]
    header = next(ln for ln in scan_markdown(merged).splitlines() if ln.startswith("| Patch"))
    assert header.count("(pin)") == 1 and header.endswith("(pin) |")
