"""Every command's ``--json`` document starts with the contract: ``kind`` (a Kind value), ``ok``
and ``exit_code``, the process's own exit code (vimesync/app/result.py).

Each command of the built app runs once, on the demo's example (real repositories, no network;
``ci`` reads a fake GitHub on loopback). A new command fails here until it has its arguments."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from vimesync import git
from vimesync.app.result import CONTRACT_KEYS, Kind
from vimesync.cli.app import build_app, main
from vimesync.demo.build import Demo, build_demo

HEAD_SHA = "a" * 40
DIGEST = "sha256:" + "0" * 64

# Commands converted by their own owners later: they may not satisfy the contract yet.


def _junit(tmp: Path) -> Path:
    path = tmp.parent / "junit.xml"
    path.write_text('<testsuites><testsuite><testcase classname="t" name="a"/></testsuite></testsuites>')
    return path


def _args(d: Demo, tmp: Path) -> dict[str, list[str]]:
    """The arguments each command runs with (in the demo's sync worktree)."""
    return {
        "init": ["--downstream", str(tmp)],
        "walk": ["--range", f"{d.base}..{d.tip}"],
        "carry": ["--status"],
        "patches check": [],
        "patches lint": [],
        "patches describe": ["vllm-score-centering.patch", "--description", "Center the scores."],
        "patches refresh": ["vllm-score-centering.patch", "--from", str(tmp)],
        "pin bump": ["--to", "HEAD"],
        "pin scan": ["--to", "HEAD", "--to", d.engine_rev],
        "pin radar": ["--backports"],
        "audit": ["--baseline", "main"],
        "audit review": ["vime", "--by", "tester", "--baseline", "main"],
        "report": ["--baseline", "main"],
        "demo": [],
        "ci": ["--repo", "vime-org/vime", "--sha", HEAD_SHA, "--require", "lint"],
        "sop status": ["--baseline", "main"],
        "sop record image": ["--arch", "amd64", "--digest", DIGEST, "--baseline", "main"],
        "sop record tests": ["--suite", "CPU regressions", "--junit", str(_junit(tmp)), "--baseline", "main"],
        "sop record run": ["--name", "GPU smoke", "--exit", "0", "--duration", "4m03s", "--baseline", "main"],
        "sop record ci": ["--ci-repo", "vime-org/vime", "--baseline", "main"],
        # the demo ships a pre-commit config of local pygrep hooks: a real run, no network
        "sop record precommit": ["--baseline", "main"],
        # a test the sync added: not present before, passes after (two real pytest runs)
        "sop regress": ["--test", "tests/test_flush.py", "--baseline", "main"],
        "sop promote": ["--ref", "vllm/vime:latest", "--ci-repo", "vime-org/vime", "--baseline", "main"],
        "sync": ["--status"],
        # a plan only: the open PRs read from the loopback GitHub, nothing synced or written
        "bot": ["--dry-run", "--repo", "vime-org/vime"],
    }


def _leaves(command: object, prefix: str = "") -> Iterator[str]:
    subs = getattr(command, "commands", None)
    if not subs:
        yield prefix
        return
    if prefix and getattr(command, "invoke_without_command", False):
        yield prefix  # a group that is a command too (audit)
    for name, sub in subs.items():
        yield from _leaves(sub, f"{prefix} {name}".strip())


def _commands() -> list[str]:
    import typer.main

    return sorted(_leaves(typer.main.get_command(build_app())))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("contract") / "d")


@pytest.fixture(autouse=True)
def committed_tree(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each command runs on the demo's tracked files as committed: what one wrote into them
    (``patches describe`` edits a patch's header) is put back after it, since a record is
    refused while tracked files differ from HEAD."""
    yield
    if "demo" in request.fixturenames:
        demo = request.getfixturevalue("demo")
        git.run(demo.downstream, ["reset", "-q", "--hard", "HEAD"])


@pytest.fixture()
def github(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    fake = FakeGitHub(range(1, 2))
    fake.statuses[HEAD_SHA] = [{"context": "lint", "state": "success", "description": "", "target_url": ""}]
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        yield


NAMES = (
    "init walk carry demo ci report audit".split()
    + ["audit review", "patches check", "patches lint", "patches describe", "patches refresh"]
    + ["pin bump", "pin scan", "pin radar"]
    + ["sop status", "sop record image", "sop record tests", "sop record run", "sop record ci"]
    + ["sop record precommit", "sop regress", "sop promote"]
    + ["sync", "bot"]
)


def test_every_command_of_the_app_is_run_here() -> None:
    names = set(_commands())
    assert names == set(NAMES), f"new or gone commands: {names ^ set(NAMES)}"


@pytest.mark.parametrize(
    "name",
    NAMES,
)
def test_json_document_starts_with_the_contract(
    name: str,
    demo: Demo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    github: None,
) -> None:
    target = tmp_path / "new"
    target.mkdir()
    if name == "patches refresh":  # a bump's work folder: the patch, nothing edited, at the pin
        manifest = {"to": str(demo.engine), "rev": demo.engine_rev}
        (target / "bump.json").write_text(json.dumps(manifest))
        (target / "vllm-score-centering.patch").mkdir()
    args = [*name.split(), *_args(demo, target)[name], "--json"]
    monkeypatch.chdir(demo.downstream)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    with pytest.raises(SystemExit) as exc:
        main(args)
    out, err = capsys.readouterr()
    code = int(exc.value.code or 0)
    doc = json.loads(out)
    assert tuple(doc)[:3] == CONTRACT_KEYS, (args, tuple(doc)[:5], err)
    assert Kind(doc["kind"]) is not Kind.ERROR or code == 2, (args, doc)
    assert doc["exit_code"] == code and doc["ok"] is (code == 0), (args, doc, err)
    assert code in (0, 1), (args, err)  # a real run, not a usage error
