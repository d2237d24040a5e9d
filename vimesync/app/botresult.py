"""What ``vimesync bot`` is asked and what it answers (its JSON document)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vimesync.app.result import Kind, document
from vimesync.bot.model import BotPlan, Observed, SyncOutcome
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK


@dataclass(frozen=True)
class BotRequest:
    repo: str | None = None  # owner/name of the fork (default: GITHUB_REPOSITORY)
    remote: str = "origin"
    base: str | None = None  # the default branch (default: the checkout's branch)
    dry_run: bool = False


@dataclass(frozen=True)
class BotResult:
    observed: Observed
    plan: BotPlan
    sync: SyncOutcome | None = None
    pushed: str | None = None  # "pushed", "up to date", "lease refused"
    pull: str | None = None  # the sync PR's address
    dashboard: str | None = None  # the dashboard's address
    writes: tuple[str, ...] = ()  # each write request sent to GitHub, said in a few words
    dry_run: bool = False
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.BOT

    @property
    def exit_code(self) -> int:
        return EXIT_CHECK_FAILED if self.pushed == "lease refused" else EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        o, p, s = self.observed, self.plan, self.sync
        body = {
            "case": p.case.value,
            "why": p.why,
            "dry_run": self.dry_run,
            "base": o.base,
            "pin": o.pin,
            "tip": o.tip,
            "branch": p.branch,
            "lease": p.lease,
            "pr": self.pull,
            "pushed": self.pushed,
            "sync": None
            if s is None
            else {"head": s.head, "stopped": s.stopped, "decision": s.decision, "next": s.next},
            "dashboard": self.dashboard,
            "writes": list(self.writes),
            "notes": list(self.notes),
        }
        return document(self.kind, self.exit_code, body)
