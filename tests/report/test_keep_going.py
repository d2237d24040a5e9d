"""``report --keep-going`` means what it means in ``patches check``: patches after a failing one
are still applied, so the report counts what really fails, not "not applied"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.stack import ENGINE, Stack
from vimesync.cli.app import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


@pytest.mark.slow
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


def test_report_on_a_sync_branch_audits_without_a_baseline_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.builders.gitrepo import Repo

    up = Repo(tmp_path / "up")
    up.commit("start", {"slime/a.py": "a = 1\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {"slime/a.py": "a = 0\n", "vime/b.py": "b = 0\n"})
    args = ["report", "--upstream", str(up.path), "--range", "HEAD", "--downstream", str(down.path)]
    code, out, err = run(capsys, *args)
    # On main, with no sync recorded, the pre-sync tree is never presented as a sync (issue 28).
    assert code == 2 and not out and "is not a sync" in err
    assert "--head REV" in err and "--baseline REV" in err
    down.branch("sync/x")
    down.commit("sync", {"slime/a.py": "a = 1\n"})
    code, out, err = run(capsys, *args, "--skip-gate", "patches", "--skip-gate", "ci", "--skip-gate", "tests")
    assert code == 0, err  # classified and audit hold
    assert "1 changed path against the upstream tip and the pre-sync baseline: 1 verified against" in out
