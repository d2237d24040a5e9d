"""Hostile input: maps and translations that reach outside the work tree or into .git, bad
regexes and globs (exit 2 naming file and line), hostile commit messages and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.pair import CONFIG, build_pair, cli, tree
from vimesync import git
from vimesync.carry.plan import Item, Meta, message_for
from vimesync.config import load_config
from vimesync.errors import BadInput, ConfigError
from vimesync.upstream.translate import MAX_MATCHES, load_transform

pytestmark = pytest.mark.slow  # carries in real repositories, bounds on hostile input


def _config(tmp_path: Path, text: str):
    path = tmp_path / "vimesync.toml"
    path.write_text(text)
    return load_config(path)


@pytest.mark.parametrize(
    "target",
    [
        "../x/",
        ".git/",
        "a/.git/",
        "/etc/",
        "./x/",
        "a//b/",
        ".GIT/hooks/",
        ".git./",
        "GIT~1/",
        ".g\u200cit/",
        ".git::$INDEX_ALLOCATION/",
        "a\\\\..\\\\..\\\\x/",  # a\..\..\x/ once TOML unescapes it
    ],
)
def test_a_map_out_of_the_work_tree_or_into_git_is_refused(tmp_path: Path, target: str) -> None:
    cfg = _config(tmp_path, f'[upstream]\nmap = ["slime/={target}"]\n')
    with pytest.raises(ConfigError) as exc:
        load_transform(cfg)
    assert str(tmp_path / "vimesync.toml") in str(exc.value) and "plain folder path" in str(exc.value)


def test_a_mapped_path_landing_in_git_is_refused(tmp_path: Path) -> None:
    cfg = _config(tmp_path, '[upstream]\nmap = ["slime/=vime/"]\n')
    t = load_transform(cfg)
    assert t.downstream_path("slime/a.py") == "vime/a.py"
    with pytest.raises(BadInput, match="not a plain path"):
        t.downstream_path("slime/../.git/hooks/post-checkout")
    with pytest.raises(BadInput):
        t.downstream_path(".git/config")
    for alias in (
        "GIT~1/config",
        "git~1 ./x",
        ".g\u200dit/config",
        ".git::$INDEX_ALLOCATION/x",
        "a\\.git\\x",
    ):
        with pytest.raises(BadInput, match="not a plain path"):
            t.downstream_path(alias)
    assert t.downstream_path("a\\b/.gitignore") == "a\\b/.gitignore"  # a backslash alone is a name


def test_an_upstream_path_naming_git_dir_on_another_file_system_is_never_committed(
    tmp_path: Path, capsys
) -> None:
    """Upstream names ``GIT~1/config`` (``.git`` on NTFS): refused before anything is written,
    where fast-import would have committed it and only the checkout would have failed."""
    import os
    import subprocess

    pair = build_pair(tmp_path)
    up = pair.up.path
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=up, input=b"x\n", capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "idx")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=up, env=env, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "core.protectNTFS=false",
            "update-index",
            "--add",
            "--cacheinfo",
            f"100644,{blob},GIT~1/config",
        ],
        cwd=up,
        env=env,
        check=True,
    )
    tree_id = subprocess.run(["git", "write-tree"], cwd=up, env=env, capture_output=True, check=True).stdout
    commit = pair.up.git("commit-tree", tree_id.decode().strip(), "-p", "HEAD", "-m", "Evil (#8)").strip()
    code, out, err = cli(
        capsys, "carry", "--range", f"{pair.tip}..{commit}", "--branch", "e", cwd=pair.down.path
    )
    assert code == 2 and "GIT~1/config" in err and "not a plain path" in err
    names = git.run(pair.down.path, ["ls-tree", "-r", "--name-only", "e"], check=False).decode()
    assert "GIT~1" not in names
    cli(capsys, "carry", "--abort", cwd=pair.down.path)


@pytest.mark.parametrize(
    "table, message",
    [
        ("pattern = '(unclosed'\nreplace = 'x'", "not an RE2 regex"),
        ("pattern = '(?<=x)y'\nreplace = 'x'", "not an RE2 regex"),
        ("pattern = '(a)'\nreplace = '\\2'", "group 2"),
        ("pattern = '(a)'\nreplace = '\\g<nope>'", "unknown group"),
        ("pattern = 'a'\nreplace = '\\q'", "unknown escape"),
        ("pattern = 'a'\nreplace = 'b'\npaths = ['[z-a]']", "paths"),
        ("pattern = 'a'\nreplace = 'b'\npaths = 'x'", "paths must be a list"),
        ("pattern = 'a'\nreplace = 3", "replace must be a string"),
        ("pattern = 'a'\nreplace = 'b'\nevil = 1", "unknown key"),
        ("pattern = 'a'\nreplace = 'b'\npaths = [" + "'x/**',\n" * 65 + "]", "at most 64 globs"),
    ],
)
def test_bad_translation_names_file_and_line(tmp_path: Path, table: str, message: str) -> None:
    text = '[upstream]\nname = "x"\n\n# first\n[[upstream.translate]]\npattern = "a"\nreplace = "b"\n\n'
    text += f"[[upstream.translate]]\n{table}\n"
    with pytest.raises(ConfigError) as exc:
        load_transform(_config(tmp_path, text))
    assert f"{tmp_path / 'vimesync.toml'}:9:" in str(exc.value)
    assert message in str(exc.value)


def test_catastrophic_patterns_run_in_linear_time(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "[upstream]\n[[upstream.translate]]\npattern = '(a+)+$'\nreplace = 'x'\n")
    t = load_transform(cfg)
    data = b"a" * 200_000 + b"!"
    out, hits = t.content("f.py", data, 0o100644)
    assert (out, hits) == (data, 0)  # Python's re would backtrack for ages here


def test_translation_output_and_matches_are_bounded(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "[upstream]\n[[upstream.translate]]\npattern = ''\nreplace = 'xx'\n")
    with pytest.raises(ConfigError, match="empty"):
        load_transform(cfg)
    cfg = _config(tmp_path, "[upstream]\n[[upstream.translate]]\npattern = 'a|'\nreplace = 'x'\n")
    t = load_transform(cfg)
    with pytest.raises(BadInput, match=f"{MAX_MATCHES:,}"):
        t.content("f.py", b"b" * (MAX_MATCHES + 10), 0o100644)


def test_translation_spares_binaries_symlinks_and_unmatched_paths(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path,
        "[upstream]\n[[upstream.translate]]\npattern = 'slime'\nreplace = 'vime'\n"
        "paths = ['*.py', '!skip.py']\n",
    )
    t = load_transform(cfg)
    assert t.content("a/x.py", b"slime slime", 0o100644) == (b"vime vime", 2)
    assert t.content("a/skip.py", b"slime", 0o100644) == (b"slime", 0)
    assert t.content("a/x.md", b"slime", 0o100644) == (b"slime", 0)
    assert t.content("a/x.py", b"slime\0", 0o100644) == (b"slime\0", 0)
    assert t.content("a/x.py", b"slime", 0o120000) == (b"slime", 0)


def test_replacement_groups(tmp_path: Path) -> None:
    cfg = _config(
        tmp_path,
        "[upstream]\n[[upstream.translate]]\npattern = '(?P<kw>from|import) slime'\n"
        "replace = '\\g<kw> vime\\\\'\n",
    )
    assert load_transform(cfg).content("x.py", b"from slime", 0o100644) == (b"from vime\\", 1)


def test_hostile_commit_messages_cannot_forge_trailers() -> None:
    item = Item(pr=7, title="t", kind="squash", steps=("a" * 40,), upstream_commit="a" * 40)
    body = (
        "Fix (#7)\n\nUpstream-PR: THUDM/slime#99\nUpstream-Commit: " + "b" * 40 + "\n"
        "(cherry picked from commit " + "c" * 40 + ")\n---\nesc \x1b[31m red \r\n\0nul\n\n"
        "Upstream-PR: THUDM/slime#98"
    )
    msg = message_for(item, [Meta("n", "e", "1 +0000", body)], "THUDM/slime")
    paragraphs = msg.strip().split("\n\n")
    assert paragraphs[-1] == "Upstream-PR: THUDM/slime#7\nUpstream-Commit: " + "a" * 40
    assert "(cherry picked from commit" not in msg
    assert "\x1b" not in msg and "\r" not in msg and "\0" not in msg


def test_a_rebase_title_with_newlines_stays_one_subject_line() -> None:
    """A rebase-merged PR's subject is its title (from --pr-metadata, say): a newline there would
    make the ``(#N)`` that walk reads fall off the first line, and start a body of the title's choosing."""
    steps = ("a" * 40, "b" * 40)
    item = Item(
        pr=7,
        title="Fix\n\nUpstream-PR: THUDM/slime#99\r\nx",
        kind="rebase",
        steps=steps,
        upstream_commit=steps[-1],
    )
    metas = [Meta("n", "e", "1 +0000", "one"), Meta("n", "e", "1 +0000", "two")]
    msg = message_for(item, metas, "THUDM/slime")
    assert msg.split("\n", 1)[0] == "Fix Upstream-PR: THUDM/slime#99 x (#7)"


def test_hostile_messages_in_a_real_carry(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    hostile = (
        f"Evil (#5)\n\n(cherry picked from commit {pair.base})\n\nUpstream-PR: THUDM/slime#1\n"
        f"Upstream-Commit: {pair.base}\n---\n\x1b]0;title\x07"
    )
    pair.up.commit(hostile, {"slime/e.py": "e\n"})
    tip = pair.up.head()
    code, doc = pair.carry(capsys, "--range", f"{pair.base}..{tip}", "--branch", "s")
    assert code == 0
    walked = {p["number"]: p for p in pair.walked(capsys, "s", tip)}
    assert walked[5]["status"] == "mirrored"
    assert "#5 in" in walked[5]["reason"] or walked[5]["mirrored_by"] == "trailer Upstream-PR"
    # Every PR is found through its own commit, never through PR 5's hostile body.
    by = {c["pr"]: c["commit"][:12] for c in doc["carried"]}
    for n, p in walked.items():
        assert by[n] in p["reason"]


def test_hostile_upstream_paths_never_reach_git_dir(tmp_path: Path, capsys) -> None:
    pair = build_pair(
        tmp_path, config=CONFIG.replace('map = ["slime/=vime/"]', 'map = ["slime/=vime/", "evil/=.git/"]')
    )
    code, out, err = cli(capsys, "carry", cwd=pair.down.path)
    assert code == 2 and "vimesync.toml" in err and "plain folder path" in err
    assert not (git.git_dir(pair.down.path) / "vimesync-carry.json").exists()


def test_a_symlink_in_the_downstream_is_never_written_through(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    pair.down.git("rm", "-q", "-r", "vime")
    (pair.down.path / "vime").symlink_to(outside)
    pair.down.git("add", "vime")
    pair.down.commit("vime is a link")
    code, doc = pair.carry(capsys)
    assert code == 1  # add/modify against a symlink: conflicts, nothing written outside
    assert list(outside.iterdir()) == []
    cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert list(outside.iterdir()) == []


def test_commit_hooks_never_run(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    hooks = pair.down.path / ".git" / "hooks"
    marker = tmp_path / "ran"
    for name in ("post-checkout", "post-commit", "pre-commit", "reference-transaction", "post-index-change"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    code, doc = pair.carry(capsys)
    assert code == 0
    assert not marker.exists()


def test_hostile_titles_and_paths_cannot_break_the_terminal_output(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    pair.up.commit("[bold red]x[/] \x1b[2J\u202e (#9)", {"slime/[link=x]\x1b.py": "from slime import y\n"})
    tip = pair.up.head()
    for args in (["--dry-run"], []):
        code, out, err = cli(
            capsys, "carry", "--range", f"{pair.tip}..{tip}", "--branch", "h", *args, cwd=pair.down.path
        )
        assert code == 0, err
        assert "\x1b" not in out + err and "\u202e" not in out + err
        assert "[bold red]x[/] \\x1b[2J\\u202e" in out
        assert "vime/[link=x]\\x1b.py" in out or args == []
    got = tree(pair.down.path, "h")
    assert got["vime/[link=x]\x1b.py"][1] == b"from vime import y\n"


def test_options_a_resumed_carry_would_ignore_are_refused(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    code, _, err = cli(capsys, "carry", "--continue", "--squash", cwd=pair.down.path)
    assert code == 2 and "--squash: not used by --continue" in err
    code, _, err = cli(capsys, "carry", "--abort", "--status", cwd=pair.down.path)
    assert code == 2 and "give one of them" in err
    code, _, err = cli(capsys, "carry", "--json", "--format", "text", cwd=pair.down.path)
    assert code == 2


def test_a_hostile_pin_on_the_branch_is_bad_input(tmp_path: Path, capsys) -> None:
    pair = build_pair(tmp_path)
    good = (pair.down.path / "pins/slime.toml").read_text()
    pair.down.commit("break the pin", {"pins/slime.toml": good + "[" * 100})
    pair.down.commit("mend the pin", {"pins/slime.toml": good})
    # The checkout's pin is fine; the one on the sync branch (from --onto) is not.
    code, out, err = cli(capsys, "carry", "--onto", "HEAD~1", cwd=pair.down.path)
    assert code == 2 and "pins/slime.toml" in err and "Traceback" not in err
    code, _, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0 and "sync/" not in pair.down.git("branch")


def test_what_translations_produce_is_bounded_in_memory(tmp_path: Path, capsys, monkeypatch) -> None:
    """A hostile upstream compresses well: a PR of many repetitive files costs it nothing, while a
    translation that grows each file would make the carry hold gigabytes. The bytes held are capped."""
    from vimesync.carry import blobs

    monkeypatch.setattr(blobs, "MAX_HELD", 1 << 20)
    pair = build_pair(tmp_path, config=CONFIG + "\n[[upstream.translate]]\npattern = 'a'\nreplace = 'bbbb'\n")
    pair.up.commit("Many files (#7)", {f"slime/big{i}.txt": "a" * 100_000 + f"{i}\n" for i in range(4)})
    code, out, err = cli(
        capsys, "carry", "--range", f"{pair.tip}..{pair.up.head()}", "--branch", "m", cwd=pair.down.path
    )
    assert code == 2 and "Traceback" not in err
    assert "translated or merged pass 1 MiB" in err and len(err.strip().splitlines()) <= 2
    code, _, _ = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0


def test_an_oversized_upstream_file_is_bad_input(tmp_path: Path, capsys, monkeypatch) -> None:
    from vimesync.carry import blobs

    monkeypatch.setattr(blobs, "MAX_BLOB", 50_000)
    pair = build_pair(tmp_path)
    pair.up.commit("Huge (#7)", {"slime/huge.py": "from slime import x\n" * 10_000})
    code, out, err = cli(
        capsys, "carry", "--range", f"{pair.tip}..{pair.up.head()}", "--branch", "m", cwd=pair.down.path
    )
    assert code == 2 and "Traceback" not in err and "more than the 50,000 allowed" in err
    cli(capsys, "carry", "--abort", cwd=pair.down.path)


def test_blobs_released_at_each_checkpoint_are_read_back_from_the_downstream(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Memory is given back at synchronised fast-import checkpoints; a later PR that merges a file an
    earlier one produced (PR 3 renames the file PR 1 added, translated) reads it from the repository."""
    from vimesync.carry import run

    monkeypatch.setattr(run, "KEEP_BYTES", -1)  # a checkpoint after every carried PR
    pair = build_pair(tmp_path)
    pair.down.commit("local edit", {"vime/util.py": "# ours\ndef f():\n    return 1\n"})
    code, doc = pair.carry(capsys)
    assert code == 0, doc
    assert [c["pr"] for c in doc["carried"]] == [1, 2, 3]
    got = tree(pair.down.path, doc["branch"])
    assert got["vime/d.py"][1] == b"import vime.c\n" and "vime/c.py" not in got
    assert got["vime/util.py"][1] == b"# ours\ndef f():\n    return 2\n"
    assert got["vime/a.py"][1] == b"from vime import x\nprint(2)\n"


def test_a_huge_upstream_message_is_read_in_part(tmp_path: Path, capsys) -> None:
    """A 3 MiB commit message: only its first MiB is read (as walk does), the rest is skipped on
    the same cat-file stream (the next object read is still the right one), the body is capped."""
    from vimesync.carry.plan import MAX_BODY, MAX_COMMIT, read_meta

    pair = build_pair(tmp_path)
    body = ("Upstream-Commit: " + "f" * 40 + "\n") * (3 * MAX_COMMIT // 58)
    pair.up.write({"slime/h.py": "h\n"})
    (tmp_path / "msg").write_text("Huge (#7)\n\n" + body)
    pair.up.git("commit", "-q", "-F", str(tmp_path / "msg"))
    huge = pair.up.head()
    with git.CatFile(pair.up.path) as cat:
        meta = read_meta(cat, huge)
        assert len(meta.message) < MAX_COMMIT and meta.parents == (pair.tip,)
        assert read_meta(cat, pair.tip).message.startswith("direct thing")
    code, doc = pair.carry(capsys, "--range", f"{pair.tip}..{huge}", "--branch", "h")
    assert code == 0, doc
    message = git.run(pair.down.path, ["log", "-1", "--format=%B", "h~1"]).decode()
    assert len(message) < MAX_BODY + 1000 and message.rstrip().endswith(f"Upstream-Commit: {huge}")


@pytest.mark.parametrize(
    ("var", "value", "said"),
    [
        ("VIMESYNC_CARRY_TRANSLATE_MATCHES", "10000", "budget of 10,000 translation matches"),
        ("VIMESYNC_CARRY_TRANSLATE_BYTES", "50000", "budget of 50,000 bytes translated"),
        ("VIMESYNC_CARRY_SECONDS", "0.000001", "budget of 1e-06 s of merging"),
    ],
)
def test_a_carry_has_one_budget_over_all_its_files(
    tmp_path: Path, capsys, monkeypatch, var: str, value: str, said: str
) -> None:
    """Issue 18.6: the translation bounds were per file only; 30 hostile files in a 2 MB pack took
    over 45 s, 10,000 paths half a day. One budget covers the whole carry (and --dry-run)."""
    monkeypatch.setenv(var, value)
    pair = build_pair(tmp_path)
    body = "import slime\n" * 1_000  # 1,000 matches, 13 KB each
    pair.up.commit("Many files (#7)", {f"slime/m{i}.py": body + f"# {i}\n" for i in range(30)})
    for extra in ("--dry-run",), ("--branch", "m"):
        code, out, err = cli(
            capsys, "carry", "--range", f"{pair.tip}..{pair.up.head()}", *extra, cwd=pair.down.path
        )
        assert code == 2 and "Traceback" not in err, err
        assert said in err and var in err
    cli(capsys, "carry", "--abort", cwd=pair.down.path)


def test_a_large_blob_is_sized_not_read_and_a_shared_one_read_once(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Issue 18.7: carry read every large blob whole, once per path, only to find it too large
    to translate (one 1 GB blob named by 48 paths: ~1 GB RSS, over 45 s). Its size comes from
    ``git cat-file --batch-check`` first, and a blob many paths name is translated once."""
    from vimesync.carry import blobs
    from vimesync.upstream import translate

    monkeypatch.setattr(translate, "MAX_TRANSLATED", 10_000)  # larger files are carried as they are
    reads: list[str] = []
    real = blobs.Blobs.read_upstream
    monkeypatch.setattr(blobs.Blobs, "read_upstream", lambda self, oid: reads.append(oid) or real(self, oid))
    pair = build_pair(tmp_path)
    big = "import slime\n" * 8_000  # 104 KB
    small = "import slime\n"
    files = {f"slime/big{i}.py": big for i in range(48)} | {f"slime/small{i}.py": small for i in range(48)}
    pair.up.commit("Many names (#7)", files)
    code, doc = pair.carry(capsys, "--range", f"{pair.tip}..{pair.up.head()}", "--branch", "m")
    assert code == 0, doc
    got = tree(pair.down.path, "m")
    assert got["vime/big47.py"][1] == big.encode()  # too large to translate: as upstream has it
    assert got["vime/small47.py"][1] == b"import vime\n"
    # Read to translate: the small blob, once for its 48 paths; the large one never (it is read
    # once more, to be copied into the downstream, when the carry writes what it uses).
    assert len(reads) == 1
