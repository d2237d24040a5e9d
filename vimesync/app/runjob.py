"""``vimesync sop record run --name NAME [options] -- CMD [ARG...]`` as a use case: vimesync runs
the job itself at the head and records what it measured (:mod:`vimesync.sop.measured`), not what
someone typed.

- What runs is the argv given, never a shell line nor anything the repository's content names; a
  bare program name is looked up on the job's PATH without the checkout's folders. It runs in the
  checkout root (``--in-worktree``: a temporary detached worktree of the head, as ``sop regress``
  does), refused (exit 2) while tracked files differ from HEAD, and refused in an untrusted
  checkout (it runs the repository's code, as ``sop record precommit`` does).
- Through the one job runner (:func:`vimesync.sop.toolrun.follow_job`): its own process group, a
  deadline (``--timeout``), and on its end, the deadline, Ctrl-C or SIGTERM its whole group killed
  and what left it ended; a stopped run records nothing. Its output is teed live, hashed whole and
  only its tail kept (:mod:`vimesync.sop.joblog`).
- Its environment is the job's without the variables named like secrets, but ``--keep-env NAME``.
- ``--expect-exit``/``--expect-output``: a control run; ``--retries N``: a run that did not do
  what was expected runs again unchanged, every attempt kept; ``--again``: a further independent
  run of the same name at the same head (``--replace``: the first one replaced)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vimesync.app.evidence import RecordResult, RecordRunRequest, evidence_heads, record_manual_run
from vimesync.app.recordchecks import refuse_modified, replaced_record
from vimesync.app.result import Kind
from vimesync.app.toolruns import check_timeout, records_text, refuse_changed_records, refuse_untrusted
from vimesync.app.workspace import Workspace
from vimesync.errors import BadInput, JobStopped
from vimesync.sop.measured import MAX_ARGS, MAX_RUNS, Attempt, Expectation, Measured, MeasuredImage
from vimesync.sop.results import MAX_NOTE, AnyRecord, RunRecord, check_figures, check_name, now, one_line

if TYPE_CHECKING:
    from vimesync.sop.joblog import JobLog

DEFAULT_TIMEOUT = 24 * 3600.0
MAX_RETRIES = 10
Tee = Callable[[bytes], None]


@dataclass(frozen=True)
class _Outcome:
    code: int
    seconds: float
    started_at: str
    matched: bool
    began: float  # time.time() when it started


_TYPED_ONLY = ("exit", "duration", "host", "image")
_EXECUTED_ONLY = (
    *(
        "timeout",
        "keep_env",
        "expect_exit",
        "expect_output",
        "retries",
        "again",
        "junit",
        "figures_file",
        "worktree",
    ),
)
_UNSET = (None, (), 0, False)


def record_run(ws: Workspace, request: RecordRunRequest, *, tee: Tee | None = None) -> RecordResult:
    """``sop record run``: with a job after ``--``, run it and record what was measured (``tee``
    receives its output as it comes); without one, the typed record
    (:func:`vimesync.app.evidence.record_manual_run`). The flags of one are refused with the other."""
    if request.command:
        typed = [_flag(k) for k in _TYPED_ONLY if getattr(request, k) is not None]
        if typed:
            raise BadInput(f"{', '.join(typed)}: measured when vimesync runs the job; not with a job")
        return execute_run(ws, request, tee=tee)
    ran = [_flag(k) for k in _EXECUTED_ONLY if getattr(request, k) not in _UNSET]
    if ran:
        raise BadInput(f"{', '.join(ran)}: only with a job to run (after --)")
    return record_manual_run(ws, request)


def _flag(field: str) -> str:
    return "--" + field.replace("_", "-")


def execute_run(ws: Workspace, request: RecordRunRequest, *, tee: Tee | None = None) -> RecordResult:
    """Run the job at the head and record what was measured (see the module)."""
    name = check_name(request.name, "--name")
    note = one_line(request.note, "--note", MAX_NOTE) if request.note is not None else ""
    typed_figures = check_figures(list(request.figures))  # --figure, beside the measured facts
    refuse_untrusted(ws.untrusted, "sop record run -- CMD", "record it in a trusted checkout (a lab host)")
    if request.again and request.replace:
        raise BadInput("--again and --replace: give one of them")
    if not 0 <= request.retries <= MAX_RETRIES:
        raise BadInput(f"--retries {request.retries}: expected 0 to {MAX_RETRIES}")
    timeout = check_timeout(request.timeout, DEFAULT_TIMEOUT)
    pattern = _pattern(request.expect_output)
    down = ws.require_downstream()
    argv = (_program(request.command, ws, down), *request.command[1:])
    sync = ws.sync_name
    head, bound = evidence_heads(ws)
    refuse_modified(down, ws.bookkeeping, sync)
    old, index = _run_index(ws, sync, name, bound, request)
    before = records_text(ws.sop_root, sync)
    env, secrets = _job_env(ws, request.keep_env)
    from vimesync.sop.hostfacts import host_facts
    from vimesync.sop.joblog import clean, mask

    facts = host_facts(path=env.get("PATH", ""), checkout=down, env=env)
    image, image_notes = _image(ws, sync, bound)
    with _job_folder(down, head, request.worktree) as cwd:
        attempts, log = _attempts(argv, cwd, env, timeout, pattern, request, tee)
        refuse_changed_records(ws.sop_root, sync, before, "the job")
        last = attempts[-1]
        from vimesync.sop.jobfigures import read_job_figures, read_job_junit

        tests = read_job_junit(request.junit, cwd, last.began) if request.junit else None
        files = request.figures_file
        figures = read_job_figures(files, cwd) if files is not None else ()
    expect = None
    if request.expect_exit is not None or pattern is not None:
        expect = Expectation(_expected_exit(request), request.expect_output or "", last.matched)
    shown = [clean(mask(a, secrets)) for a in request.command[:MAX_ARGS]]
    measured = Measured(
        started_at=last.started_at,
        host=facts.host,
        os=facts.os,
        kernel=facts.kernel,
        cpus=facts.cpus,
        python=facts.python,
        gpus=facts.gpus,
        command=tuple(shown),
        log_sha256=log.sha256,
        log_bytes=log.size,
        tail=log.tail_lines(secrets),
        attempts=tuple(Attempt(a.code, round(a.seconds, 3), a.started_at) for a in attempts[:-1]),
        expect=expect,
        tests=tests,
        figures=figures,
        image=image,
    )
    rec = RunRecord(
        name=name,
        sha=bound,
        exit=last.code,
        duration=round(last.seconds, 3),
        figures=typed_figures,
        note=note,
        recorded_at=now(),
        measured=measured,
        run=index,
    )
    from vimesync.sop.results import record_run

    path = record_run(ws.sop_root, sync, rec)
    result = RecordResult(
        sync=sync, record=rec, file=path, head=head, kind=Kind.RECORD_RUN, judged=True, notes=image_notes
    )
    return result.replacing("runs", old)


def _image(ws: Workspace, sync: str, bound: str) -> tuple[MeasuredImage | None, tuple[str, ...]]:
    """The image the container declares (:mod:`vimesync.sop.imagefacts`), compared with the images
    ``sop record image`` recorded at the evidence head; notes on a declaration not usable."""
    from vimesync.sop.imagefacts import IMAGE_ENV, image_facts
    from vimesync.sop.records import load_images, recorded_digests

    declared, notes = image_facts(ws.settings.get(IMAGE_ENV))
    if declared is None:
        return None, notes
    here = recorded_digests(load_images(ws.sop_root, sync), bound) if declared.digest else {}
    return MeasuredImage(declared, checked=bool(here), arch=here.get(declared.digest, "")), notes


@contextmanager
def _job_folder(checkout: Path, head: str, worktree: bool) -> Iterator[Path]:
    """Where the job runs: the checkout root, or (``--worktree``) a temporary detached worktree
    of the head, removed afterwards however it is left."""
    if not worktree:
        yield checkout
        return
    from vimesync.safefs import scratch_dir
    from vimesync.sop.worktree import temporary_worktree

    with (
        scratch_dir("vimesync-run-") as scratch,
        temporary_worktree(checkout, head, Path(scratch) / "head") as tree,
    ):
        yield tree


def _attempts(
    argv: tuple[str, ...],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    pattern: Any,
    request: RecordRunRequest,
    tee: Tee | None,
) -> tuple[list[_Outcome], JobLog]:
    """Every attempt (more with ``--retries`` while it does not do as expected), the last one's log."""
    from vimesync.sop.joblog import JobLog

    attempts: list[_Outcome] = []
    for _ in range(request.retries + 1):
        log = JobLog(tee)
        attempts.append(_attempt(argv, cwd, env, timeout, log, pattern))
        if _as_expected(attempts[-1], request):
            break
    return attempts, log


def _expected_exit(request: RecordRunRequest) -> int:
    return request.expect_exit if request.expect_exit is not None else 0


def _as_expected(o: _Outcome, request: RecordRunRequest) -> bool:
    return o.code == _expected_exit(request) and o.matched


def _attempt(
    argv: tuple[str, ...], cwd: Path, env: dict[str, str], timeout: float, log: JobLog, pattern: Any
) -> _Outcome:
    """One run of the job, to its end (JobStopped when it passed its deadline)."""
    from vimesync.sop.toolrun import follow_job

    started_at, began = now(), time.time()
    run = follow_job(argv, cwd=cwd, env=env, timeout=timeout, sink=log)
    if run.code is None:
        raise JobStopped(f"the job stopped: it {run.stopped} (--timeout {timeout:g}); nothing recorded")
    matched = True if pattern is None else pattern.search(log.text()) is not None
    return _Outcome(run.code, run.seconds, started_at, matched, began)


def _pattern(text: str | None) -> Any:
    """``--expect-output`` compiled (RE2: linear time over the output's tail)."""
    if text is None:
        return None
    from vimesync.sop.resultvalues import MAX_VALUE, one_line

    one_line(text, "--expect-output", MAX_VALUE)
    from vimesync.regex import compile_re2

    try:
        return compile_re2(text)
    except ValueError as exc:
        raise BadInput(f"--expect-output: not an RE2 pattern ({str(exc)[:100]})") from None


def _program(command: tuple[str, ...], ws: Workspace, checkout: Path) -> str:
    """The program to run: a path as given, a bare name found on the job's PATH outside the checkout."""
    if not command:
        raise BadInput("sop record run: give the job after --, or --exit for a typed record")
    program = command[0]
    if not program or "\x00" in program:
        raise BadInput("the job's program: expected a program name or path")
    if os.sep in program:
        return program
    from vimesync.sop.hostfacts import program_on_path

    found = program_on_path(program, ws.settings.get("PATH") or "", checkout)
    if found is None:
        raise BadInput(f"{program[:80]!r}: not found on PATH (outside the checkout)")
    return found


def _job_env(ws: Workspace, keep: tuple[str, ...]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The job's environment (secrets dropped but ``keep``) and the secret values to mask."""
    from vimesync.procrun import child_env
    from vimesync.sop.joblog import secret_values

    environ = ws.settings.environ
    for k in keep:
        if k not in environ:
            raise BadInput(f"--keep-env {k[:60]!r}: not set in this environment")
    env = child_env(extra={k: environ[k] for k in keep})
    return env, secret_values(environ.items())


def _run_index(
    ws: Workspace, sync: str, name: str, bound: str, request: RecordRunRequest
) -> tuple[AnyRecord | None, int]:
    """(the record replaced, the index of this run among its name's runs at the head)."""
    from vimesync.sop.results import load_results

    runs = [r for r in load_results(ws.sop_root, sync).runs if r.name == name and r.sha == bound]
    if request.again and runs:
        index = max(r.run for r in runs) + 1
        if index > MAX_RUNS:
            raise BadInput(f"run {name!r}: {MAX_RUNS} runs are recorded at {bound[:8]} already")
        return None, index
    try:
        old = replaced_record(ws.sop_root, sync, "runs", name, bound, replace=request.replace)
    except BadInput as exc:
        raise BadInput(exc.message, hint="--again records it as another independent run") from None
    return old, 1
