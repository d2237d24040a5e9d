"""Append Markdown to the GitHub Actions job summary (``$GITHUB_STEP_SUMMARY``).

The variable is the job's (the environment is trusted; the checkout is not), but the file it
names is still opened with care: append-only, never through a symlink (``O_NOFOLLOW``), never
blocking on a FIFO (``O_NONBLOCK``), and only if it is a regular file, so that nothing a pull
request planted on the runner can redirect or truncate what we write. GitHub caps a step's
summary at 1 MiB: longer text is cut at a line with a note."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from vimesync.errors import BadInput
from vimesync.report.mentions import finish_markdown
from vimesync.safefs import pseudo_area

MAX_SUMMARY = 1024 * 1024 - 4096


def append_summary(path: Path, markdown: str) -> None:
    """Append ``markdown`` (with a blank line before it) to the summary file ``path``, finished
    as every Markdown we write is (no @mention, closing reference or publish marker acts)."""
    data = finish_markdown(markdown).encode("utf-8", "replace")
    if len(data) > MAX_SUMMARY:
        cut = data[:MAX_SUMMARY].rsplit(b"\n", 1)[0]
        data = cut + b"\n\n*(summary cut at GitHub's 1 MiB limit)*\n"
    flags = (
        os.O_WRONLY
        | os.O_APPEND
        | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_NOCTTY", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    where = f"GITHUB_STEP_SUMMARY {path}"
    area = pseudo_area(os.path.abspath(path), os.path.realpath(path))
    if area is not None:  # /proc files look regular but are not: writes fail or act
        raise BadInput(f"{where}: refusing to write under {area}")
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        reason = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise BadInput(f"{where}: cannot append to it ({reason})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput(f"{where}: not a regular file; refusing to write to it")
        view = memoryview(b"\n" + data + (b"" if data.endswith(b"\n") else b"\n"))
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:  # a full disk, a file that takes no writes
        raise BadInput(f"{where}: cannot append to it ({exc.strerror})") from None
    finally:
        os.close(fd)
