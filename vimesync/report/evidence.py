"""The recorded tests and runs of the Validation section in the voice of a sync PR: the phrases
here, the Markdown lines in :func:`vimesync.report.evidencemd.render_evidence`::

    - CPU regressions: 292 passed; baked runtime image checks: 175 passed.
    - PipelineRL four-GPU: exit 0 in 4m03s on h200-01 (rollouts 3, flush interval 2).
    - Recorded in `sop/records/4c193f1f..8c17b676.toml`, committed by Alice <alice@example.com>.

    Not evidence for f32a36f1 (recorded at other heads):

    - CPU regressions at 3f48e09f: 290 passed, 2 failed.

Every name, figure, note and committer comes from a file a pull request can edit: the phrases
here hold numbers only, and each renderer escapes the rest for its output."""

from __future__ import annotations

from vimesync.sop.cigroups import groups_phrase
from vimesync.sop.cirecords import CiRecord, ci_phrase
from vimesync.sop.gates import Gate, gate
from vimesync.sop.precommit import PrecommitRecord, precommit_phrase
from vimesync.sop.regress import RegressRecord, regress_phrase
from vimesync.sop.results import AnyRecord, Evidence, RunRecord, TestRecord, format_duration
from vimesync.text import agree, plural


def tests_phrase(t: TestRecord) -> str:
    """``292 passed`` or ``290 passed, 2 failed, 1 error, 3 skipped`` (numbers only)."""
    parts = [f"{t.passed:,} passed"]
    if t.failed:
        parts.append(f"{t.failed:,} failed")
    if t.errors:
        parts.append(plural(t.errors, "error"))
    if t.skipped:
        parts.append(f"{t.skipped:,} skipped")
    return ", ".join(parts)


def run_phrase(r: RunRecord) -> str:
    """``exit 0 in 4m03s`` and, for a run vimesync executed, what was expected of it and its
    retries: ``exit 1 in 12s, expected failure reproduced``, ``exit 0 in 4m03s, passed on an
    unchanged retry (attempt 1: exit -9 (SIGKILL))`` (numbers and fixed words only)."""
    from vimesync.sop.measured import exit_phrase

    phrase = exit_phrase(r.exit) + (f" in {format_duration(r.duration)}" if r.duration is not None else "")
    m = r.measured
    if m is None:
        return phrase
    if m.expect is not None:
        phrase += ", " + _expectation(r)
    if m.attempts:
        earlier = "; ".join(f"attempt {i}: {exit_phrase(a.exit)}" for i, a in enumerate(m.attempts, 1))
        if r.ok:
            phrase += f", passed on an unchanged retry ({earlier})"
        else:
            phrase += f", {len(m.attempts) + 1} attempts ({earlier})"
    return phrase


def _expectation(r: RunRecord) -> str:
    assert r.measured is not None and r.measured.expect is not None
    e = r.measured.expect
    if r.ok:
        return "expected failure reproduced" if e.exit != 0 else "output as expected"
    why = [f"expected exit {e.exit}"] if r.exit != e.exit else []
    if not e.matched:
        why.append("the expected output not found")
    return "not as expected (" + ", ".join(why) + ")"


_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def independent_phrase(runs: list[RunRecord]) -> str:
    """Several independent runs of one name at one head, summed up: ``two independent complete
    runs, both exit 0, 4m03s and 4m10s`` (``complete``: every one ended by itself, exit 0; typed
    ones said so)."""
    n = len(runs)
    count = _COUNTS.get(n, f"{n:,}")
    exits = sorted({r.exit for r in runs})
    complete = "complete " if exits == [0] and all(r.ok for r in runs) else ""
    if len(exits) == 1:
        both = "both" if n == 2 else "all"
        how = f"{both} exit {exits[0]}"
    else:
        how = "exits " + ", ".join(str(r.exit) for r in runs)
    times = [format_duration(r.duration) for r in runs if r.duration is not None]
    if times:
        how += ", " + (" and ".join(times) if len(times) == 2 else ", ".join(times))
    typed = sum(1 for r in runs if r.measured is None)
    kind = "measured" if not typed else "typed" if typed == n else f"{typed:,} typed"
    return f"{count} independent {complete}runs, {how} ({kind})"


def provenance(r: RunRecord) -> str:
    """``typed`` (someone wrote it down) or ``measured`` (vimesync ran it)."""
    return "typed" if r.measured is None else "measured"


def run_facts(r: RunRecord) -> str:
    """What vimesync measured of the host, plain: ``Linux 6.8.0, 224 CPUs, 4 GPUs (NVIDIA H200)``
    (the caller escapes it; "" for a typed run)."""
    m = r.measured
    if m is None:
        return ""
    parts = [f"{m.os} {m.kernel}".strip()] if m.os or m.kernel else []
    if m.cpus:
        parts.append(plural(m.cpus, "CPU"))
    if m.gpus:
        kinds = sorted(set(m.gpus))
        parts.append(f"{plural(len(m.gpus), 'GPU')} ({', '.join(kinds[:3])})")
    if m.python:
        parts.append(m.python)
    return ", ".join(parts)


def measured_image(r: RunRecord) -> tuple[str, str]:
    """The image a run was measured in, plain: (``registry/x:1@sha256:abcd1234``, who declared it
    and what the records say of it: ``, as VIMESYNC_IMAGE declares it, the recorded amd64 image``
    or ``…, not an image recorded at the head``); ("", "") when none was declared. vimesync reads
    the declaration, it does not pull the image: the phrase says whose word it is. The caller
    escapes both and writes ``in image X`` + the second."""
    from vimesync.sop.imagefacts import image_phrase

    image = r.measured.image if r.measured is not None else None
    if image is None:
        return "", ""
    f = image.facts
    said = f", as {f.source or 'the container'} declares it"
    if image.checked:
        said += f", the recorded {image.arch} image" if image.arch else ", not an image recorded at the head"
    return image_phrase(f.ref, f.digest, f.id), said


def describe_record(rec: AnyRecord) -> str:
    """One plain line (the CLI's; the caller escapes it for its output)."""
    if isinstance(rec, PrecommitRecord):
        failed = ", ".join(h.id for h in rec.failed)
        return precommit_phrase(rec) + (f"; failed: {failed}" if failed else "")
    if isinstance(rec, RegressRecord):
        return regress_phrase(rec) + f" (before: {rec.before[:8]})"
    if isinstance(rec, CiRecord):
        failing = f" (failing: {', '.join(rec.failing)})" if rec.failing else ""
        return ci_phrase(rec, str).removeprefix(rec.name).lstrip(": ") + failing  # the name is shown beside
    if isinstance(rec, TestRecord):
        return tests_phrase(rec)
    extra = [f"{k} {v}" for k, v in (*rec.figures, *(rec.measured.figures if rec.measured else ()))]
    shown = f" ({', '.join(extra)})" if extra else ""
    if rec.measured is not None:
        image, said = measured_image(rec)
        in_image = f", in image {image}{said}" if image else ""
        return f"{run_phrase(rec)}, measured on {rec.measured.host}{shown}{in_image}"
    return run_phrase(rec) + (f" on {rec.host}" if rec.host else "") + shown + ", typed"


PRECOMMIT = "pre-commit"  # what [evidence] required calls the changed-file pre-commit record
Required = TestRecord | RunRecord | RegressRecord | PrecommitRecord


def tests_gate(evidence: Evidence | None, required: tuple[str, ...]) -> Gate:
    """The ``tests`` gate: every record ``sop/gates.toml [evidence] required`` names is recorded
    green at the evidence head. A name is matched against every kind a name can select: a suite
    (something passed, nothing failed or errored), a run (exit 0), a regression matrix by its
    ``--name`` (every test passes after) and ``pre-commit`` (every hook passed). A name holds when
    it is recorded there and *every* record of it there is green: red is never masked by a green
    record of another kind (a run ``unit`` at exit 0 beside a red suite ``unit``), and the detail
    names the red one. Nothing required, or no records read, is *not checked*: a gate holds on
    evidence only."""
    if not required:
        return gate("tests", "not checked", "sop/gates.toml [evidence] required names no suite or run")
    if evidence is None:
        return gate("tests", "not checked", "no records read (needs a vimesync.toml, a head and a sync name)")
    at = evidence.evidence_head[:8]
    recorded: tuple[Required, ...] = (*evidence.tests, *evidence.runs, *evidence.regress, *evidence.precommit)
    held: list[str] = []
    unmet: list[str] = []
    first: tuple[str, type[AnyRecord] | None] | None = None  # the first unmet name, its kind if known
    for name in required:
        here = [r for r in recorded if _named(r, name)]
        red = [r for r in here if not r.ok]
        if here and not red:
            held.append(f"{name}: {_phrases(here)}")
            continue
        elsewhere = [r for r in evidence.not_evidence if not isinstance(r, CiRecord) and _named(r, name)]
        if red:
            unmet.append(f"{name}: {_red_phrase(red, here)}")
            here = red  # the next command records the red one again
        elif elsewhere:
            unmet.append(f"{name} recorded only at other heads, not {at}")
        else:
            unmet.append(f"{name} not recorded")
        if first is None:
            kinds = [type(r) for r in (*here, *elsewhere)]
            first = (name, kinds[0] if kinds else None)
    if first is not None:
        more = len(unmet) - 1
        command = next_command(*first) + (f" ({more:,} more unmet)" if more else "")
        return Gate("tests", "failed", f"at {at}: " + "; ".join(unmet), command)
    return gate("tests", "held", f"at {at}: " + "; ".join(held))


def with_ci_records(ci: Gate, evidence: Evidence | None) -> Gate:
    """The ``ci`` gate with the CI snapshots recorded at the evidence head (``sop record ci``)
    in it: one that is red (a failed job, a failed or canceled build, nothing run) fails the
    gate, one still running keeps it from holding (pending), whatever the exact-head CI says:
    red is never masked by green. A green snapshot does not stand in for exact-head CI."""
    # A snapshot in which nothing ran and no build failed says nothing either way: left out.
    red = [
        c
        for c in (evidence.ci if evidence else ())
        if not c.ok and (c.failed or c.pending or c.build_failed or c.unmet_groups)
    ]
    if not red or ci.state == "off":
        return ci
    failed = [c for c in red if _red(c)]
    shown = "; ".join(ci_phrase(c) + _unmet(c) for c in (failed or red)[:3])
    detail = f"{ci.detail.rstrip('.')}; recorded at {red[0].sha[:8]}: {shown}"
    if failed or ci.state == "failed":
        return Gate("ci", "failed", detail, ci.command or RECORD_CI)
    return Gate("ci", "pending", detail, ci.command or RECORD_CI)


RECORD_CI = "vimesync sop record ci"
_STILL_RUNNING = frozenset({"running", "scheduled", "creating", "blocked"})  # Buildkite build states


def _unmet(c: CiRecord) -> str:
    """``; required groups not all green: GPU jobs 38/40`` (the caller escapes the names)."""
    if not c.unmet_groups:
        return ""
    return f"; required {agree(len(c.unmet_groups), 'group', 'groups')} not all green: " + groups_phrase(
        c.unmet_groups[:5]
    )


def _red(c: CiRecord) -> bool:
    """A snapshot that failed, as against one taken while its build still ran (or one whose
    required group ran no job, or failed one)."""
    if c.failed or any(g.failed or not g.total for g in c.unmet_groups):
        return True
    if c.source == "buildkite":
        return c.state not in _STILL_RUNNING and not (c.state == "" and c.pending)
    return False


def next_command(name: str, kind: type[AnyRecord] | None) -> str:
    """The command that records ``name``, by the kind of record it was seen as (at this head or
    another); a name never recorded is a suite unless it is ``pre-commit``. The name is one of
    ``[evidence] required`` (plain characters only, :data:`vimesync.sop.results.NAME`), quoted
    for a shell; each renderer escapes the command for its output."""
    import shlex

    quoted = shlex.quote(name)
    if kind is PrecommitRecord or (kind is None and name == PRECOMMIT):
        return "vimesync sop record precommit"
    if kind is RunRecord:
        return f"vimesync sop record run --name {quoted} -- CMD [ARG...]"
    if kind is RegressRecord:
        return f"vimesync sop regress --name {quoted} --test ..."
    suite = f"vimesync sop record tests --suite {quoted} --junit FILE"
    if kind is None:  # a suite, a run or a matrix: the first is the most common
        return suite + f" (or sop record run / sop regress --name {quoted})"
    return suite


def _named(rec: AnyRecord, name: str) -> bool:
    if isinstance(rec, PrecommitRecord):
        return name in (PRECOMMIT, rec.name)
    return rec.name == name


# What each kind a required name selects is called beside another kind of the same name.
_KIND_WORD: dict[type, str] = {
    TestRecord: "suite",
    RunRecord: "run",
    RegressRecord: "matrix",
    PrecommitRecord: "",  # its phrase names it ("Changed-file pre-commit fails ...")
}


def _red_phrase(red: list[Required], here: list[Required]) -> str:
    """A name's red records at the evidence head; beside records of other kinds of the same name
    there, each is named by its kind, and the green ones are said not to mask it."""
    if len(here) == 1:
        return _phrase(red[0])
    green = [r for r in here if r.ok]
    shown = f"red {_phrases(red, kinds=True)}"
    return shown + (f" (not masked by the green {_phrases(green, kinds=True)})" if green else "")


def _phrases(recs: list[Required], *, kinds: bool = False) -> str:
    """The records' phrases; each named by its kind when there are several (or ``kinds``)."""
    if len(recs) == 1 and not kinds:
        return _phrase(recs[0])
    return " and ".join(f"{_KIND_WORD[type(r)]} {_phrase(r)}".lstrip() for r in recs)


def _phrase(rec: Required) -> str:
    if isinstance(rec, PrecommitRecord):
        failed = ", ".join(h.id for h in rec.failed[:10])
        return precommit_phrase(rec) + (f"; failed: {failed}" if failed else "")
    if isinstance(rec, RegressRecord):
        return regress_phrase(rec)
    if isinstance(rec, TestRecord):
        return tests_phrase(rec)
    return f"{run_phrase(rec)}, {provenance(rec)}"
