"""The workspace: every fact of a sync resolved once (issue 28's four cases seen from outside).

1. From the main checkout (HEAD the pre-sync commit, the sync on its own branch), ``report`` and
   ``sop status`` describe the sync branch the repository records, or refuse naming --head and
   --baseline: never the pre-sync tree as the sync.
2. ``report --head HEAD`` with no ``[downstream]`` in the config reads the head's series.
3. A config kept in ``ci/`` that names ``../pins/...`` works for audit, sop status and report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import commit_env
from vimesync import git
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo

pytestmark = pytest.mark.slow  # a demo built per test: real repositories and a real check


@pytest.fixture
def demo(tmp_path: Path) -> Demo:
    return build_demo(tmp_path / "d")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def _commit(repo: Path, message: str) -> str:
    git.run(repo, ["add", "-A"])
    git.run(repo, ["commit", "-qm", message], env=commit_env())
    return git.resolve(repo, "HEAD")


def test_report_from_the_main_checkout_refuses_without_a_recorded_sync(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo.checkout)
    for command in (["report"], ["sop", "status"], ["audit"]):
        code, out, err = _run(capsys, *command, "--json")
        doc = json.loads(out)
        assert code == 2 and doc["kind"] == "error", command
        assert f"HEAD ({demo.baseline[:12]})" in doc["error"] and "is not a sync" in doc["error"]
        # the sync branch carry made is named, with where it is checked out
        assert "sync branches here: sync/" in doc["error"] and str(demo.downstream) in doc["error"]
        assert "--head REV" in err and "--baseline REV" in err


def test_report_from_the_main_checkout_describes_the_sync_it_records(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from vimesync.app import syncstate

    branch = git.run(demo.downstream, ["symbolic-ref", "--short", "HEAD"]).decode().strip()
    syncstate.create(
        demo.checkout,
        syncstate.SyncState(
            checkout=str(demo.checkout), onto=demo.baseline, baseline=demo.baseline, branch=branch
        ),
    )
    monkeypatch.chdir(demo.checkout)
    code, out, err = _run(capsys, "report", "--json")
    doc = json.loads(out)
    assert doc["kind"] == "report" and doc["head"] == demo.head  # the sync's head, not main's
    assert f"describing the sync branch {branch} at {demo.head[:12]}" in err
    # the same document as from the sync's worktree (the facts are the same facts), but for how
    # many parsed files the second run found in the cache
    monkeypatch.chdir(demo.downstream)
    _code, there, _err = _run(capsys, "report", "--json")
    assert _uncached(json.loads(there)) == _uncached(doc)


def _uncached(doc: dict) -> dict:
    for v in (doc["validation"], *doc["validations"]):
        v["python"].pop("cached")
    return doc


def test_report_of_the_head_reads_the_heads_series_without_a_downstream_table(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = demo.downstream / "vimesync.toml"
    text = config.read_text()
    config.write_text(text.replace('[downstream]\npath = "."\n', ""))
    _commit(demo.downstream, "no [downstream] table: the downstream is where the command runs")
    (demo.downstream / "patches" / "series").write_text("vllm-pull_weights.patch\n")  # uncommitted
    monkeypatch.chdir(demo.downstream)
    code, out, _err = _run(capsys, "report", "--head", "HEAD", "--baseline", demo.baseline, "--json")
    names = [r["name"] for r in json.loads(out)["engine"]["patches"]]
    assert len(names) == 4, names  # the head's four, not the working tree's one


def test_a_config_in_a_subfolder_naming_the_pins_above_it_works_for_every_command(
    demo: Demo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/SECURITY.md's layout: ci/vimesync.toml names ../pins/..., ../sop/..., ../slime
    down = demo.downstream
    (down / "ci").mkdir()
    text = (down / "vimesync.toml").read_text()
    text = (
        text.replace('"pins/', '"../pins/')
        .replace('"sop/', '"../sop/')
        .replace('"../slime"', '"../../slime"')
    )
    text = text.replace('path = "."', 'path = ".."').replace('"../vllm.git"', '"../../vllm.git"')
    (down / "ci" / "vimesync.toml").write_text(text)
    (down / "vimesync.toml").unlink()
    _commit(down, "the config lives in ci/")
    monkeypatch.chdir(down)
    config = ["--config", str(down / "ci" / "vimesync.toml"), "--json"]
    for command in (["walk"], ["audit", "--baseline", "main"], ["sop", "status", "--baseline", "main"]):
        code, out, err = _run(capsys, *command, *config)
        assert code in (0, 1) and json.loads(out)["kind"] != "error", (command, err)
    code, out, err = _run(capsys, "report", "--baseline", "main", *config)
    doc = json.loads(out)
    assert code in (0, 1) and doc["kind"] == "report", err
    assert "must be inside the repository" not in err
    assert len(doc["engine"]["patches"]) == 4
