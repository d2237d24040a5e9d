"""``vimesync init`` on real repositories: what it writes loads as a config, tells what it can
(synced = the newest upstream commit the fork holds, the engine clone's full sha), refuses to
overwrite and never writes through a symlink."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.workspaces import options as check_options
from tests.builders.workspaces import workspace
from vimesync import git
from vimesync.app.upstreamsteps import walk
from vimesync.cli.app import main
from vimesync.config import load_config, load_engine_pin

WRITTEN = [
    "vimesync.toml",
    "pins/slime.toml",
    "pins/vllm.toml",
    "patches/series",
    "sop/policy.toml",
    "sop/gates.toml",
    "sop/SYNC.md",
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """An upstream with three merged commits, a fork holding the first two, an engine clone."""
    up = Repo(tmp_path / "slime")
    first = up.commit("init", {"slime/a.py": "a = 1\n"})
    second = up.commit("Add b (#2)", {"slime/b.py": "b = 2\n"})
    up.commit("Add c (#3)", {"slime/c.py": "c = 3\n"})
    up.git("config", "remote.origin.url", "https://github.com/THUDM/slime.git")
    down = Repo(tmp_path / "vime")
    # The fork holds upstream's history up to ``second`` only (a pack of it, as a fetch would bring).
    pack = git.run(up.path, ["pack-objects", "--revs", "--stdout", "-q"], input=f"{second}\n".encode())
    git.run(down.path, ["index-pack", "--stdin"], input=pack)
    down.git("reset", "-q", "--hard", second)
    down.commit("Vime: rename", {"vime/a.py": "a = 1\n"})
    eng = Repo(tmp_path / "vllm")
    pin = eng.commit("engine", {"vllm/__init__.py": "x = 1\n"})
    monkeypatch.chdir(down.path / "vime")  # from a subfolder: init writes at the repository root
    return {"up": up, "down": down, "first": first, "second": second, "pin": pin, "eng": eng}


@pytest.mark.slow
def test_init_writes_a_working_layout(world: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    down = world["down"].path  # type: ignore[attr-defined]
    code, out, err = run(
        capsys, "init", "--upstream", "../../slime", "--map", "slime/=vime/",
        "--engine", "vLLM", "--source", "../../vllm",
    )  # fmt: skip
    assert code == 0, err
    assert [line.removeprefix(f"wrote {down}/") for line in out.splitlines()[: len(WRITTEN)]] == WRITTEN
    assert "1. vimesync walk" in out and "2. vimesync patches check" in out and "3. vimesync report" in out
    cfg = load_config(cwd=down / "vime")
    assert cfg.file == down / "vimesync.toml"
    assert cfg.upstream_repo == "THUDM/slime" and cfg.upstream_name == "Slime"
    assert cfg.upstream_path == world["up"].path and cfg.upstream_branch == "main"  # type: ignore[attr-defined]
    assert cfg.upstream_pin.synced == world["second"]  # the newest upstream commit the fork holds
    assert cfg.path_map == (("slime/", "vime/"),)
    assert cfg.engine.name == "vLLM" and cfg.engine.rev == world["pin"]
    assert cfg.engine.source == world["eng"].path  # type: ignore[attr-defined]
    assert cfg.policy == down / "sop/policy.toml"
    opts = check_options(cfg)
    assert opts.series == down / "patches/series"
    walked = walk(workspace(cfg, downstream=cfg.downstream_path))
    assert [pr.number for pr in walked.prs] == [3]


def test_init_refuses_to_overwrite_without_force(
    world: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    down = world["down"].path  # type: ignore[attr-defined]
    (down / "sop").mkdir()
    (down / "sop/policy.toml").write_text("# mine\n")
    code, out, err = run(capsys, "init")
    assert code == 2 and "sop/policy.toml already exists; nothing written" in err and "--force" in err
    assert not (down / "vimesync.toml").exists() and (down / "sop/policy.toml").read_text() == "# mine\n"
    code, out, err = run(capsys, "init", "--force")
    assert code == 0 and "[[rule]]" in (down / "sop/policy.toml").read_text()


def test_init_never_writes_through_a_symlink(
    world: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = world["down"].path  # type: ignore[attr-defined]
    victim = tmp_path / "victim.toml"
    victim.write_text("keep\n")
    (down / "vimesync.toml").symlink_to(victim)
    code, _, err = run(capsys, "init", "--force")
    assert code == 2 and ("symbolic link" in err or "refusing" in err)
    assert victim.read_text() == "keep\n"
    (down / "vimesync.toml").unlink()
    (down / "pins").symlink_to(tmp_path)  # a folder on the way
    code, _, err = run(capsys, "init", "--force")
    assert code == 2 and not (tmp_path / "slime.toml").exists()
    # All checked before any is written: a link on the way to a later file leaves no earlier one.
    assert not (down / "vimesync.toml").exists()
    (down / "pins").unlink()
    (down / "patches").symlink_to(tmp_path)
    code, _, err = run(capsys, "init", "--force")
    assert code == 2 and "patches" in err
    assert not (down / "vimesync.toml").exists() and not (down / "pins").exists()
    assert list(tmp_path.glob("series")) == []


@pytest.mark.parametrize("target", [".git/", "GIT~1/", "../x/", "a/.g\u200cit/"])
def test_init_refuses_a_map_that_carry_would_refuse(
    world: dict[str, object], capsys: pytest.CaptureFixture[str], target: str
) -> None:
    down = world["down"].path  # type: ignore[attr-defined]
    code, _, err = run(capsys, "init", "--map", f"slime/={target}")
    assert code == 2 and "--map" in err and "plain folder path" in err and "Traceback" not in err
    assert not (down / "vimesync.toml").exists()


def test_init_with_nothing_known_writes_commented_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Repo(tmp_path / "fork")
    monkeypatch.chdir(tmp_path / "fork")
    code, out, _ = run(capsys, "init", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["written"] == ["vimesync.toml", "pins/upstream.toml", "pins/engine.toml", *WRITTEN[3:]]
    assert "2. vimesync patches check --source ENGINE" not in doc["next"]  # plain list of commands
    assert doc["next"][1] == "vimesync patches check --source ENGINE"
    cfg = load_config(cwd=tmp_path / "fork")
    assert cfg.upstream_path is None and cfg.upstream_pin.synced is None and cfg.engine.rev is None
    text = (tmp_path / "fork/vimesync.toml").read_text()
    assert '# path = "../slime"' in text and '# branch = "origin/main"' in text


def test_init_from_a_url_and_a_bad_rev(world: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "init", "--upstream", "git@github.com:THUDM/slime.git", "--rev", "abc")
    assert code == 2 and "--rev 'abc': expected the full 40-hex sha" in err
    code, out, err = run(capsys, "init", "--upstream", "https://github.com/THUDM/slime")
    assert code == 0, err
    down = world["down"].path  # type: ignore[attr-defined]
    assert load_config(cwd=down).upstream_repo == "THUDM/slime"
    assert "git clone https://github.com/THUDM/slime" in out


def test_init_with_a_wheel_source_refuses_a_rev(
    world: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "sglang-0.5.15-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    sha = world["pin"]
    code, _, err = run(capsys, "init", "--source", str(wheel), "--rev", str(sha))
    assert code == 2 and "is not a git repository" in err and "drop --rev" in err
    code, out, err = run(capsys, "init", "--source", str(wheel))
    assert code == 0, err
    down = world["down"].path  # type: ignore[attr-defined]
    cfg = load_config(cwd=down)
    assert cfg.engine.name == "sglang" and cfg.engine.rev is None and cfg.engine.source == wheel
    # the wheel's digest is in the pin: what `patches check` verifies before every use
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert f'sha256 = "{digest}"' in (down / "pins/sglang.toml").read_text()
    assert load_engine_pin(down / "pins/sglang.toml").sha256 == digest


@pytest.mark.parametrize("fetched_tip", [False, True])
def test_synced_is_the_newest_upstream_commit_in_the_forks_history(
    world: dict[str, object], capsys: pytest.CaptureFixture[str], fetched_tip: bool
) -> None:
    # Without the tip's objects: the newest first-parent upstream commit the fork holds; with
    # them (a fetched upstream remote): the merge-base. The same commit either way.
    up, down = world["up"], world["down"]
    if fetched_tip:
        pack = git.run(up.path, ["pack-objects", "--revs", "--stdout", "-q"], input=f"{up.head()}\n".encode())  # type: ignore[attr-defined]
        git.run(down.path, ["index-pack", "--stdin"], input=pack)  # type: ignore[attr-defined]
    assert git.run_ok(down.path, ["cat-file", "-e", up.head()]) is fetched_tip  # type: ignore[attr-defined]
    code, _, err = run(capsys, "init", "--upstream", str(up.path))  # type: ignore[attr-defined]
    assert code == 0, err
    assert load_config(cwd=down.path).upstream_pin.synced == world["second"]  # type: ignore[attr-defined]


def test_init_in_a_fresh_repository_then_walk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first hour: `git init`, `vimesync init`, then the next step it prints (issue 17, 13)."""
    up = Repo(tmp_path / "slime")
    up.commit("init", {"slime/a.py": "a = 1\n"})
    up.commit("Add b (#2)", {"slime/b.py": "b = 2\n"})
    fresh = tmp_path / "vime"
    fresh.mkdir()
    git.run(fresh, ["init", "-q"])
    monkeypatch.chdir(fresh)
    code, out, err = run(capsys, "init", "--upstream", "../slime", "--map", "slime/=vime/")
    assert code == 0, err
    code, out, err = run(capsys, "walk", "--range", "HEAD", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [pr["status"] for pr in doc["prs"]] == ["applicable"]
    assert any("no commit yet" in n for n in doc["notes"])
    sync_md = (fresh / "sop/SYNC.md").read_text()
    assert "vimesync carry" in sync_md and "Cherry-pick" not in sync_md
    assert "you never edit it by hand" in sync_md
    gates = (fresh / "sop/gates.toml").read_text()
    from vimesync.sop.gatesfile import load_gates

    scaffolded = load_gates(fresh)
    assert scaffolded.architectures == ("amd64", "arm64") and "[off]" in gates
    # The tests gate is off until [evidence] required names a suite: nothing holds on no evidence.
    assert scaffolded.evidence == () and [g for g, _ in scaffolded.off] == ["tests"]


def test_an_upstream_named_like_the_engine_gets_two_pins(
    world: dict[str, object], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`init --upstream <clone named X> --engine X` wrote pins/x.toml twice, the engine pin over the
    upstream pin, and named one file as both (issue 18, finding 14)."""
    down = world["down"].path  # type: ignore[attr-defined]
    code, out, err = run(
        capsys, "init", "--upstream", "../../slime", "--engine", "Slime", "--source", "../../vllm"
    )
    assert code == 0, err
    cfg = load_config(cwd=down)
    assert cfg.upstream_pin.file != cfg.engine.file
    assert cfg.upstream_pin.synced == world["second"] and cfg.engine.rev == world["pin"]
    assert "pins/slime-engine.toml" in out


def test_the_scaffolded_sop_shows_the_executed_run_first_and_typed_as_the_fallback() -> None:
    from vimesync.scaffold.templates import sync_md

    text = sync_md(upstream="Slime", up_pin="pins/slime.toml", eng_pin="pins/vllm.toml", path=None)
    flat = " ".join(text.split())  # the SOP wraps its lines
    executed = flat.index(
        "vimesync sop record run --name NAME [--junit FILE] [--figures FILE] -- CMD [ARG...]"
    )
    typed = flat.index("vimesync sop record run --name NAME --exit N --duration 4m03s")
    assert executed < typed and flat.count("--exit N") == 1
    assert "typed as a fallback" in flat[executed : typed + 100]
