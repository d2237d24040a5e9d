"""The Engine patches table against the baseline's series; the title's PRs and the final commit
(issue 20, item 5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.builders import samples
from tests.builders.gitrepo import Repo
from vimesync.report.build import ReportParts, build_engine, build_report
from vimesync.report.enginemd import render_engine
from vimesync.report.markdown import render_markdown
from vimesync.report.seriesdiff import mark_series, series_names


def test_series_entries_are_marked_added_changed_removed_unchanged(tmp_path: Path) -> None:
    down = Repo(tmp_path / "down")
    baseline = down.commit(
        "baseline",
        {
            "patches/series": "a.patch\nb.patch -p1\nkeep.patch  # stays\n",
            "patches/a.patch": "a1\n",
            "patches/b.patch": "b\n",
            "patches/keep.patch": "k\n",
        },
    )
    down.commit(
        "sync",
        {
            "patches/series": "# the stack\nkeep.patch\na.patch\nc.patch\n",
            "patches/a.patch": "a2\n",
            "patches/b.patch": None,
            "patches/c.patch": "c\n",
        },
    )
    table = build_engine(
        [(n, None) for n in ("keep.patch", "a.patch", "c.patch")],
        engine="vLLM",
        pin="e" * 40,
        source="src",
        engine_repo=None,
        previous_pin="e" * 40,
    )
    marked = mark_series(table, down.path, baseline, "HEAD", "patches")
    assert [(r.name, r.change) for r in marked.rows] == [
        ("keep.patch", "unchanged"),
        ("a.patch", "changed"),
        ("c.patch", "added"),
    ]
    assert marked.removed == ("b.patch",)
    lines = render_engine(marked)
    assert "| Patch | Purpose / PR | Since the baseline |" in lines
    assert "| `b.patch` | — | removed |" in lines
    assert "| Patch | Purpose / PR |" in render_engine(table)  # not read: the table as before


def test_series_names_drop_options_and_comments() -> None:
    assert series_names("a.patch -p2\n  # all\nb#c.patch # not c\n\n") == ["a.patch", "b#c.patch"]


def test_the_title_names_the_newest_prs_and_validation_the_full_head() -> None:
    report = build_report(
        ReportParts(walk=samples.walk(), check=samples.check(), audit=samples.audit(), upstream_name="Slime")
    )
    newest = [p.ref.text.rpartition("#")[2] for p in report.summary.applicable][::-1][:2]  # type: ignore[union-attr]
    assert report.title.endswith(f"8c17b676 (#{newest[0]}/#{newest[1]})")
    md = render_markdown(replace(report, head="f32a36f1d8f811260f92c1901e808c35ad13c4ea"))
    assert "Final commit: f32a36f1d8f811260f92c1901e808c35ad13c4ea." in md
    assert "Final commit" not in render_markdown(replace(report, head="HEAD"))
