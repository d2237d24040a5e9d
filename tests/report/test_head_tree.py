"""The report describes the head commit, whatever the working tree holds (issue 16)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vimesync import git
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo


@pytest.fixture
def demo(tmp_path: Path) -> Demo:
    return build_demo(tmp_path / "d")


def _report(demo: Demo, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    with pytest.raises(SystemExit):
        main(["report", "--baseline", demo.baseline, "--sync", "head-tree", "--json", *extra])
    out, err = capsys.readouterr()
    assert "vimesync-head" not in out + err  # the scratch copy is never named
    return json.loads(out)


def _patches(doc: dict) -> list[str]:
    return [p["name"] for p in doc["validation"]["patches"]]


def test_an_uncommitted_series_does_not_change_the_report_of_the_head(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo.downstream)
    committed = _report(demo, capsys)
    assert len(_patches(committed)) == 4
    series = demo.downstream / "patches" / "series"
    series.write_text("vllm-pull_weights.patch\n")  # uncommitted: the head still has four
    (demo.downstream / "pins" / "vllm.toml").write_text("[engine]\nseries = 'nowhere'\n")

    doc = _report(demo, capsys)
    assert _patches(doc) == _patches(committed)
    assert doc["validation"]["series"] == str(series)  # named where the checkout has it
    assert [r["name"] for r in doc["engine"]["patches"]] == _patches(committed)


def test_head_names_an_earlier_commit_with_another_stack(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo.downstream)
    series = demo.downstream / "patches" / "series"
    lines = series.read_text().splitlines()
    series.write_text("\n".join(lines[:-1]) + "\n")  # drop the last patch, then commit it
    git.run(demo.downstream, ["commit", "-qam", "drop the last patch"], env=_identity())
    dropped = git.resolve(demo.downstream, "HEAD")
    git.run(demo.downstream, ["revert", "--no-edit", "HEAD"], env=_identity())
    shutil.copy(series, series.with_suffix(".bak"))  # the working tree: four patches again

    at_tip = _report(demo, capsys)
    at_dropped = _report(demo, capsys, "--head", dropped)
    assert len(_patches(at_tip)) == 4
    assert _patches(at_dropped) == _patches(at_tip)[:-1]


def _identity() -> dict[str, str]:
    from tests.builders.gitrepo import commit_env

    return commit_env()
