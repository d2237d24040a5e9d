"""``sop status --junit``: one case per gate, read back as CI test reporters read JUnit."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml

from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


def test_status_writes_one_junit_case_per_gate(
    demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(demo.downstream)
    junit = tmp_path / "status.xml"
    with pytest.raises(SystemExit) as exc:
        main(["sop", "status", "--baseline", demo.baseline, "--sync", "j", "--junit", str(junit)])
    out = capsys.readouterr().out
    cases = {case.name: case for suite in JUnitXml.fromfile(str(junit)) for case in suite}
    assert list(cases) == ["classified", "carried", "patches", "audit", "tests", "ci", "images"]
    failed = {name for name, case in cases.items() if not case.is_passed and not case.is_skipped}
    assert exc.value.code == (1 if failed else 0)
    assert "audit" in failed and "audit" in out  # a fresh demo has unreviewed paths
    assert "patches" not in failed
