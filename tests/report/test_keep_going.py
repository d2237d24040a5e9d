"""``report --keep-going`` means what it means in ``patches check``: patches after a failing one
are still applied, so the report counts what really fails, not "not applied"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.check.test_run import ENGINE, Stack
from vimesync.cli.app import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_report_keep_going(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = Stack(tmp_path)
    s.add("0001-core.patch", {"eng/core.py": ENGINE["eng/core.py"].replace("x + 3", "x + 33")})
    s.add("0002-util.patch", {"eng/util.py": ENGINE["eng/util.py"] + "Y = 1\n"})
    s.add("0003-new.patch", {"eng/new.py": "Z = 1\n"})
    drift = s.drift({"eng/core.py": ENGINE["eng/core.py"].replace("x + 3", "x - 3")})  # 0001 fails there
    args = ["report", "--source", str(s.repo.path), "--rev", drift, "--series", str(s.dir / "series")]
    code, out, err = run(capsys, *args)
    assert code == 1, err
    assert out.count("not applied (an earlier patch failed)") == 2
    code, out, err = run(capsys, *args, "--keep-going")
    assert code == 1, err
    assert "not applied" not in out
    assert "1 of 3 patches fails to apply sequentially" in out
    assert "`0001-core.patch`" in out and "`0002-util.patch`" not in out.split("Validation")[1]
