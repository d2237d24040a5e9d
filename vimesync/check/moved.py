"""Where a file the patch changes went, when it is gone at the new pin: git's rename detection
between the two pins (``git diff -M --name-status``) when both are commits of one repository,
else the file of the new source whose content is closest to the old one (same file name first;
bounded: a few candidates, each at most ``MAX_COMPARE_BYTES``)."""

from __future__ import annotations

import difflib
from pathlib import Path, PurePosixPath

from vimesync import git
from vimesync.errors import GitError
from vimesync.sources import Source

MAX_CANDIDATES = 20
MAX_COMPARE_BYTES = 1 << 20
MIN_SIMILARITY = 0.5  # git's own default for -M


class WhereMoved:
    """``where(path, old bytes) -> new path | None`` for one bump (the rename list read once)."""

    def __init__(self, old: Source, new: Source) -> None:
        self.old, self.new = old, new
        self._renames: dict[str, str] | None = None

    def __call__(self, path: str, data: bytes) -> str | None:
        o, n = self.old.info, self.new.info
        if o.kind == "git" and n.kind == "git" and o.path == n.path and o.rev and n.rev:
            return self._git_renames(o.path, o.rev, n.rev).get(path)
        return self._closest(path, data)

    def _git_renames(self, repo: str, old: str, new: str) -> dict[str, str]:
        if self._renames is None:
            self._renames = {}
            try:
                out = git.run(Path(repo), ["diff", "-M", "--name-status", "-z", old, new])
            except GitError:
                return self._renames
            fields = out.split(b"\0")
            i = 0
            while i < len(fields) and fields[i]:
                status = fields[i]
                if status[:1] in (b"R", b"C") and i + 2 < len(fields):
                    src, dst = fields[i + 1], fields[i + 2]
                    if status[:1] == b"R":
                        self._renames[src.decode("utf-8", "surrogateescape")] = dst.decode(
                            "utf-8", "surrogateescape"
                        )
                    i += 3
                else:
                    i += 2
        return self._renames

    def _closest(self, path: str, data: bytes) -> str | None:
        if len(data) > MAX_COMPARE_BYTES:
            return None
        name = PurePosixPath(path).name
        files = self.new.list_files()
        candidates = [
            p
            for p, e in files.items()
            if PurePosixPath(p).name == name and not e.is_symlink and e.size <= MAX_COMPARE_BYTES
        ][:MAX_CANDIDATES]
        old_lines = data.splitlines()
        best, score = None, MIN_SIMILARITY
        for p in candidates:
            ratio = difflib.SequenceMatcher(
                None, old_lines, self.new.read(p).splitlines(), autojunk=False
            ).ratio()
            if ratio >= score:
                best, score = p, ratio
        return best
