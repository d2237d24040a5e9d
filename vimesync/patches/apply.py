"""The builtin applier: one file's hunks against its bytes, exactly as ``git apply`` does it.

The hunks apply in order to the file's image (:mod:`vimesync.patches.image`: git's ``apply.c``,
v2.39, default options); binary patches go to :mod:`vimesync.patches.binary`. Like git, the hunks
of a file after its first failed one are not tried, unless the caller asks for all of them
(``patches check --keep-going``, like ``git apply --reject``) so a report can name every failure;
the verdict is git's either way: any failed hunk fails the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.patches import binary
from vimesync.patches.image import SEARCH_BUDGET, Image
from vimesync.patches.model import FilePatch, HunkFailure, HunkOffset

NOT_TRIED = "not tried: search budget exhausted"


@dataclass(frozen=True)
class FileApplied:
    """The result of applying one FilePatch's content change.

    ``data`` is the new content (``None`` when the file is deleted, or when it failed).
    """

    path: str
    data: bytes | None
    offsets: tuple[HunkOffset, ...] = ()
    failures: tuple[HunkFailure, ...] = ()
    # GNU patch only: what it leaves in a file some of whose hunks failed (the ones that applied
    # written, the rest to the .rej file); None when it leaves the file as it was.
    partial: bytes | None = None

    @property
    def ok(self) -> bool:
        return not self.failures


def apply_file(original: bytes | None, fp: FilePatch, *, all_hunks: bool = False) -> FileApplied:
    """Apply ``fp`` to ``original`` (``None``: the file does not exist) like ``git apply``.

    Existence rules: a creation needs a missing file, anything else an existing one (a
    ``new_if_missing`` patch may create); a deletion must leave nothing. Binary patches go to
    :mod:`vimesync.patches.binary`.
    """
    if fp.is_new and original is not None:
        return _file_failure(fp.path, "already exists in working directory")
    if original is None and not (fp.is_new or fp.new_if_missing):
        return _file_failure(fp.path, "No such file or directory", missing=True)
    return apply_content(original or b"", fp, creating=original is None, all_hunks=all_hunks)


def apply_content(
    data: bytes,
    fp: FilePatch,
    *,
    creating: bool = False,
    all_hunks: bool = False,
    budget: int = SEARCH_BUDGET,
    diagnose: bool = True,
) -> FileApplied:
    """Apply ``fp``'s hunks (or binary data) to ``data``, the file's current content.

    ``creating`` says the file is being created (git then wants an empty preimage for binary
    patches). ``all_hunks`` tries every hunk after a failure (to report them all) instead of
    stopping at the first; ``budget`` bounds the search work (see ``SEARCH_BUDGET``); ``diagnose``
    False skips describing a failed hunk (when only whether it applies matters). Existence
    checks are the caller's (see :func:`apply_file`, ``tree``).
    """
    path = fp.path
    if fp.binary is not None or fp.binary_without_data:
        try:
            result = binary.apply_binary(data, fp, creating=creating or fp.is_new)
        except binary.BinaryPatchError as exc:
            return _file_failure(path, str(exc))
        offsets: tuple[HunkOffset, ...] = ()
    else:
        image = Image(data, budget)
        offsets_list: list[HunkOffset] = []
        failures: list[HunkFailure] = []
        for nth, hunk in enumerate(fp.hunks, 1):
            if image.budget < 0:
                failures.append(HunkFailure(file=path, hunk=nth, header=hunk.header, reason=NOT_TRIED))
                continue
            outcome = image.apply_hunk(hunk)
            if isinstance(outcome, int):
                if outcome:
                    offsets_list.append(HunkOffset(path, nth, outcome))
                continue
            if image.budget < 0 or not diagnose:
                failures.append(HunkFailure(file=path, hunk=nth, header=hunk.header, reason=outcome))
            else:
                failures.append(image.diagnose(path, nth, hunk, outcome))
            if not all_hunks:
                break  # git stops at a file's first failed hunk
        if failures:
            return FileApplied(path, None, tuple(offsets_list), tuple(failures))
        result = image.data()
        offsets = tuple(offsets_list)
    if fp.is_delete:
        if result:
            return _file_failure(path, "removal patch leaves file contents")
        return FileApplied(path, None, offsets)
    return FileApplied(path, result, offsets)


def _file_failure(path: str, reason: str, *, missing: bool = False) -> FileApplied:
    failure = HunkFailure(file=path, hunk=0, header="", reason=reason, missing=missing)
    return FileApplied(path, None, failures=(failure,))
