"""Git run defensively (issue 7): nothing a repository says makes a command run.

Each test plants a command that would create a marker file, first proves the plant is live
(plain git, without vimesync's defences, creates the marker), then runs vimesync and asserts the
marker does not exist while the command works or refuses with exit 2 naming the key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.gitrepo import IDENTITY, Repo
from tests.builders.planted import build_downstream, build_upstream, embedded, plant_textconv
from vimesync import git
from vimesync.git import disarm, repocheck


def plain_git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """git as a careless tool runs it: no defences beyond ignoring the developer's own config."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        **IDENTITY,
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)


def script(path: Path, marker: Path, body: str = "") -> Path:
    """An executable that creates ``marker`` (and does ``body``)."""
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\n{body}\n")
    path.chmod(0o755)
    return path


def walk_audit_report(
    capsys: pytest.CaptureFixture[str], up: Path, down: Path, base: str, baseline: str
) -> None:
    """walk (with mirrored patch-ids), audit and report all run to a verdict (no exit 2)."""
    code, out, err = run(
        capsys, "walk", "--upstream", str(up), "--range", f"{base}..HEAD", "--downstream", str(down), "--json"
    )
    assert code == 0, err
    assert [p["number"] for p in json.loads(out)["prs"]] == [1, 2]
    common = ["--upstream", str(up), "--downstream", str(down), "--baseline", baseline]
    code, out, err = run(capsys, "audit", *common, "--json")
    assert code in (0, 1) and json.loads(out)["paths"], err
    code, out, err = run(capsys, "report", *common, "--range", f"{base}..HEAD", "--format", "json")
    assert code in (0, 1) and "error" not in err, err


@pytest.fixture()
def repos(tmp_path: Path) -> tuple[Path, Path, str, str]:
    up, base = build_upstream(tmp_path / "up")
    down, baseline = build_downstream(tmp_path / "down")
    return up.path, down.path, base, baseline


# ---------------------------------------------------------------------------------------------
# The choke point


@pytest.mark.parametrize("cmd", ["diff", "log", "show", "diff-tree", "format-patch", "diff-index"])
def test_every_diff_command_gets_no_ext_diff_and_no_textconv(cmd: str) -> None:
    for args in ([cmd, "-p", "HEAD"], ["-c", "core.quotepath=true", cmd, "HEAD"]):
        argv = disarm.argv(args)
        at = argv.index(cmd)
        assert argv[at + 1 : at + 3] == ["--no-ext-diff", "--no-textconv"]
        assert argv[at + 3 :] == args[args.index(cmd) + 1 :]


def test_nothing_switches_the_diff_drivers_back_on() -> None:
    argv = disarm.argv(["log", "--ext-diff", "--textconv", "-p", "--", "--ext-diff"])
    assert argv[argv.index("log") :] == ["log", "--no-ext-diff", "--no-textconv", "-p", "--", "--ext-diff"]


def test_hardened_options_on_every_command() -> None:
    argv = disarm.argv(["cat-file", "--batch"])
    assert argv[-2:] == ["cat-file", "--batch"] and "--no-ext-diff" not in argv
    pairs = {argv[i + 1] for i, a in enumerate(argv) if a == "-c"}
    for kv in (
        "core.fsmonitor=false",
        f"core.hooksPath={os.devnull}",
        "diff.external=",
        "core.pager=cat",
        "log.showSignature=false",
        "credential.helper=",
        "protocol.allow=never",
    ):
        assert kv in pairs
    env = git.git_env()
    assert env["GIT_NO_REPLACE_OBJECTS"] == env["GIT_NO_LAZY_FETCH"] == env["GIT_ATTR_NOSYSTEM"] == "1"
    assert env["GIT_ALLOW_PROTOCOL"] == ""


def test_a_git_child_starts_from_the_installed_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment the CLI took once is what git children get, not what the process's
    environment says later (and a token in the snapshot stays out too)."""
    from vimesync.settings import Settings, install

    r = Repo(tmp_path / "r")
    r.commit("init", {"a.txt": "a\n"})
    job = {**os.environ, "LC_VIMESYNC_PROBE": "snapshot", "GITHUB_TOKEN": "ghs_in_the_snapshot"}
    monkeypatch.setenv("LC_VIMESYNC_PROBE", "later")
    with install(Settings.of(job)):
        shown = git.run(r.path, ["-c", "alias.env=!env", "env"]).decode()
    assert "LC_VIMESYNC_PROBE=snapshot" in shown and "ghs_in_the_snapshot" not in shown


def test_secrets_never_reach_a_git_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "GITHUB_TOKEN": "ghs_secret1",
        "GH_TOKEN": "secret2",
        "ACTIONS_RUNTIME_TOKEN": "secret3",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "https://secret4",
        "AWS_SECRET_ACCESS_KEY": "secret5",
        "MY_API_KEY": "secret6",
        "DB_PASSWORD": "secret7",
        # Names no deny-list guessed (issue 18, finding 16): git gets an allow-list.
        "OPENAI_APIKEY": "secret8",
        "CI_JOB_JWT": "secret9",
        "VAULT_ADDR": "https://secret10",
        "GIT_ASKPASS": "/secret11",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    env = git.git_env()
    assert not set(secrets) & set(env)
    assert env["PATH"] == os.environ["PATH"]
    r = Repo(tmp_path / "r")
    r.commit("init", {"a.txt": "a\n"})
    # A git child's own environment, printed by an alias the test itself passes (never content's).
    shown = git.run(r.path, ["-c", "alias.env=!env", "env"]).decode()
    assert "PATH=" in shown and not any(v in shown for v in secrets.values())
    # And a planted textconv that would dump the environment does not run at all.
    dump = tmp_path / "env-dump"
    plant_textconv(r.path, f"env > '{dump}'; cat")
    r.commit("two", {"a.txt": "b\n"})
    assert plain_git(r.path, "log", "-p", "-1").returncode == 0 and dump.exists()  # the plant is live
    dump.unlink()
    git.run(r.path, ["log", "-p", "-1"])
    git.run(r.path, ["show", "HEAD"])
    assert not dump.exists()


# ---------------------------------------------------------------------------------------------
# Commands disarmed: the command works, nothing runs


@pytest.mark.slow
def test_textconv_from_config_and_attributes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repos: tuple[Path, Path, str, str]
) -> None:
    up, down, base, baseline = repos
    marker = tmp_path / "textconv-ran"
    for repo in (up, down):
        plant_textconv(repo, f"touch '{marker}'; cat")
    assert plain_git(up, "log", "-p", "-1").returncode == 0 and marker.exists()
    marker.unlink()
    walk_audit_report(capsys, up, down, base, baseline)
    for args in (["log", "-p"], ["diff", base, "HEAD"], ["show", "HEAD"], ["diff-tree", "-p", "-r", "HEAD"]):
        git.run(up, args)
    assert not marker.exists()


@pytest.mark.slow
def test_external_diff(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repos: tuple[Path, Path, str, str]
) -> None:
    up, down, base, baseline = repos
    marker = tmp_path / "ext-diff-ran"
    ext = script(tmp_path / "ext.sh", marker)
    for repo in (up, down):
        git.run(repo, ["config", "diff.external", str(ext)])
        git.run(repo, ["config", "diff.x.command", str(ext)])
    assert plain_git(up, "diff", base, "HEAD").returncode == 0 and marker.exists()
    marker.unlink()
    walk_audit_report(capsys, up, down, base, baseline)
    git.run(up, ["diff", base, "HEAD"])
    git.run(up, ["log", "-p", "--ext-diff"])  # even when asked for
    assert not marker.exists()


@pytest.mark.slow
def test_fsmonitor_and_hooks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, repos: tuple[Path, Path, str, str]
) -> None:
    up, down, base, baseline = repos
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "post-checkout", "reference-transaction", "fsmonitor"):
        script(hooks / name, marker)
        script(git.git_dir(down) / "hooks" / name, marker)
    for repo in (up, down):
        git.run(repo, ["config", "core.fsmonitor", str(hooks / "fsmonitor")])
        git.run(repo, ["config", "core.hooksPath", str(hooks)])
    assert plain_git(down, "status").returncode == 0 and marker.exists()
    marker.unlink()
    assert plain_git(down, "commit", "-q", "--allow-empty", "-m", "x").returncode == 0 and marker.exists()
    marker.unlink()
    walk_audit_report(capsys, up, down, base, baseline)
    git.run(down, ["status"])
    git.run(down, ["commit", "-q", "--allow-empty", "-m", "y"], env=IDENTITY)
    assert not marker.exists()


def test_signature_verification(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r, base = build_upstream(tmp_path / "up")
    marker = tmp_path / "gpg-ran"
    gpg = script(tmp_path / "gpg.sh", marker, "exit 1")
    tree = r.git("rev-parse", "HEAD^{tree}").strip()
    signed = (
        f"tree {tree}\nparent {r.head()}\n"
        "author a <a@x> 1700000000 +0000\ncommitter a <a@x> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n"
        "\nSigned (#3)\n"
    )
    sha = (
        git.run(r.path, ["hash-object", "-t", "commit", "-w", "--stdin"], input=signed.encode())
        .decode()
        .strip()
    )
    r.git("update-ref", "refs/heads/main", sha)
    for key in ("gpg.program", "gpg.openpgp.program"):
        git.run(r.path, ["config", key, str(gpg)])
    git.run(r.path, ["config", "log.showSignature", "true"])
    plain_git(r.path, "log", "-1")
    assert marker.exists()
    marker.unlink()
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD", "--json")
    assert code == 0, err
    assert [p["number"] for p in json.loads(out)["prs"]] == [1, 2, 3]
    assert not marker.exists()


def test_replace_refs_and_grafts_do_not_change_what_we_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r, base = build_upstream(tmp_path / "up")
    args = ("walk", "--upstream", str(r.path), "--range", f"{base}..HEAD", "--json")
    code, before, err = run(capsys, *args)
    assert code == 0, err
    other = r.commit("Something else (#9)", {"h.txt": "h\n"})
    r.git("reset", "-q", "--hard", "HEAD~1")
    r.git("replace", "HEAD", other)  # the tip now reads as PR 9 to plain git
    assert b"(#9)" in plain_git(r.path, "log", "-1", "--format=%s").stdout
    (git.git_dir(r.path) / "info" / "grafts").write_text(f"{r.head()} {base}\n")
    assert plain_git(r.path, "rev-list", "--count", f"{base}..HEAD").stdout.strip() == b"1"
    code, after, err = run(capsys, *args)
    assert code == 0, err
    assert after == before


# ---------------------------------------------------------------------------------------------
# Repositories refused: exit 2 naming the key, nothing runs


def partial_clone(tmp_path: Path, marker: Path) -> tuple[Path, str]:
    """A 'partial clone' of a real source whose only blob is missing, fetched lazily from a
    promisor remote whose upload-pack command creates ``marker``."""
    src = Repo(tmp_path / "src")
    src.commit("engine", {"eng.py": "X = 1\n"})
    blob = src.git("rev-parse", "HEAD:eng.py").strip()
    dst = Repo(tmp_path / "partial")
    tree = git.run(dst.path, ["mktree", "--missing"], input=f"100644 blob {blob}\teng.py\n".encode())
    commit = dst.git("commit-tree", "-m", "engine", tree.decode().strip()).strip()
    dst.git("update-ref", "refs/heads/main", commit)
    for key, value in (
        ("core.repositoryFormatVersion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", str(src.path)),
        ("remote.origin.promisor", "true"),
        ("remote.origin.uploadpack", f"touch '{marker}'; git-upload-pack"),
    ):
        plain_git(dst.path, "config", key, value)
    return dst.path, commit


def test_partial_clone_source_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    marker = tmp_path / "upload-pack-ran"
    dst, rev = partial_clone(tmp_path, marker)
    plain_git(dst, "ls-tree", "--long", "HEAD")
    assert marker.exists()  # the plant is live: a lazy fetch ran the command
    marker.unlink()
    series = tmp_path / "patches/series"
    series.parent.mkdir()
    series.write_text("")
    code, out, err = run(
        capsys, "patches", "check", "--source", str(dst), "--rev", rev, "--series", str(series)
    )
    assert code == 2 and "extensions.partialclone" in err and str(dst) in err, err
    assert "touch" not in err  # the key, never its value
    # The same source named by a pin file.
    pins = tmp_path / "pins"
    pins.mkdir()
    (pins / "eng.toml").write_text(
        f'[engine]\nrev = "{rev}"\nseries = "../patches/series"\nsource = "{dst}"\n'
    )
    (tmp_path / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    code, out, err = run(capsys, "patches", "check", "--config", str(tmp_path / "vimesync.toml"))
    assert code == 2 and "extensions.partialclone" in err, err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("extensions.partialClone", "origin", "extensions.partialclone"),
        ("remote.origin.promisor", "true", "remote.origin.promisor"),
        ("remote.origin.partialCloneFilter", "blob:none", "remote.origin.partialclonefilter"),
        ("filter.Evil.clean", "touch {marker}", "filter.Evil.clean"),
        ("filter.x.process", "touch {marker}", "filter.x.process"),
        ("merge.x.driver", "touch {marker}", "merge.x.driver"),
        ("core.worktree", "{outside}", "core.worktree"),
    ],
)
def test_refused_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str, value: str, named: str
) -> None:
    r, base = build_upstream(tmp_path / "up")
    marker = tmp_path / "ran"
    (tmp_path / "outside").mkdir()
    git.run(r.path, ["config", key, value.format(marker=marker, outside=tmp_path / "outside")])
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD")
    assert code == 2 and f"sets '{named}'" in err and str(r.path) in err, err
    assert str(marker) not in err and not marker.exists()


def test_included_config_is_inspected_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r, base = build_upstream(tmp_path / "up")
    (tmp_path / "inc.config").write_text('[filter "x"]\n\tsmudge = touch /nonexistent\n')
    git.run(r.path, ["config", f"includeIf.gitdir:{git.git_dir(r.path)}.path", str(tmp_path / "inc.config")])
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD")
    assert code == 2 and "filter.x.smudge" in err, err


def test_git_lfs_checkout_and_a_worktree_inside_are_fine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    r, base = build_upstream(tmp_path / "up")
    for key, value in repocheck._GIT_LFS.items():
        git.run(r.path, ["config", key, value])
    git.run(r.path, ["config", "filter.lfs.required", "true"])
    git.run(r.path, ["config", "core.worktree", ".."])  # the work tree the repository is in
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD")
    assert code == 0, err


def test_alternates_outside_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r, base = build_upstream(tmp_path / "up")
    other = Repo(tmp_path / "other")
    other.commit("x", {"x": "x\n"})
    alternates = git.git_dir(r.path) / "objects/info/alternates"
    alternates.write_text(str(git.git_dir(other.path) / "objects") + "\n")
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD")
    assert code == 2 and "objects/info/alternates" in err, err
    alternates.write_text("# nothing\n")
    code, out, err = run(capsys, "walk", "--upstream", str(r.path), "--range", f"{base}..HEAD")
    assert code == 0, err


def test_clone_of_a_local_repository_still_works(tmp_path: Path) -> None:
    r, _ = build_upstream(tmp_path / "up")
    git.run(tmp_path, ["clone", "-q", "--mirror", str(r.path), str(tmp_path / "m.git")])
    assert git.resolve(tmp_path / "m.git", "HEAD") == r.head()
    shutil.rmtree(tmp_path / "m.git")


# ---------------------------------------------------------------------------------------------
# Repositories committed inside the downstream


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "flags", "key"),
    [
        ('[upstream]\npath = "evil.git"\n', [], "[upstream] path"),
        ('[upstream]\npath = "evil.git/"\n[downstream]\npath = "."\n', [], "[upstream] path"),
        ('[downstream]\npath = "evil.git"\n', ["--upstream", "{up}"], "[downstream] path"),
    ],
)
def test_embedded_repository_named_by_config_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: str, flags: list[str], key: str
) -> None:
    marker = tmp_path / "textconv-ran"
    down, up, base = embedded(tmp_path, marker)
    (down / "vimesync.toml").write_text(config)
    extra = [f.format(up=up) for f in flags]
    code, out, err = run(
        capsys, "walk", "--config", str(down / "vimesync.toml"), "--range", f"{base}..HEAD", *extra
    )
    assert code == 2 and key in err and str(down / "vimesync.toml") in err, err
    assert not marker.exists()


def test_embedded_repository_given_by_flag_is_allowed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    marker = tmp_path / "textconv-ran"
    down, up, base = embedded(tmp_path, marker)
    (down / "vimesync.toml").write_text('[upstream]\npath = "evil.git"\n[downstream]\npath = "."\n')
    cfg = ["--config", str(down / "vimesync.toml"), "--range", f"{base}..HEAD", "--json"]
    code, out, err = run(capsys, "walk", *cfg, "--upstream", str(down / "evil.git"))
    assert code == 0, err
    assert [p["number"] for p in json.loads(out)["prs"]] == [1, 2]
    code, out, err = run(capsys, "walk", *cfg, "--upstream", str(up), "--downstream", str(down / "evil.git"))
    assert code == 0, err
    assert not marker.exists()


def test_embedded_engine_source_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    marker = tmp_path / "textconv-ran"
    down, _, _ = embedded(tmp_path, marker)
    (down / "patches").mkdir()
    (down / "patches/series").write_text("")
    (down / "pins").mkdir()
    (down / "pins/eng.toml").write_text('[engine]\nrev = "HEAD"\nseries = "../patches/series"\n')
    (down / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\nsource = "evil.git"\n')
    code, out, err = run(capsys, "patches", "check", "--config", str(down / "vimesync.toml"))
    assert code == 2 and "[engine] source" in err, err
    code, out, err = run(
        capsys,
        "patches",
        "check",
        "--config",
        str(down / "vimesync.toml"),
        "--source",
        str(down / "evil.git"),
    )
    assert code != 2 or "[engine] source" not in err, err
    assert not marker.exists()


def test_a_nul_byte_for_git_is_a_git_error_not_a_value_error(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("one", {"a": "1\n"})
    calls = [
        lambda: git.run(repo.path, ["log", "main\0x"]),
        lambda: git.run_status(repo.path, ["rev-parse", "a\0b"]),
        lambda: git.run_ok(repo.path, ["rev-parse", "--verify", "a\0b"]),
        lambda: list(git.stream(repo.path, ["log", "-p", "main\0x"])),
        lambda: git.resolve(repo.path, "main\0x"),
        lambda: git.run(Path(str(repo.path) + "\0x"), ["status"]),
    ]
    for call in calls:
        with pytest.raises(git.GitError, match="NUL byte"):
            call()
