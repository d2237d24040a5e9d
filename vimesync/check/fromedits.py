"""``patches refresh NAME --from DIR``: a conflicting patch re-made from the merged files the
maintainer edited (quilt's ``refresh`` after fixing a ``push`` by hand).

``pin bump --refresh`` leaves, for each patch it could not merge, every merged file of that
patch in ``DIR/<patch>/<path>`` (conflict markers with the base section, ``--diff3``) and
``DIR/bump.json`` naming the new pin. Here the new pin is opened again, the series applied up to
the patch (each earlier patch as it is now, a failing one skipped whole, as the bump did), and
each edited file diffed against that tree: the new hunks replace the section's, the header and
every other section stay byte for byte. The re-made patch must apply there with no offset.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from vimesync.check.model import CheckOptions
from vimesync.check.rediff import NewSection, Scratch, plain_modification, splice
from vimesync.check.refresh import context_of, section
from vimesync.check.run import load_stack, source_provider
from vimesync.errors import BadInput, PatchError
from vimesync.patches.diffparse import parse_patch
from vimesync.patches.model import PatchResult
from vimesync.patches.series import load_series, read_patch
from vimesync.patches.tree import ScratchTree
from vimesync.repopaths import file_named_source
from vimesync.safefs import (
    CONTROL,
    DecodeError,
    Size,
    Text,
    decode,
    excerpt,
    input_kind,
    loads_json,
    read_input,
    scratch_dir,
)
from vimesync.sources import open_source

MANIFEST = "bump.json"
MAX_MANIFEST_BYTES = 1 << 20
MAX_EDITED_BYTES = 8 << 20  # rediff.MAX_MERGE_BYTES: what the bump would merge at all
MAX_EDITED_FILES = 1000
_MARKER = re.compile(rb"^(<{7}|>{7}|\|{7})( |\r?$)", re.MULTILINE)


def _a_rev(rev: str) -> bool:
    return not rev.startswith("-")  # never an option to git


@dataclass(frozen=True)
class NewPin:
    """The pin a bump moves to, as ``DIR/bump.json`` records it."""

    source: Path
    rev: str | None
    label: str


Line = Annotated[str, Text(max=4096, forbid=CONTROL)]


@dataclass(frozen=True)
class _Manifest:
    """``bump.json`` as ``pin bump --refresh`` writes it (app/bump.py). It lies in the checkout,
    so a pull request can write it: every value is checked, and the location it names is judged
    like any location repository content names (:func:`vimesync.repopaths.file_named_source`)."""

    to: Annotated[str, Text(min=1, max=4096, forbid=CONTROL, check=os.path.isabs, what="an absolute path")]
    rev: Annotated[str, Text(min=1, max=255, forbid=CONTROL, check=_a_rev, what="a revision")] | None = None
    label: Line | None = None
    series: Line = ""
    patches: Annotated[tuple[Line, ...], Size(10_000)] = ()  # a series' patches at most


def read_manifest(
    folder: Path, *, untrusted: bool, source: Path | None = None, rev: str | None = None
) -> NewPin:
    """The new pin ``folder/bump.json`` names; ``source`` (``--source``, from the job) and its
    ``rev`` instead of the location the file names, when given."""
    path = folder / MANIFEST
    where = str(path)
    text = read_input(path, max_bytes=MAX_MANIFEST_BYTES).decode("utf-8", "replace")
    try:
        doc = decode(_Manifest, loads_json(text, where=where), where=where)
    except DecodeError as exc:
        raise BadInput(f"{where}: not a work folder of `pin bump --refresh` ({exc.detail})") from None
    if source is not None:
        return NewPin(source, rev, str(source) + (f"@{rev}" if rev else ""))
    to = file_named_source(Path(doc.to), path, f"{MANIFEST} to", untrusted=untrusted)
    return NewPin(to, doc.rev, doc.label if doc.label is not None else doc.to)


@dataclass(frozen=True)
class Remade:
    name: str
    path: Path  # the patch file
    data: bytes  # the re-made patch
    files: tuple[str, ...]  # the files re-diffed from the folder
    result: PatchResult  # the re-made patch applied at the new pin

    @property
    def ok(self) -> bool:
        return self.result.ok and not self.result.offsets


def edited_files(folder: Path) -> dict[str, bytes]:
    """``folder``'s regular files (relative posix path -> bytes), symlinks refused, bounded."""
    if input_kind(folder) != "dir":
        raise BadInput(f"{folder}: no merged files there (run `pin bump --refresh` first)")
    out: dict[str, bytes] = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            path = Path(root) / n
            rel = path.relative_to(folder).as_posix()
            out[rel] = read_input(path, max_bytes=MAX_EDITED_BYTES, what="merged file")
            if len(out) > MAX_EDITED_FILES:
                raise BadInput(f"{folder}: more than {MAX_EDITED_FILES} files")
        for d in dirs:
            if (Path(root) / d).is_symlink():
                raise BadInput(f"{Path(root) / d}: a symbolic link; refusing to read through it")
    return out


def remake(opts: CheckOptions, name: str, folder: Path, pin: NewPin) -> Remade:
    """Patch ``name`` of the series re-made from ``folder/<name>/`` against the new ``pin``
    (:func:`read_manifest`)."""
    edited = edited_files(folder / name)
    for path, data in edited.items():
        m = _MARKER.search(data)
        if m is not None:
            line = data.count(b"\n", 0, m.start()) + 1
            raise BadInput(f"{folder / name / path}:{line}: still has a conflict marker; resolve it first")
    entries = load_series(opts.series, default_strip=opts.strip, reader=opts.reader).entries
    patches = load_stack(opts.series, strip=opts.strip, reader=opts.reader)
    index = next((i for i, e in enumerate(entries) if e.name == name), None)
    if index is None:
        raise BadInput(f"{excerpt(name)}: not a patch of the series {opts.series}")
    entry = entries[index]
    with scratch_dir("vimesync-refresh-") as tmp, open_source(pin.source, pin.rev, scratch=Path(tmp)) as src:
        (Path(tmp) / "tree").mkdir()
        (Path(tmp) / "git").mkdir()
        tree = ScratchTree(Path(tmp) / "tree", source_provider(src), all_hunks=True)
        for earlier in patches[:index]:
            tree.apply(earlier)  # atomic: a patch that fails leaves the tree as it was, as in the bump
        raw = read_patch(entry, reader=opts.reader)
        patch = parse_patch(raw, name=entry.name, strip=entry.strip)
        scratch = Scratch(Path(tmp) / "git")
        sections: dict[int, NewSection | None] = {}
        for k, fp in enumerate(patch.files):
            if fp.path not in edited:
                continue
            if not plain_modification(fp):
                raise BadInput(
                    f"{name}: {excerpt(fp.path)} is not a plain text change; edit the patch itself"
                )
            ours = tree.current(fp.path)
            if ours is None:
                raise BadInput(f"{name}: {excerpt(fp.path)} does not exist at {pin.label}")
            sections[k] = section(scratch, ours[0], edited[fp.path], context_of(fp))
        unknown = sorted(set(edited) - {fp.path for fp in patch.files})
        if unknown:
            raise BadInput(
                f"{name}: {excerpt(unknown[0])} in {folder / name} is not a file the patch changes"
            )
        data = splice(raw, patch, sections)
        try:
            remade = parse_patch(data, name=entry.name, strip=entry.strip)
        except PatchError as exc:
            raise BadInput(f"{name}: the re-made patch does not parse: {exc.message}") from None
        result = tree.apply(remade)
    return Remade(entry.name, entry.path, data, tuple(p for p in edited), result)
