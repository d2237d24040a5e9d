"""The carry state file: a state of the wrong shape or past the read cap is bad input naming the
file (never a traceback), and --abort always clears the carry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.builders.pair import Pair, build_pair, cli
from vimesync import git

pytestmark = pytest.mark.slow  # carries stopped at a conflict in real repositories


@pytest.fixture()
def pair(tmp_path: Path) -> Pair:
    p = build_pair(tmp_path)
    p.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
    return p


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(state: dict[str, Any]) -> Any:
        state[key] = value
        return state

    return edit


def _drop(key: str) -> Callable[[dict[str, Any]], Any]:
    def edit(state: dict[str, Any]) -> Any:
        del state[key]
        return state

    return edit


def _first(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    def edit(state: dict[str, Any]) -> Any:
        state[key][0] = value
        return state

    return edit


SHAPES = {
    "a list": lambda state: [state],
    "a string": lambda state: "carry",
    "no items": _drop("items"),
    "no branch": _drop("branch"),
    "an unknown key": _set("extra", 1),
    "items a dict": _set("items", {}),
    "an item a number": _first("items", 7),
    "an item's steps a string": _first("items", {"pr": 1, "steps": "abc"}),
    "an item's excluded numbers": _first("items", {"pr": 1, "steps": ["a" * 40], "excluded": [1, 2]}),
    "an item's title a list": _first("items", {"pr": 1, "steps": ["a" * 40], "title": ["x"]}),
    "carried a string": _set("carried", "x"),
    "a carried entry a number": _first("carried", 3),
    "a carried entry's paths a string": _first(
        "carried", {"pr": 1, "title": "t", "upstream_commit": "a" * 40, "paths": "p", "commit": None}
    ),
    "skipped entries strings": _set("skipped", ["x"]),
    "conflict a list": _set("conflict", []),
    "conflict files numbers": _set(
        "conflict", {"pr": 2, "title": "t", "upstream_commit": "a" * 40, "files": [1]}
    ),
    "next a bool": _set("next", True),
    "next a string": _set("next", "1"),
    "transform a list": _set("transform", []),
    "transform of the wrong shape": _set("transform", {"map": 5, "translate": "x"}),
    "upstream_repo a number": _set("upstream_repo", 5),
    "upstream_repo with a newline": _set("upstream_repo", "a/b\nUpstream-PR: x/y#1"),
}


@pytest.mark.parametrize("edit", SHAPES.values(), ids=SHAPES.keys())
def test_a_state_of_the_wrong_shape_is_bad_input_and_abort_clears_it(
    pair: Pair, capsys, edit: Callable[[dict[str, Any]], Any]
) -> None:
    refs = pair.down.git("for-each-ref")
    code, doc = pair.carry(capsys)
    assert code == 1
    state_file = git.git_dir(pair.down.path) / "vimesync-carry.json"
    edited = edit(json.loads(state_file.read_text()))
    state_file.write_text(json.dumps(edited))
    for mode in ("--status", "--continue", "--skip"):
        code, out, err = cli(capsys, "carry", mode, cwd=pair.down.path)
        assert code == 2 and "Traceback" not in err, (mode, err)
        assert str(state_file) in err and "not a carry state vimesync can read" in err, (mode, err)
    code, out, err = cli(capsys, "carry", "--abort", cwd=pair.down.path)
    assert code == 0 and "Traceback" not in err, err
    assert not state_file.exists()
    if isinstance(edited, dict) and "branch" in edited and "worktree" in edited:
        assert pair.down.git("for-each-ref") == refs and not Path(doc["worktree"]).exists()
