"""Interpreter discovery: verified by running, shims skipped, clear errors."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from vimesync.errors import BadInput
from vimesync.pycheck import interp

HERE = sys.version_info[:2]


def fake_python(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)
    return path


def clean_env(tmp_path: Path, path: str = "") -> dict[str, str]:
    # No pyenv/uv installs and only the PATH we give: discovery sees just our fakes.
    return {"HOME": str(tmp_path / "home"), "PATH": path}


def test_running_interpreter_matches() -> None:
    found = interp.find_interpreter(HERE)
    assert found.executable == sys.executable and found.feature_version is None


def test_older_target_without_exact_uses_feature_version(tmp_path: Path) -> None:
    found = interp.find_interpreter((3, 8), env=clean_env(tmp_path))
    assert found.executable == sys.executable and found.feature_version == (3, 8)
    assert found.grammar == (3, 8) and "feature_version=3.8" in found.describe()


def test_newer_target_without_interpreter_names_what_is_needed(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as exc:
        interp.find_interpreter((3, 99), env=clean_env(tmp_path))
    have = "{}.{}".format(*HERE)
    want = (
        f"python3.99 is needed to parse with the 3.99 grammar; install it, or parse with the {have} grammar"
        f' (python = "{have}" in the engine pin, or --python {have} where a command takes it)'
    )
    assert str(exc.value) == want
    assert "VIMESYNC_PYTHON_3_99" in (exc.value.hint or "")


def test_failing_shims_and_wrong_versions_are_skipped(tmp_path: Path) -> None:
    shims = tmp_path / "pyenv" / "shims"
    fake_python(shims / "python3.99", "echo 'pyenv: python3.99: command not found' >&2; exit 127")
    liar = tmp_path / "bin"
    fake_python(liar / "python3.99", "echo cpython 3 11 0")  # claims to be something else
    real = tmp_path / "other"
    fake_python(real / "python3.99", "echo cpython 3 99 1")
    env = clean_env(tmp_path, os.pathsep.join([str(shims), str(liar), str(real)]))
    found = interp.find_interpreter((3, 99), env=env)
    assert found.executable == str(real / "python3.99") and found.version == (3, 99, 1)


def test_env_var_wins_and_must_be_right(tmp_path: Path) -> None:
    good = fake_python(tmp_path / "py", "echo cpython 3 98 0")
    assert interp.find_interpreter((3, 98), env={"VIMESYNC_PYTHON_3_98": str(good)}).executable == str(good)
    with pytest.raises(BadInput, match="VIMESYNC_PYTHON_3_97=.* is 3.98; it must be a python3.97"):
        interp.find_interpreter((3, 97), env={"VIMESYNC_PYTHON_3_97": str(good)})
    with pytest.raises(BadInput, match="does not run"):
        interp.find_interpreter((3, 97), env={"VIMESYNC_PYTHON_3_97": str(tmp_path / "missing")})


def test_pyenv_versions_are_found(tmp_path: Path) -> None:
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.97.1/bin/python3.97", "echo cpython 3 97 1")
    fake_python(root / "versions/3.97.10/bin/python3.97", "echo cpython 3 97 10")
    found = interp.find_interpreter((3, 97), env={"PYENV_ROOT": str(root), "HOME": str(tmp_path), "PATH": ""})
    assert found.version == (3, 97, 10)


def test_the_search_and_the_children_start_from_the_installed_snapshot(tmp_path: Path) -> None:
    from vimesync.settings import Settings, install

    bin_ = tmp_path / "bin"
    fake_python(bin_ / "python3.94", '/usr/bin/env > "$0.env"; echo cpython 3 94 0')
    job = {"PATH": str(bin_), "HOME": str(tmp_path / "home"), "GITHUB_TOKEN": "t", "PYENV_VERSION": "3.94"}
    interp._probed.pop(str(bin_ / "python3.94"), None)
    with install(Settings.of(job)):
        assert interp.find_interpreter((3, 94)).executable == str(bin_ / "python3.94")
        assert interp.child_env() == {k: v for k, v in job.items() if k != "GITHUB_TOKEN"}
    seen = (bin_ / "python3.94.env").read_text()
    assert "PYENV_VERSION=3.94" in seen and "GITHUB_TOKEN" not in seen


def test_python2_is_refused() -> None:
    with pytest.raises(BadInput, match="not supported"):
        interp.find_interpreter((2, 7))


@pytest.fixture()
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    return repo


def test_path_entries_inside_the_checkout_never_run(tmp_path: Path, checkout: Path) -> None:
    marker = tmp_path / "ran"
    trap = f"touch {marker}; echo cpython 3 99 0"
    fake_python(checkout / "bin/python3.99", trap)  # absolute entry inside the checkout
    fake_python(checkout / "rel/python3.99", trap)  # relative entry: resolved against the cwd
    other = tmp_path / "elsewhere"
    (other / "vimesync.toml").parent.mkdir()
    (other / "vimesync.toml").write_text("")  # another checkout vimesync manages
    fake_python(other / "bin/python3.99", trap)
    gitco = tmp_path / "gitco"  # a checkout with no vimesync.toml at its root (config in ci/)
    (gitco / ".git").mkdir(parents=True)
    fake_python(gitco / "tools/python3.99", trap)
    scratch = Path(tempfile.gettempdir()) / f"vimesync-check-test-{os.getpid()}"
    fake_python(scratch / "python3.99", trap)
    try:
        entries = [str(checkout / "bin"), "rel", str(other / "bin"), str(gitco / "tools"), str(scratch)]
        with pytest.raises(BadInput, match="python3.99 is needed"):
            interp.find_interpreter((3, 99), env=clean_env(tmp_path, os.pathsep.join(entries)))
    finally:
        (scratch / "python3.99").unlink()
        scratch.rmdir()
    assert not marker.exists()
    # The same interpreter outside the checkout is found: the filter, not the fake, stopped it.
    fake_python(tmp_path / "tools/python3.99", trap)
    env = clean_env(tmp_path, os.pathsep.join([*entries, str(tmp_path / "tools")]))
    assert interp.find_interpreter((3, 99), env=env).executable == str(tmp_path / "tools/python3.99")
    assert marker.exists()


def test_a_checkout_that_is_home_itself_is_still_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"  # a job whose HOME is the checkout (or a dotfiles repository)
    (home / ".git").mkdir(parents=True)
    marker = tmp_path / "ran"
    fake_python(home / "bin/python3.99", f"touch {marker}; echo cpython 3 99 0")
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(BadInput, match="python3.99 is needed"):
        interp.find_interpreter((3, 99), env={**clean_env(tmp_path, str(home / "bin")), "HOME": str(home)})
    assert not marker.exists()


def test_a_probe_is_remembered_against_the_executables_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remembered probe saves the interpreter start; a changed executable is asked again, and
    a broken cache file (or none, or --no-cache's None) only means asking."""
    runs = tmp_path / "runs"
    py = fake_python(tmp_path / "bin" / "python3.96", f"echo run >> {runs}; echo cpython 3 96 2")
    cache = tmp_path / "cache"
    monkeypatch.setattr(interp, "_probed", {})  # the in-process memo, per test

    def probe(cache_dir: Path | None = cache) -> interp.Interpreter | None:
        interp._probed.clear()
        return interp.probe(py, cache_dir=cache_dir)

    def started() -> int:
        return len(runs.read_text().splitlines()) if runs.exists() else 0

    assert probe() == interp.Interpreter(str(py), (3, 96, 2), "cpython") and started() == 1
    assert probe() == interp.Interpreter(str(py), (3, 96, 2), "cpython") and started() == 1
    assert probe(None) is not None and started() == 2  # no cache folder: always asked
    py.write_text(py.read_text().replace("3 96 2", "3 96 13"))  # upgraded in place
    assert probe() == interp.Interpreter(str(py), (3, 96, 13), "cpython") and started() == 3
    assert probe() is not None and started() == 3
    for junk in (b"{not json", b"[]", b'{"%s": {"stat": 1}}' % str(py).encode(), b"\xff"):
        (cache / interp.PROBE_CACHE).write_bytes(junk)
        assert probe() == interp.Interpreter(str(py), (3, 96, 13), "cpython")
    assert started() == 3 + 4
    (cache / interp.PROBE_CACHE).unlink()
    cache.chmod(0o500)  # cannot be written: still works, just asks each time
    try:
        assert probe() is not None and probe() is not None
    finally:
        cache.chmod(0o700)


def test_an_interpreter_that_does_not_run_is_not_remembered(tmp_path: Path) -> None:
    broken = fake_python(tmp_path / "python3.95", "exit 3")
    interp._probed.pop(str(broken), None)
    assert interp.probe(broken, cache_dir=tmp_path / "cache") is None
    assert not (tmp_path / "cache" / interp.PROBE_CACHE).exists()


def test_a_remembered_probe_of_the_wrong_shape_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache folder is the job's, yet its file is read as untrusted (safefs.decode): an entry
    that names the executable's own stat but says what a probe never does is not believed."""
    import json

    py = fake_python(tmp_path / "bin" / "python3.94", "echo cpython 3 94 1")
    cache = tmp_path / "cache"
    monkeypatch.setattr(interp, "_probed", {})
    assert interp.probe(py, cache_dir=cache) == interp.Interpreter(str(py), (3, 94, 1), "cpython")
    stat = list(interp._stat_key(str(py)) or ())
    lies = [
        {"stat": stat, "implementation": "pypy\x1b[2J", "version": [3, 94, 1]},
        {"stat": stat, "implementation": "pypy", "version": [True, 94, 1]},
        {"stat": stat, "implementation": "pypy", "version": [3, 94]},
        {"stat": stat, "implementation": "pypy", "version": [3, 94, 1], "extra": 1},
    ]
    for lie in lies:
        (cache / interp.PROBE_CACHE).write_text(json.dumps({str(py): lie}))
        interp._probed.clear()
        assert interp.probe(py, cache_dir=cache) == interp.Interpreter(str(py), (3, 94, 1), "cpython"), lie
    many = {f"/x/{i}": {"stat": stat, "implementation": "pypy", "version": [3, 94, 1]} for i in range(64)}
    (cache / interp.PROBE_CACHE).write_text(
        json.dumps({**many, str(py): lies[0] | {"implementation": "pypy"}})
    )
    interp._probed.clear()
    assert interp.probe(py, cache_dir=cache).implementation == "cpython"  # type: ignore[union-attr]


def test_a_prefetch_probes_once_for_the_search_that_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search begun on a helper thread (while a source is listed) is the one the caller's
    own search then waits for and takes: one interpreter start, not two."""
    runs = tmp_path / "runs"
    py = fake_python(tmp_path / "bin" / "python3.93", f"sleep 0.2; echo run >> {runs}; echo cpython 3 93 4")
    monkeypatch.setattr(interp, "_probed", {})
    monkeypatch.setattr(interp, "search_env", lambda: clean_env(tmp_path, str(tmp_path / "bin")))
    interp.prefetch((3, 93))
    assert interp.find_interpreter((3, 93)) == interp.Interpreter(str(py), (3, 93, 4), "cpython")
    assert runs.read_text().splitlines() == ["run"] and not interp._prefetching


def test_a_prefetch_that_finds_nothing_leaves_the_error_to_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interp, "_probed", {})
    monkeypatch.setattr(interp, "search_env", lambda: clean_env(tmp_path))
    interp.prefetch((3, 92))
    with pytest.raises(BadInput, match=r"python3\.92 is needed"):
        interp.find_interpreter((3, 92))
    interp.prefetch(HERE)  # the running one: no thread
    assert not interp._prefetching
