"""``output.emit_json``: one JSON document on stdout, as ``json.dumps(indent=2, default=str,
ensure_ascii=True)`` writes it (through orjson: the two documented differences are floats), ASCII
only, with no ``##[`` an Actions runner would obey."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vimesync.cli import output


class Color(str, Enum):
    red = "red"


@dataclass(frozen=True)
class Row:
    name: str
    n: int


DOCS: list[Any] = [
    None,
    2**70,
    -0.0,
    1.5e300,
    'q"uote\\ \n\t\x1b \x7f \u202e \ud800 é 日本 😀',
    "é 日本 😀 \x7f \u2028",
    [],
    {},
    {1: "int key", None: "none key", "nested": {"x": [1, [2, []]]}},
    {"enum": Color.red, "path": Path("/tmp/x"), "set": {1}, "bytes": b"raw", "when": date(2026, 12, 4)},
    {"row": Row("a", 1), "big": [2**64, -(2**63) - 1]},
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


def test_the_documented_differences_are_floats_only(capsys: pytest.CaptureFixture[str]) -> None:
    """A float below 1e-4 in full, NaN and the infinities as null: the same value (or none), and
    still JSON, where the standard library writes ``NaN``."""
    output.emit_json({"small": 0.00001, "nan": math.nan, "inf": -math.inf})
    out = capsys.readouterr().out
    assert json.loads(out) == {"small": 0.00001, "nan": None, "inf": None}


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f == 0 or abs(f) >= 1e-4)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@given(JSONISH)
def test_any_document_as_json_dumps_writes_it(doc: Any) -> None:
    """Any text (surrogates, controls, astral characters), any integer, nesting: byte for byte."""
    assert output.json_text(doc) == json.dumps(doc, indent=2, default=str, ensure_ascii=True)
