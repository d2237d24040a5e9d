"""A NUL in any string of the config or a pin, or another control character in one that names a
path, revision, branch or repository: one line naming the file and key, exit 2, never the traceback of
``ValueError: embedded null byte`` from the OS or subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.hostile import assert_refused, cli

pytestmark = pytest.mark.slow  # the CLI as a real process, one per case

_CONFIG = {
    "upstream": {"name": "U", "repo": "o/u", "branch": "main", "path": "up.git", "pin": "pins/up.toml"},
    "downstream": {"path": "."},
    "engine": {"pin": "pins/engine.toml"},
}
_UP_PIN = {"repo": "o/u", "synced": "0" * 40}


def _toml(tables: dict[str, dict[str, str]]) -> str:
    return "".join(
        f"[{t}]\n" + "".join(f'{k} = "{v}"\n' for k, v in keys.items()) for t, keys in tables.items()
    )


_CASES = [("vimesync.toml", t, k) for t, keys in _CONFIG.items() for k in keys]
_CASES += [("vimesync.toml", "upstream", "policy"), ("vimesync.toml", "engine", "source")]
_CASES += [("pins/up.toml", "upstream", k) for k in _UP_PIN]
_CASES += [("pins/engine.toml", "engine", k) for k in ("rev", "series", "source", "name", "repo", "python")]


_CASES = [(*case, "\\u0000") for case in _CASES]  # NUL everywhere; other controls on a few keys
_CASES += [("pins/engine.toml", "engine", "rev", "\\n"), ("vimesync.toml", "upstream", "branch", "\\u001b")]
_CASES += [("vimesync.toml", "downstream", "path", "\\t"), ("pins/up.toml", "upstream", "synced", "\\u007f")]
# A display name may hold controls (shown escaped: tests/cli/test_hostile_text.py), not a NUL.


@pytest.mark.parametrize(("file", "table", "key", "bad"), _CASES, ids=lambda v: str(v))
def test_control_character_in_a_config_or_pin_string_is_refused(
    checkout: Path, file: str, table: str, key: str, bad: str
) -> None:
    config = {t: dict(keys) for t, keys in _CONFIG.items()}
    up_pin = dict(_UP_PIN)
    engine_pin = (checkout / "pins/engine.toml").read_text()
    if file == "vimesync.toml":
        config[table][key] = config[table].get(key, "x") + bad + "b"
    elif file == "pins/up.toml":
        up_pin[key] = up_pin[key] + bad + "b"
    else:
        line = f'{key} = "a{bad}b"\n'
        kept = [ln for ln in engine_pin.splitlines(keepends=True) if not ln.startswith(f"{key} =")]
        engine_pin = "".join(kept) + line
    (checkout / "vimesync.toml").write_text(_toml(config))
    (checkout / "pins/up.toml").write_text(_toml({"upstream": up_pin}))
    (checkout / "pins/engine.toml").write_text(engine_pin)
    proc = cli("patches", "check", cwd=checkout)
    what = "a NUL character" if bad == "\\u0000" else "control characters"
    assert_refused(proc, file, f"[{table}] {key} must not contain {what}")
    assert len(proc.stderr.strip().splitlines()) <= 2  # the error line (and at most a hint)
