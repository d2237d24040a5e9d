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

A suite recorded again at the same head replaces its record there; at another head it is a new
record and the earlier ones stay (the report lists them as not evidence for the head). Every value
is checked when it is written and again when it is read: the file is repository content."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from vimesync.errors import BadInput, ConfigError
from vimesync.sop.cirecords import BUILD, CiRecord
from vimesync.sop.precommit import PrecommitRecord
from vimesync.sop.records import DIGEST, SHA, records_file
from vimesync.sop.regress import RegressRecord

# A suite's or a run's name: words people write ("CPU regressions", "baked runtime image checks").
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._+:/()#,-]{0,79}")
FIGURE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
MAX_VALUE = 200  # a figure's value, a test id
MAX_NOTE = 500
MAX_FIGURES = 20
MAX_COUNT = 100_000_000
MAX_SECONDS = 30 * 24 * 3600.0
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_DURATION = re.compile(r"(?:(\d{1,4})h)?(?:(\d{1,5})m)?(?:(\d{1,7}(?:\.\d{1,3})?)s)?")


@dataclass(frozen=True)
class TestRecord:
    suite: str
    sha: str  # the evidence head it was recorded at
    passed: int
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration: float = 0.0
    failing: tuple[str, ...] = ()
    image: str = ""
    recorded_at: str = ""

    __test__ = False  # not a pytest class

    @property
    def ok(self) -> bool:
        """Green: something ran and nothing failed or errored."""
        return self.passed > 0 and self.failed == 0 and self.errors == 0

    @property
    def name(self) -> str:
        return self.suite


@dataclass(frozen=True)
class RunRecord:
    name: str
    sha: str
    exit: int
    duration: float | None = None
    host: str = ""
    image: str = ""
    figures: tuple[tuple[str, str], ...] = ()
    note: str = ""
    recorded_at: str = ""

    @property
    def ok(self) -> bool:
        return self.exit == 0


@dataclass(frozen=True)
class Results:
    """Every test and run record of a sync, in file order."""

    tests: tuple[TestRecord, ...] = ()
    runs: tuple[RunRecord, ...] = ()
    ci: tuple[CiRecord, ...] = ()  # snapshots of the CI jobs (sop/cirecords.py)
    precommit: tuple[PrecommitRecord, ...] = ()  # pre-commit on the changed files (sop/precommit.py)
    regress: tuple[RegressRecord, ...] = ()  # before/after matrices (sop/regress.py)

    @property
    def records(self) -> tuple[AnyRecord, ...]:
        return (*self.tests, *self.runs, *self.ci, *self.precommit, *self.regress)


AnyRecord = TestRecord | RunRecord | CiRecord | PrecommitRecord | RegressRecord
_KINDS = {TestRecord: "tests", RunRecord: "runs", CiRecord: "ci", PrecommitRecord: "precommit"}


def key_of(rec: AnyRecord) -> tuple[str, str, str, str]:
    """A record as written (kind, name, evidence head, recorded_at): what a commit claims."""
    return (_KINDS.get(type(rec), "regress"), rec.name, rec.sha, rec.recorded_at)


@dataclass(frozen=True)
class Evidence:
    """The records of a sync read for one head: those made at its evidence head are evidence,
    the others (earlier heads) are listed as not evidence for it."""

    sync: str
    head: str
    evidence_head: str  # the commit the records bind to (the head, or before records-only commits)
    results: Results
    committers: Mapping[tuple[str, str, str, str], str] = field(default_factory=dict)

    @property
    def tests(self) -> tuple[TestRecord, ...]:
        return tuple(t for t in self.results.tests if t.sha == self.evidence_head)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return tuple(r for r in self.results.runs if r.sha == self.evidence_head)

    @property
    def ci(self) -> tuple[CiRecord, ...]:
        return tuple(c for c in self.results.ci if c.sha == self.evidence_head)

    @property
    def precommit(self) -> tuple[PrecommitRecord, ...]:
        return tuple(p for p in self.results.precommit if p.sha == self.evidence_head)

    @property
    def regress(self) -> tuple[RegressRecord, ...]:
        return tuple(r for r in self.results.regress if r.sha == self.evidence_head)

    @property
    def not_evidence(self) -> tuple[AnyRecord, ...]:
        return tuple(r for r in self.results.records if r.sha != self.evidence_head)

    def committer(self, rec: AnyRecord) -> str | None:
        """Who committed ``rec`` (None: not committed, the working tree's claim only)."""
        return self.committers.get(key_of(rec))

    def with_committers(self, who: Mapping[tuple[str, str, str, str], str]) -> Evidence:
        from dataclasses import replace

        return replace(self, committers=dict(who))


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# What a flag (or the file) may say


def check_name(value: str, what: str) -> str:
    if not NAME.fullmatch(value) or value != value.strip():
        raise BadInput(
            f"{what} {value[:60]!r}: expected 1-80 letters, digits, spaces and . _ + : / ( ) # , -"
            " (starting with a letter or digit)"
        )
    return value


def one_line(value: str, what: str, limit: int) -> str:
    if not value.strip() or len(value) > limit or _CONTROL.search(value):
        raise BadInput(f"{what}: expected one line of at most {limit} characters, no control characters")
    return value.strip()


def parse_duration(text: str) -> float:
    """``4m03s``, ``1h2m``, ``45s``, ``2.5s`` or plain seconds (``243``) -> seconds."""
    m = _DURATION.fullmatch(text.strip())
    if text.strip() and not m:
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
    elif m and any(m.groups()):
        h, mins, s = m.groups()
        seconds = int(h or 0) * 3600 + int(mins or 0) * 60 + float(s or 0)
    else:
        seconds = -1.0
    if not 0 <= seconds <= MAX_SECONDS:
        raise BadInput(f"--duration {text[:40]!r}: expected a duration such as 4m03s, 1h2m, 45s or 243")
    return round(seconds, 3)


def format_duration(seconds: float) -> str:
    """243.0 -> ``4m03s``; under a minute ``12.5s``; over an hour ``1h02m03s``."""
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    whole = int(round(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def check_figures(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """``K=V`` flags -> ((K, V), ...), each key once."""
    if len(pairs) > MAX_FIGURES:
        raise BadInput(f"--figure: at most {MAX_FIGURES} figures per run")
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not FIGURE_KEY.fullmatch(key):
            raise BadInput(
                f"--figure {pair[:60]!r}: expected KEY=VALUE, KEY a letter then letters, digits, _ . -"
            )
        if key in out:
            raise BadInput(f"--figure {key}: given twice")
        out[key] = one_line(value, f"--figure {key}", MAX_VALUE)
    return tuple(out.items())


def check_digest(value: str | None, what: str = "--image") -> str:
    if value is None:
        return ""
    if not DIGEST.fullmatch(value):
        raise BadInput(f"{what} {value[:80]!r}: expected sha256: and 64 lowercase hex digits")
    return value


# ---------------------------------------------------------------------------------------------
# Reading


def _table(path: Path, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(str(path), f"[{key}] must be a table")
    return value


def _records(path: Path, data: Mapping[str, Any], key: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, sha, record) of every ``[key.NAME.SHA]`` table, names and shas checked."""
    out = []
    for name, by_sha in _table(path, data, key).items():
        where = f"[{key}.{name[:40]!r}]"
        if not NAME.fullmatch(name) or not isinstance(by_sha, dict):
            raise ConfigError(str(path), f"{where}: expected a name of 1-80 plain characters holding tables")
        for sha, rec in by_sha.items():
            if not SHA.fullmatch(sha) or not isinstance(rec, dict):
                raise ConfigError(
                    str(path), f"{where}: {sha[:44]!r} must be a full commit sha holding a table"
                )
            out.append((name, sha, rec))
    return out


def _int(path: Path, where: str, rec: dict[str, Any], key: str, lo: int = 0, hi: int = MAX_COUNT) -> int:
    value = rec.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(str(path), f"{where} {key} must be a whole number from {lo} to {hi:,}")
    return value


def _seconds(path: Path, where: str, rec: dict[str, Any]) -> float | None:
    value = rec.get("duration")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        raise ConfigError(str(path), f"{where} duration must be seconds (0 to 30 days)")
    return float(value)


def _text(path: Path, where: str, rec: dict[str, Any], key: str, limit: int) -> str:
    value = rec.get(key, "")
    if not isinstance(value, str) or len(value) > limit or _CONTROL.search(value):
        raise ConfigError(str(path), f"{where} {key} must be one line of at most {limit} characters")
    return value


def _image(path: Path, where: str, rec: dict[str, Any]) -> str:
    value = rec.get("image", "")
    if value != "" and not (isinstance(value, str) and DIGEST.fullmatch(value)):
        raise ConfigError(str(path), f"{where} image must be sha256:<64 hex digits>")
    return str(value)


def _test(path: Path, name: str, sha: str, rec: dict[str, Any]) -> TestRecord:
    where = f"[tests.{name!r}.{sha[:8]}]"
    failing = rec.get("failing", [])
    if not isinstance(failing, list) or len(failing) > 100:
        raise ConfigError(str(path), f"{where} failing must be a list of test ids")
    ids = []
    for i, item in enumerate(failing):
        ids.append(_text(path, where, {"failing": item}, "failing", MAX_VALUE) if i < 100 else "")
    return TestRecord(
        suite=name,
        sha=sha,
        passed=_int(path, where, rec, "passed"),
        failed=_int(path, where, rec, "failed"),
        errors=_int(path, where, rec, "errors"),
        skipped=_int(path, where, rec, "skipped"),
        duration=_seconds(path, where, rec) or 0.0,
        failing=tuple(ids),
        image=_image(path, where, rec),
        recorded_at=_text(path, where, rec, "recorded_at", 40),
    )


def _run(path: Path, name: str, sha: str, rec: dict[str, Any]) -> RunRecord:
    where = f"[runs.{name!r}.{sha[:8]}]"
    if "exit" not in rec:
        raise ConfigError(str(path), f"{where} has no exit")
    figures = rec.get("figures", {})
    if not isinstance(figures, dict) or len(figures) > MAX_FIGURES:
        raise ConfigError(str(path), f"{where} figures must be a table of at most {MAX_FIGURES} values")
    pairs = []
    for key, value in figures.items():
        if not FIGURE_KEY.fullmatch(key):
            raise ConfigError(str(path), f"{where} figure {key[:40]!r}: not a figure name")
        pairs.append((key, _text(path, where, {"figure": value}, "figure", MAX_VALUE)))
    host = _text(path, where, rec, "host", 253)
    if host and not HOST.fullmatch(host):
        raise ConfigError(str(path), f"{where} host must be a host name")
    return RunRecord(
        name=name,
        sha=sha,
        exit=_int(path, where, rec, "exit", -255, 255),
        duration=_seconds(path, where, rec),
        host=host,
        image=_image(path, where, rec),
        figures=tuple(pairs),
        note=_text(path, where, rec, "note", MAX_NOTE),
        recorded_at=_text(path, where, rec, "recorded_at", 40),
    )


def _ci(path: Path, build: str, sha: str, rec: dict[str, Any]) -> CiRecord:
    where = f"[ci.{build!r}.{sha[:8]}]"
    source = rec.get("source")
    if not BUILD.fullmatch(build) or source not in ("buildkite", "github"):
        raise ConfigError(str(path), f"{where}: expected a build number (or github) and its source")
    failing = rec.get("failing", [])
    if not isinstance(failing, list) or len(failing) > 20:
        raise ConfigError(str(path), f"{where} failing must be a list of at most 20 job names")
    url = _text(path, where, rec, "url", 1024)
    if url and not url.startswith(("https://", "http://")):
        raise ConfigError(str(path), f"{where} url must be an http(s) URL")
    return CiRecord(
        build=build,
        sha=sha,
        source=source,
        state=_text(path, where, rec, "state", 40),
        passed=_int(path, where, rec, "passed"),
        failed=_int(path, where, rec, "failed"),
        pending=_int(path, where, rec, "pending"),
        agent_lost=_int(path, where, rec, "agent_lost"),
        retried_failures=_int(path, where, rec, "retried_failures"),
        failing=tuple(_text(path, where, {"failing": f}, "failing", MAX_VALUE) for f in failing),
        url=url,
        recorded_at=_text(path, where, rec, "recorded_at", 40),
    )


def _precommit(path: Path, name: str, sha: str, rec: dict[str, Any]) -> PrecommitRecord:
    from vimesync.sop.precommit import NAME, read_precommit

    if name != NAME:
        raise ConfigError(str(path), f"[precommit.{name[:40]!r}]: the one pre-commit record is {NAME!r}")

    def text(where: str, table: dict[str, Any], key: str, limit: int) -> str:
        return _text(path, where, table, key, limit)

    def count(where: str, table: dict[str, Any], key: str, lo: int, hi: int) -> int:
        return _int(path, where, table, key, lo, hi)

    return read_precommit(str(path), sha, rec, text, count)


def _regress(path: Path, name: str, sha: str, rec: dict[str, Any]) -> RegressRecord:
    from vimesync.sop.regress import read_regress

    return read_regress(str(path), name, sha, rec)


def parse_results(text: str, path: Path | str) -> Results:
    from vimesync.safefs import loads_toml

    path = Path(path)
    data = loads_toml(text, where=str(path))
    return Results(
        tests=tuple(_test(path, *r) for r in _records(path, data, "tests")),
        runs=tuple(_run(path, *r) for r in _records(path, data, "runs")),
        ci=tuple(_ci(path, *r) for r in _records(path, data, "ci")),
        precommit=tuple(_precommit(path, *r) for r in _records(path, data, "precommit")),
        regress=tuple(_regress(path, *r) for r in _records(path, data, "regress")),
    )


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


def record_to_dict(rec: AnyRecord) -> dict[str, Any]:
    from dataclasses import asdict

    body = asdict(rec)
    if isinstance(rec, PrecommitRecord):
        return {"kind": "precommit", "name": rec.name, **body, "ok": rec.ok}
    if isinstance(rec, RegressRecord):
        body["cases"] = [{"test": c, "before": b, "after": a} for c, b, a in rec.cases]
        extra = {"not_proving": list(rec.not_proving), "not_present_before": list(rec.not_present_before)}
        return {"kind": "regress", **body, **extra, "ok": rec.ok}
    if isinstance(rec, CiRecord):
        body["failing"] = list(rec.failing)
        return {"kind": "ci", "name": rec.name, **body, "ok": rec.ok}
    if isinstance(rec, TestRecord):
        body["failing"] = list(rec.failing)
        body["ok"] = rec.ok
        return {"kind": "tests", "name": rec.name, **body}
    body["figures"] = dict(rec.figures)
    body["ok"] = rec.ok
    return {"kind": "run", **body}


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
    return write_table(root, sync, "runs", rec.name, rec.sha, values)
