"""The Engine patches table against the baseline's series; the title's PRs and the final commit
(issue 20, item 5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.builders import samples
from tests.builders.cli import run
from tests.builders.gitrepo import Repo, commit_env
from vimesync import git
from vimesync.demo.build import build_demo
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


HEADER = "Description: Pull-checkpoint transport\nOrigin: https://github.com/aoshen02/vllm/pull/45\n---\n"
DIFF = "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+b\n"


def test_a_header_only_change_and_a_strip_change_say_so(tmp_path: Path) -> None:
    # Issue 29 item 15: a header-only change read "changed"; a -p1 -> -p0 change "unchanged".
    down = Repo(tmp_path / "down")
    baseline = down.commit(
        "baseline",
        {
            "patches/series": "hdr.patch\nstrip.patch\nboth.patch -p1\nbody.patch\n",
            "patches/hdr.patch": DIFF,
            "patches/strip.patch": DIFF,
            "patches/both.patch": DIFF,
            "patches/body.patch": DIFF,
        },
    )
    down.commit(
        "describe",
        {
            "patches/series": "hdr.patch\nstrip.patch -p0\nboth.patch -p2\nbody.patch\n",
            "patches/hdr.patch": HEADER + DIFF,
            "patches/both.patch": HEADER + DIFF.replace("+b", "+c"),
            "patches/body.patch": DIFF.replace("+b", "+c"),
        },
    )
    names = ("hdr.patch", "strip.patch", "both.patch", "body.patch")
    table = build_engine(
        [(n, None) for n in names],
        engine="vLLM",
        pin="e" * 40,
        source="s",
        engine_repo=None,
        previous_pin=None,
    )
    marked = mark_series(table, down.path, baseline, "HEAD", "patches", strip=1)
    assert [(r.name, r.change) for r in marked.rows] == [
        ("hdr.patch", "header changed"),
        ("strip.patch", "unchanged; strip -p1 → -p0"),
        ("both.patch", "changed; strip -p1 → -p2"),
        ("body.patch", "changed"),
    ]
    assert "| `strip.patch` | — | unchanged; strip -p1 → -p0 |" in render_engine(marked)


@pytest.mark.slow
def test_a_header_written_and_not_committed_is_named_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 29 item 15: the report reads the head; a header `patches describe` wrote and nobody
    # committed left the Purpose cell as it was ("—") with no word why.
    d = build_demo(tmp_path / "d")
    monkeypatch.chdir(d.downstream)
    patch = d.downstream / "patches" / "vllm-pull_weights.patch"
    text = patch.read_text()
    body = text[text.index("diff --git") :]
    patch.write_text(body)
    git.run(d.downstream, ["commit", "-qam", "drop the header"], env=commit_env())
    code, out, err = run(capsys, "patches", "describe", "vllm-pull_weights.patch", "--description", "Pull")
    assert code == 0, err
    assert "next: git commit it" in err
    code, out, err = run(
        capsys, "report", "--baseline", d.baseline, "--skip-gate", "ci", "--skip-gate", "tests"
    )
    row = next(line for line in out.splitlines() if line.startswith("| `vllm-pull_weights.patch`"))
    assert row.startswith(
        "| `vllm-pull_weights.patch` | — (header in the work tree not committed: run `git commit`)"
    )
    git.run(d.downstream, ["commit", "-qam", "describe"], env=commit_env())
    code, out, err = run(
        capsys, "report", "--baseline", d.baseline, "--skip-gate", "ci", "--skip-gate", "tests"
    )
    row = next(line for line in out.splitlines() if line.startswith("| `vllm-pull_weights.patch`"))
    assert row == "| `vllm-pull_weights.patch` | Pull | header changed |", row
