"""Which commit evidence binds to, and who committed each record.

Recording evidence is itself a commit (``sop/records/<sync>.toml`` changes): if evidence bound to
the head, committing it would make it stale. So it binds to the *evidence head*: the nearest
first-parent ancestor-or-self of the head whose change is not only under ``sop/records/`` (a
commit changing nothing there counts as such, an empty one too). A commit that touches code,
patches or pins moves the evidence head, and every record made before it is then not evidence.

A record is a claim by whoever commits it: :func:`committers` reads the records file's history
(``git log``) and names, for each record, the committer of the first commit that holds it as it
is now. One not committed yet is the working tree's claim only."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from vimesync import git
from vimesync.errors import VimesyncError

Key = tuple[str, str, str, str]  # (kind, name, evidence head, recorded_at)

MAX_WALK = 10_000  # first-parent commits looked at for the evidence head
MAX_HISTORY = 200  # commits of the records file read for its committers


def records_prefix(repo: Path, sop_root: Path) -> str:
    """``sop/records`` as a path inside ``repo`` (vimesync.toml may live in a sub-folder)."""
    try:
        rel = sop_root.resolve().relative_to(repo.resolve())
    except ValueError:
        rel = PurePosixPath()  # type: ignore[assignment]
    return (PurePosixPath(rel.as_posix()) / "sop" / "records").as_posix().removeprefix("./")


def _only_records(paths: Iterable[str], prefix: str) -> bool:
    return all(p.startswith(prefix + "/") for p in paths)


def evidence_head(repo: Path, head: str, prefix: str = "sop/records") -> str:
    """The commit evidence recorded at ``head`` binds to (see the module's text)."""
    # One log, first parent only, each commit's paths against its first parent (-z: any name).
    out = git.run(
        repo,
        [
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            f"--max-count={MAX_WALK}",
            "--format=%x01%H",
            "--name-only",
            "--no-renames",
            "-z",
            head,
            "--",
        ],
    )
    last = head
    for chunk in out.split(b"\x01")[1:]:
        fields = [f for f in chunk.split(b"\x00") if f.strip(b"\n")]
        if not fields:
            continue
        first = fields[0].split(b"\n", 1)
        sha = first[0].decode("ascii")
        paths = [first[1].strip(b"\n")] if len(first) > 1 and first[1].strip(b"\n") else []
        paths += [f.strip(b"\n") for f in fields[1:]]
        last = sha
        if not _only_records((p.decode("utf-8", "surrogateescape") for p in paths), prefix):
            return sha
    return last  # every commit within reach touched records only: the oldest seen


def committers(
    repo: Path, head: str, relpath: str, keys: Callable[[str], set[Key]], *, max_bytes: int
) -> dict[Key, str]:
    """``{key: "Name <email>"}``: for each record key (``keys`` of a blob's text), the committer
    of the oldest commit reachable from ``head`` holding it (a key is a record as written: its
    kind, name, evidence head and recorded_at, so a record replaced later is claimed anew)."""
    found: dict[Key, str] = {}
    for commit, who in history(repo, head, relpath):
        text = blob_text(repo, commit, relpath, max_bytes)
        if text is None:
            continue
        try:
            held = keys(text)
        except VimesyncError:
            continue  # a commit whose file was malformed claims nothing
        for key in held:
            found.setdefault(key, who)
    return found


def history(repo: Path, head: str, relpath: str) -> list[tuple[str, str]]:
    """``(commit, "Name <email>")`` of the commits that changed ``relpath``, oldest first."""
    out = git.run(
        repo,
        [
            "log",
            f"--max-count={MAX_HISTORY}",
            "--format=%H%x00%cn <%ce>%x00",
            "-z",
            "--no-renames",
            head,
            "--",
            relpath,
        ],
    )
    fields = out.split(b"\x00")
    pairs = []
    for i in range(0, len(fields) - 1, 2):
        sha = fields[i].strip(b"\n").decode("ascii", "replace")
        who = fields[i + 1].decode("utf-8", "replace")
        if sha:
            pairs.append((sha, who))
    return pairs[::-1]


def blob_text(repo: Path, commit: str, relpath: str, max_bytes: int) -> str | None:
    """The file as ``commit`` holds it (None when it does not, or it is too big or not UTF-8)."""
    code, out, _ = git.run_status(repo, ["cat-file", "-s", f"{commit}:{relpath}"])
    if code != 0 or int(out.strip() or 0) > max_bytes:
        return None
    data = git.run(repo, ["cat-file", "blob", f"{commit}:{relpath}"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
