"""``patches refresh NAME``: a patch that conflicted in ``pin bump --refresh`` re-made from the
merged files the maintainer edited in the bump's work folder; written only when it then applies
at the new pin with no offset."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vimesync.app.result import Kind, document, exit_code_of
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags


@dataclass(frozen=True)
class RefreshRequest:
    """What the flags say (None: not given)."""

    name: str
    folder: Path | None = None  # --from; default: the bump's work folder


@dataclass(frozen=True)
class RefreshOutcome:
    name: str
    patch: Path
    folder: Path
    files: tuple[str, ...]  # re-diffed from the folder
    verdict: str  # the re-made patch at the new pin: "applies", "offsets ±n", "conflicts: ..."
    pin: str  # the new pin's label
    written: bool
    kind: Kind = Kind.REFRESH

    @property
    def ok(self) -> bool:
        return self.written

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.ok)

    def to_json(self) -> dict[str, Any]:
        body = {
            "patch": self.name,
            "file": str(self.patch),
            "from": str(self.folder),
            "files": list(self.files),
            "pin": self.pin,
            "verdict": self.verdict,
            "written": self.written,
        }
        return document(self.kind, self.exit_code, body)


def refresh(ws: Workspace, engine: EngineFlags, request: RefreshRequest) -> RefreshOutcome:
    """Re-make the patch from ``folder/NAME/``; write it (and remove that folder) when it applies
    at the new pin with no offset, else write nothing and say what it does there."""
    from vimesync.app.bump import work_folder
    from vimesync.check.bump import verdict
    from vimesync.check.fromedits import read_manifest, remake
    from vimesync.check.pinwrite import write_together
    from vimesync.safefs import remove_tree

    r = request
    # --source (and --rev), from the job, name the new pin: the only source a refresh opens
    opts = ws.engine_plan_one(engine)
    folder = r.folder if r.folder is not None else work_folder(opts.series)
    pin = read_manifest(folder, untrusted=ws.untrusted, source=engine.source, rev=engine.rev)
    remade = remake(opts, r.name, folder, pin)
    if remade.ok:
        write_together({remade.path: remade.data})
        remove_tree(folder / remade.name)  # its content is the patch now
    return RefreshOutcome(
        remade.name, remade.path, folder, remade.files, verdict(remade.result), pin.label, remade.ok
    )
