"""Names a shell may complete: the patches of the configured series."""

from __future__ import annotations

from vimesync.config import load_config
from vimesync.errors import VimesyncError


def patch_names(incomplete: str = "") -> list[str]:
    """The patch names of every configured engine's series that start with ``incomplete``; none
    when there is no config or series (completion must never fail: it runs on every TAB)."""
    from vimesync.patches.series import load_series

    try:
        cfg = load_config()
        pins = cfg.engines
        names: list[str] = []
        for pin in pins:
            if pin.series is not None:
                names += [e.name for e in load_series(pin.series, default_strip=pin.strip).entries]
    except (VimesyncError, OSError, ValueError):
        return []
    return [n for n in dict.fromkeys(names) if n.startswith(incomplete)]
