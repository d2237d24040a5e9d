from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads the developer's git config, GitHub token or cache, and every test sees the
    same trust mode locally and in CI (a test of the untrusted mode sets it itself)."""
    from vimesync.repopaths import _CI_MARKERS, UNTRUSTED_ENV

    for name in (*_CI_MARKERS, UNTRUSTED_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("VIMESYNC_CONFIG", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
