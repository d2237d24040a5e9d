"""What vimesync measured when it ran a job itself (``sop record run --name NAME -- CMD``), kept
apart from what a person typed: a run record with a :class:`Measured` part was executed by
vimesync, one without it was typed (``--exit``/``--duration``)::

    [runs."PipelineRL four-GPU".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    exit = 0
    duration = 243.0
    recorded_at = "2026-11-30T19:04:03Z"

    [runs."PipelineRL four-GPU".f32a36f1d8f811260f92c1901e808c35ad13c4ea.measured]
    started_at = "2026-11-30T19:00:00Z"
    host = "h200-01"
    os = "Linux"
    kernel = "6.8.0-45-generic"
    cpus = 224
    python = "CPython 3.12.3"
    command = ["python3", "-m", "slime.train"]
    log_sha256 = "…"                # of the whole output, as the job wrote it
    log_bytes = 1048576
    tail = ["…", "…"]               # its last lines, secrets masked, one line each

    [runs."PipelineRL four-GPU".f32a36f1d8f811260f92c1901e808c35ad13c4ea.measured.image]
    ref = "ghcr.io/acme/slime:v7@sha256:…"   # as the container declared it (sop/imagefacts.py)
    digest = "sha256:…"
    source = "VIMESYNC_IMAGE"
    checked = true                  # image records at the head to compare with
    arch = "amd64"                  # the recorded image of this digest

A second independent run of the same name at the same head is ``[runs.NAME."SHA/2"]`` (``--again``);
earlier attempts of a retried run are ``attempts`` in its measured part. Pure: data in, data out
(:mod:`vimesync.sop.joblog` gathers the output, :mod:`vimesync.sop.results` reads and writes)."""

from __future__ import annotations

from dataclasses import dataclass

from vimesync.sop.imagefacts import ImageFacts

MAX_TAIL_LINES = 40
MAX_LINE = 300  # characters of a tail line, of an argument
MAX_ARGS = 50
MAX_ATTEMPTS = 11  # --retries 10, and the first
MAX_RUNS = 99  # independent runs of one name at one head


@dataclass(frozen=True)
class Attempt:
    """One earlier attempt of a retried run: how it ended."""

    exit: int  # negative: the signal that ended it
    duration: float
    started_at: str = ""


@dataclass(frozen=True)
class Expectation:
    """What a control run must do (``--expect-exit``, ``--expect-output``) and whether it did."""

    exit: int = 0
    output: str = ""  # an RE2 pattern the output's tail must match ("" : none)
    matched: bool = True  # the pattern matched (True without one)


@dataclass(frozen=True)
class MeasuredImage:
    """The image the job ran in, as declared to it, and whether ``sop record image`` records at
    the evidence head hold its digest (when the run was recorded)."""

    facts: ImageFacts
    checked: bool = False  # image records at the head held digests to compare it with
    arch: str = ""  # the architecture whose recorded image has this digest ("": none)


@dataclass(frozen=True)
class Measured:
    """The facts vimesync saw while it ran the job (the record's exit and duration are its own)."""

    started_at: str
    host: str
    os: str = ""
    kernel: str = ""
    cpus: int = 0
    python: str = ""
    gpus: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    log_sha256: str = ""
    log_bytes: int = 0
    tail: tuple[str, ...] = ()
    attempts: tuple[Attempt, ...] = ()  # the earlier attempts of a retried run, in order
    expect: Expectation | None = None
    tests: tuple[int, int, int, int] | None = None  # --junit: passed, failed, errors, skipped
    figures: tuple[tuple[str, str], ...] = ()  # --figures: what the job wrote
    image: MeasuredImage | None = None  # the image the container declared (sop/imagefacts.py)

    def as_expected(self, exit: int) -> bool:
        """The run did what was expected of it (without an expectation: it passed)."""
        if self.expect is None:
            return exit == 0 and (self.tests is None or (self.tests[1] == 0 and self.tests[2] == 0))
        return exit == self.expect.exit and self.expect.matched


def signal_name(code: int) -> str:
    """``SIGKILL`` for -9 (a negative exit status is the signal that ended the job); "" otherwise."""
    import signal

    if code >= 0:
        return ""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def exit_phrase(code: int) -> str:
    """``exit 0``, ``exit -9 (SIGKILL)``."""
    name = signal_name(code)
    return f"exit {code}" + (f" ({name})" if name else "")
