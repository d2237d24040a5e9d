"""``patches lint`` (the series against its folder, every patch's header and shape) and
``patches describe`` (a patch's DEP-3 header set in place)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.config import Config, EnginePin
from vimesync.errors import EXIT_OK, BadInput
from vimesync.lint.model import Finding, LintResult
from vimesync.outputs.model import Findings
from vimesync.patches.model import PatchResult


@dataclass(frozen=True)
class LintCodes:
    """Which lint codes are reported (``--select``/``--ignore``, as ruff reads them)."""

    select: tuple[str, ...] = ()  # codes (or prefixes: "W", "H00") to report; empty: every code
    ignore: tuple[str, ...] = ()  # codes (or prefixes) never reported


@dataclass(frozen=True)
class LintOutcome:
    """One lint result per series; any finding fails."""

    results: tuple[LintResult, ...]
    kind: Kind = Kind.LINT

    @property
    def found(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.results for f in r.findings)

    @property
    def ok(self) -> bool:
        return not self.found

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        if len(self.results) == 1:
            body = self.results[0].as_dict()
        else:
            body = {"ok": self.ok, "series": [r.as_dict() for r in self.results]}
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        from vimesync.outputs.findings import lint_findings

        return lint_findings(self.results)


def lint(ws: Workspace, r: EngineFlags, codes: LintCodes) -> LintOutcome:
    """Lint every series the flags (or the config) name; ``--strict``: also apply each stack to
    its source for the offset codes."""
    from vimesync.lint import lint_series

    wanted = code_filter(codes.select, codes.ignore)
    cfg = ws.config
    targets = series_targets(cfg, r.engine, r.series)
    if r.strict and len(targets) > 1 and (r.source or r.rev):
        names = ", ".join(p.key or p.name for p, _ in targets)
        raise BadInput(
            f"{cfg.file} names {len(targets)} engines ({names}): pass --engine NAME with --source/--rev"
        )
    results = []
    for pin, ser in targets:
        offsets = _strict_check(ws, pin, ser, r) if r.strict else None
        strip = pin.strip if r.strip is None else r.strip
        found = lint_series(ser, strip=strip, repo=pin.repo, offsets=offsets)
        results.append(replace(found, findings=tuple(f for f in found.findings if wanted(f.code))))
    return LintOutcome(tuple(results))


def code_filter(select: tuple[str, ...], ignore: tuple[str, ...]) -> Callable[[str], bool]:
    """Which codes to report, as ruff's --select/--ignore read them: a code or a prefix of codes
    (``W``, ``H00``); --ignore wins. An unknown code or prefix is bad input (a typo would
    silently report nothing)."""
    from vimesync.lint.model import CODES

    for flag, items in (("--select", select), ("--ignore", ignore)):
        for item in items:
            if not item or not any(code.startswith(item.upper()) for code in CODES):
                raise BadInput(f"{flag} {item!r}: no such lint code (codes in docs/lint.md)")
    sel = tuple(s.upper() for s in select)
    ign = tuple(s.upper() for s in ignore)
    return lambda code: (not sel or code.startswith(sel)) and not code.startswith(ign)


def series_targets(cfg: Config, engine: str | None, series: Path | None) -> list[tuple[EnginePin, Path]]:
    """(engine pin, series) pairs: the one ``--engine`` or ``--series`` names, else every engine
    of the config that has a series. A ``--series`` no pin names is taken on its own."""
    from vimesync.config import select_engine
    from vimesync.safefs import lexical

    engines = cfg.engines
    if engine is not None:
        engines = (select_engine(cfg, engine),)
    if series is not None:
        same = [
            p
            for p in engines
            if p.series and lexical(p.series) in (lexical(series), lexical(series) / "series")
        ]
        return [(same[0] if same else EnginePin(), series)]
    found = [(p, p.series) for p in engines if p.series is not None]
    if not found:
        where = f" (or set series in an engine pin of {cfg.file})" if cfg.file else ""
        raise BadInput(f"no patch series: pass --series FILE{where}")
    return found


def _strict_check(
    ws: Workspace, pin: EnginePin, series: Path, flags: EngineFlags
) -> Callable[[], tuple[PatchResult, ...]]:
    """The stack applied to the source (no parse), for O001/O002."""
    from vimesync.check.run import run_check

    engine = pin.key or (pin.name if pin.file else None)
    only = EngineFlags(
        engine=engine, source=flags.source, rev=flags.rev, series=series, strip=flags.strip, keep_going=True
    )
    (opts,) = ws.engine_plan(only)
    opts = replace(opts, parse=False)
    return lambda: run_check(opts).patches


@dataclass(frozen=True)
class DescribeRequest:
    """What the arguments say: the patch (as the series names it), its new description and refs."""

    name: str
    description: str
    origin: tuple[str, ...] = ()
    origin_kind: str = "upstream"  # DEP-3: upstream, backport, vendor or other
    bug: tuple[str, ...] = ()
    forwarded: str | None = None  # a reference, "no" or "not-needed"
    applied_upstream: str | None = None  # a reference (commit:<sha>, a URL)


@dataclass(frozen=True)
class DescribeOutcome:
    patch: Path
    changed: bool
    kind: Kind = Kind.DESCRIBE
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        return document(self.kind, self.exit_code, {"patch": str(self.patch), "changed": self.changed})


def describe(ws: Workspace, engine: EngineFlags, request: DescribeRequest) -> DescribeOutcome:
    """Add or update the patch's DEP-3 header in place (the diff kept byte for byte)."""
    from vimesync.lint.describe import FORWARDED_WORDS, HeaderFields, normalize_ref
    from vimesync.lint.describe import describe as rewrite
    from vimesync.patches.series import load_series, read_patch
    from vimesync.safefs import excerpt, write_atomic

    name = request.name
    targets = series_targets(ws.config, engine.engine, engine.series)
    matches = []
    for pin, ser in targets:
        for entry in load_series(ser, default_strip=pin.strip).entries:
            if name in (entry.name, entry.path.name):
                matches.append((pin, entry))
    if not matches:
        raise BadInput(f"no patch {excerpt(name)} in {', '.join(str(s) for _, s in targets)}")
    if len(matches) > 1:
        raise BadInput(f"{excerpt(name)} names {len(matches)} patches: pass --engine or --series")
    pin, entry = matches[0]
    r = request
    refs = [normalize_ref(x, repo=pin.repo) for x in r.origin]
    bug = [normalize_ref(x, repo=pin.repo, flag="--bug") for x in r.bug]
    forwarded = r.forwarded
    if forwarded is not None and forwarded not in FORWARDED_WORDS:
        forwarded = normalize_ref(forwarded, repo=pin.repo, flag="--forwarded")
    applied = r.applied_upstream
    if applied is not None and not re.fullmatch(r"(commit:)?[0-9a-f]{7,40}", applied):
        # a commit of the engine needs no repo to name it (a pin reads it: upstreamed at <sha>)
        applied = normalize_ref(applied, repo=pin.repo, flag="--applied-upstream")
    old = read_patch(entry)
    fields = HeaderFields(
        description=r.description,
        refs=tuple(refs),
        origin_kind=r.origin_kind,
        bug=tuple(bug),
        forwarded=forwarded,
        applied_upstream=applied,
    )
    new = rewrite(old, name=entry.name, strip=entry.strip, fields=fields)
    if new != old:
        write_atomic(entry.path, new, what="patch")
    return DescribeOutcome(entry.path, new != old)
