from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _hermetic_session() -> Iterator[None]:
    """The same trust mode for module- and session-scoped fixtures (the demo they build) as for
    tests: a CI runner's markers would otherwise reach them, since the per-test reset below runs
    after they are made."""
    from vimesync.settings import CI_MARKERS, UNTRUSTED_ENV

    # A suite started as a background job of a non-interactive shell (`nohup .ci/run &`) inherits
    # SIGINT ignored, and so would every process it starts: vimesync honours an ignored SIGINT, so
    # the Ctrl-C tests would fail. The suite and its commands get what a terminal gives them.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.MonkeyPatch.context() as mp:
        for name in (*CI_MARKERS, UNTRUSTED_ENV, "GITHUB_TOKEN", "GH_TOKEN", "VIMESYNC_CONFIG"):
            mp.delenv(name, raising=False)
        yield


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads the developer's git config, GitHub token or cache, and every test sees the
    same trust mode locally and in CI (a test of the untrusted mode sets it itself)."""
    from vimesync.settings import CI_MARKERS, UNTRUSTED_ENV

    for name in (*CI_MARKERS, UNTRUSTED_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("VIMESYNC_CONFIG", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # No test runs in this repository's checkout: a command that looks for a repository where it
    # runs (report, sop status) would find vimesync's own, on whatever branch CI checked out.
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    # pre-commit keeps its store in ~/.cache/pre-commit: one per session here, never the home's
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path_factory.getbasetemp() / "pre-commit-home"))
