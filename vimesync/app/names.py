"""Names a shell may complete: the patches of the configured series."""

from __future__ import annotations

from vimesync.errors import VimesyncError
from vimesync.settings import Settings


def patch_names(settings: Settings, incomplete: str = "") -> list[str]:
    """The patch names of every configured engine's series that start with ``incomplete``; none
    when there is no config or series (completion must never fail: it runs on every TAB)."""
    from vimesync.app.flags import SyncFlags
    from vimesync.app.workspace import Workspace
    from vimesync.patches.series import load_series

    names: list[str] = []
    try:
        with Workspace.resolve(SyncFlags(), settings, downstream="none") as ws:
            for pin in ws.engines:
                if pin.series is not None:
                    names += [e.name for e in load_series(pin.series, default_strip=pin.strip).entries]
    except (VimesyncError, OSError, ValueError):
        return []
    return [n for n in dict.fromkeys(names) if n.startswith(incomplete)]
