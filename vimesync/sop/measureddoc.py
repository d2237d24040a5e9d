"""The ``measured`` table of a run in ``sop/records/<sync>.toml`` (``[runs.NAME.SHA.measured]``):
what vimesync saw when it ran the job itself (:mod:`vimesync.sop.measured`), as the file holds
it, decoded by its field types when read (the file is repository content) and written back by
:func:`measured_values`. Split from :mod:`vimesync.sop.results`, which reads and writes the rest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from vimesync.safefs import Range, Size, Text
from vimesync.sop.imagefacts import ImageFacts
from vimesync.sop.measured import MAX_ARGS, MAX_ATTEMPTS, MAX_LINE, MAX_TAIL_LINES, Measured, MeasuredImage
from vimesync.sop.records import DIGEST, IMAGE_REF
from vimesync.sop.resultvalues import FIGURE_NAME, HOST, MAX_COUNT, MAX_SECONDS, MAX_VALUE, UNPRINTABLE

Line = Annotated[str, Text(max=MAX_LINE, forbid=UNPRINTABLE.pattern, what="one line")]

# The value types of the records file (results.py uses them too).
Count = Annotated[int, Range(0, MAX_COUNT)]
Seconds = Annotated[float, Range(0, MAX_SECONDS)]
Value = Annotated[str, Text(max=MAX_VALUE, forbid=UNPRINTABLE.pattern, what="one line")]
At = Annotated[str, Text(max=40, forbid=UNPRINTABLE.pattern, what="one line")]


@dataclass(frozen=True)
class _AttemptDoc:
    exit: Annotated[int, Range(-255, 255)]
    duration: Seconds = 0.0
    started_at: At = ""


@dataclass(frozen=True)
class _ExpectDoc:
    exit: Annotated[int, Range(-255, 255)] = 0
    output: Annotated[str, Text(max=MAX_VALUE, forbid=UNPRINTABLE.pattern, what="one line")] = ""
    matched: bool = True


_Sha256 = Annotated[str, Text(pattern=f"(?:{DIGEST.pattern})?", what="a sha256 digest")]


@dataclass(frozen=True)
class _ImageDoc:
    ref: Annotated[str, Text(pattern=f"(?:{IMAGE_REF.pattern})?", what="an image reference")] = ""
    digest: _Sha256 = ""
    id: _Sha256 = ""
    source: Annotated[
        str, Text(pattern=r"VIMESYNC_IMAGE|/run/\.containerenv", what="where it was declared")
    ] = "VIMESYNC_IMAGE"
    checked: bool = False
    arch: Annotated[str, Text(pattern="[a-z0-9_]{0,32}", what="an architecture")] = ""


@dataclass(frozen=True)
class MeasuredDoc:
    """``[runs.NAME.SHA.measured]``: what vimesync saw when it ran the job (sop/measured.py)."""

    started_at: At
    host: Annotated[str, Text(pattern=f"(?:{HOST.pattern})?", what="a host name")] = ""
    os: At = ""
    kernel: Annotated[str, Text(max=MAX_VALUE, forbid=UNPRINTABLE.pattern, what="one line")] = ""
    cpus: Annotated[int, Range(0, 1 << 20)] = 0
    python: At = ""
    gpus: Annotated[tuple[Value, ...], Size(64)] = ()
    command: Annotated[tuple[Line, ...], Size(MAX_ARGS)] = ()
    log_sha256: Annotated[str, Text(pattern="(?:[0-9a-f]{64})?", what="a sha256")] = ""
    log_bytes: Annotated[int, Range(0, 1 << 62)] = 0
    tail: Annotated[tuple[Line, ...], Size(MAX_TAIL_LINES)] = ()
    attempts: Annotated[tuple[_AttemptDoc, ...], Size(MAX_ATTEMPTS)] = ()
    expect: _ExpectDoc | None = None
    tests: Annotated[dict[Literal["passed", "failed", "errors", "skipped"], Count], Size(4)] = field(
        default_factory=dict
    )
    figures: Annotated[
        dict[Annotated[str, Text(pattern=FIGURE_NAME.pattern, what="a figure name")], Value], Size(100)
    ] = field(default_factory=dict)
    image: _ImageDoc | None = None


def measured(d: MeasuredDoc) -> Measured:
    from vimesync.sop.measured import Attempt, Expectation

    t = d.tests
    tests = (t.get("passed", 0), t.get("failed", 0), t.get("errors", 0), t.get("skipped", 0)) if t else None
    expect = Expectation(d.expect.exit, d.expect.output, d.expect.matched) if d.expect is not None else None
    return Measured(
        started_at=d.started_at,
        host=d.host,
        os=d.os,
        kernel=d.kernel,
        cpus=d.cpus,
        python=d.python,
        gpus=d.gpus,
        command=d.command,
        log_sha256=d.log_sha256,
        log_bytes=d.log_bytes,
        tail=d.tail,
        attempts=tuple(Attempt(a.exit, a.duration, a.started_at) for a in d.attempts),
        expect=expect,
        tests=tests,
        figures=tuple(d.figures.items()),
        image=_image(d.image),
    )


def _image(d: _ImageDoc | None) -> MeasuredImage | None:
    if d is None or not (d.ref or d.digest or d.id):
        return None
    facts = ImageFacts(d.ref, d.digest, d.id, d.source)
    return MeasuredImage(facts, d.checked, d.arch if d.checked and d.digest else "")


def measured_values(m: Measured) -> dict[str, Any]:
    """The ``measured`` table of a run (empty values left out by the writer)."""
    values: dict[str, Any] = {
        "started_at": m.started_at,
        "host": m.host,
        "os": m.os,
        "kernel": m.kernel,
        "cpus": m.cpus,
        "python": m.python,
        "gpus": list(m.gpus),
        "command": list(m.command),
        "log_sha256": m.log_sha256,
        "log_bytes": m.log_bytes,
        "tail": list(m.tail),
    }
    if m.attempts:
        values["attempts"] = [
            {"exit": a.exit, "duration": a.duration, "started_at": a.started_at} for a in m.attempts
        ]
    if m.expect is not None:
        values["expect"] = {"exit": m.expect.exit, "output": m.expect.output, "matched": m.expect.matched}
    if m.tests is not None:
        values["tests"] = dict(zip(("passed", "failed", "errors", "skipped"), m.tests, strict=True))
    if m.figures:
        values["figures"] = dict(m.figures)
    if m.image is not None:
        f = m.image.facts
        values["image"] = {"ref": f.ref, "digest": f.digest, "id": f.id, "source": f.source}
        values["image"].update(checked=m.image.checked, arch=m.image.arch)
    return {k: v for k, v in values.items() if v not in ("", [], 0) or k == "log_bytes"}
