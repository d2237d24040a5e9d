"""The one decoder of untrusted TOML/JSON into dataclasses (safefs/decode.py): hostile documents
are refused naming the file and the key path, never echoing a value; bounds hold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest

from vimesync import safefs
from vimesync.errors import ConfigError
from vimesync.safefs import CONTROL, DecodeError, DecodeLimits, Range, Size, Text, decode, encode, open_keys

SECRET = "hunter2-\x1b]8;;evil\x07"  # a value that must never reach a message


class Phase(str, Enum):
    ITEMS = "items"
    DONE = "done"


@dataclass(frozen=True)
class File:
    path: str
    hunks: tuple[str, ...] = ()
    hint: str = field(default="", metadata={"omit_default": True})


@dataclass(frozen=True)
class Row:
    pr: Annotated[int, Range(1, 999)] | None
    paths: tuple[str, ...]
    commit: Annotated[str, Text(pattern=r"[0-9a-f]{40}", what="a full commit sha")] | None = None
    files: tuple[File, ...] = ()


@dataclass(frozen=True)
class Doc:
    branch: Annotated[str, Text(max=20, forbid=CONTROL, what="a branch name")]
    carried: list[Row] = field(default_factory=list)
    phase: Phase = Phase.ITEMS
    ratio: float = 0.0
    squash: bool = False
    pair: tuple[str, str] | None = None
    names: Annotated[tuple[Annotated[str, Text(min=1)], ...], Size(3)] = ()
    figures: dict[Annotated[str, Text(pattern=r"[a-z]+", what="a figure name")], str] = field(
        default_factory=dict
    )
    where: Path | None = None
    extra: Any = None
    version: Literal[1] = 1


GOOD: dict[str, Any] = {
    "branch": "sync/1",
    "carried": [
        {"pr": 3, "paths": ["a", "b"], "commit": "a" * 40, "files": [{"path": "a", "hunks": ["@@"]}]}
    ],
    "phase": "done",
    "ratio": 2,
    "squash": True,
    "pair": ["x", "y"],
    "names": ["n"],
    "figures": {"k": "v"},
    "where": "/x",
    "extra": {"any": [1, "two"]},
    "version": 1,
}


def _error(doc: Any, **kwargs: Any) -> str:
    with pytest.raises(DecodeError) as info:
        decode(Doc, doc, where="state.json", **kwargs)
    message = str(info.value)
    assert message.startswith("state.json: ")
    return message


def test_a_good_document_decodes_into_its_types_and_encodes_back() -> None:
    doc = decode(Doc, GOOD, where="state.json")
    assert doc.carried[0].paths == ("a", "b") and doc.carried[0].files[0].hunks == ("@@",)
    assert doc.phase is Phase.DONE and doc.ratio == 2.0 and isinstance(doc.ratio, float)
    assert doc.pair == ("x", "y") and doc.where == Path("/x") and doc.extra == {"any": [1, "two"]}
    again = encode(doc)
    assert again["carried"][0]["files"] == [{"path": "a", "hunks": ["@@"]}]  # hint omitted at its default
    assert decode(Doc, json.loads(json.dumps(again)), where="state.json") == doc


def test_missing_keys_take_their_defaults_or_are_named() -> None:
    assert decode(Doc, {"branch": "b"}, where="state.json").carried == []
    assert _error({}) == "state.json: branch: missing"
    assert _error({"branch": "b", "carried": [{"pr": 1}]}) == "state.json: carried[0].paths: missing"


HOSTILE = {
    "a list, not a table": ([GOOD], "expected a table"),
    "a string in a list of strings' place": ({**GOOD, "names": "n"}, "names: expected a list"),
    "a number among strings": (
        {**GOOD, "carried": [{"pr": 1, "paths": ["a", 7]}]},
        "carried[0].paths[1]: expected a string",
    ),
    "a bool for a number": ({**GOOD, "carried": [{"pr": True, "paths": []}]}, "carried[0].pr: expected"),
    "a number for a bool": ({**GOOD, "squash": 1}, "squash: expected true or false"),
    "a float for a whole number": ({**GOOD, "carried": [{"pr": 1.0, "paths": []}]}, "carried[0].pr"),
    "a number out of range": (
        {**GOOD, "carried": [{"pr": 10**30, "paths": []}]},
        "carried[0].pr: expected a whole number from 1 to 999",
    ),
    "NaN": ({**GOOD, "ratio": float("nan")}, "ratio: expected a number"),
    "a sha that is not one": (
        {**GOOD, "carried": [{"pr": 1, "paths": [], "commit": SECRET}]},
        "carried[0].commit: expected a full commit sha",
    ),
    "an unknown enum value": ({**GOOD, "phase": SECRET}, "phase: expected one of items, done"),
    "a wrong version": ({**GOOD, "version": 2}, "version: expected 1"),
    "true for version 1": ({**GOOD, "version": True}, "version: expected 1"),
    "a pair of three": ({**GOOD, "pair": ["a", "b", "c"]}, "pair: expected a list of 2 items"),
    "too many items": ({**GOOD, "names": ["a", "b", "c", "d"]}, "names: expected at most 3 items"),
    "an empty string where one is needed": ({**GOOD, "names": [""]}, "names[0]: expected a string (of 1 to"),
    "a control character": ({**GOOD, "branch": "a\x1bb"}, "branch: expected a branch name (no control"),
    "a NUL": ({**GOOD, "branch": "a\x00b"}, "branch: expected a branch name (no control"),
    "a long string": (
        {**GOOD, "branch": "b" * 21},
        "branch: expected a branch name (of at most 20 characters)",
    ),
    "an unknown key": ({**GOOD, SECRET: 1}, "unknown key 'hunter2-\\x1b]8;;evil\\x07'"),
    "an unknown key in an entry": (
        {**GOOD, "carried": [{"pr": 1, "paths": [], "extra": SECRET}]},
        "carried[0]: unknown key 'extra'",
    ),
    "a table key of the wrong form": (
        {**GOOD, "figures": {SECRET: "v"}},
        "figures: key #1: expected a figure",
    ),
    "a value under a table key": ({**GOOD, "figures": {"k": 5}}, "figures['k']: expected a string"),
    "deep nesting under Any": (
        {**GOOD, "extra": json.loads("[" * 40 + "]" * 40)},
        "nested deeper than 32 levels",
    ),
    "a huge string under Any": ({**GOOD, "extra": {"a": "x" * 70_000}}, "extra['a']: expected a string"),
}


@pytest.mark.parametrize(("doc", "expected"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_document_is_refused_naming_the_key_never_the_value(doc: Any, expected: str) -> None:
    message = _error(doc)
    assert expected in message, message
    if "unknown key" not in expected:  # a key is shown (escaped and cut), a value never
        assert "hunter2" not in message
    assert "\x1b" not in message and "\x00" not in message and "\x07" not in message


def test_a_table_key_in_a_path_is_escaped_and_cut() -> None:
    @dataclass(frozen=True)
    class Figures:
        figures: dict[str, int]

    with pytest.raises(DecodeError) as info:
        decode(Figures, {"figures": {"\x1b[2J" + "k" * 500: "v"}}, where="f.toml")
    message = str(info.value)
    assert "\x1b" not in message and "k" * 100 not in message and message.endswith("expected a whole number")


def test_bounds_are_the_callers() -> None:
    limits = DecodeLimits(text=4, items=2, depth=3)
    assert "names[0]: expected a string (of 1 to 4 characters)" in _error(
        {"branch": "bbbbb", "names": ["nnnnn"]}, limits=limits
    )
    assert "carried: expected at most 2 items" in _error(
        {"branch": "b", "carried": [{"pr": 1, "paths": []}] * 3}, limits=limits
    )
    assert "nested deeper than 3 levels" in _error({"branch": "b", "extra": [[[[1]]]]}, limits=limits)


def test_a_huge_document_is_refused_in_linear_time() -> None:
    import time

    doc = {**GOOD, "extra": [[0] * 1000 for _ in range(100)]}
    started = time.monotonic()
    decode(Doc, doc, where="state.json")
    assert "expected at most 100,000 items" in _error({**GOOD, "extra": [0] * 100_001})
    assert time.monotonic() - started < 5


def test_open_keys_ignores_what_the_class_does_not_name() -> None:
    @open_keys
    @dataclass(frozen=True)
    class Manifest:
        to: str
        rev: str | None = None

    assert decode(Manifest, {"to": "/x", "patches": [1, 2]}, where="bump.json") == Manifest("/x")
    with pytest.raises(DecodeError, match="bump.json: to: expected a string"):
        decode(Manifest, {"to": 5}, where="bump.json")


def test_decode_json_and_toml_bound_the_text_first(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        safefs.decode_json(Doc, "[" * 100 + "]" * 100, where="state.json")
    assert "nested deeper than" in str(info.value)
    assert safefs.decode_toml(Doc, 'branch = "b"\nnames = ["x"]\n', where="a.toml").names == ("x",)
    with pytest.raises(DecodeError, match=r"a.toml: names\[0\]: expected a string"):
        safefs.decode_toml(Doc, 'branch = "b"\nnames = [1]\n', where="a.toml")
