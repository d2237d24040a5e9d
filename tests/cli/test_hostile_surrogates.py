"""Lone surrogates in the text we carry: a file name that is not UTF-8 (git paths are decoded with
surrogateescape) and a ``\\ud800`` JSON escape in a PR title. Run as real processes, whose stdout
is a UTF-8 stream: every command matches such paths against the policy globs, shows the surrogate
escaped (terminal and Markdown) and never dies with a UnicodeEncodeError."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.builders.cli import run_cli
from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.gitrepo import Repo
from tests.builders.hostile import cli

pytestmark = pytest.mark.slow  # the CLI as real processes

ODD = "\udcff"  # the byte 0xFF of a file name, as git paths are decoded
POLICY = (
    '[[rule]]\naction = "exclude"\nreason = "docker only"\npaths = ["docker/**"]\n\n'
    '[[rule]]\naction = "exclude"\nreason = "odd ones"\nprs = [8]\npaths = ["slime/**"]\n'
)


def assert_clean(proc: subprocess.CompletedProcess[str], code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and "UnicodeEncodeError" not in proc.stderr


@pytest.fixture()
def repos(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(upstream, downstream, policy): PRs #7 and #8 touch a non-UTF-8 name; so does the sync."""
    up = Repo(tmp_path / "up")
    up.commit("start", {"slime/a.py": "a\n"})
    up.commit("Odd name (#7)", {f"slime/{ODD}.py": "x\n"})
    up.commit("Odd too (#8)", {f"slime/{ODD}x.py": "y\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {"vime/a.py": "a\n"})
    down.commit("sync", {f"vime/{ODD}bad.py": "x\n"})
    assert (down.path / f"vime/{ODD}bad.py").exists()  # as bytes: vime/\xffbad.py
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    return up.path, down.path, policy


def test_non_utf8_paths_in_walk(repos: tuple[Path, Path, Path]) -> None:
    up, _, policy = repos
    args = ["walk", "--upstream", str(up), "--range", "HEAD~2..HEAD", "--policy", str(policy)]
    proc = cli(*args)
    assert_clean(proc, 0)
    assert "Odd name" in proc.stdout and "odd ones" in proc.stdout
    proc = cli(*args, "--json")
    assert_clean(proc, 0)
    by = {p["number"]: p for p in json.loads(proc.stdout)["prs"]}
    assert by[7]["status"] == "applicable"
    assert by[8]["status"] == "excluded"  # a path with an invalid byte still matches slime/**
    assert by[8]["paths"] == [f"slime/{ODD}x.py"]


def test_non_utf8_paths_in_audit(repos: tuple[Path, Path, Path], tmp_path: Path) -> None:
    up, down, policy = repos
    audit = ["audit", "--downstream", str(down), "--upstream", str(up), "--baseline", "HEAD~1"]
    audit += ["--map", "slime/=vime/", "--policy", str(policy), "--sync", "s"]
    proc = cli(*audit)
    assert_clean(proc, 1)  # the new file needs review
    assert "vime/\\udcffbad.py" in proc.stdout
    proc = cli(*audit, "--json")
    assert_clean(proc, 1)
    assert f"vime/{ODD}bad.py" in json.loads(proc.stdout)["unreviewed"]


def test_non_utf8_paths_in_report(repos: tuple[Path, Path, Path], tmp_path: Path) -> None:
    up, down, policy = repos
    report = ["report", "--upstream", str(up), "--range", "HEAD~2..HEAD", "--downstream", str(down)]
    report += ["--baseline", "HEAD~1", "--map", "slime/=vime/", "--policy", str(policy), "--sync", "s"]
    proc = cli(*report)
    assert_clean(proc, 1)
    assert "vime/\\udcffbad.py" in proc.stdout and "Odd name" in proc.stdout
    proc = cli(*report, "--output", str(tmp_path / "r.md"))
    assert_clean(proc, 1)
    assert "vime/\\udcffbad.py" in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_lone_surrogate_titles(repos: tuple[Path, Path, Path], tmp_path: Path) -> None:
    up, down, _ = repos
    meta = tmp_path / "meta.json"
    meta.write_text('[{"number": 7, "title": "\\ud800 lone"}]')
    walk = ["walk", "--upstream", str(up), "--range", "HEAD~2..HEAD"]
    proc = cli(*walk, "--pr-metadata", str(meta))
    assert_clean(proc, 0)
    assert "\\ud800 lone" in proc.stdout
    proc = cli(*walk, "--pr-metadata", str(meta), "--json")
    assert_clean(proc, 0)
    assert {p["title"] for p in json.loads(proc.stdout)["prs"]} == {"\ud800 lone", "Odd too"}
    report = ["report", "--upstream", str(up), "--range", "HEAD~2..HEAD", "--downstream", str(down)]
    report += ["--baseline", "HEAD~1", "--sync", "s"]
    proc = cli(*report, "--pr-metadata", str(meta))
    assert_clean(proc, 1)
    assert "\\\\ud800 lone" in proc.stdout  # the escape, its backslash escaped for Markdown


def test_lone_surrogate_titles_from_github(repos: tuple[Path, Path, Path], tmp_path: Path) -> None:
    up, down, _ = repos
    walk = ["walk", "--upstream", str(up), "--range", "HEAD~2..HEAD"]
    report = ["report", "--upstream", str(up), "--range", "HEAD~2..HEAD", "--downstream", str(down)]
    report += ["--baseline", "HEAD~1", "--sync", "s"]
    fake = FakeGitHub(range(7, 9))
    for pr in fake.prs:
        pr["title"] = f"\ud800 from GitHub {pr['number']}"
    (tmp_path / "vimesync.toml").write_text('[upstream]\nrepo = "THUDM/slime"\n')
    with serve(fake) as url:
        env = {"VIMESYNC_GITHUB_API": url, "GITHUB_TOKEN": TOKEN}
        proc = run_cli(*walk, "--github", cwd=tmp_path, **env)
        assert_clean(proc, 0)
        assert "\\ud800 from GitHub 7" in proc.stdout
        proc = run_cli(*report, "--github", cwd=tmp_path, **env)
        assert_clean(proc, 1)
        assert "\\\\ud800 from GitHub 8" in proc.stdout


def test_a_non_utf8_path_cannot_be_reviewed(repos: tuple[Path, Path, Path]) -> None:
    """TOML cannot hold the name: refused, naming it escaped, and no ledger is written."""
    up, down, _ = repos
    review = ["audit", "review", "--downstream", str(down), "--sync", "s"]
    for target in (f"vime/{ODD}bad.py", "."):
        proc = cli(*review, target, "--by", "al", "--baseline", "HEAD~1")
        assert_clean(proc, 2)
        assert "vime/\\udcffbad.py: path is not UTF-8, so the review ledger cannot record it" in proc.stderr
    assert not (down / "sop").exists()
