"""``vimesync patches lint`` and ``vimesync patches describe``: review the patch stack's shape and
metadata, and fill in a patch's DEP-3 header."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vimesync.cli import output
from vimesync.cli.options import (
    Annotations,
    AnnotationsOpt,
    ConfigOpt,
    DescriptionOpt,
    EngineOpt,
    FormatOpt,
    JsonOpt,
    JunitOpt,
    OriginOpt,
    PatchNameArg,
    RevOpt,
    SeriesOpt,
    SourceOpt,
    StrictOpt,
    StripOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput
from vimesync.text import plural

if TYPE_CHECKING:
    from collections.abc import Callable

    from vimesync.config import Config, EnginePin
    from vimesync.lint.model import Finding, LintResult
    from vimesync.patches.model import PatchResult


def _targets(cfg: Config, engine: str | None, series: Path | None) -> list[tuple[EnginePin, Path]]:
    """(engine pin, series) pairs to lint: the one ``--engine`` or ``--series`` names, else every
    engine of the config that has a series. A ``--series`` no pin names is linted on its own."""
    from vimesync.config import EnginePin, select_engine
    from vimesync.safefs import lexical

    engines = cfg.engines or ((cfg.engine,) if cfg.engine.configured else ())
    if engine is not None:
        pin = select_engine(cfg, engine)
        engines = (pin,)
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


def lint(
    series: SeriesOpt = None,
    engine: EngineOpt = None,
    strip: StripOpt = None,
    strict: StrictOpt = False,
    source: SourceOpt = None,
    rev: RevOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
    junit: JunitOpt = None,
    annotations: AnnotationsOpt = Annotations.auto,
) -> int:
    """Check the series against its folder and every patch's header, line endings and index lines
    (codes in docs/lint.md). Exit 1 on findings."""
    from vimesync.cli.cioutputs import CiOutputs
    from vimesync.config import load_config
    from vimesync.lint import lint_series

    json_out = output_format(fmt, json_) == "json"
    ci = CiOutputs(junit, annotations, json_out=json_out)
    cfg = load_config(config)
    targets = _targets(cfg, engine, series)
    if strict and len(targets) > 1 and (source or rev):
        names = ", ".join(p.key or p.name for p, _ in targets)
        raise BadInput(
            f"{cfg.file} names {len(targets)} engines ({names}): pass --engine NAME with --source/--rev"
        )
    results = []
    for pin, ser in targets:
        offsets = None
        if strict:
            offsets = _strict_check(cfg, pin, ser, source=source, rev=rev, strip=strip)
        results.append(
            lint_series(ser, strip=pin.strip if strip is None else strip, repo=pin.repo, offsets=offsets)
        )
    findings = [f for r in results for f in r.findings]
    if json_out:
        doc = (
            results[0].as_dict()
            if len(results) == 1
            else {
                "ok": not findings,
                "series": [r.as_dict() for r in results],
            }
        )
        output.emit_json(doc)
    else:
        with ci.human_output():
            _render(results, findings)
    from vimesync.outputs.findings import lint_findings

    ci.emit(lint_findings(results))
    return EXIT_CHECK_FAILED if findings else EXIT_OK


def _render(results: list[LintResult], findings: list[Finding]) -> None:
    for f in findings:
        output.stdout.print(output.styled(f"{f.path}:{f.line}: ", (f.code, "bold red"), f" {f.message}"))
    patches = sum(r.patches for r in results)
    if findings:
        summary = f"Found {plural(len(findings), 'finding')} in {plural(patches, 'patch', 'patches')}."
        output.stdout.print(output.styled(summary))
    else:
        output.stdout.print(
            output.styled(("All checks passed", "bold green"), f": {plural(patches, 'patch', 'patches')}.")
        )


def _strict_check(
    cfg: Config, pin: EnginePin, series: Path, *, source: Path | None, rev: str | None, strip: int | None
) -> Callable[[], tuple[PatchResult, ...]]:
    """The stack applied to the source (no parse), for O001/O002."""
    from dataclasses import replace

    from vimesync.check.model import check_plan
    from vimesync.check.run import run_check

    engine = pin.key or (pin.name if pin.file else None)
    (opts,) = check_plan(
        cfg, engine=engine, source=source, rev=rev, series=series, strip=strip, keep_going=True
    )
    opts = replace(opts, parse=False)
    return lambda: run_check(opts).patches


def describe(
    name: PatchNameArg,
    description: DescriptionOpt,
    origin: OriginOpt = None,
    series: SeriesOpt = None,
    engine: EngineOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """NAME (the patch, as the series names it): add or update its DEP-3 header in place (the
    diff is kept byte for byte; git apply ignores the header), so the report's Purpose / PR
    column is filled."""
    from vimesync.config import load_config
    from vimesync.lint.describe import describe as rewrite
    from vimesync.lint.describe import normalize_ref
    from vimesync.patches.series import load_series, read_patch
    from vimesync.safefs import excerpt, write_atomic

    json_out = output_format(fmt, json_) == "json"
    cfg = load_config(config)
    targets = _targets(cfg, engine, series)
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
    refs = [normalize_ref(r, repo=pin.repo) for r in origin or []]
    old = read_patch(entry)
    new = rewrite(old, name=entry.name, strip=entry.strip, description=description, refs=refs)
    changed = new != old
    if changed:
        write_atomic(entry.path, new, what="patch")
    if json_out:
        output.emit_json({"ok": True, "patch": str(entry.path), "changed": changed})
    else:
        verb = "updated the header of" if changed else "already up to date:"
        output.stderr.print(output.styled(f"{verb} {entry.path}"))
    return EXIT_OK
