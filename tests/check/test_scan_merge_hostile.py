"""``pin scan --merge`` reads documents a CI job wrote, or anyone who could put a file in its
place: the wrong shape is exit 2 in one line (never a traceback), and a document cannot make
the matrix show one verdict in a cell and count another (two cells for one patch and release,
a cell outside the matrix, a release named twice)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders.cli import run

GOOD: dict[str, Any] = {
    "kind": "pin-scan",
    "engine": "vllm",
    "series": "patches/series",
    "patches": ["a.patch", "b.patch"],
    "releases": [
        {"label": "v1", "to": "v1", "kind": "git", "path": "/src", "python": {"ok": True, "files": 3}}
    ],
    "cells": [
        {"patch": "a.patch", "release": "v1", "status": "applied", "verdict": "applies"},
        {"patch": "b.patch", "release": "v1", "status": "failed", "verdict": "conflicts"},
    ],
}


def _doc(edit: str) -> Any:
    doc = copy.deepcopy(GOOD)
    if edit == "files-inf":
        return json.dumps(doc).replace('"files": 3', '"files": 1e999')
    if edit == "files-string":
        doc["releases"][0]["python"]["files"] = "9" * 5000
    elif edit == "files-negative":
        doc["releases"][0]["python"]["files"] = -1
    elif edit == "ok-string":
        doc["releases"][0]["python"]["ok"] = "no"
    elif edit == "patches-string":
        doc["patches"] = "ab"
    elif edit == "releases-object":
        doc["releases"] = {"v1": {}}
    elif edit == "duplicate-cell":  # the table would show "applied", the verdict count "failed"
        doc["cells"].append({"patch": "a.patch", "release": "v1", "status": "failed"})
    elif edit == "cell-outside-patches":  # counted in the verdict, shown in no row
        doc["cells"].append({"patch": "z.patch", "release": "v1", "status": "failed"})
    elif edit == "cell-outside-releases":
        doc["cells"].append({"patch": "a.patch", "release": "v9", "status": "failed"})
    elif edit == "release-twice":  # merged, both columns would take every v1 cell
        doc["releases"].append(dict(doc["releases"][0]))
    elif edit == "patch-twice":
        doc["patches"].append("a.patch")
    elif edit == "too-many-patches":
        doc["patches"] = [f"p{i}.patch" for i in range(10_001)]
        doc["cells"] = []
    return json.dumps(doc) if not isinstance(doc, str) else doc


@pytest.mark.parametrize(
    "edit",
    [
        "files-inf",
        "files-string",
        "files-negative",
        "ok-string",
        "patches-string",
        "releases-object",
        "duplicate-cell",
        "cell-outside-patches",
        "cell-outside-releases",
        "release-twice",
        "patch-twice",
        "too-many-patches",
    ],
)
def test_a_document_of_the_wrong_shape_is_one_line_exit_2(tmp_path: Path, capsys, edit: str) -> None:
    doc = tmp_path / "scan.json"
    doc.write_text(_doc(edit))
    code, out, err = run(capsys, "pin", "scan", "--merge", str(doc))
    assert code == 2, (edit, out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2 and str(doc) in err


def test_the_good_document_merges_and_fails_on_its_conflict(tmp_path: Path, capsys) -> None:
    doc = tmp_path / "scan.json"
    doc.write_text(_doc(""))
    code, out, err = run(capsys, "pin", "scan", "--merge", str(doc), "--json")
    assert code == 1, err
    assert [c["status"] for c in json.loads(out)["cells"]] == ["applied", "failed"]


def test_a_deep_or_huge_document_is_refused(tmp_path: Path, capsys) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, "pin", "scan", "--merge", str(deep))
    assert code == 2 and "nested deeper" in err
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(17 << 20)
    code, _, err = run(capsys, "pin", "scan", "--merge", str(huge))
    assert code == 2 and "limit" in err


def test_hostile_names_reach_the_terminal_escaped(tmp_path: Path, capsys) -> None:
    doc = copy.deepcopy(GOOD)
    evil = "a\x1b]8;;http://x\x07\u202e[red]b[/red]"
    doc["patches"][0] = evil
    doc["cells"][0]["patch"] = evil
    doc["releases"][0]["label"] = doc["cells"][0]["release"] = doc["cells"][1]["release"] = evil
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "pin", "scan", "--merge", str(path))
    assert code == 1, err
    assert "\x1b" not in out + err and "\u202e" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize(
    "cell, needle",
    [
        ({"status": "hunter2\x1b[2J"}, "cells[0].status: expected one of applied, offsets"),
        ({"verdict": ["hunter2"]}, "cells[0].verdict: expected a string"),
        ({"hunter2": 1}, "cells[0]: unknown key 'hunter2'"),
        ({"patch": "x" * 301}, "cells[0].patch: expected a string (of at most 300 characters)"),
    ],
)
def test_the_error_names_the_key_never_the_value(tmp_path: Path, capsys, cell: dict, needle: str) -> None:
    doc = copy.deepcopy(GOOD)
    doc["cells"][0].update(cell)
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "pin", "scan", "--merge", str(path))
    assert code == 2 and f"{path}: {needle}" in err, err
    assert "\x1b" not in err and ("hunter2" not in err or "unknown key" in needle) and "x" * 301 not in err
