"""Verified archive pins: a wheel checked against the pin's sha256 before use, and ``pypi:`` pins
fetched once with this interpreter's pip (wheels only, no deps, no network here: a local
``--find-links`` folder the job names through pip's environment) into the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from tests.builders.wheels import digest, make_wheel
from vimesync.config import load_config, pypi_requirement
from vimesync.errors import BadInput, ConfigError
from vimesync.sources.pinned import fetch_package, verify_archive


@pytest.fixture()
def pip_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No index, a local folder of wheels, a private cache: what a test job sets."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
    return links


def checkout(tmp_path: Path, stack: Stack, source: str, sha256: str | None) -> Path:
    root = tmp_path / "down"
    (root / ".git").mkdir(parents=True)
    (root / "patches").mkdir()
    for f in stack.dir.iterdir():
        (root / "patches" / f.name).write_bytes(f.read_bytes())
    digest_line = f'sha256 = "{sha256}"\n' if sha256 else ""
    (root / "pins").mkdir()
    (root / "pins/eng.toml").write_text(
        f'[engine]\nname = "Eng"\nseries = "../patches"\nsource = "{source}"\n{digest_line}'
    )
    (root / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    return root / "vimesync.toml"


@pytest.fixture()
def stack(tmp_path: Path) -> Stack:
    s = Stack(tmp_path)
    s.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef there():\n    return 2\n"})
    return s


def test_a_wheel_pin_is_verified_before_use(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stack: Stack
) -> None:
    wheel = make_wheel(tmp_path / "wheels")
    root = tmp_path / "down"
    # Inside the checkout: a committed wheel is content like any other, and is verified.
    config = checkout(tmp_path, stack, "../eng-1.0-py3-none-any.whl", digest(wheel))
    (root / wheel.name).write_bytes(wheel.read_bytes())
    code, out, err = run(capsys, "patches", "check", "--config", str(config), "--json")
    assert code == 0, err
    assert json.loads(out)["exact_pin"] is True

    (root / wheel.name).write_bytes(make_wheel(tmp_path / "other", extra="x = 1\n").read_bytes())
    code, out, err = run(capsys, "patches", "check", "--config", str(config))
    got = digest(root / wheel.name)
    assert code == 2 and out == ""
    assert str(root / "pins/eng.toml") in err and got in err and digest(wheel) in err

    # No digest in the pin: refused, with the digest to write.
    (root / "pins/eng.toml").write_text((root / "pins/eng.toml").read_text().split("sha256")[0])
    code, _, err = run(capsys, "patches", "check", "--config", str(config))
    assert code == 2 and f'write sha256 = "{got}"' in err

    # A wheel the job names with --source and no pin digest: used, but not called an exact pin.
    code, out, err = run(
        capsys, "patches", "check", "--config", str(config), "--source", str(wheel), "--json"
    )
    assert code == 0, err
    assert json.loads(out)["exact_pin"] is False


def test_verify_archive_names_the_pin_and_both_digests(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path)
    verify_archive(wheel, digest(wheel).upper(), pin="pins/x.toml")
    with pytest.raises(BadInput, match=f"pins/x.toml: .*sha256 {digest(wheel)}, the pin records {'0' * 64}"):
        verify_archive(wheel, "0" * 64, pin="pins/x.toml")


@pytest.mark.slow
def test_a_pypi_pin_is_fetched_once_and_verified(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stack: Stack, pip_offline: Path
) -> None:
    wheel = make_wheel(pip_offline)
    config = checkout(tmp_path, stack, "pypi:eng==1.0", digest(wheel))
    code, out, err = run(capsys, "patches", "check", "--config", str(config), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["exact_pin"] is True and doc["source"]["kind"] == "archive"
    cached = tmp_path / "cache/archives" / digest(wheel) / wheel.name
    assert cached.is_file() and doc["source"]["path"] == str(cached)
    wheel.unlink()  # fetched once: the cache answers now
    code, _, err = run(capsys, "patches", "check", "--config", str(config))
    assert code == 0, err
    cached.write_bytes(b"tampered")  # a cache is re-verified on every use
    code, _, err = run(capsys, "patches", "check", "--config", str(config))
    assert code == 2 and digest(cached) in err and "pins/eng.toml" in err


@pytest.mark.slow
def test_a_pypi_pin_without_a_digest_says_which_to_write(tmp_path: Path, pip_offline: Path) -> None:
    wheel = make_wheel(pip_offline)
    with pytest.raises(BadInput, match=f'write sha256 = "{digest(wheel)}"'):
        fetch_package("eng==1.0", None, pin="pins/eng.toml", cache=tmp_path / "c", timeout=60)
    assert not any((tmp_path / "c").glob("*/*.whl"))  # an unverified file is never cached
    with pytest.raises(BadInput, match=f"sha256 {digest(wheel)}, the pin records {'1' * 64}"):
        fetch_package("eng==1.0", "1" * 64, pin="pins/eng.toml", cache=tmp_path / "c", timeout=60)


@pytest.mark.slow
def test_an_sdist_is_never_built(tmp_path: Path, pip_offline: Path) -> None:
    # Only an sdist is on offer: building it would run its setup.py. pip is asked for wheels only.
    marker = tmp_path / "setup-ran"
    sdist = pip_offline / "eng-1.0.tar.gz"
    src = tmp_path / "sdist/eng-1.0"
    src.mkdir(parents=True)
    (src / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nfrom setuptools import setup\nsetup()\n"
    )
    (src / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: eng\nVersion: 1.0\n")
    import tarfile

    with tarfile.open(sdist, "w:gz") as t:
        t.add(src, arcname="eng-1.0")
    with pytest.raises(BadInput, match="pip download pypi:eng==1.0 failed"):
        fetch_package("eng==1.0", "0" * 64, pin="pins/eng.toml", cache=tmp_path / "c", timeout=60)
    assert not marker.exists()


@pytest.mark.slow
def test_a_stuck_pip_is_stopped(tmp_path: Path, pip_offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A find-links URL nothing answers on: pip waits on the socket; the budget stops it.
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts, never answers
    monkeypatch.setenv("PIP_FIND_LINKS", f"http://127.0.0.1:{listener.getsockname()[1]}/")
    try:
        with pytest.raises(BadInput, match="took more than 0.5 s"):
            fetch_package("eng==1.0", "0" * 64, pin="p", cache=tmp_path / "c", timeout=0.5)
    finally:
        listener.close()


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_a_malformed_pip_timeout_is_an_error_naming_it(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stack: Stack,
    pip_offline: Path,
    value: str,
) -> None:
    """It once fell back to the default without a word; now it is an error naming the variable
    (never its value), as every setting's is, before pip starts; a check of a source that needs
    no pip never reads it."""
    monkeypatch.setenv("VIMESYNC_PIP_TIMEOUT", value)
    config = checkout(tmp_path, stack, "pypi:eng==1.0", "0" * 64)
    code, out, err = run(capsys, "patches", "check", "--config", str(config))
    assert code == 2 and "VIMESYNC_PIP_TIMEOUT must be a positive number of seconds" in err, err
    assert value not in err.replace("VIMESYNC_PIP_TIMEOUT", "")
    assert not (tmp_path / "cache/archives").exists() or not list((tmp_path / "cache/archives").iterdir())
    wheel = make_wheel(tmp_path / "wheels")
    config = checkout(tmp_path / "other", stack, f"../{wheel.name}", digest(wheel))
    (tmp_path / "other/down" / wheel.name).write_bytes(wheel.read_bytes())
    code, out, err = run(capsys, "patches", "check", "--config", str(config))
    assert code == 0 and "VIMESYNC_PIP_TIMEOUT" not in err, err


@pytest.mark.parametrize(
    "value",
    [
        "pypi:eng>=1.0",
        "pypi:eng==1.*",
        "pypi:eng",
        "pypi:-e .",
        "pypi:--index-url=http://evil/ eng==1.0",
        "pypi:eng==1.0 --extra-index-url http://evil",
        "pypi:eng==1.0;python_version>'3'",
        "pypi:eng[extra]==1.0",
        "pypi:eng @ https://evil/eng.whl",
        "pypi:git+https://evil/eng",
        "pypi:./eng-1.0.whl",
        "pypi:eng==-1",
        "pypi:" + "e" * 200 + "==1.0",
        "pypi:eng==1.0\u202e",
        "pypi:ｅng==1.0",
    ],
)
def test_a_pypi_source_names_one_exact_version_only(tmp_path: Path, value: str) -> None:
    pin = tmp_path / "pins/eng.toml"
    pin.parent.mkdir()
    pin.write_text(f"[engine]\nsource = {json.dumps(value)}\n")
    (tmp_path / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    with pytest.raises(ConfigError) as exc:
        load_config(tmp_path / "vimesync.toml")
    assert str(pin) in str(exc.value) and "NAME==VERSION" in str(exc.value)
    with pytest.raises(ConfigError):
        pypi_requirement(value, where="x", key="source")  # and again where pip is run


@pytest.mark.parametrize("value", ["abc", "g" * 64, "0" * 63, "0" * 65])
def test_a_malformed_sha256_is_refused(tmp_path: Path, value: str) -> None:
    pin = tmp_path / "pins/eng.toml"
    pin.parent.mkdir()
    pin.write_text(f'[engine]\nsource = "x.whl"\nsha256 = "{value}"\n')
    (tmp_path / "vimesync.toml").write_text('[engine]\npin = "pins/eng.toml"\n')
    with pytest.raises(ConfigError, match="sha256 must be 64 hexadecimal digits"):
        load_config(tmp_path / "vimesync.toml")


@pytest.mark.slow
def test_the_report_names_the_verified_digest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, stack: Stack, pip_offline: Path
) -> None:
    wheel = make_wheel(pip_offline)
    config = checkout(tmp_path, stack, "pypi:eng==1.0", digest(wheel))
    # The gates the report cannot check here (no upstream, no baseline, no CI) switched off.
    skips = ("--skip-gate", "classified", "--skip-gate", "carried", "--skip-gate", "audit")
    skips += ("--skip-gate", "ci", "--skip-gate", "tests")
    code, out, err = run(capsys, "report", "--config", str(config), *skips)
    assert code == 0, err  # the patches gate holds: the verified wheel, the stack applied
    assert f"verified against its pin: sha256 {digest(wheel)}." in out
    # The PR text names the wheel, never where it lies on this machine (issue 17, item 12).
    assert f"`{wheel.name}`" in out and str(tmp_path) not in out and "/cache/" not in out
    code, out, err = run(capsys, "patches", "check", "--config", str(config), "--json")
    assert json.loads(out)["sha256"] == digest(wheel)


@pytest.mark.slow
def test_a_cache_slot_taken_by_a_folder_is_one_line(tmp_path: Path, pip_offline: Path) -> None:
    # A restored or shared cache where the wheel's place is a folder: exit 2 naming the pin.
    wheel = make_wheel(pip_offline)
    (tmp_path / "cache/archives" / digest(wheel) / wheel.name).mkdir(parents=True)
    with pytest.raises(BadInput, match="pins/eng.toml: cannot keep eng-1.0-py3-none-any.whl in the cache"):
        fetch_package(
            "eng==1.0", digest(wheel), pin="pins/eng.toml", cache=tmp_path / "cache/archives", timeout=60
        )
