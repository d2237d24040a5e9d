"""The job summary: appended, never written through a symlink, a FIFO or a device."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vimesync.errors import BadInput
from vimesync.outputs.stepsummary import MAX_SUMMARY, append_summary


def test_appends_after_what_is_there(tmp_path: Path) -> None:
    f = tmp_path / "summary.md"
    f.write_text("# earlier step\n")
    append_summary(f, "## ours")
    append_summary(f, "## again\n")
    assert f.read_text() == "# earlier step\n\n## ours\n\n## again\n"


def test_refuses_a_symlink_and_leaves_its_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("keep\n")
    link = tmp_path / "summary.md"
    link.symlink_to(target)
    with pytest.raises(BadInput, match="symlink"):
        append_summary(link, "## ours")
    assert target.read_text() == "keep\n"


def test_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(BadInput):  # ENXIO (no reader) or "not a regular file": never a hang
        append_summary(fifo, "## ours")


def test_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInput):
        append_summary(tmp_path, "## ours")


def test_cut_at_githubs_limit_on_a_line(tmp_path: Path) -> None:
    f = tmp_path / "s.md"
    append_summary(f, "line\n" * (MAX_SUMMARY // 5 + 100))
    data = f.read_bytes()
    assert len(data) <= MAX_SUMMARY + 100 and data.endswith(b"*(summary cut at GitHub's 1 MiB limit)*\n")
    assert b"\nline\nline\n\n*(summary cut" in data


@pytest.mark.parametrize("where", ["/proc/self/environ", "/proc/self/fd/1", "/dev/full"])
def test_pseudo_files_are_refused_without_a_traceback(where: str) -> None:
    with pytest.raises(BadInput, match="GITHUB_STEP_SUMMARY"):
        append_summary(Path(where), "## x\n")


def test_a_write_error_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("vimesync.outputs.stepsummary.os.write", full)
    with pytest.raises(BadInput, match="No space left on device"):
        append_summary(tmp_path / "summary.md", "## x\n")


def test_the_summary_is_finished_like_every_markdown_we_write(tmp_path: Path) -> None:
    # Issue 29 item 16: the job summary is Markdown we write too: no mention, closing reference
    # or publish marker of a path or title in it acts.
    f = tmp_path / "summary"
    append_summary(f, "- thanks @octocat: fixes vime-org/vime#3 <!-- vimesync:report:end -->\n")
    text = f.read_text()
    assert "<code>@octocat</code>" in text and "fixes <code>vime-org/vime#3</code>" in text
    assert "<!-- vimesync:report:end -->" not in text
