"""A JUnit XML file read into counts: passed, failed, errors, skipped, the duration and the first
failing tests' ids (``vimesync sop record tests``).

The dialects CI tools write: pytest's ``--junitxml`` (``<testsuites><testsuite><testcase>``), a
bare ``<testsuite>`` root, nested suites (Surefire, Jest, Go's gotestsum); a testcase with a
``<failure>`` child failed, with an ``<error>`` child errored, with ``<skipped>`` was skipped,
otherwise it passed.

The file is untrusted (a CI artifact, a pull request's output): it is parsed by ``defusedxml``
(no DTD, no entity expansion, no external references, so no billion laughs and no file reads),
streamed and cleared testcase by testcase, with its size, element count and depth bounded. An
error names the file and the line the parser gives, never the content; test names kept for the
report are cut and stripped of control characters (each renderer escapes them again)."""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from vimesync.errors import BadInput

MAX_JUNIT_BYTES = 64 * 1024 * 1024
MAX_ELEMENTS = 4_000_000  # every element, testcases and their children
MAX_DEPTH = 64
MAX_FAILING = 20  # failing test ids kept (the counts keep the rest)
MAX_ID = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_OUTCOMES = ("failure", "error", "skipped")
# defusedxml's refusals by class (their own text quotes the file's content: never shown).
_REFUSED = {
    "DTDForbidden": "a DTD",
    "EntitiesForbidden": "an entity declaration",
    "ExternalReferenceForbidden": "an external reference",
    "NotSupportedError": "an unsupported construct",
}


@dataclass(frozen=True)
class JunitCounts:
    passed: int
    failed: int
    errors: int
    skipped: int
    duration: float  # seconds
    failing: tuple[str, ...]  # ids of failed or errored tests, at most MAX_FAILING

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped


def clean_id(text: str) -> str:
    """A test id from the file, one line, no control or invisible characters, cut to MAX_ID."""
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= MAX_ID else text[: MAX_ID - 1] + "…"


def _seconds(value: str | None) -> float:
    """A ``time`` attribute ("1.25", "1,234.5" from some tools); 0 when absent or not a number."""
    if not value or len(value) > 32:
        return 0.0
    try:
        t = float(value.replace(",", ""))
    except ValueError:
        return 0.0
    return t if math.isfinite(t) and 0 <= t < 1e9 else 0.0


def _test_id(classname: str | None, name: str | None) -> str:
    name, classname = name or "?", classname or ""
    return clean_id(f"{classname}::{name}" if classname else name)


def read_junit(
    path: Path, *, max_bytes: int = MAX_JUNIT_BYTES, cases: dict[str, str] | None = None
) -> JunitCounts:
    """The counts of the JUnit XML file at ``path``; BadInput naming it (and the line) when it is
    missing, too big, not XML, hostile XML (a DTD, entities) or not JUnit."""
    from vimesync.safefs import read_input

    data = read_input(path, max_bytes=max_bytes, what="JUnit file")
    return parse_junit(data, where=str(path), cases=cases)


# A case's outcome in a regression matrix (``sop regress``), worst last.
CASE_OUTCOMES = {"passed": "passed", "skipped": "skipped", "failure": "failed", "error": "error"}
_WORSE = ("passed", "skipped", "failed", "error")
MAX_CASES = 10_000  # cases kept by id for a matrix


def parse_junit(data: bytes, *, where: str, cases: dict[str, str] | None = None) -> JunitCounts:
    """The counts of JUnit XML ``data``; with ``cases``, every testcase's outcome is put there too
    by its id (``classname::name``; one id twice, as pytest writes a teardown error: the worse)."""
    from xml.etree.ElementTree import ParseError
    from xml.parsers import expat

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    failing: list[str] = []
    stack: list[str] = []
    elements = 0
    root_time: float | None = None
    suite_times: list[float] = []  # the suites directly under the root (or the root suite)
    case_time = 0.0
    try:
        events = iterparse(io.BytesIO(data), events=("start", "end"), forbid_dtd=True)
        for event, elem in events:
            tag = elem.tag.rsplit("}", 1)[-1] if isinstance(elem.tag, str) else ""
            if event == "start":
                elements += 1
                if elements > MAX_ELEMENTS:
                    raise BadInput(f"{where}: over {MAX_ELEMENTS:,} XML elements: not read")
                if len(stack) >= MAX_DEPTH:
                    raise BadInput(f"{where}: XML nested over {MAX_DEPTH} deep: not read")
                if not stack:
                    if tag not in ("testsuites", "testsuite"):
                        raise BadInput(
                            f"{where}: not JUnit XML (the root element is not <testsuites> or <testsuite>)"
                        )
                    if elem.get("time") is not None:
                        root_time = _seconds(elem.get("time"))
                stack.append(tag)
                continue
            stack.pop()
            if tag == "testcase":
                case_time += _seconds(elem.get("time"))
                kinds = {c.tag.rsplit("}", 1)[-1] for c in elem if isinstance(c.tag, str)}
                outcome = next((k for k in _OUTCOMES if k in kinds), "passed")
                counts[outcome] += 1
                if outcome in ("failure", "error") and len(failing) < MAX_FAILING:
                    failing.append(_test_id(elem.get("classname"), elem.get("name")))
                if cases is not None:
                    _keep_case(cases, _test_id(elem.get("classname"), elem.get("name")), outcome, where)
                elem.clear()  # streamed: a cleared testcase keeps no children or attributes
            elif tag == "testsuite" and len(stack) == 1 and stack[0] == "testsuites":
                suite_times.append(_seconds(elem.get("time")))
                elem.clear()
            elif tag == "testsuite" and not stack:
                suite_times.append(_seconds(elem.get("time")))
    except ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        what = expat.ErrorString(exc.code) if isinstance(getattr(exc, "code", None), int) else "malformed"
        raise BadInput(f"{where}{f':{line}' if line else ''}: not well-formed XML ({what})") from None
    except DefusedXmlException as exc:
        kind = _REFUSED.get(type(exc).__name__, "an XML construct")
        raise BadInput(
            f"{where}: refused XML: it holds {kind} (never read: no DTD, entities or references)"
        ) from None
    duration = root_time if root_time else (sum(suite_times) or case_time)
    return JunitCounts(
        passed=counts["passed"],
        failed=counts["failure"],
        errors=counts["error"],
        skipped=counts["skipped"],
        duration=round(duration, 3),
        failing=tuple(failing),
    )


def _keep_case(cases: dict[str, str], case: str, outcome: str, where: str) -> None:
    new = CASE_OUTCOMES[outcome]
    old = cases.get(case)
    if old is None and len(cases) >= MAX_CASES:
        raise BadInput(f"{where}: over {MAX_CASES:,} test cases for a matrix: name fewer tests")
    if old is None or _WORSE.index(new) > _WORSE.index(old):
        cases[case] = new
