"""The Summary's resolved conflicts in Markdown: bounded, and no upstream text breaks out."""

from __future__ import annotations

from tests.builders.gfm import html
from vimesync.carry.resolutions import Resolution, Resolutions, ResolvedFile
from vimesync.report.links import pr_ref
from vimesync.report.markdown import render_markdown, render_summary
from vimesync.report.model import PrLine, Skipped, Summary, SyncReport
from vimesync.report.resolvedmd import MAX_LINES, MAX_PRS, fenced

HOSTILE = ("`````", "```", "~~~~", "@carol", "closes #4", "<img src=x onerror=alert(1)>", "</code></pre>")


def _summary(items: tuple[Resolution, ...], notes: tuple[str, ...] = ()) -> Summary:
    applicable = tuple(
        PrLine(ref=pr_ref("o/up", r.pr), title=r.title, number=r.pr) for r in items if r.pr is not None
    )
    return Summary(
        upstream_name="Up",
        upstream_repo="o/up",
        base="a" * 40,
        tip="b" * 40,
        applicable=applicable,
        excluded=(),
        included=(),
        mirrored=(),
        direct_commits=(),
        head_known=True,
        resolutions=Resolutions(items, replayed=len(items), notes=notes),
    )


def test_a_fence_is_longer_than_any_backtick_run() -> None:
    assert fenced(["a"]) == ["```", "a", "```"]
    assert fenced(["x `````` y"], "diff")[0] == "```````diff"


def test_hostile_lines_stay_in_the_code_block() -> None:
    f = ResolvedFile("p`|\n.py", "conflict: content", HOSTILE, len(HOSTILE), len(HOSTILE))
    title = "t ``` @dave fixes #3 <b>x</b>"
    summary = _summary((Resolution(7, title, "c" * 40, "d" * 40, (f,)),))
    report = SyncReport(
        upstream_name="Up",
        summary=summary,
        engines=(Skipped("-"),),
        audit=Skipped("-"),
        validations=(Skipped("-"),),
    )
    md = render_markdown(report)
    rendered = html(md)
    block = rendered.split('<pre><code class="language-diff">')[1].split("</code></pre>")[0]
    assert block.splitlines() == [
        "-`````",
        "-```",
        "-~~~~",
        "-@carol",
        "-closes #4",
        "-&lt;img src=x onerror=alert(1)&gt;",
        "-&lt;/code&gt;&lt;/pre&gt;",
    ]
    assert "<img" not in rendered and "<b>" not in rendered
    outside = rendered.replace(block, "")
    assert "@dave" not in outside.replace("<code>@dave</code>", "")
    assert "carried with changes (1 file resolved by hand)" in md


def test_the_section_is_bounded() -> None:
    lines = tuple(f"line {i}" for i in range(20))
    files = tuple(ResolvedFile(f"f{i}.py", "conflict: content", lines, 500, 500) for i in range(15))
    items = tuple(Resolution(n, f"pr {n}", "c" * 40, "d" * 40, files) for n in range(1, 60))
    out = render_summary(_summary(items, notes=("the replay stopped at 1234: BadInput",)))
    text = "\n".join(out)
    assert sum(1 for line in out if line.startswith("-line ")) == MAX_LINES
    assert f"… and {len(items) - MAX_PRS} more PRs carried with changes." in text
    assert "- … and 5 more files." in text and "480 more lines" in text
    assert (
        "- 15 files resolved by hand: `f0.py`, `f1.py`, `f2.py`, `f3.py`, `f4.py` … (lines not shown)."
        in text
    )
    assert "- the replay stopped at 1234: BadInput" in text
    section = text[text.index("Carried with changes") :]
    assert len(section) < 30_000


def test_nothing_resolved_says_nothing() -> None:
    assert "Carried with changes" not in "\n".join(render_summary(_summary(())))
