"""``vimesync sop record tests`` and ``sop record run`` as use cases, and the recorded evidence of
a head as the report and ``sop status`` read it.

Every record is bound to the evidence head (:mod:`vimesync.sop.binding`): the head itself, or the
commit before a run of commits that only record evidence. Before it is written, every record is
checked (:mod:`vimesync.app.recordchecks`): the tree is HEAD's, and a record of the same name at
the same evidence head is replaced only with ``--replace``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.recordchecks import refuse_modified, replaced_note, replaced_record
from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.report.model import SyncReport
from vimesync.sop.records import ImageEvidence
from vimesync.sop.results import (
    MAX_NOTE,
    AnyRecord,
    Evidence,
    RunRecord,
    TestRecord,
    check_digest,
    check_figures,
    check_name,
    load_evidence,
    now,
    one_line,
    parse_duration,
    record_run,
    record_tests,
)


def evidence_heads(ws: Workspace) -> tuple[str, str]:
    """(the head, the evidence head it binds to), once per workspace."""
    from vimesync.sop.binding import evidence_head

    head = ws.head or ""
    if ws.downstream is None or not head:
        return head, head
    downstream = ws.downstream
    return head, ws.once("evidence head", lambda: evidence_head(downstream, head, ws.bookkeeping))


@dataclass(frozen=True)
class RecordTestsRequest:
    suite: str
    junit: Path
    image: str | None = None
    replace: bool = False  # a suite of the same name at the evidence head may be replaced


@dataclass(frozen=True)
class RecordResult:
    """A record written: which sync, the record, the file, the head and its evidence head, and
    notes (things to know, not errors: a named test that neither commit holds)."""

    sync: str
    record: AnyRecord
    file: Path
    head: str
    kind: Kind
    judged: bool = False  # the command ran the check itself (pre-commit, regress): its verdict counts
    notes: tuple[str, ...] = ()
    replaced: AnyRecord | None = None  # the record of the same name and head it replaced (--replace)

    @property
    def ok(self) -> bool:
        """Recording a red suite is done well; a check we ran that failed is a failed check."""
        return bool(getattr(self.record, "ok", True)) if self.judged else True

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def replacing(self, kind: str, old: AnyRecord | None) -> RecordResult:
        """This result as having replaced ``old`` (a record of table ``kind``), said in a note
        with its old values; itself when nothing was replaced."""
        from dataclasses import replace

        if old is None:
            return self
        return replace(self, replaced=old, notes=(*self.notes, replaced_note(kind, old)))

    def to_json(self) -> dict[str, Any]:
        from vimesync.sop.results import record_to_dict

        body = {
            "sync": self.sync,
            "head": self.head,
            "evidence_head": self.record.sha,
            "record": record_to_dict(self.record),
            "file": str(self.file),
            "notes": list(self.notes),
            "replaced": record_to_dict(self.replaced) if self.replaced is not None else None,
        }
        return document(self.kind, self.exit_code, body)


def record_test_suite(ws: Workspace, request: RecordTestsRequest) -> RecordResult:
    """Read a JUnit XML file and record its counts for the evidence head."""
    from vimesync.sop.junitread import read_junit

    suite = check_name(request.suite, "--suite")
    image = check_digest(request.image)
    name = ws.sync_name
    counts = read_junit(request.junit)
    head, bound = evidence_heads(ws)
    refuse_modified(ws.downstream, ws.bookkeeping, name)
    image = _recorded_image(ws, name, bound, image)
    old = replaced_record(ws.sop_root, name, "tests", suite, bound, replace=request.replace)
    rec = TestRecord(
        suite=suite,
        sha=bound,
        passed=counts.passed,
        failed=counts.failed,
        errors=counts.errors,
        skipped=counts.skipped,
        duration=counts.duration,
        failing=counts.failing,
        image=image,
        recorded_at=now(),
    )
    path = record_tests(ws.sop_root, name, rec)
    result = RecordResult(sync=name, record=rec, file=path, head=head, kind=Kind.RECORD_TESTS)
    return result.replacing("tests", old)


@dataclass(frozen=True)
class RecordRunRequest:
    """``sop record run``: typed (``--exit``...) or, with ``command``, run and measured by us."""

    name: str
    exit: int | None = None
    duration: str | None = None
    host: str | None = None
    image: str | None = None
    figures: tuple[str, ...] = ()
    note: str | None = None
    replace: bool = False  # a run of the same name at the evidence head may be replaced
    timeout: float | None = None
    keep_env: tuple[str, ...] = ()
    expect_exit: int | None = None
    expect_output: str | None = None
    retries: int = 0
    again: bool = False
    junit: tuple[Path, ...] = ()
    figures_file: Path | None = None
    worktree: bool = False
    command: tuple[str, ...] = ()


def record_manual_run(ws: Workspace, request: RecordRunRequest) -> RecordResult:
    """Record a run no CI sees, typed by hand (a four-GPU job on a lab host), for the evidence
    head; a job vimesync runs itself is :func:`vimesync.app.runjob.record_run`'s."""
    from vimesync.errors import BadInput
    from vimesync.sop.results import HOST

    if request.exit is None:
        raise BadInput("sop record run: give the job after -- (vimesync runs it), or --exit N (typed)")
    name = check_name(request.name, "--name")
    if not -255 <= request.exit <= 255:
        raise BadInput(f"--exit {request.exit}: expected an exit status from -255 to 255")
    if request.host is not None and not HOST.fullmatch(request.host):
        raise BadInput(f"--host {request.host[:60]!r}: expected a host name (letters, digits, . _ -)")
    figures = check_figures(list(request.figures))
    note = one_line(request.note, "--note", MAX_NOTE) if request.note is not None else ""
    duration = parse_duration(request.duration) if request.duration is not None else None
    image = check_digest(request.image)
    sync = ws.sync_name
    head, bound = evidence_heads(ws)
    refuse_modified(ws.downstream, ws.bookkeeping, sync)
    image = _recorded_image(ws, sync, bound, image)
    old = replaced_record(ws.sop_root, sync, "runs", name, bound, replace=request.replace)
    rec = RunRecord(
        name=name,
        sha=bound,
        exit=request.exit,
        duration=duration,
        host=request.host or "",
        image=image,
        figures=figures,
        note=note,
        recorded_at=now(),
    )
    path = record_run(ws.sop_root, sync, rec)
    result = RecordResult(sync=sync, record=rec, file=path, head=head, kind=Kind.RECORD_RUN)
    return result.replacing("runs", old)


def _recorded_image(ws: Workspace, sync: str, bound: str, image: str) -> str:
    """``--image``, refused unless recorded at the evidence head (sop/records.py)."""
    from vimesync.sop.records import check_recorded_image, load_images

    return check_recorded_image(load_images(ws.sop_root, sync), bound, image) if image else image


def evidence_of(ws: Workspace, sync: str) -> Evidence | None:
    """The tests and runs recorded for ``sync``, read for the head's evidence head, each with who
    committed it (None without a vimesync.toml: there is no sop/ folder to read)."""
    if ws.checkout.file is None:
        return None
    from vimesync.sop import binding

    root = ws.sop_root
    head, bound = evidence_heads(ws)
    evidence = load_evidence(root, sync, head=head, evidence_head=bound)
    if ws.downstream is None or not head or not evidence.results.records:
        return evidence
    from vimesync.safefs import MAX_CONFIG_BYTES
    from vimesync.sop.results import record_keys

    relpath = f"{ws.bookkeeping.records}/{sync}.toml"
    who = binding.committers(
        ws.downstream, head, relpath, lambda text: record_keys(text, relpath), max_bytes=MAX_CONFIG_BYTES
    )
    return evidence.with_committers(who)


def images_of(ws: Workspace, report: SyncReport) -> ImageEvidence | None:
    """The image records of this sync for its head's evidence head (only with an audit: it names
    sync and head)."""
    from vimesync.audit.model import AuditResult
    from vimesync.sop.promotions import image_evidence

    if not isinstance(report.audit, AuditResult) or ws.checkout.file is None:
        return None
    bound = evidence_heads(ws)[1] if ws.head == report.audit.head else report.audit.head
    gates = ws.gates
    return image_evidence(ws.sop_root, report.audit.sync, bound, gates.architectures, gates.promote)


def recorded_evidence(ws: Workspace, report: SyncReport) -> Evidence | None:
    """The tests and runs recorded for this sync, read for its head (None without a head, a
    vimesync.toml or a sync name)."""
    from vimesync.audit.model import AuditResult
    from vimesync.errors import BadInput

    if ws.head is None or ws.checkout.file is None:
        return None
    if isinstance(report.audit, AuditResult):
        name = report.audit.sync
    else:
        try:
            name = ws.sync_name
        except BadInput:
            return None
    return evidence_of(ws, name)
