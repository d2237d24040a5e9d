"""``sop/gates.toml [images] allowed_hosts``: the hosts a build may run on. ``sop record image
--host H`` from another host is refused (a failed check, exit 1); the list is checkout content,
shape-checked and capped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from vimesync.demo.build import Demo
from vimesync.sop.gatesfile import load_gates

A = "sha256:" + "a" * 64


def _allow(demo: Demo, line: str) -> None:
    gates = demo.downstream / "sop/gates.toml"
    text = gates.read_text().replace("[images]\n", f"[images]\n{line}\n", 1)
    gates.unlink()  # the demo's sop/ may be a link into the shipped data: never write through it
    gates.write_text(text)


@pytest.mark.slow
def test_a_build_on_a_host_not_listed_is_refused_and_nothing_is_written(demo: Demo, capsys) -> None:
    _allow(demo, 'allowed_hosts = ["build-amd64-01", "GH200-lab-02"]')
    code, out, err = run(
        capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--host", "gcp-gb200-head"
    )
    assert code == 1 and out == ""
    assert err.strip().splitlines()[0] == (
        "error: refused: host gcp-gb200-head is not in sop/gates.toml [images] allowed_hosts"
        " (build-amd64-01, GH200-lab-02): an image built there is not recorded"
    )
    assert not (demo.downstream / "sop/records").exists()
    code, out, _ = run(
        capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--host", "x", "--json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["recorded"] is False and "host x is not" in doc["refused"]
    # Host names compare case-insensitively, as DNS does; the record keeps the host.
    code, out, _ = run(
        capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--host", "gh200-LAB-02"
    )
    assert code == 0 and "built on gh200-LAB-02" in out
    (file,) = (demo.downstream / "sop/records").iterdir()
    assert 'host = "gh200-LAB-02"' in file.read_text()


@pytest.mark.slow
def test_with_a_list_the_host_must_be_given_and_without_one_any_host_goes(demo: Demo, capsys) -> None:
    assert (
        run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--host", "anywhere")[0] == 0
    )
    _allow(demo, 'allowed_hosts = ["build-amd64-01"]')
    code, _, err = run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)
    assert code == 2 and "--host is required: sop/gates.toml [images] allowed_hosts" in err
    # A blocked architecture was built nowhere: no host to check (and none to give).
    assert run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", "no approved host")[0] == 0
    code, _, err = run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", "x", "--host", "h")
    assert code == 2 and "--host: a blocked architecture was built nowhere" in err


@pytest.mark.parametrize("host", ["a b", "-rf", "h\x1b[2J", "h/..", "x" * 254, "ünï"])
def test_a_bad_host_flag_is_bad_input(demo: Demo, capsys, host: str) -> None:
    code, _, err = run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--host", host)
    assert code == 2 and "--host" in err and "expected a host name" in err and "\x1b" not in err


@pytest.mark.parametrize(
    "value, needle",
    [
        ('"build-01"', "[images] allowed_hosts must be a list of at most 64 names"),
        ("[1, 2]", "must be a list"),
        ('["ok", "bad host"]', "must be a list"),
        ('["h\\u001b[2J"]', "must be a list"),
        ('["' + "x" * 300 + '"]', "must be a list"),
        ("[" + ", ".join(f'"h{i}"' for i in range(65)) + "]", "at most 64 names"),
        ('[["nested"]]', "must be a list"),
    ],
)
def test_hostile_allowed_hosts_are_refused_naming_the_file(tmp_path: Path, value: str, needle: str) -> None:
    from vimesync.errors import ConfigError

    (tmp_path / ".git").mkdir()
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").write_text(f"[images]\nallowed_hosts = {value}\n")
    with pytest.raises(ConfigError) as exc:
        load_gates(tmp_path)
    assert needle in str(exc.value) and "gates.toml" in str(exc.value) and "\x1b" not in str(exc.value)


def test_an_empty_list_allows_no_host_and_absent_allows_any(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").write_text("[images]\nallowed_hosts = []\n")
    assert load_gates(tmp_path).allowed_hosts == () and not load_gates(tmp_path).host_allowed("h")
    (tmp_path / "sop/gates.toml").write_text("[images]\n")
    assert load_gates(tmp_path).allowed_hosts is None and load_gates(tmp_path).host_allowed("h")
