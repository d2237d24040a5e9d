"""JUnit XML, as GitHub, GitLab, Buildkite and Jenkins test reports read it.

The format is the common denominator of those readers: ``<testsuites>`` of ``<testsuite>`` of
``<testcase name classname time>``, each with at most one ``<failure message type>`` (its text the
detail) or ``<skipped message>``. Every string is made XML 1.0-safe first: control characters
and lone surrogates (a hostile patch name, a message quoting a file) are shown as escapes, since
XML cannot carry them at all, and the serializer escapes ``<``, ``&`` and quotes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path

from vimesync.outputs.model import Suite

# Not allowed in XML 1.0 (and the C1 controls and bidi overrides, which a viewer would act on).
_NOT_XML = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
MAX_TEXT = 64 * 1024  # of one failure's detail: a report stays readable and bounded


def xml_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` as XML 1.0 can carry it: forbidden characters shown as ``\\x1b``/``\\ud800``, cut."""
    if len(text) > limit:
        text = text[:limit] + "\n… (cut)"
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def _one_line(text: str) -> str:
    return xml_text(" ".join(text.split()), 1000)


def to_junit(suites: Iterable[Suite], *, name: str = "vimesync") -> bytes:
    """The JUnit XML document of ``suites`` (UTF-8, with an XML declaration)."""
    suites = list(suites)
    root = ET.Element("testsuites", name=xml_text(name, 200))
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for suite in suites:
        el = ET.SubElement(
            root,
            "testsuite",
            name=_one_line(suite.name),
            tests=str(len(suite.cases)),
            failures=str(suite.failures),
            errors="0",
            skipped=str(suite.skipped),
            time="0",
        )
        totals["tests"] += len(suite.cases)
        totals["failures"] += suite.failures
        totals["skipped"] += suite.skipped
        for case in suite.cases:
            attrs = {"name": _one_line(case.name), "classname": _one_line(case.classname), "time": "0"}
            if case.file:
                attrs["file"] = _one_line(case.file)
            if case.line:
                attrs["line"] = str(case.line)
            tc = ET.SubElement(el, "testcase", attrs)
            if case.failure is not None:
                f = ET.SubElement(tc, "failure", message=_one_line(case.failure), type="failure")
                f.text = xml_text(case.detail or case.failure)
            elif case.skipped is not None:
                ET.SubElement(tc, "skipped", message=_one_line(case.skipped))
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    root.set("time", "0")
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def check_junit_path(path: Path) -> None:
    """Refuse a ``--junit`` that cannot be written (a symlink there, or on a folder inside the
    checkout) before any work."""
    from vimesync.safefs import check_output_path

    check_output_path(path, what="--junit")


def write_junit(path: Path, suites: Iterable[Suite]) -> None:
    """The JUnit file of ``suites``, written atomically (never through a symlink)."""
    from vimesync.safefs import write_atomic

    write_atomic(path, to_junit(suites), what="--junit")
