"""``patches check``: apply the engine patch stack to the exact pinned source, then parse every
Python file of the patched tree. Pure orchestration over source/patches/pycheck; no printing.

The whole tree is never copied: a scratch directory holds only the files the stack touches
(read from the source on first touch), and every other file is parsed where it lies — in
place for a directory, straight from git objects for a repository (whose blob ids are also
the parse cache's keys, so a warm run reads almost nothing).
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import replace
from pathlib import Path

from vimesync import nofollow
from vimesync.check.drift import applied_upstream_commit, index_drift, upstreamed_in
from vimesync.check.model import CheckOptions, CheckReport, ProgressFn, engine_name
from vimesync.check.parse import begin_patched, interpreter_prefetched, parse_patched
from vimesync.errors import BadInput, PatchError
from vimesync.patches.diffbinary import held_size
from vimesync.patches.diffparse import MAX_PATCH_LINES, parse_patch
from vimesync.patches.model import PatchFile, PatchResult
from vimesync.patches.series import load_series, read_patch
from vimesync.patches.tree import MODE_DIR, MODE_EXEC, MODE_FILE, MODE_LINK, Provider, apply_stack
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import ensure_output_dir, excerpt, remove_tree, scratch_dir
from vimesync.sources import Source, open_source
from vimesync.sources.archive import TAR_SUFFIXES, ZIP_SUFFIXES
from vimesync.sources.model import write_file
from vimesync.sources.pinned import archives, fetch_package, sha256_of, verify_archive

# Two patches at their own cap (diffbinary.MAX_BINARY_HELD). With the read-back of the files
# written, a worst-case series peaks at a few hundred MiB.
MAX_STACK_BINARY = 256 << 20
# File sections of all the patches together: each costs ~150 microseconds to parse, check and
# write (300,000 took 43 s); real stacks change hundreds.
MAX_STACK_FILES = 50_000
# Lines of all the patches together (a hunk line is held as ~100 bytes; diffparse.MAX_PATCH_LINES
# per patch): a worst-case series peaks at about 0.5 GB.
MAX_STACK_LINES = 2_000_000


def load_stack(
    series_path: Path,
    *,
    strip: int,
    max_binary: int = MAX_STACK_BINARY,
    max_lines: int = MAX_STACK_LINES,
    max_files: int = MAX_STACK_FILES,
    reader: Reader = WORKTREE,
) -> list[PatchFile]:
    """Read and parse every patch of the series up front: a malformed or unsafe patch is bad
    input (exit 2, naming the patch) before any source is opened. The binary data the whole
    stack holds (inflated payloads and the results deltas announce) is capped like one patch's,
    so many small patches cannot add up to what one may not hold; so are the lines of all the
    patches, counted before each is parsed, and the files they change. ``reader``: the working
    tree, or the commit whose stack is checked."""
    series = load_series(series_path, default_strip=strip, reader=reader)
    stack: list[PatchFile] = []
    held = lines = files = 0
    for e in series.entries:
        data = read_patch(e, reader=reader)
        count = data.count(b"\n")  # over MAX_PATCH_LINES: parse_patch names the patch's own cap
        lines += min(count, MAX_PATCH_LINES)
        if lines > max_lines:
            raise PatchError(e.name, f"the series' patches come to over {max_lines} lines")
        patch = parse_patch(
            data,
            name=e.name,
            strip=e.strip,
            series_binary=(held, max_binary),
            series_files=(files, max_files),
        )
        del data  # parsed: the bytes are not needed while the next patch is read
        held += sum(held_size(fp.binary) for fp in patch.files if fp.binary is not None)
        files += len(patch.files)
        stack.append(patch)
    return stack


def _drain(stack: list[PatchFile]) -> Iterator[PatchFile]:
    """Yield the patches of ``stack`` in order, emptying it, so none is kept once used."""
    stack.reverse()
    while stack:
        yield stack.pop()


def _check_export_dir(export: Path) -> None:
    """Refuse a non-empty or unusable --export before any work, so a late failure is never
    mistaken for a failed check; and a symlink at it or at a folder on its way inside the
    repository (a pull request may commit one to redirect our writes)."""
    ensure_output_dir(export, what="--export")


def source_provider(source: Source) -> Provider:
    """Answer the scratch tree's first-touch questions from the (read-only) source."""
    files = source.list_files()
    ordered = sorted(files)
    dirs = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    for d in list(dirs):
        while "/" in d:
            d = d.rsplit("/", 1)[0]
            dirs.add(d)

    def entry(path: str) -> tuple[bytes, int] | None:
        e = files.get(path)
        if e is not None:
            return source.read(path), e.mode
        if path in dirs:
            return b"", MODE_DIR
        return None

    def files_under(folder: str) -> Iterator[str]:
        below = folder + "/"
        for path in ordered[bisect.bisect_left(ordered, below) :]:
            if not path.startswith(below):
                break
            yield path

    return Provider(entry=entry, files_under=files_under)


_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def _pin_name(opts: CheckOptions) -> str:
    return str(opts.pin_file) if opts.pin_file else f"the {opts.engine} pin"


def pinned_source(opts: CheckOptions) -> tuple[Path, bool]:
    """The source to open and whether it is exactly what the pin records: a ``pypi:`` package
    fetched (or found in the cache) and verified, or an archive checked against the pin's sha256
    before use (BadInput naming the pin and both digests when it differs)."""
    if opts.source is None:
        assert opts.package is not None  # check_options gives one or the other
        cache, timeout = archives(opts.cache_dir), opts.pip_timeout
        wheel = fetch_package(opts.package, opts.sha256, pin=_pin_name(opts), cache=cache, timeout=timeout)
        return wheel, True
    if not opts.source.is_file():
        return opts.source, False
    if opts.sha256 is not None:
        verify_archive(opts.source, opts.sha256, pin=_pin_name(opts))
        return opts.source, True
    if opts.require_exact and opts.source_origin != "--source":
        got = sha256_of(opts.source)
        raise BadInput(
            f"{opts.source_origin or _pin_name(opts)}: the archive {opts.source} is not an exact pin "
            f'without its sha256: write sha256 = "{got}" in {_pin_name(opts)}'
        )
    return opts.source, False


def exact_rev(opts: CheckOptions, source: Source) -> bool:
    """True when a git source was named by its full sha. With ``require_exact`` (the gate), any
    other rev (a branch, a tag, a short sha, none: HEAD) is refused with the sha to write."""
    resolved = source.info.rev
    if source.info.kind != "git" or resolved is None:
        return False
    if opts.rev is not None and _FULL_SHA.fullmatch(opts.rev.lower()) and opts.rev.lower() == resolved:
        return True
    if opts.require_exact:
        named = f"rev {excerpt(opts.rev)}" if opts.rev else "no rev (the source's HEAD)"
        fix = f'write rev = "{resolved}" in {opts.pin_file}' if opts.pin_file else f"pass --rev {resolved}"
        if opts.rev_origin == "--rev":
            fix = f"pass --rev {resolved}"
        where = opts.rev_origin or _pin_name(opts)
        raise BadInput(
            f"{where}: {named} is not an exact pin of {opts.engine}: it names {resolved} today; {fix}"
        )
    return False


def _refuse_a_folder_of_archives(source: Source, path: Path) -> None:
    """``--source downloads/`` holding only ``sglang-X.whl``: every patch would miss every file
    and the answer would be "check --strip". Say what it is instead."""
    if source.info.kind != "directory":
        return
    files = source.list_files()
    if not files or any("/" in p or p.endswith(".py") for p in files):
        return
    archives = sorted(p for p in files if p.lower().endswith(ZIP_SUFFIXES + TAR_SUFFIXES))
    if archives:
        raise BadInput(
            f"--source {path} is a folder holding {archives[0]}"
            + (f" (and {len(archives) - 1} more archives)" if len(archives) > 1 else "")
            + ", not a source tree",
            hint=f"pass the archive itself: --source {path / archives[0]}",
        )


def run_check(opts: CheckOptions, *, progress: ProgressFn | None = None) -> CheckReport:
    """Apply ``opts.series`` to ``opts.source`` at ``opts.rev`` in a scratch tree and parse it."""
    patches = load_stack(opts.series, strip=opts.strip, reader=opts.reader)
    if opts.export is None:
        return _run_check(opts, patches, progress)
    existed = os.path.lexists(opts.export)
    _check_export_dir(opts.export)
    try:
        return _run_check(opts, patches, progress)
    except BaseException:
        _undo_export(opts.export, existed)  # a failed check leaves --export as it found it
        raise


def _run_check(opts: CheckOptions, patches: list[PatchFile], progress: ProgressFn | None) -> CheckReport:
    path, verified = pinned_source(opts)
    with (
        # the interpreter is looked for, and its workers start, while the source is listed
        interpreter_prefetched(path, python=opts.python, cache_dir=opts.parse_cache)
        if opts.parse
        else nullcontext() as ahead,
        scratch_dir("vimesync-check-") as tmp,  # removed however deep the tree a patch made
        open_source(path, opts.rev, scratch=Path(tmp)) as source,
        ExitStack() as stack,
    ):
        _refuse_a_folder_of_archives(source, path)
        exact = verified or exact_rev(opts, source)
        scratch = Path(tmp) / "tree"
        scratch.mkdir()
        provider = source_provider(source)
        early = None
        if opts.parse:  # a cold parse begins while the stack applies (pycheck.early)
            touched = {p for patch in patches for fp in patch.files for p in (fp.old_path, fp.new_path) if p}
            early = begin_patched(
                source, touched, python=opts.python, cache_dir=opts.parse_cache, ahead=ahead
            )
            if early is not None:
                stack.enter_context(early)
        # Each patch is dropped once applied: its binary data is on disk by then, and the files
        # read back below would otherwise be a second copy of it.
        pinned = source.list_files()
        results = apply_stack(
            scratch,
            _drain(patches),
            keep_going=opts.keep_going,
            provider=provider,
            inspect=lambda tree, patch: index_drift(tree, patch, pinned),
            mode=opts.mode,
        )
        results = mark_upstreamed(source, results)
        changed = changed_files(scratch, {p for r in results for p in r.touched}, provider)
        remove_tree(scratch)  # read whole into ``changed``: removed now, not after the parse
        python = None
        if opts.parse and (all(r.ok or r.reverse_applies for r in results) or opts.keep_going):
            # A symlink has nothing of its own to parse: for the parser it is gone, like a deletion.
            contents = {p: c[0] if c is not None and c[1] != MODE_LINK else None for p, c in changed.items()}
            python = parse_patched(
                source,
                contents,
                python=opts.python,
                cache_dir=opts.parse_cache,
                progress=progress,
                early=early,
            )
        if opts.export is not None:
            export_tree(source, changed, opts.export)
    return CheckReport(
        source=source.info,
        series=str(opts.series),
        patches=results,
        python=python,
        engine=engine_name(opts.engine, path),
        exact_pin=exact,
        sha256=opts.sha256 if verified else None,
        pin_file=str(opts.pin_file) if opts.pin_file else None,
        notes=opts.notes,
        applied_ok=opts.keep_going and not opts.strict,
        source_notes=source.notes,
        strict=opts.strict,
        mode=opts.mode,
    )


def mark_upstreamed(source: Source, results: tuple[PatchResult, ...]) -> tuple[PatchResult, ...]:
    """Each patch whose DEP-3 ``Applied-Upstream:`` names a commit the git pin contains."""
    info = source.info
    if info.kind != "git" or info.rev is None:
        return results
    out = []
    for r in results:
        commit = applied_upstream_commit(r.dep3)
        if commit is not None and upstreamed_in(Path(info.path), info.rev, commit):
            r = replace(r, upstreamed=commit)
        out.append(r)
    return tuple(out)


Changes = Mapping[str, "tuple[bytes, int] | None"]  # path -> (bytes, git mode), None: not in the tree


def changed_files(
    scratch: Path, touched: Iterable[str], provider: Provider | None = None
) -> dict[str, tuple[bytes, int] | None]:
    """The stack's changes as the final tree has them: a touched path's bytes and mode read from
    the scratch tree without following any symlink (a path below a symlink or a file does not
    exist, whatever the symlink points at), or None when it is gone. Source files (``provider``)
    below a path the stack made a file or symlink are gone too: the tree refuses such stacks, and
    this second line of defence keeps the parser and --export from ever reaching through one."""
    changed: dict[str, tuple[bytes, int] | None] = {}
    for rel in sorted(touched):
        got = nofollow.read_entry(scratch, rel)
        if got is None or stat.S_ISDIR(got[0].st_mode):
            changed[rel] = None
        elif stat.S_ISLNK(got[0].st_mode):
            changed[rel] = (got[1], MODE_LINK)
        else:
            changed[rel] = (got[1], MODE_EXEC if got[0].st_mode & stat.S_IXUSR else MODE_FILE)
    if provider is not None:
        for blocker in [p for p, c in changed.items() if c is not None]:
            for below in provider.files_under(blocker):
                changed.setdefault(below, None)
    return changed


def export_tree(source: Source, changed: Changes, dest: Path) -> None:
    """Write the whole patched tree: untouched files from the source, changed ones from scratch.
    Nothing is written through a symlink, nothing outside ``dest``, nothing reused or chmodded
    by path (see :func:`vimesync.sources.model.write_file`). All or nothing: :func:`run_check`
    undoes a failed export (a full disk, a corrupt member, an interrupt), leaving ``dest`` as it
    found it (absent, or empty: anything else was refused), so the next run can use it."""
    dest.mkdir(parents=True, exist_ok=True)
    source.export(dest, skip=changed.keys())
    for rel, content in changed.items():
        if content is not None:
            write_file(dest, rel, *content)


def _undo_export(dest: Path, existed: bool) -> None:
    if not os.path.lexists(dest):
        return
    if not existed:
        remove_tree(dest)
        return
    with os.scandir(dest) as entries:
        names = [e.name for e in entries]
    for name in names:
        remove_tree(dest / name)
