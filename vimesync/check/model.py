"""``vimesync patches check`` as data: its options (flags over pins over config) and its result
(source, per-patch outcomes, the Python parse). Light to import: the CLI builds options with it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.check.flags import EngineFlags
from vimesync.config import Config, EnginePin, missing_input, select_engine
from vimesync.errors import BadInput, ConfigError
from vimesync.patches.model import APPLIERS, ApplyMode, IndexDrift, PatchResult
from vimesync.pycheck.model import ParseReport
from vimesync.readers import WORKTREE, Reader
from vimesync.repopaths import engine_source
from vimesync.safefs import lexical
from vimesync.settings import PIP_TIMEOUT
from vimesync.sources.model import SourceInfo


@dataclass(frozen=True)
class CheckReport:
    source: SourceInfo
    series: str  # path of the series file
    patches: tuple[PatchResult, ...]
    python: ParseReport | None  # None when parsing was not reached (a patch failed without --keep-going)
    engine: str = ""  # display name from the pin ("vLLM"), else from the source (engine_name)
    # True when the source is exactly what a pin names: a git commit by its full sha, or an archive
    # whose sha256 was verified. A directory, or an archive no pin records a digest for, is not.
    exact_pin: bool = False
    pin_file: str | None = None  # the engine pin that was checked, when one was
    sha256: str | None = None  # the archive's digest, when it was verified against the pin
    notes: tuple[str, ...] = ()  # which settings applied from where, when flags and a pin mixed
    # --keep-going without --strict: a patch already in the source is a note, not a failure
    applied_ok: bool = False
    # What opening the source decided for the user ("no revision given: using HEAD (<sha>)",
    # "skipped 2 submodule(s)...", "stripped the archive's top-level folder 'x'")
    source_notes: tuple[str, ...] = ()
    # --strict: a file that fails at the pin itself (untouched by the stack) fails the check too,
    # and so does a hunk that applied only with fuzz (GNU patch)
    strict: bool = False
    mode: ApplyMode = ApplyMode()  # the applier the stack was checked with

    @property
    def fuzzed(self) -> int:
        """Hunks that applied only with fuzz: a warning, a failure under --strict."""
        return sum(len(p.fuzzed) for p in self.patches)

    @property
    def patches_ok(self) -> bool:
        if self.strict and self.fuzzed:
            return False
        return all(p.ok or (self.applied_ok and p.status == "already-applied") for p in self.patches)

    @property
    def already_applied(self) -> tuple[PatchResult, ...]:
        """The patches the source already holds: to drop from the series."""
        return tuple(p for p in self.patches if p.status == "already-applied")

    @property
    def parse_ok(self) -> bool:
        """The patched tree parses: every file (--strict), or every file the stack touched (a file
        that fails at the pin itself is the engine's, reported apart, not the stack's)."""
        py = self.python
        return py is not None and (py.ok if self.strict else py.stack_ok)

    @property
    def ok(self) -> bool:
        return self.patches_ok and self.parse_ok


def check_to_dict(report: CheckReport) -> dict[str, Any]:
    """The ``--json`` document of ``patches check`` (and the report's Validation section)."""
    py = report.python
    return {
        "ok": report.ok,
        "patches_ok": report.patches_ok,
        "engine": report.engine,
        "pin_file": report.pin_file,
        "exact_pin": report.exact_pin,
        "sha256": report.sha256,
        "source": {**asdict(report.source), "notes": list(report.source_notes)},
        "series": report.series,
        "patches": [
            {
                "name": p.name,
                "ok": p.ok,
                "status": p.status,
                "skipped": p.skipped,
                "files": p.files,
                "hunks": p.hunks,
                "offsets": [asdict(o) for o in p.offsets],
                "failures": failure_docs(p),
                "already_applied_hunks": len(p.already_applied),
                "already_applied": [{"file": f, "hunk": h} for f, h in p.already_applied],
                "index_drift": [asdict(d) for d in p.drift],
                "upstreamed": p.upstreamed,
                "description": p.dep3.description if p.dep3 else None,
            }
            for p in report.patches
        ],
        "python": None
        if py is None
        else {
            "ok": report.parse_ok,
            "files": py.files,
            "cached": py.cached,
            "version": py.version,
            "version_source": py.version_source,
            "interpreter": py.interpreter,
            "failed": [asdict(f) for f in py.failed],
            "failed_at_pin": len(py.at_pin),
            "conflict_markers": [asdict(m) for m in py.conflict_markers],
            "notes": list(py.notes),
        },
        "notes": list(report.notes),
    }


def checks_to_dict(reports: Sequence[CheckReport]) -> dict[str, Any]:
    """The ``--json`` document of ``patches check`` for any number of engines: one engine's check
    document as it always was, several as ``{"ok", "engines": [one check document per engine]}``."""
    if len(reports) == 1:
        return check_to_dict(reports[0])
    return {"ok": all(r.ok for r in reports), "engines": [check_to_dict(r) for r in reports]}


def drift_note(d: IndexDrift, pin: str = "the pin") -> str:
    """One line for a file's index drift: what the patch was made against, what it met."""
    where = f"after {d.by} it is" if d.by else f"{pin} has"
    result = " (what the patch makes of it: already applied?)" if d.is_result else ""
    return f"{d.file}: made against {d.expected}, {where} {d.found}{result}"


def failure_docs(p: PatchResult) -> list[dict[str, Any]]:
    """A patch's failed hunks; ``already_applied``: the hunk is in the source already (it applies
    in reverse)."""
    done = set(p.already_applied)
    # ``missing`` is for the text's hint; the document says it in ``reason`` as it always did.
    docs = [{k: v for k, v in asdict(f).items() if k != "missing"} for f in p.failures]
    return [{**d, "already_applied": (f.file, f.hunk) in done} for d, f in zip(docs, p.failures, strict=True)]


@dataclass(frozen=True)
class CheckOptions:
    source: Path | None  # None: ``package`` names it (fetched into the cache)
    series: Path
    rev: str | None = None
    strip: int = 1
    keep_going: bool = False
    python: str | None = None  # "3.12"; None: what the tree declares, else the running interpreter
    export: Path | None = None
    use_cache: bool = True
    engine: str = ""  # "": named after the source (engine_name)
    package: str | None = None  # "vllm==0.32.0": a pypi: pin, fetched once and verified
    sha256: str | None = None  # the archive's digest the pin records
    pin_file: Path | None = None  # the engine pin these settings come from
    engine_repo: str | None = None  # owner/name, for the report's links
    rev_origin: str | None = None  # who named ``rev``: "--rev" or the pin file
    source_origin: str | None = None  # who named ``source``: "--source" or the file
    require_exact: bool = False  # the gate: refuse a git rev that is not a full sha (and say it)
    notes: tuple[str, ...] = ()
    parse: bool = True  # False: apply the stack only (lint --strict), no Python parse
    strict: bool = False  # with keep_going: an already-applied patch still fails the check
    mode: ApplyMode = ApplyMode()  # git apply's semantics, or GNU patch's (fuzz, --forward)
    reader: Reader = WORKTREE  # what holds the series and patches: the working tree, or the head
    cache_dir: Path | None = None  # vimesync's cache folder (parse results, archives); None: none kept
    pip_timeout: float = PIP_TIMEOUT  # seconds a pip download of a pypi: pin may take

    @property
    def parse_cache(self) -> Path | None:
        """Where parse results (and interpreter probes) are kept: the cache folder, unless
        --no-cache (or the job keeps none)."""
        return self.cache_dir if self.use_cache else None


ProgressFn = Callable[[int, int], None]  # (done, total) while parsing


_DIST = re.compile(r"^([A-Za-z0-9._]+?)-\d")  # sglang-0.5.15.post1-cp311-....whl -> sglang


def engine_name(pin_name: str, source: Path | str | None) -> str:
    """The engine's display name: the pin's, else the source's (a wheel's or sdist's distribution
    name, a folder's name without ``.git``), else "unnamed" -- never the bare word "engine"."""
    if pin_name:
        return pin_name
    if source is not None:
        base = Path(source).name
        m = _DIST.match(base)
        name = m.group(1) if m else re.sub(r"\.git$", "", base)
        if name:
            return name
    return "unnamed"


def _not_git(source: Path) -> bool:
    """An archive or a plain folder (what ``open_source`` would refuse a revision for)."""
    if source.is_file():
        return True
    return source.is_dir() and git.repo_at(source) is None


def _missing(config: Config, pin: EnginePin, what: str, *, flag: str, key: str) -> BadInput:
    """Name the pin that would hold ``key``, or the config key that names the pin."""
    if config.file is not None and pin.file is None:
        return missing_input(config, what, flag=flag, key="[engine] pin")
    return missing_input(config, what, flag=flag, key=key, file=pin.file)


def _same_series(a: Path, b: Path) -> bool:
    """Whether two series locations name one series (a series may be given as its folder)."""
    a, b = lexical(a), lexical(b)
    return a == b or a / "series" == b or a == b / "series"


def _pick_pins(config: Config, flags: EngineFlags) -> list[tuple[EnginePin, str | None]]:
    """Which engine pins a check runs on, each with a note when a flag made it drop the pin."""
    engines, series = config.engines, flags.series
    if flags.engine is not None:
        pin = select_engine(config, flags.engine)
        note = None
        if series is not None and pin.series is not None and not _same_series(series, pin.series):
            note = (
                f"--series is not the series of {pin.file} ({pin.name}); that pin's rev, strip, source, "
                "python and sha256 still apply unless given as flags"
            )
        return [(pin, note)]
    if series is not None:
        named = [p for p in engines if p.series is not None and _same_series(p.series, series)]
        if named:
            return [(named[0], None)]
    if len(engines) > 1:
        given = flags.given()
        if given:
            names = ", ".join(p.key or p.name for p in engines)
            raise BadInput(
                f"{config.file} names {len(engines)} engines ({names}): pass --engine NAME to say which one "
                f"{' and '.join(given)} {'applies' if len(given) == 1 else 'apply'} to"
            )
        return [(p, None) for p in engines]
    pin = engines[0] if engines else EnginePin()
    if series is not None and pin.series is not None and not _same_series(series, pin.series):
        # Another series than the pin's: the pin's rev, strip, source and digest describe another
        # stack, so none of them is used (the label would lie and the strip could be wrong).
        where = pin.file or config.file
        note = (
            f"--series names another series than {where} ({pin.name}): that pin's rev, strip, source, "
            "python and sha256 are not used; pass them as flags, or --engine NAME"
        )
        return [(EnginePin(), note)]
    return [(pin, None)]


@dataclass(frozen=True)
class PlanRules:
    """How a check plan is made, beside the flags: the job's trust mode (a location a file names
    must then stay in the checkout), whether the pin must be exact (the gate), and what reads the
    series and patches (the working tree, or the head commit); and what the job sets for its
    machine: vimesync's cache folder (None: nothing kept) and how long a pip download may take."""

    untrusted: bool
    require_exact: bool = False
    reader: Reader = WORKTREE
    cache_dir: Path | None = None
    pip_timeout: float = PIP_TIMEOUT


def check_plan(config: Config, flags: EngineFlags, rules: PlanRules) -> tuple[CheckOptions, ...]:
    """One CheckOptions per engine to check: every engine of the config, or the one ``--engine``
    names (or whose series ``--series`` names). A flag never mixes one pin's settings with another
    engine's: with several engines and no way to tell which one a flag is for, BadInput."""
    return tuple(
        _options(
            pin, config, note, flags, rules, mode=apply_mode(pinned_mode(pin), flags.applier, flags.fuzz)
        )
        for pin, note in _pick_pins(config, flags)
    )


def pinned_mode(pin: EnginePin) -> ApplyMode:
    """The applier a pin names (config checked its values)."""
    return ApplyMode(pin.applier, pin.fuzz, pin.forward)  # type: ignore[arg-type]


def apply_mode(pinned: ApplyMode, applier: str | None, fuzz: int | None) -> ApplyMode:
    """The pin's applier, fuzz and forward with the flags over them (--applier, --fuzz)."""
    mode = pinned
    if applier is not None:
        if applier not in APPLIERS:
            raise BadInput(f'--applier must be "git" or "gnu-patch", not {applier!r}')
        mode = replace(mode, applier=applier)  # checked above
    if fuzz is not None:
        if mode.applier != "gnu-patch":
            raise BadInput("--fuzz is GNU patch's: pass --applier gnu-patch (or set applier in the pin)")
        mode = replace(mode, fuzz=fuzz)
    return mode


def check_options(config: Config, flags: EngineFlags, rules: PlanRules) -> CheckOptions:
    """The options of a check of one engine; BadInput when the config names several and neither
    ``--engine`` nor a flag says which."""
    plan = check_plan(config, flags, rules)
    if len(plan) != 1:
        names = ", ".join(o.engine for o in plan)
        raise BadInput(f"{config.file} names {len(plan)} engines ({names}): pass --engine NAME")
    return plan[0]


def _options(
    pin: EnginePin, config: Config, note: str | None, flags: EngineFlags, rules: PlanRules, *, mode: ApplyMode
) -> CheckOptions:
    """Merge flags over one engine pin (flags win); BadInput naming what is missing."""
    source, rev = flags.source, flags.rev
    src = engine_source(source, pin, untrusted=rules.untrusted)
    package = pin.package if source is None else None
    ser = flags.series or pin.series
    if src is None and package is None:
        raise _missing(
            config,
            pin,
            "no engine source" + (f" for {pin.name}" if pin.name else ""),
            flag="--source PATH",
            key="[engine] source",
        )
    if ser is None:
        raise _missing(
            config,
            pin,
            "no patch series" + (f" for {pin.name}" if pin.name else ""),
            flag="--series FILE",
            key="[engine] series",
        )
    if rev is None and pin.rev is not None and pin.file is not None and src is not None and _not_git(src):
        raise ConfigError(
            str(pin.file),
            f"[engine] rev is set, but the engine source {src} is not a git repository: a wheel, sdist "
            "or folder is its own exact pin and has no revision",
            hint=f"remove rev from {pin.file}, or point --source (or [engine] source) at a git clone",
        )
    if source is not None:
        source_origin: str | None = "--source"
    else:
        source_origin = str(pin.source_origin[0]) if pin.source_origin else str(pin.file or config.file)
    return CheckOptions(
        source=src,
        series=ser,
        rev=rev or pin.rev,
        strip=pin.strip if flags.strip is None else flags.strip,
        keep_going=flags.keep_going,
        python=flags.python or pin.python,
        export=flags.export,
        use_cache=flags.use_cache,
        engine=engine_name(pin.name, src or package),
        package=package,
        sha256=pin.sha256,
        pin_file=pin.file,
        engine_repo=pin.repo,
        rev_origin="--rev" if rev else (str(pin.file) if pin.rev and pin.file else None),
        source_origin=source_origin,
        require_exact=rules.require_exact,
        notes=(note,) if note else (),
        mode=mode,
        strict=flags.strict,
        reader=rules.reader,
        cache_dir=rules.cache_dir,
        pip_timeout=rules.pip_timeout,
    )
