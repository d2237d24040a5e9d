"""``DIR/bump.json`` (what ``patches refresh --from DIR`` reopens) is read as untrusted: a file
of the wrong shape is bad input naming the file and the key, never a value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vimesync.check.fromedits import MANIFEST, NewPin, read_manifest
from vimesync.errors import BadInput

WRITTEN = {
    "to": "/src/vllm",
    "rev": "a" * 40,
    "label": "v0.32",
    "series": "patches/series",
    "patches": ["x.patch"],
}


def test_the_manifest_pin_bump_writes_is_read_back(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).write_text(json.dumps(WRITTEN))
    assert read_manifest(tmp_path, untrusted=False) == NewPin(Path("/src/vllm"), "a" * 40, "v0.32")
    (tmp_path / MANIFEST).write_text(json.dumps({"to": "/src/vllm"}))  # an earlier bump's: fewer keys
    assert read_manifest(tmp_path, untrusted=False) == NewPin(Path("/src/vllm"), None, "/src/vllm")


@pytest.mark.parametrize(
    "doc, needle",
    [
        ([WRITTEN], "(expected a table)"),
        ({**WRITTEN, "to": None}, "(to: expected a string)"),
        ({"rev": "a" * 40}, "(to: missing)"),
        ({**WRITTEN, "rev": 7}, "(rev: expected a string)"),
        ({**WRITTEN, "label": "hunter2" * 1000}, "(label: expected a string (of at most 4,096 characters))"),
        ({**WRITTEN, "patches": ["hunter2", 3]}, "(patches[1]: expected a string)"),
        ({**WRITTEN, "hunter2\x1b[2J": 1}, "(unknown key 'hunter2\\x1b[2J')"),
    ],
)
def test_a_manifest_of_the_wrong_shape_is_bad_input(tmp_path: Path, doc: Any, needle: str) -> None:
    (tmp_path / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(BadInput) as info:
        read_manifest(tmp_path, untrusted=False)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / MANIFEST}: not a work folder of `pin bump --refresh`")
    assert needle in message and "\x1b" not in message, message
    assert "hunter2" not in message or "unknown key" in needle
