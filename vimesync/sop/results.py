"""Test suites and manual runs recorded in ``sop/records/<sync>.toml`` (beside the image records,
:mod:`vimesync.sop.records`), each bound to the evidence head it was recorded at::

    [tests."CPU regressions".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    passed = 292
    failed = 0
    errors = 0
    skipped = 3
    duration = 83.2                 # seconds
    failing = []                    # the first failing test ids (at most 20)
    image = "sha256:…"              # optional: the image the suite ran in
    recorded_at = "2026-11-30T19:00:00Z"

    [runs."PipelineRL four-GPU".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    exit = 0
    duration = 243.0
    host = "h200-01"
    figures = { rollouts = "3", flush_interval = "2" }
    note = "one trainer, three rollout engines"

A suite recorded again at the same head replaces its record there (the record commands allow it
only with ``--replace``: :mod:`vimesync.app.recordchecks`); at another head it is a new record and
the earlier ones stay (the report lists them as not evidence for the head). Every value
is checked when it is written and again when it is read (decoded by the field types of
``_TestDoc``, ``_RunDoc``, ``_CiDoc``): the file is repository content. The records themselves are
:mod:`vimesync.sop.resultmodel`; what a value may be, :mod:`vimesync.sop.resultvalues`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from vimesync.errors import ConfigError
from vimesync.safefs import Range, Size, Text, decode, open_keys
from vimesync.sop.cigroups import MAX_GROUP_NAME, MAX_RECORDED, CiGroup
from vimesync.sop.cirecords import BUILD, MAX_FAILING, CiRecord
from vimesync.sop.measureddoc import At, Count, MeasuredDoc, Seconds, Value, measured_values
from vimesync.sop.measureddoc import measured as measured_of
from vimesync.sop.precommit import PrecommitRecord
from vimesync.sop.records import DIGEST, SHA, records_file

# The records' model and what a record may say live in their own modules, named here too for
# the file's readers and writers.
from vimesync.sop.resultmodel import AnyRecord as AnyRecord
from vimesync.sop.resultmodel import Evidence as Evidence
from vimesync.sop.resultmodel import Results as Results
from vimesync.sop.resultmodel import RunRecord as RunRecord
from vimesync.sop.resultmodel import TestRecord as TestRecord
from vimesync.sop.resultmodel import key_of as key_of
from vimesync.sop.resultmodel import record_to_dict as record_to_dict
from vimesync.sop.resultvalues import (
    FIGURE_KEY,
    MAX_FIGURES,
    UNPRINTABLE,
)
from vimesync.sop.resultvalues import HOST as HOST
from vimesync.sop.resultvalues import MAX_NOTE as MAX_NOTE
from vimesync.sop.resultvalues import NAME as NAME
from vimesync.sop.resultvalues import check_digest as check_digest
from vimesync.sop.resultvalues import check_figures as check_figures
from vimesync.sop.resultvalues import check_name as check_name
from vimesync.sop.resultvalues import format_duration as format_duration
from vimesync.sop.resultvalues import now as now
from vimesync.sop.resultvalues import one_line as one_line
from vimesync.sop.resultvalues import parse_duration as parse_duration

# ---------------------------------------------------------------------------------------------
# Reading

RUN_KEY = re.compile(rf"(?:{SHA.pattern})(?:/(?:[2-9]|[1-9][0-9]))?")  # SHA, or SHA/N: its Nth run


R = TypeVar("R")
RecordName = Annotated[str, Text(pattern=NAME.pattern, what="a name of 1-80 plain characters")]
Sha = Annotated[str, Text(pattern=SHA.pattern, what="a full commit sha")]
RunKey = Annotated[str, Text(pattern=RUN_KEY.pattern, what="a full commit sha (/N: its Nth run)")]
Image = Annotated[str, Text(pattern=f"(?:{DIGEST.pattern})?", what="sha256:<64 hex digits>")]
Url = Annotated[
    str, Text(max=1024, forbid=UNPRINTABLE.pattern, pattern="(?:https?://.*)?", what="an http(s) URL")
]


@dataclass(frozen=True)
class _TestDoc:
    """``[tests.NAME.SHA]`` as the file holds it."""

    passed: Count = 0
    failed: Count = 0
    errors: Count = 0
    skipped: Count = 0
    duration: Seconds | None = None
    failing: Annotated[tuple[Value, ...], Size(100)] = ()
    image: Image = ""
    recorded_at: At = ""


@dataclass(frozen=True)
class _RunDoc:
    """``[runs.NAME.SHA]`` as the file holds it."""

    exit: Annotated[int, Range(-255, 255)]
    duration: Seconds | None = None
    host: Annotated[str, Text(pattern=f"(?:{HOST.pattern})?", what="a host name")] = ""
    image: Image = ""
    figures: Annotated[
        dict[Annotated[str, Text(pattern=FIGURE_KEY.pattern, what="a figure name")], Value], Size(MAX_FIGURES)
    ] = field(default_factory=dict)
    note: Annotated[str, Text(max=MAX_NOTE, forbid=UNPRINTABLE.pattern, what="one line")] = ""
    recorded_at: At = ""
    measured: MeasuredDoc | None = None  # executed by vimesync (absent: typed)


@dataclass(frozen=True)
class _GroupDoc:
    """``[ci.BUILD.SHA.groups.NAME]``: one group's jobs (sop/cigroups.py)."""

    passed: Count = 0
    failed: Count = 0
    pending: Count = 0
    agent_lost: Count = 0
    retried_failures: Count = 0
    required: bool = False


GroupName = Annotated[str, Text(max=MAX_GROUP_NAME, forbid=UNPRINTABLE.pattern, what="one line")]


@dataclass(frozen=True)
class _CiDoc:
    """``[ci.BUILD.SHA]`` as the file holds it."""

    source: Literal["buildkite", "github"]
    state: At = ""
    passed: Count = 0
    failed: Count = 0
    pending: Count = 0
    agent_lost: Count = 0
    retried_failures: Count = 0
    failing: Annotated[tuple[Value, ...], Size(MAX_FAILING)] = ()
    url: Url = ""
    recorded_at: At = ""
    groups: Annotated[dict[GroupName, _GroupDoc], Size(MAX_RECORDED)] = field(default_factory=dict)


# Each kind's tables, by name then evidence head; pre-commit and regress records are read by
# their own modules (sop/precommit.py, sop/regress.py).
@open_keys  # [images] and [promotions] are sop/records.py's and sop/promotions.py's
@dataclass(frozen=True)
class _ResultsDoc:
    tests: dict[RecordName, dict[Sha, _TestDoc]] = field(default_factory=dict)
    # a second independent run of a name at a head: "SHA/2" (sop record run --again)
    runs: dict[RecordName, dict[RunKey, _RunDoc]] = field(default_factory=dict)
    ci: dict[
        Annotated[str, Text(pattern=BUILD.pattern, what="a build number (or github)")], dict[Sha, _CiDoc]
    ] = field(default_factory=dict)
    precommit: dict[RecordName, dict[Sha, dict[str, Any]]] = field(default_factory=dict)
    regress: dict[RecordName, dict[Sha, dict[str, Any]]] = field(default_factory=dict)


def _test(name: str, sha: str, d: _TestDoc) -> TestRecord:
    counts = (d.passed, d.failed, d.errors, d.skipped)
    return TestRecord(name, sha, *counts, d.duration or 0.0, d.failing, d.image, d.recorded_at)


def _run(name: str, key: str, d: _RunDoc) -> RunRecord:
    figures = tuple(d.figures.items())
    sha, _, index = key.partition("/")
    measured = measured_of(d.measured) if d.measured is not None else None
    values = (d.exit, d.duration, d.host, d.image, figures, d.note, d.recorded_at)
    return RunRecord(name, sha, *values, measured=measured, run=int(index or 1))


def _ci(build: str, sha: str, d: _CiDoc) -> CiRecord:
    counts = (d.passed, d.failed, d.pending, d.agent_lost, d.retried_failures)
    groups = tuple(CiGroup(n, **vars(g)) for n, g in d.groups.items())
    return CiRecord(build, sha, d.source, d.state, *counts, d.failing, d.url, d.recorded_at, groups)


def _precommit(path: Path, name: str, sha: str, rec: dict[str, Any]) -> PrecommitRecord:
    from vimesync.sop.precommit import NAME, read_precommit

    if name != NAME:
        raise ConfigError(str(path), f"[precommit.{name[:40]!r}]: the one pre-commit record is {NAME!r}")

    def text(where: str, table: dict[str, Any], key: str, limit: int) -> str:
        value = table.get(key, "")
        if not isinstance(value, str) or len(value) > limit or UNPRINTABLE.search(value):
            raise ConfigError(str(path), f"{where} {key} must be one line of at most {limit} characters")
        return value

    def count(where: str, table: dict[str, Any], key: str, lo: int, hi: int) -> int:
        value = table.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ConfigError(str(path), f"{where} {key} must be a whole number from {lo} to {hi:,}")
        return value

    return read_precommit(str(path), sha, rec, text, count)


def parse_results(text: str, path: Path | str) -> Results:
    from vimesync.safefs import loads_toml
    from vimesync.sop.regress import read_regress

    path = Path(path)
    doc = decode(_ResultsDoc, loads_toml(text, where=str(path)), where=str(path))
    return Results(
        tests=tuple(_test(*t) for t in _each(doc.tests)),
        runs=tuple(_run(*t) for t in _each(doc.runs)),
        ci=tuple(_ci(*t) for t in _each(doc.ci)),
        precommit=tuple(_precommit(path, *t) for t in _each(doc.precommit)),
        regress=tuple(read_regress(str(path), *t) for t in _each(doc.regress)),
    )


def _each(tables: dict[str, dict[str, R]]) -> Iterator[tuple[str, str, R]]:
    """(name, evidence head, record) of ``[kind.NAME.SHA]`` tables, in file order."""
    for name, by_sha in tables.items():
        for sha, rec in by_sha.items():
            yield name, sha, rec


def load_results(root: Path, sync: str) -> Results:
    """The test and run records of ``sync`` (empty when none were recorded)."""
    from vimesync.sop.records import read_records_text

    path = records_file(root, sync)
    text = read_records_text(path, root)
    return Results() if text is None else parse_results(text, path)


def load_evidence(root: Path, sync: str, *, head: str, evidence_head: str) -> Evidence:
    return Evidence(sync, head, evidence_head, load_results(root, sync))


def record_keys(text: str, where: str) -> set[tuple[str, str, str, str]]:
    """The records a version of the file holds (for who committed each, sop/binding.py)."""
    return {key_of(r) for r in parse_results(text, where).records}


# ---------------------------------------------------------------------------------------------
# Writing


def write_table(root: Path, sync: str, key: str, name: str, sha: str, values: dict[str, Any]) -> Path:
    """``[key.name.sha]`` replaced by ``values``; every other table and comment kept."""
    from vimesync import tomledit
    from vimesync.sop.records import new_records_doc

    path = records_file(root, sync)
    load_results(root, sync)  # a malformed file is refused (naming it) before it is edited
    doc = new_records_doc(tomledit.load(path, root=root), sync)
    by_name = tomledit.standard_tables(tomledit.standard_tables(doc, key), name)
    if sha in by_name:
        del by_name[sha]
    import tomlkit

    by_name[sha] = _toml_table(values, tomlkit)
    tomledit.write(path, doc, root=root, mkdirs=True, what="record")
    return path


def _toml_table(values: dict[str, Any], tomlkit: Any) -> Any:
    """``values`` as a standard table: ``figures`` inline, other tables (a pre-commit run's hooks,
    a matrix's cases) as sub-tables, empty values left out."""
    table = tomlkit.table()
    for k, v in values.items():
        if k == "figures":
            inline = tomlkit.inline_table()
            inline.update(v)
            table[k] = inline
        elif isinstance(v, dict):
            sub = tomlkit.table()
            for name, inner in v.items():
                sub[name] = _toml_table(inner, tomlkit) if isinstance(inner, dict) else inner
            table[k] = sub
        elif v not in ("", None):
            table[k] = v
    return table


def record_tests(root: Path, sync: str, rec: TestRecord) -> Path:
    values = {
        "passed": rec.passed,
        "failed": rec.failed,
        "errors": rec.errors,
        "skipped": rec.skipped,
        "duration": rec.duration,
        "failing": list(rec.failing),
        "image": rec.image,
        "recorded_at": rec.recorded_at or now(),
    }
    return write_table(root, sync, "tests", rec.suite, rec.sha, values)


def record_run(root: Path, sync: str, rec: RunRecord) -> Path:
    values: dict[str, Any] = {
        "exit": rec.exit,
        "duration": rec.duration,
        "host": rec.host,
        "image": rec.image,
        "note": rec.note,
        "recorded_at": rec.recorded_at or now(),
    }
    if rec.figures:
        values["figures"] = dict(rec.figures)
    if rec.measured is not None:
        values["measured"] = measured_values(rec.measured)
    key = rec.sha if rec.run == 1 else f"{rec.sha}/{rec.run}"
    return write_table(root, sync, "runs", rec.name, key, values)
