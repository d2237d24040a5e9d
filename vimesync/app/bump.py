"""``pin bump``: the patch stack at the current pin beside the stack at a new one; with
``write``, the pin moved (and, with ``refresh``, the patches re-made for it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vimesync.app.progress import Progress, no_progress
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.check.bump import BumpReport
from vimesync.check.flags import EngineFlags
from vimesync.check.model import CheckOptions
from vimesync.config import Config
from vimesync.errors import BadInput
from vimesync.outputs.model import Findings
from vimesync.sources import SourceInfo

if TYPE_CHECKING:
    from vimesync.report.backports import Backports


@dataclass(frozen=True)
class BumpRequest:
    """What the flags say (None: not given); ``to`` is required."""

    to: str | None
    write: bool = False
    refresh: bool = False
    conflicts: Path | None = None
    changelog: bool = False  # also the engine's commits between the pins on the patched files


@dataclass(frozen=True)
class BumpOutcome:
    report: BumpReport
    written: tuple[str, ...] = ()  # the files replaced (pins, patches, series), all or none
    conflicts: Path | None = None  # the folder the merged files with conflict markers went to
    kept: tuple[str, ...] = ()  # patches whose folder was there already (being edited): left as is
    changelog: Backports | None = None  # asked for, and both pins are commits of one git source
    repo: str | None = None  # the engine's GitHub repository, when the pin or config says it
    notes: tuple[str, ...] = ()
    to_rev: str | None = None  # --to as given, when it named a revision (a tag, a branch)
    to_pinned: bool = False  # --to is the current pin: its commit, or its archive's bytes
    kind: Kind = Kind.BUMP

    @property
    def ok(self) -> bool:
        return self.report.ok

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        from vimesync.check.bump import bump_to_dict

        doc = bump_to_dict(self.report, written=list(self.written))
        if self.changelog is not None:
            from vimesync.report.backports import candidates_doc

            doc["changelog"] = candidates_doc(self.changelog.candidates)
            doc["changelog_left_off"] = self.changelog.left_off
        doc["notes"] = list(self.notes)
        return document(self.kind, self.exit_code, doc)

    def markdown(self) -> str:
        """The pull-request body (Renovate style) of this bump."""
        from vimesync.report.bumpmd import bump_markdown

        return bump_markdown(
            self.report, changelog=self.changelog, repo=self.repo, notes=self.notes, to_rev=self.to_rev
        )

    def findings(self) -> Findings:
        from vimesync.outputs.findings import bump_findings

        return bump_findings(self.report)


def bump(
    ws: Workspace, engine: EngineFlags, request: BumpRequest, *, progress: Progress = no_progress
) -> BumpOutcome:
    """Run the stack at both pins in one walk, then write what ``write``/``refresh`` ask
    (``engine.engine_repo``: owner/name for the changelog's PR links, else the pin's)."""
    from vimesync.check.bump import BumpOptions, plan_writes, run_bump
    from vimesync.check.pinwrite import write_together
    from vimesync.check.run import pinned_source

    r = request
    if not r.to:
        raise BadInput("pin bump needs --to REV|SOURCE: the new pin")
    if r.conflicts is not None and not r.refresh:
        raise BadInput("--conflicts DIR goes with --refresh (the merged files come from refreshing)")
    cfg = ws.config
    opts = ws.engine_plan_one(engine)
    repo = _repo(engine.engine_repo) or opts.engine_repo
    # A pypi: pin is fetched (once, into the cache) and an archive checked against its sha256.
    package = opts.package  # the pin's pypi: package, if it names one
    current, _ = pinned_source(opts)
    opts = replace(opts, source=current, package=None)
    target = resolve_target(r.to, opts)
    to_source, to_rev = target.source, target.rev
    folder = r.conflicts if r.conflicts is not None else (work_folder(opts.series) if r.refresh else None)
    if folder is not None:
        check_work_folder(folder)  # refused before any work
    with progress() as update:
        report = run_bump(BumpOptions(opts, to_source, to_rev, refresh=r.refresh), progress=update)
    pins = _pin_edits(cfg, opts, report.new, target, package) if r.write else None
    plan = plan_writes(report, refresh=r.refresh, pins=pins)
    # the changelog reads the stack as it was bumped: before --refresh rewrites it
    changelog, notes = _changelog(opts, target, report) if r.changelog else (None, ())
    write_together(plan.files)
    kept: tuple[str, ...] = ()
    if folder is not None and plan.conflicts:
        kept = _write_conflicts(folder, plan.conflicts, report, target)
    written = tuple(str(p) for p in plan.files)
    return BumpOutcome(
        report,
        written,
        folder if plan.conflicts else None,
        kept=kept,
        changelog=changelog,
        repo=repo,
        notes=notes,
        to_rev=r.to if target.rev is not None else None,
        to_pinned=(report.new.rev is not None and report.new.rev == report.old.rev)
        or (report.new.kind == "archive" and same_archive(to_source, current, opts.sha256)),
    )


def same_archive(source: Path, pinned: Path, sha: str | None) -> bool:
    """``source`` holds the bytes of the pinned archive (a wheel, an sdist: no commit to compare):
    the same sha256, the pin's (else the archive's); sizes first, so another release is not read."""
    if not (source.is_file() and pinned.is_file()) or source.stat().st_size != pinned.stat().st_size:
        return False
    from vimesync.sources.pinned import sha256_of

    return sha256_of(source) == (sha or sha256_of(pinned)).lower()


def _repo(name: str | None) -> str | None:
    from vimesync.github import is_repo_name

    if name is not None and not is_repo_name(name):
        raise BadInput("--engine-repo: expected the engine's GitHub repository as OWNER/NAME")
    return name


MAX_CHANGELOG = 100  # commits listed in a bump's changelog; the rest are counted


def _changelog(
    opts: CheckOptions, target: BumpTarget, report: BumpReport
) -> tuple[Backports | None, tuple[str, ...]]:
    """The first-parent commits between the two pins that change a patched file, when both pins
    are commits of the same git source; else a note saying why there is none."""
    from vimesync.check.run import load_stack
    from vimesync.report.backports import find_backports

    old, new = report.old, report.new
    same = opts.source is not None and os.path.abspath(target.source) == os.path.abspath(opts.source)
    if not (same and old.kind == "git" and old.rev and new.rev):
        return None, ("no engine changelog: it needs both pins to be commits of one git source",)
    assert opts.source is not None
    stack = load_stack(opts.series, strip=opts.strip, reader=opts.reader)
    found = find_backports(opts.source, old.rev, new.rev, stack, max_candidates=MAX_CHANGELOG)
    return found, found.notes


@dataclass(frozen=True)
class BumpTarget:
    """``--to`` resolved: the source to open (and rev), and for ``pypi:`` the package and the
    digest of the wheel pip fetched."""

    source: Path
    rev: str | None = None
    package: str | None = None  # "vllm==0.32.0"
    sha256: str | None = None


def resolve_target(to: str, opts: CheckOptions) -> BumpTarget:
    """``--to``: ``pypi:NAME==VER`` is fetched into the cache; a path that exists is a source;
    else a revision of the current (git) source."""
    from vimesync.config import PYPI_PREFIX

    if to.startswith(PYPI_PREFIX):
        from vimesync.config import pypi_requirement
        from vimesync.sources.pinned import archives, fetch_new_package

        req = pypi_requirement(to, where="--to", key="--to")
        path, digest = fetch_new_package(
            req, pin="--to", cache=archives(opts.cache_dir), timeout=opts.pip_timeout
        )
        return BumpTarget(path, package=req, sha256=digest)
    candidate = Path(to)
    if to.startswith(("/", ".", "~")) or os.path.lexists(candidate):
        return BumpTarget(candidate.expanduser())
    from vimesync import git

    assert opts.source is not None  # bump() resolved a pypi: pin to its fetched archive
    if git.repo_at(opts.source) is None:
        raise BadInput(f"--to {to!r}: no such file or folder, and the current source is not a git repository")
    return BumpTarget(opts.source, to)


def _pin_edits(
    cfg: Config, opts: CheckOptions, new: SourceInfo, target: BumpTarget, package: str | None
) -> dict[Path, bytes]:
    """The pin (and, when the source moves, the file naming it) with the new values."""
    from vimesync.check.pinwrite import edit_toml, relative_to_file
    from vimesync.sources.pinned import sha256_of

    pin_file = opts.pin_file
    if pin_file is None or opts.source is None:
        raise BadInput("--write needs an engine pin file ([engine] pin in vimesync.toml)")
    to_source = target.source
    edits: dict[Path, dict[str, str]] = {}
    if new.rev is not None:
        edits.setdefault(pin_file, {})["rev"] = new.rev
    if target.package is not None or package is not None:
        # A package pin stays one: CI fetches it by name and checks the digest, and never
        # meets a path that only exists on the maintainer's machine.
        req = target.package or _package_of(to_source, package)
        digest = target.sha256 or sha256_of(to_source)
        edits.setdefault(pin_file, {}).update({"source": f"pypi:{req}", "sha256": digest})
    elif os.path.abspath(to_source) != os.path.abspath(opts.source):
        # The file that named the source (a config's machine-local source), else the pin.
        named_by = opts.source_origin if opts.source_origin not in (None, "--source") else None
        origin = Path(named_by) if named_by else pin_file
        values = edits.setdefault(origin, {})
        values["source"] = relative_to_file(to_source, origin)
        if new.kind == "archive" and _has_key(origin, "sha256"):
            values["sha256"] = sha256_of(to_source)
    return {path: edit_toml(path, "engine", values) for path, values in edits.items()}


def _package_of(wheel: Path, package: str | None) -> str:
    """``--to WHEEL`` on a ``pypi:`` pin: the same package at the wheel's version, or BadInput."""
    from vimesync.sources.pinned import wheel_name_version

    assert package is not None
    name = package.partition("==")[0]
    found = wheel_name_version(wheel)
    wanted = name.replace("_", "-").replace(".", "-").lower()
    if found is None or found[0] != wanted:
        raise BadInput(
            f"--to {wheel}: the pin's source is pypi:{package}; --write keeps a package pin, and "
            f"{wheel.name} is not a wheel of {name}",
            hint=f"pass --to pypi:{name}==VERSION (fetched with pip, its sha256 recorded)",
        )
    return f"{name}=={found[1]}"


def _has_key(path: Path, key: str) -> bool:
    from vimesync.config import read_toml

    table = read_toml(path).get("engine")
    return isinstance(table, dict) and key in table


WORK_FOLDER = ".vimesync/bump"


def work_folder(series: Path) -> Path:
    """The default ``--conflicts`` folder: ``.vimesync/bump`` at the root of the checkout that
    holds the series (reached, like every output, without following a symlink below the root)."""
    from vimesync.safefs import find_root

    return find_root(series) / WORK_FOLDER


def check_work_folder(folder: Path) -> None:
    """A work folder is absent, empty, or one an earlier bump made (it holds bump.json): then
    the patches being edited there are kept and the others added. Anything else is refused."""
    from vimesync.check.fromedits import MANIFEST
    from vimesync.safefs import check_output_path, ensure_output_dir, input_kind

    if input_kind(folder) == "dir" and input_kind(folder / MANIFEST) == "file":
        check_output_path(folder / MANIFEST, what="--conflicts")
        return
    ensure_output_dir(folder, what="--conflicts")


def _write_conflicts(
    folder: Path, files: tuple[tuple[str, str, bytes], ...], report: BumpReport, target: BumpTarget
) -> tuple[str, ...]:
    import json

    from vimesync.check.bump import label
    from vimesync.check.fromedits import MANIFEST
    from vimesync.git import MODE_FILE
    from vimesync.safefs import ensure_output_dir, input_kind, write_atomic
    from vimesync.sources.model import write_file

    if input_kind(folder) == "missing":
        ensure_output_dir(folder, what="--conflicts")
    kept = sorted({patch for patch, _, _ in files if input_kind(folder / patch) != "missing"})
    for patch, path, data in files:
        if patch not in kept:
            write_file(folder, f"{patch}/{path}", data, MODE_FILE)
    manifest = {
        "to": os.path.abspath(target.source),
        "rev": report.new.rev,
        "label": label(report.new),
        "series": str(report.series),
        "patches": sorted({patch for patch, _, _ in files}),
    }
    write_atomic(folder / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode(), what="--conflicts")
    return tuple(kept)
