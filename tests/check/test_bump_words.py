"""pin bump's verdict cells cut a long reason at a word, never mid-word (issue 17, item 17)."""

from __future__ import annotations

import pytest

from vimesync.check.bump import verdict
from vimesync.patches.model import HunkFailure, PatchResult
from vimesync.text import clip


def test_a_file_level_reason_is_cut_at_a_word() -> None:
    reason = "cannot apply: vllm/model_executor/layers/sampler.py: No such file or directory"
    result = PatchResult(
        name="p.patch", ok=False, failures=(HunkFailure("vllm/x.py", 0, "", reason),), hunks=1
    )
    cell = verdict(result)
    assert cell.startswith("conflicts: vllm/x.py (")
    inside = cell.split("(", 1)[1].rstrip(")")
    assert inside.endswith("…") and reason.startswith(inside.removesuffix("…"))
    assert inside.removesuffix("…").split()[-1] in reason.split()  # a whole word ends it


@pytest.mark.parametrize(
    ("text", "limit", "want"),
    [
        ("short", 60, "short"),
        ("No such file or directory", 16, "No such file…"),
        ("abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi…"),  # one long word: cut where it must
    ],
)
def test_clip(text: str, limit: int, want: str) -> None:
    assert clip(text, limit) == want
    assert len(clip(text, limit)) <= limit
