"""The data model of a patch stack, from series file down to hunk lines.

Everything here is frozen and pure. Content is ``bytes`` end to end so that CRLF,
non-UTF-8 text and "\\ No newline at end of file" survive byte-exactly.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

MAX_PATCH_BYTES = 64 * 1024 * 1024  # one patch file, read (series) and parsed (diffparse)

# ---------------------------------------------------------------------------------------------
# Series (quilt) and DEP-3


@dataclass(frozen=True)
class SeriesEntry:
    """One line of a quilt series file."""

    name: str  # as written in the series file, relative to its folder
    path: Path  # resolved file path
    strip: int  # -pN for this patch (the line's own -pN, else the stack default)
    line: int  # line number in the series file


@dataclass(frozen=True)
class Series:
    path: Path
    entries: tuple[SeriesEntry, ...]


@dataclass(frozen=True)
class Dep3:
    """A DEP-3 header (https://dep-team.pages.debian.net/deps/dep3/), parsed leniently.

    ``fields`` keeps every field in order (keys lower-cased), ``text`` the header verbatim.
    """

    text: str
    fields: tuple[tuple[str, str], ...] = ()
    body: str = ""  # free-form text outside the fields (e.g. a format-patch commit message body)

    def get(self, key: str) -> str | None:
        key = key.lower()
        for k, v in self.fields:
            if k == key:
                return v
        return None

    def get_all(self, key: str) -> list[str]:
        key = key.lower()
        return [v for k, v in self.fields if k == key]

    @property
    def description(self) -> str | None:
        """Description, else Subject: the patch's purpose."""
        return self.get("description") or self.get("subject")

    @property
    def summary(self) -> str | None:
        """The first line of the description: what a report shows in one line."""
        d = self.description
        return d.split("\n", 1)[0].strip() if d else None


# ---------------------------------------------------------------------------------------------
# Parsed diffs


class HunkLines(Sequence[tuple[str, bytes]]):
    """A hunk's (tag, content) lines, stored compactly: one string of tags, one buffer of the
    contents and their end offsets (~5 bytes a line plus its content, where a tuple per line took
    ~100). Reads like a tuple of pairs: indexing, iteration, ``len``, ``in``, ``==``."""

    __slots__ = ("_data", "_ends", "_tags")

    def __init__(self, pairs: Iterable[tuple[str, bytes]] = ()) -> None:
        tags: list[str] = []
        data = bytearray()
        ends = array("I")  # offsets within one hunk: a patch is at most 64 MiB
        for tag, content in pairs:
            tags.append(tag)
            data += content
            ends.append(len(data))
        self._tags = "".join(tags)
        self._data = bytes(data)
        self._ends = ends

    @classmethod
    def from_parts(cls, tags: str, data: bytes, ends: array) -> HunkLines:  # type: ignore[type-arg]
        """Adopt ready parts: ``ends[i]`` is where line ``i``'s content ends in ``data``."""
        self = cls.__new__(cls)
        self._tags, self._data, self._ends = tags, data, ends
        return self

    def __len__(self) -> int:
        return len(self._tags)

    @overload
    def __getitem__(self, i: int) -> tuple[str, bytes]: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[tuple[str, bytes], ...]: ...
    def __getitem__(self, i: int | slice) -> tuple[str, bytes] | tuple[tuple[str, bytes], ...]:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        n = len(self._tags)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("hunk line index out of range")
        start = self._ends[i - 1] if i else 0
        return self._tags[i], self._data[start : self._ends[i]]

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        data, start = self._data, 0
        for tag, end in zip(self._tags, self._ends, strict=True):
            yield tag, data[start:end]
            start = end

    def side(self, skip: str) -> list[bytes]:
        """The contents of the lines whose tag is not ``skip``, in order."""
        data, start, out = self._data, 0, []
        for tag, end in zip(self._tags, self._ends, strict=True):
            if tag != skip:
                out.append(data[start:end])
            start = end
        return out

    @property
    def tags(self) -> str:
        return self._tags

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HunkLines):
            return (self._tags, self._data, self._ends) == (other._tags, other._data, other._ends)
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._tags, self._data))

    def __repr__(self) -> str:
        return f"HunkLines({tuple(self)!r})"


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` hunk. ``lines`` are (tag, content) with tag in " -+"; content is the exact
    file bytes of the line including its terminator ("\\n", "\\r\\n"), or without one when the
    patch marked it "\\ No newline at end of file". Given as any sequence of pairs, they are
    kept as :class:`HunkLines`."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    header: str  # the whole "@@ -a,b +c,d @@ section" line, decoded for display
    lines: HunkLines
    patch_line: int  # 1-based line of the @@ header in the patch file

    def __post_init__(self) -> None:
        if not isinstance(self.lines, HunkLines):
            object.__setattr__(self, "lines", HunkLines(self.lines))

    @property
    def old_lines(self) -> list[bytes]:
        return self.lines.side("+")

    @property
    def new_lines(self) -> list[bytes]:
        return self.lines.side("-")

    @property
    def trailing_context(self) -> int:
        tags = self.lines.tags
        return len(tags) - len(tags.rstrip(" "))


@dataclass(frozen=True)
class BinaryHunk:
    """A ``GIT binary patch`` section, already base85-decoded and inflated."""

    method: str  # "literal" or "delta"
    size: int  # the inflated size the header announced
    data: bytes


@dataclass(frozen=True)
class FilePatch:
    """The change one patch makes to one path. Paths are already stripped (-pN) and validated."""

    old_path: str | None  # None when the file is created
    new_path: str | None  # None when the file is deleted
    old_mode: int | None = None  # e.g. 0o100644; None when the patch does not say
    new_mode: int | None = None
    old_oid: str | None = None  # from the "index" line (abbreviated or full)
    new_oid: str | None = None
    is_rename: bool = False
    is_copy: bool = False
    similarity: int | None = None
    hunks: tuple[Hunk, ...] = ()
    binary: BinaryHunk | None = None  # the forward binary hunk, when the patch is binary
    binary_without_data: bool = False  # "Binary files a/x and b/x differ": cannot be applied
    patch_line: int = 0  # 1-based line where this file's section starts
    # Added by the parser (git apply semantics the fields above cannot say):
    # "dissimilarity index N%" of a rewrite (git's diff -B), None when absent.
    dissimilarity: int | None = None
    # A non-git diff whose only hunk is "@@ -0,0 +1,N @@" with no /dev/null or epoch timestamp:
    # git apply creates the file when it is missing and patches it (at its start) when present.
    new_if_missing: bool = False
    # The last of the section's "---"/"+++"/"Index:" lines (its "+++" line, in any diff we parse)
    # ends in CRLF: GNU patch (without --binary) then reads each of its lines ending in CRLF
    # without the CR ("Stripping trailing CRs from patch"); git apply never does.
    crlf_header: bool = False

    @property
    def is_new(self) -> bool:
        return self.old_path is None

    @property
    def is_delete(self) -> bool:
        return self.new_path is None

    @property
    def path(self) -> str:
        """The path to name in messages: the new one, else the old one."""
        return self.new_path or self.old_path or "?"


@dataclass(frozen=True)
class PatchFile:
    """A parsed patch file: its free-text header (kept verbatim) and its per-file changes."""

    name: str
    header: bytes
    files: tuple[FilePatch, ...]
    dep3: Dep3 | None = None

    @property
    def hunk_count(self) -> int:
        return sum(len(f.hunks) for f in self.files)


# ---------------------------------------------------------------------------------------------
# Application results


@dataclass(frozen=True)
class HunkFailure:
    """Why one hunk (or a whole file, hunk=0) did not apply."""

    file: str
    hunk: int  # 1-based; 0 when the failure is about the file as a whole
    header: str  # the hunk's @@ line, "" for file-level failures
    reason: str
    # For context mismatches: the first hunk line (1-based, counting old-side lines) that did
    # not match at the expected position, its expected text, the text found there, and the
    # 1-based file line where the closest partial match of the hunk's preimage starts.
    first_mismatch: int | None = None
    expected: str | None = None
    found: str | None = None
    nearest_line: int | None = None
    nearest_matched: int | None = None  # how many preimage lines match at nearest_line
    mismatch_line: int | None = None  # the 1-based file line of first_mismatch (where git looked first)
    patch_line: int | None = None  # 1-based line in the patch file: the hunk's @@, else the file's section
    missing: bool = False  # a file-level failure because the file to change does not exist


@dataclass(frozen=True)
class HunkOffset:
    file: str
    hunk: int
    offset: int  # lines: applied position minus the position the header names
    fuzz: int = 0  # context lines ignored at each end (GNU patch's fuzz); always 0 under git apply


@dataclass(frozen=True)
class IndexDrift:
    """A file whose ``index <old>..<new>`` line names other content than the tree has: the patch
    was made against another version of it (the reason a hunk fails, more often than not)."""

    file: str
    expected: str  # the patch's old blob id, as abbreviated as the patch wrote it
    found: str  # the blob id of the file in the tree the patch met, abbreviated alike
    by: str | None = None  # the earlier patch of the stack that last wrote the file; None: the pin
    is_result: bool = False  # the file already is what the patch makes of it (its index <new>)


DEFAULT_FUZZ = 2  # GNU patch's default maximum fuzz factor
Applier = Literal["git", "gnu-patch"]
APPLIERS: tuple[Applier, ...] = ("git", "gnu-patch")


@dataclass(frozen=True)
class ApplyMode:
    """Whose semantics apply a stack: ``git apply`` (exact context), or GNU ``patch`` with a fuzz
    factor and ``--forward`` (a reversed patch skipped rather than un-applied)."""

    applier: Applier = "git"
    fuzz: int = DEFAULT_FUZZ
    forward: bool = False


PatchStatus = Literal["applied", "offsets", "already-applied", "partly-applied", "failed", "skipped"]


@dataclass(frozen=True)
class PatchResult:
    """The outcome of applying one patch of the stack.

    When a patch fails, its hunks are also tried in reverse against the same files (``git apply
    -R --check``): ``reverse_applies`` says the whole patch is already in the tree, and
    ``already_applied`` names the (file, hunk) pairs that failed forward but apply in reverse.
    """

    name: str
    ok: bool
    skipped: bool = False
    files: int = 0
    hunks: int = 0
    offsets: tuple[HunkOffset, ...] = ()
    failures: tuple[HunkFailure, ...] = ()
    touched: tuple[str, ...] = ()  # paths written or deleted in the tree (post-strip)
    dep3: Dep3 | None = None
    already_applied: tuple[tuple[str, int], ...] = ()  # (file, 1-based hunk) found applied already
    reverse_applies: bool = False
    drift: tuple[IndexDrift, ...] = ()
    upstreamed: str | None = None  # a DEP-3 Applied-Upstream commit that the git pin contains

    @property
    def status(self) -> PatchStatus:
        if self.skipped:
            return "skipped"
        if self.ok:
            return "offsets" if self.offsets else "applied"
        if self.reverse_applies:
            return "already-applied"
        return "partly-applied" if self.already_applied else "failed"

    @property
    def fuzzed(self) -> tuple[HunkOffset, ...]:
        """The hunks that applied only with fuzz (GNU patch): a warning, a failure under --strict."""
        return tuple(o for o in self.offsets if o.fuzz)

    @property
    def max_offset(self) -> int:
        """The largest hunk offset in lines (0 when none moved)."""
        return max((abs(o.offset) for o in self.offsets), default=0)
