"""``pin bump --write`` on package pins (issue 17.2): ``--to pypi:NAME==VER`` is fetched with pip
into the cache and written back as ``source = "pypi:NAME==VER"`` plus its ``sha256``; a wheel
file on a package pin keeps the package (never a path only this machine has)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE
from tests.builders.wheels import digest, make_wheel

CORE = ENGINE["eng/core.py"]
DIFF = (
    "--- a/eng/core.py\n+++ b/eng/core.py\n@@ -13,3 +13,3 @@\n"
    " def f3(x):\n-    return x + 3\n+    return x + 3  # p\n \n"
)


@pytest.fixture()
def links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No index, a local folder of wheels, a private cache: what a test job sets."""
    folder = tmp_path / "links"
    make_wheel(folder, version="1.0")
    make_wheel(folder, version="1.1", files={"eng/core.py": "# 1.1\n" + CORE})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def _downstream(tmp_path: Path, links: Path) -> Path:
    repo = tmp_path / "down"
    (repo / ".git").mkdir(parents=True)
    (repo / "pins").mkdir()
    (repo / "patches").mkdir()
    (repo / "patches/p.patch").write_text("Description: p\n---\n" + DIFF)
    (repo / "patches/series").write_text("p.patch\n")
    old = digest(links / "eng-1.0-py3-none-any.whl")
    (repo / "pins/eng.toml").write_text(
        '[engine]\nname = "eng"\nseries = "../patches/series"\n'
        f'source = "pypi:eng==1.0"  # the release\nsha256 = "{old}"\n'
    )
    (repo / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    return repo


def _pin_for(links: Path, version: str) -> str:
    new = digest(links / f"eng-{version}-py3-none-any.whl")
    return (
        '[engine]\nname = "eng"\nseries = "../patches/series"\n'
        f'source = "pypi:eng=={version}"  # the release\nsha256 = "{new}"\n'
    )


@pytest.mark.slow
def test_bump_to_a_package_writes_the_package_and_its_digest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, links: Path
) -> None:
    repo = _downstream(tmp_path, links)
    cfg = str(repo / "vimesync.toml")
    code, out, err = run(
        capsys, "pin", "bump", "--config", cfg, "--to", "pypi:eng==1.1", "--write", "--refresh"
    )
    assert code == 0, err
    assert (repo / "pins/eng.toml").read_text() == _pin_for(links, "1.1")
    assert (tmp_path / "cache/archives" / digest(links / "eng-1.1-py3-none-any.whl")).is_dir()
    code, _, err = run(capsys, "patches", "check", "--config", cfg)  # what CI runs next: no offsets
    assert code == 0 and "offset" not in err, err


@pytest.mark.slow
def test_bump_to_a_wheel_file_keeps_a_package_pin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, links: Path
) -> None:
    repo = _downstream(tmp_path, links)
    cfg = str(repo / "vimesync.toml")
    wheel = str(links / "eng-1.1-py3-none-any.whl")
    code, _, err = run(capsys, "pin", "bump", "--config", cfg, "--to", wheel, "--write")
    assert code == 0, err
    assert (repo / "pins/eng.toml").read_text() == _pin_for(links, "1.1")


@pytest.mark.slow
def test_bump_to_another_packages_wheel_is_refused_with_the_way(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, links: Path
) -> None:
    repo = _downstream(tmp_path, links)
    before = (repo / "pins/eng.toml").read_text()
    other = make_wheel(tmp_path / "other", name="other", version="2.0")
    code, _, err = run(
        capsys, "pin", "bump", "--config", str(repo / "vimesync.toml"), "--to", str(other), "--write"
    )
    assert code == 2 and "pypi:eng==1.0" in err and "--to pypi:eng==VERSION" in err
    assert (repo / "pins/eng.toml").read_text() == before
