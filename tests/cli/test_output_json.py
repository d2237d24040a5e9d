"""``output.emit_json``: one JSON document on stdout, as ``json.dumps(indent=2, default=str,
ensure_ascii=True)`` writes it, ASCII only, with no ``##[`` an Actions runner would obey."""

from __future__ import annotations

import json
import math
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from vimesync.cli import output


class Color(str, Enum):
    red = "red"


DOCS: list[Any] = [
    None,
    2**70,
    -0.0,
    math.inf,
    'q"uote\\ \n\t\x1b \u202e \ud800 é 日本',
    [],
    {},
    {1: "int key", None: "none key", "nested": {"x": [1, [2, []]]}},
    {"enum": Color.red, "path": Path("/tmp/x"), "set": {1}, "bytes": b"raw", "nan": math.nan},
]


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_one_document_as_json_dumps_writes_it(doc: Any, capsys: pytest.CaptureFixture[str]) -> None:
    output.emit_json(doc)
    out = capsys.readouterr().out
    assert out == json.dumps(doc, indent=2, default=str, ensure_ascii=True) + "\n"
    assert out.isascii()


def test_no_runner_command_survives(capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"title": "##[set-output name=verdict;]green", "##[add-mask]": ["x ##[error]y"]}
    output.emit_json(doc)
    out = capsys.readouterr().out
    assert "##[" not in out and json.loads(out) == doc


def test_a_circular_document_fails_as_json_fails() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        output.emit_json(loop)
