"""Every long step says what it is doing and how far, at a terminal (a pseudo-terminal here); on a
pipe, with ``--json`` or in CI it says nothing: no ``\\r`` and no escape byte reaches a log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.builders.cli import run_cli
from tests.builders.gitrepo import Repo
from tests.builders.pair import build_pair
from tests.builders.syncdemo import OFFLINE, presync_demo
from tests.builders.terminal import run_in_terminal
from vimesync.demo.build import Demo, build_demo

PRECOMMIT = """\
repos:
- repo: local
  hooks:
  - id: no-conflict-markers
    name: no conflict markers
    entry: '^(<<<<<<<|>>>>>>>) '
    language: pygrep
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The demo, its sync head with a pre-commit config (for sop record precommit)."""
    built = build_demo(tmp_path_factory.mktemp("demo"))
    repo = Repo.__new__(Repo)  # the demo's sync worktree as it is
    repo.path = built.downstream
    repo.commit("pre-commit config", {".pre-commit-config.yaml": PRECOMMIT})
    return built


@pytest.fixture(scope="module")
def fix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose last commit fixes a test (sop regress: before and after)."""
    repo = Repo(tmp_path_factory.mktemp("fix") / "r")
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    repo.commit("broken", {"calc.py": "def add(a, b):\n    return a - b\n", "tests/test_calc.py": test})
    repo.commit("fixed", {"calc.py": "def add(a, b):\n    return a + b\n"})
    return repo.path


def _home(tmp_path: Path) -> dict[str, str]:
    return {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "VIMESYNC_CACHE_DIR": str(tmp_path / "c")}


# Each record command runs twice in one module-scoped workspace (terminal, pipe): --replace.
REGRESS = (
    "sop",
    "regress",
    "--sync",
    "fix",
    "--before",
    "HEAD~1",
    "--test",
    "tests/test_calc.py",
    "--replace",
)
# (the command, where it runs, what its progress says on a terminal)
CASES = {
    "report": (("report", "--baseline", "main"), "demo", ("report 1/5: walking the upstream range",)),
    "sop status": (
        ("sop", "status", "--baseline", "main"),
        "demo",
        ("sop status 2/5: auditing the changed paths", "sop status 4/5: checking the patch stack"),
    ),
    "sop record precommit": (
        ("sop", "record", "precommit", "--baseline", "main", "--replace"),
        "demo",
        ("sop record precommit 1/3: listing the changed paths", "sop record precommit 3/3: pre-commit at"),
    ),
    "sop regress": (REGRESS, "fix", ("sop regress 1/2: pytest before", "sop regress 2/2: pytest after")),
    # run alone as inside sync (issue 30)
    "walk": (
        ("walk",),
        "checkout",
        ("walk 1/2: walking the upstream range", "walk 2/2: finding the PRs already downstream"),
    ),
    "audit": (
        ("audit", "--baseline", "main"),
        "demo",
        ("audit 1/2: walking the range and replaying the carry", "audit 2/2: classifying the changed paths"),
    ),
}


def _where(name: str, demo: Demo, fix: Path) -> Path:
    return {"demo": demo.downstream, "checkout": demo.checkout}.get(name, fix)


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_a_long_step_shows_its_progress_at_a_terminal(
    case: str, demo: Demo, fix: Path, tmp_path: Path
) -> None:
    args, where, says = CASES[case]
    screen = run_in_terminal(*args, cwd=_where(where, demo, fix), timeout=180, **_home(tmp_path))
    assert screen.code in (0, 1), screen.text[-2000:]
    text = _plain(screen.text)
    for words in says:
        assert words in text, f"{case}: {words!r} not shown:\n{text[-3000:]}"
    assert "\r" in screen.text  # drawn in place, then taken away


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_piped_a_long_step_says_nothing_of_its_progress(
    case: str, demo: Demo, fix: Path, tmp_path: Path
) -> None:
    args, where, says = CASES[case]
    done = run_cli(*args, cwd=_where(where, demo, fix), **_home(tmp_path))
    assert done.returncode in (0, 1), done.stderr
    both = done.stdout + done.stderr
    assert "\r" not in both and "\x1b" not in both
    assert not any(words.split(":")[0] in both for words in says)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["sop status", "walk", "audit"])
@pytest.mark.parametrize("how", ["--json", "CI"])
def test_with_json_or_in_ci_a_terminal_shows_no_progress(
    how: str, case: str, demo: Demo, fix: Path, tmp_path: Path
) -> None:
    args, where, says = CASES[case]
    args += ("--json",) if how == "--json" else ()
    env = {"CI": "true", "VIMESYNC_UNTRUSTED": "0"} if how == "CI" else {}
    screen = run_in_terminal(*args, cwd=_where(where, demo, fix), timeout=180, **env, **_home(tmp_path))
    assert screen.code in (0, 1), screen.text[-2000:]
    assert not any(words.split(":")[0] in _plain(screen.text) for words in says)
    assert "\r\x1b[2K" not in screen.text  # nothing drawn in place


CARRY_SAYS = ("carry 1/2: walking the upstream range", "carry 2/2: carrying the upstream PRs")


@pytest.mark.slow
def test_carry_alone_shows_its_walk_and_how_many_items_are_carried(tmp_path: Path) -> None:
    d = presync_demo(tmp_path / "d")
    screen = run_in_terminal("carry", cwd=d.checkout, timeout=180, **_home(tmp_path))
    text = _plain(screen.text)
    assert screen.code == 0, text[-2000:]
    for words in CARRY_SAYS:
        assert words in text, f"{words!r} not shown:\n{text[-3000:]}"
    assert re.search(r"carry 2/2: carrying the upstream PRs .*\d+/\d+", text)  # how far
    assert "\r" in screen.text
    assert _counted_to_the_end("carry 2/2: carrying the upstream PRs", text), text[-3000:]


def _counted_to_the_end(words: str, text: str) -> bool:
    """The count after ``words`` reached n/n before the display went (it stayed at n-1/n)."""
    counts = re.findall(re.escape(words) + r"[^\r\n]*?(\d[\d,]*)/(\d[\d,]*)", text)
    return bool(counts) and any(done == total for done, total in counts)


@pytest.mark.slow
def test_a_dry_run_says_it_merges_in_memory_and_counts_to_the_end(tmp_path: Path) -> None:
    """``carry --dry-run`` writes nothing: its progress says so, never "carrying"."""
    d = presync_demo(tmp_path / "d")
    screen = run_in_terminal("carry", "--dry-run", cwd=d.checkout, timeout=180, **_home(tmp_path))
    text = _plain(screen.text)
    assert screen.code == 0, text[-2000:]
    says = "carry 2/2: merging the upstream PRs in memory (a dry run: nothing is written)"
    assert says in text and "carrying the upstream PRs" not in text, text[-3000:]
    assert _counted_to_the_end(says, text), text[-3000:]


@pytest.mark.slow
def test_a_carry_onto_the_sync_branch_shows_its_progress(tmp_path: Path) -> None:
    """``carry --pr N`` of a PR the sync's carry left out, onto the sync's branch (what the
    carried gate's stop prints), says what it does as any carry does."""
    pair = build_pair(tmp_path / "p")
    pair.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    stopped = run_cli("sync", "--json", cwd=pair.down.path, **_home(tmp_path))
    assert stopped.returncode == 1, stopped.stderr
    wt = Path(json.loads(stopped.stdout)["worktree"])
    for args in (("carry", "--skip"), ("sync", "--continue")):
        run_cli(*args, cwd=wt, **_home(tmp_path))
    screen = run_in_terminal("carry", "--pr", "2", cwd=wt, timeout=180, **_home(tmp_path))
    text = _plain(screen.text)
    assert screen.code == 1 and "conflict #2" in text, text[-2000:]
    for words in ("carry 1/2: walking the upstream range", f"carry 2/2: carrying onto sync/{pair.tip[:8]}"):
        assert words in text, f"{words!r} not shown:\n{text[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["pipe", "--json", "CI"])
def test_carry_piped_with_json_or_in_ci_shows_no_progress(how: str, tmp_path: Path) -> None:
    d = presync_demo(tmp_path / "d")
    if how == "pipe":
        done = run_cli("carry", cwd=d.checkout, **_home(tmp_path))
        assert done.returncode == 0, done.stderr
        both = done.stdout + done.stderr
        assert "\r" not in both and "\x1b" not in both
    else:
        args = ("carry", "--json") if how == "--json" else ("carry",)
        env = {"CI": "true", "VIMESYNC_UNTRUSTED": "0"} if how == "CI" else {}
        screen = run_in_terminal(*args, cwd=d.checkout, timeout=180, **env, **_home(tmp_path))
        assert screen.code == 0, screen.text[-2000:]
        both = _plain(screen.text)
        assert "\r\x1b[2K" not in screen.text
    assert "carry 1/2" not in both and "carry 2/2" not in both


@pytest.mark.slow
def test_sync_shows_each_step_and_the_parse_inside_it(tmp_path: Path) -> None:
    """The patches and audit steps inside sync say what they do, as ``patches check`` alone does;
    piped, the same sync says nothing of it."""
    at_terminal = presync_demo(tmp_path / "tty")
    screen = run_in_terminal("sync", *OFFLINE, cwd=at_terminal.checkout, timeout=180, **_home(tmp_path))
    text = _plain(screen.text)
    assert screen.code == 0, text[-2000:]
    for words in (
        "sync 1/6: walking the upstream range",
        "sync 2/6: carrying the upstream PRs",
        "sync 3/6: checking the patch stack",
        "sync 4/6: auditing the changed paths",
        "sync 5/6: evaluating the gates",
        "sync 6/6: writing the report",
        "parsing",
    ):
        assert words in text, f"{words!r} not shown:\n{text[-3000:]}"
    assert re.search(r"parsing .*\d+/\d+", text)  # how far the parse is
    piped = presync_demo(tmp_path / "pipe")
    done = run_cli("sync", *OFFLINE, cwd=piped.checkout, **_home(tmp_path))
    assert done.returncode == 0, done.stderr
    both = done.stdout + done.stderr
    assert "\r" not in both and "\x1b" not in both and "sync 3/6" not in both
    assert "done: every gate holds" in done.stdout
