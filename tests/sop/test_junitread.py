"""JUnit XML read into counts (``sop record tests``): the dialects CI tools write, and hostile
files refused with the file (and line) named and none of their content shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync.errors import BadInput
from vimesync.sop import junitread
from vimesync.sop.junitread import parse_junit, read_junit

PYTEST = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="12.5">
<testcase classname="tests.test_a" name="test_ok" time="0.1"/>
<testcase classname="tests.test_a" name="test_ok2" time="0.1"/>
<testcase classname="tests.test_a" name="test_bad[x]" time="1"><failure message="boom">tb</failure></testcase>
<testcase classname="tests.test_a" name="test_err"><error message="e">tb</error></testcase>
<testcase classname="tests.test_a" name="test_skip"><skipped message="no gpu"/></testcase>
</testsuite></testsuites>"""


def test_pytest_junitxml_counts() -> None:
    c = parse_junit(PYTEST, where="r.xml")
    assert (c.passed, c.failed, c.errors, c.skipped, c.duration) == (2, 1, 1, 1, 12.5)
    assert c.failing == ("tests.test_a::test_bad[x]", "tests.test_a::test_err")


@pytest.mark.parametrize(
    ("xml", "want"),
    [
        # a bare <testsuite> root (Surefire), its time
        (
            b'<testsuite time="3"><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>',
            (1, 1, 3.0),
        ),
        # nested suites (Jest, gotestsum), no root time: the top suites' times
        (
            b'<testsuites><testsuite time="1"><testsuite time="9"><testcase name="a"/>'
            b"</testsuite></testsuite>"
            b'<testsuite time="2"><testcase name="b"/></testsuite></testsuites>',
            (2, 0, 3.0),
        ),
        # no suite times at all: the testcases' times
        (
            b'<testsuites><testsuite><testcase name="a" time="1.5"/><testcase name="b" time="x"/>'
            b"</testsuite></testsuites>",
            (2, 0, 1.5),
        ),
        # a namespace, and a failure and an error on one testcase (counted once, as failed)
        (
            b'<t:testsuites xmlns:t="urn:x"><t:testsuite><t:testcase name="a"><t:failure/><t:error/>'
            b"</t:testcase></t:testsuite></t:testsuites>",
            (0, 1, 0.0),
        ),
    ],
)
def test_dialects(xml: bytes, want: tuple[int, int, float]) -> None:
    c = parse_junit(xml, where="r.xml")
    assert (c.passed, c.failed, c.duration) == want


def test_failing_ids_are_capped_and_cleaned() -> None:
    cases = b"".join(
        b'<testcase classname="c" name="t%d&#10;&#9;x&#x202e;"><failure/></testcase>' % i for i in range(30)
    )
    c = parse_junit(b"<testsuite>" + cases + b"</testsuite>", where="r.xml")
    assert c.failed == 30 and len(c.failing) == junitread.MAX_FAILING
    assert c.failing[0] == "c::t0  x" and all("\n" not in f and "\u202e" not in f for f in c.failing)
    long = b'<testsuite><testcase name="' + b"x" * 5000 + b'"><error/></testcase></testsuite>'
    assert len(parse_junit(long, where="r.xml").failing[0]) == junitread.MAX_ID


SECRET = "s3cr3t-content"


@pytest.mark.parametrize(
    ("xml", "needle"),
    [
        (
            b'<!DOCTYPE x [<!ENTITY a "s3cr3t-content">]><testsuites>&a;</testsuites>',
            "r.xml: refused XML: it holds a DTD",
        ),
        (
            b'<!DOCTYPE x [<!ENTITY a "s3cr3t-content"><!ENTITY b "&a;&a;&a;&a;">]>'
            b"<testsuites>&b;</testsuites>",
            "refused XML",
        ),
        (b'<!DOCTYPE x SYSTEM "file:///etc/s3cr3t-content"><testsuites/>', "refused XML"),
        (
            b"<testsuites>\n<testsuite>\n<testcase name='s3cr3t-content'>\n</testsuite>",
            "r.xml:4: not well-formed XML (mismatched tag)",
        ),
        (b"", "r.xml:1: not well-formed XML (no element found)"),
        (b"s3cr3t-content", "r.xml:1: not well-formed XML (syntax error)"),
        (
            b"<html><s3cr3t-content/></html>",
            "r.xml: not JUnit XML (the root element is not <testsuites> or <testsuite>)",
        ),
        (b"<testsuites>" + b"<testsuite>" * 100, "XML nested over 64 deep"),
        (b"\xff\xfe<\x00t\x00", "not well-formed XML"),
    ],
)
def test_hostile_xml_is_refused_naming_the_file_not_its_content(xml: bytes, needle: str) -> None:
    with pytest.raises(BadInput) as exc:
        parse_junit(xml, where="r.xml")
    assert needle in str(exc.value) and SECRET not in str(exc.value)


def test_element_and_size_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(junitread, "MAX_ELEMENTS", 10)
    with pytest.raises(BadInput, match="over 10 XML elements"):
        parse_junit(b"<testsuite>" + b'<testcase name="a"/>' * 20 + b"</testsuite>", where="r.xml")
    big = tmp_path / "big.xml"
    big.write_bytes(b"<testsuite>" + b" " * 2000 + b"</testsuite>")
    with pytest.raises(BadInput, match="big.xml: JUnit file is over the 1000-byte limit"):
        read_junit(big, max_bytes=1000)
    with pytest.raises(BadInput, match="no such file"):
        read_junit(tmp_path / "missing.xml")
