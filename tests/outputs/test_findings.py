"""CI outputs of a real ``patches check``: JUnit (read back by junitparser), annotations at the
patch line of each failing hunk and the file line of each syntax error."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped

from tests.builders.stack import ENGINE, Stack
from vimesync.check.run import run_check
from vimesync.outputs.annotations import commands
from vimesync.outputs.findings import check_findings
from vimesync.outputs.junit import to_junit


def _junit(tmp_path: Path, data: bytes) -> JUnitXml:
    path = tmp_path / "junit.xml"
    path.write_bytes(data)
    return JUnitXml.fromfile(str(path))


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    core = ENGINE["eng/core.py"]
    s.add(
        "0001-two-hunks.patch",
        {
            "eng/core.py": core.replace("return x + 3\n", "return x + 3  # a\n").replace(
                "x + 25\n", "x + 25  # b\n"
            )
        },
    )
    s.add("0002-util.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def _hunk_lines(patch: Path) -> list[int]:
    return [i for i, line in enumerate(patch.read_text().splitlines(), 1) if line.startswith("@@ ")]


def test_failing_hunk_is_a_failed_case_and_an_annotation_at_its_patch_line(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the second hunk's context drifts: the annotation must point at the second @@ line.
    drifted = stack.drift(
        {"eng/core.py": ENGINE["eng/core.py"].replace("return x + 25\n", "return x + 250\n")}
    )
    monkeypatch.chdir(tmp_path)
    findings = check_findings(run_check(stack.opts(rev=drifted)))
    xml = _junit(tmp_path, to_junit(findings.suites))
    (suite,) = list(xml)
    cases = {c.name: c for c in suite}
    assert list(cases) == ["0001-two-hunks.patch", "0002-util.patch", "parse the patched tree"]
    failed = cases["0001-two-hunks.patch"]
    (failure,) = failed.result
    assert isinstance(failure, Failure)
    assert "eng/core.py hunk #2" in failure.message
    assert "expected: '    return x + 25\\n'" in failure.text and "hunk #1" not in failure.text
    assert isinstance(cases["0002-util.patch"].result[0], Skipped)
    assert suite.tests == 3 and suite.failures == 1 and suite.skipped == 2

    second = _hunk_lines(stack.dir / "0001-two-hunks.patch")[1]
    (note,) = findings.annotations
    assert (note.file, note.line) == ("patches/0001-two-hunks.patch", second)
    (line,) = commands(findings.annotations)
    assert line.startswith(
        f"::error file=patches/0001-two-hunks.patch,line={second},title=0001-two-hunks.patch%3A hunk #2 "
    )


def test_syntax_error_is_annotated_at_its_file_line(stack: Stack, tmp_path: Path) -> None:
    stack.add("0003-broken.patch", {"eng/util.py": "x = 1\n\ndef broken(:\n    pass\n"})
    report = run_check(stack.opts())
    findings = check_findings(report, root=tmp_path)
    (note,) = findings.annotations
    assert (note.file, note.line) == ("eng/util.py", 3)
    assert "SyntaxError" in note.message or "invalid syntax" in note.message
    xml = _junit(tmp_path, to_junit(findings.suites))
    names = {c.name: c for c in next(iter(xml))}
    assert isinstance(names["eng/util.py"].result[0], Failure)
    assert report.python is not None and report.python.files == 3  # __init__, core, util
    assert [n for n in names if n.startswith("parse ")] == ["parse 3 Python files (3.10 grammar)"]
    assert "## engine patch stack" in findings.summary and "`eng/util.py:3`" in findings.summary


def test_green_check_has_only_passing_cases(stack: Stack, tmp_path: Path) -> None:
    findings = check_findings(run_check(stack.opts()), root=tmp_path)
    xml = _junit(tmp_path, to_junit(findings.suites))
    assert xml.tests == 3 and xml.failures == 0 and xml.errors == 0 and not findings.annotations
    assert all(c.is_passed for s in xml for c in s)


HOSTILE = [
    "a\x00b\x1b[2J",  # NUL cannot be in XML at all; ESC would restyle a viewer
    "]]></failure><testcase name='forged'/>",
    "x\ud800y",  # a lone surrogate (surrogateescape'd path)
    "&amp; <b>bold</b> \"quoted\" 'single'",
    "line\nbreak\r\n\u202eevil",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_and_messages_cannot_break_the_xml(name: str, tmp_path: Path) -> None:
    from vimesync.outputs.model import Case, Suite

    suite = Suite(
        name,
        (Case(name, name, failure=name, detail=name * 3), Case("ok", name), Case(name, "c", skipped=name)),
    )
    data = to_junit([suite])
    root = ET.fromstring(data)  # well-formed
    assert [tc.get("name") for tc in root.iter("testcase")][1] == "ok"
    assert len(list(root.iter("testcase"))) == 3 and len(list(root.iter("failure"))) == 1
    xml = _junit(tmp_path, data)
    assert xml.tests == 3 and xml.failures == 1 and xml.skipped == 1
    text = data.decode("utf-8")
    assert (
        "\x00" not in text
        and "\x1b" not in text
        and "\u202e" not in text
        and "forged" not in {tc.get("name") for tc in root.iter("testcase")}
    )


def test_audit_cases_fail_for_unreviewed_and_stale_paths(tmp_path: Path) -> None:
    from vimesync.audit.model import ABSENT, AuditResult, PathAudit
    from vimesync.outputs.findings import audit_findings

    paths = (
        PathAudit("vime/a.py", "identical", "1" * 40, review="verified"),
        PathAudit("vime/b,c:d.py", "overlay", "2" * 40, review="unreviewed"),
        PathAudit("vime/e.py", "downstream-only", "3" * 40, review="stale"),
        PathAudit("vime/gone.py", "deleted", ABSENT, review="reviewed"),
    )
    result = AuditResult("b" * 40, "h" * 40, "t" * 40, "s1", "sop/reviews/s1.toml", paths)
    findings = audit_findings(result, upstream_name="Slime")
    path = tmp_path / "a.xml"
    path.write_bytes(to_junit(findings.suites))
    (suite,) = list(JUnitXml.fromfile(str(path)))
    assert suite.tests == 4 and suite.failures == 2
    failed = sorted(c.name for c in suite if not c.is_passed)
    assert failed == ["vime/b,c:d.py", "vime/e.py"]
    lines = commands(findings.annotations)
    assert [line.split(",title=")[0] for line in lines] == [
        "::error file=vime/b%2Cc%3Ad.py",
        "::error file=vime/e.py",
    ]
    assert "## Final audit" in findings.summary
