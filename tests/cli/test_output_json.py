"""``output.dumps`` writes what ``json.dumps(indent=2, default=str, ensure_ascii=True)`` writes."""

from __future__ import annotations

import json
import math
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any

import pytest

from vimesync.cli import output


class Color(str, Enum):
    red = "red"


class Level(IntEnum):
    high = 3


def stdlib(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, default=str, ensure_ascii=True)


DOCS: list[Any] = [
    None,
    True,
    0,
    -7,
    2**70,
    1.5,
    -0.0,
    1e300,
    math.inf,
    -math.inf,
    "",
    "plain",
    'q"uote\\ \n\t\x1b \u202e \ud800 é 日本',
    [],
    {},
    [[]],
    [{}],
    {"a": []},
    {"a": {}},
    [1, "two", None, True, False, 2.5, [3, [4, []]], {"k": "v"}],
    (1, (2, 3)),
    {"paths": ["a/b.py", "c d.py"], "n": 3, "ok": False, "none": None, "f": 0.1, "nested": {"x": [1]}},
    {1: "int key", 2.5: "float key", None: "none key", "s": Level.high},
    {True: "true key", False: "false key"},
    {"enum": Color.red, "list": [Color.red, Level.high], Color.red: "enum key"},
    {"path": Path("/tmp/x"), "set": {1}, "bytes": b"raw", "nan": math.nan},
    [Path("a"), "x"],
]


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_same_text_as_json_dumps(doc: Any) -> None:
    assert output.dumps(doc) == stdlib(doc)


def test_same_text_as_json_dumps_on_a_walk_shaped_document() -> None:
    prs = [
        {
            "number": n,
            "title": f"feat: change {n} \u00e9\x07",
            "commits": [f"{n:040x}", f"{n + 1:040x}"],
            "paths": [f"slime/f{k}.py" for k in range(n % 4)],
            "labels": [],
            "reverts": n - 1 if n % 5 == 0 else None,
            "rule": None,
            "partial_paths": [],
        }
        for n in range(60)
    ]
    doc = {"upstream": "o/r", "range": {"base": "0" * 40, "tip": "f" * 40}, "prs": prs, "notes": []}
    assert output.dumps(doc) == stdlib(doc)


def test_bad_keys_and_circular_documents_fail_as_json_fails() -> None:
    with pytest.raises(TypeError):
        output.dumps({(1, 2): "tuple key"})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        output.dumps(loop)
