"""``carry``: bring the applicable upstream PRs into a new sync branch; ``--continue``, ``--skip``,
``--abort`` and ``--status`` of the carry in progress.

The carry's state keeps its entries as JSON objects (they are written to the state file); here
they become typed records, and :meth:`CarryResult.to_json` writes them back in the same keys and
order."""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.carry.plan import Skip
from vimesync.carry.run import CarryOptions
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput, Interrupted, Terminated
from vimesync.outputs.model import Case, Findings, Suite
from vimesync.settings import Settings


class CarryMode(str, Enum):
    """What a run of ``carry`` does: start a carry, or act on the one in progress."""

    START = "start"
    CONTINUE = "--continue"
    SKIP = "--skip"
    ABORT = "--abort"
    STATUS = "--status"


class CarryStatus(str, Enum):
    """Where a carry stands: its JSON ``status``."""

    DONE = "done"
    CONFLICT = "conflict"  # stopped at a conflict: resolve, git add, --continue
    NOTHING = "nothing"  # nothing to carry in the range
    PLANNED = "planned"  # --dry-run
    INTERRUPTED = "interrupted"  # --status: stopped between two items (no conflict)


class CarryPhase(str, Enum):
    """The carry's phase in its state file: the items, then the pin bump, then done."""

    ITEMS = "items"
    PIN = "pin"
    DONE = "done"


def _str(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    return value if isinstance(value, str) else ""


def _strs(doc: dict[str, Any], key: str) -> tuple[str, ...]:
    value = doc.get(key)
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _pr(doc: dict[str, Any]) -> int | None:
    value = doc.get("pr")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Carried:
    pr: int | None  # None: a direct commit
    title: str
    upstream_commit: str
    paths: tuple[str, ...]
    commit: str | None  # the downstream commit (None until a --squash carry lands)

    @classmethod
    def of(cls, d: dict[str, Any]) -> Carried:
        commit = d.get("commit")
        return cls(_pr(d), _str(d, "title"), _str(d, "upstream_commit"), _strs(d, "paths"), commit or None)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "paths": list(self.paths),
            "commit": self.commit,
        }


Skipped = Skip  # one skipped item: what the plan skipped is what the result lists


@dataclass(frozen=True)
class Planned:
    """One item of a --dry-run: what carrying it would do."""

    pr: int | None
    title: str
    upstream_commit: str
    paths: tuple[str, ...]
    translation_hits: int
    left_out: tuple[str, ...]
    conflict: tuple[str, ...]  # the paths that would conflict
    empty: bool
    # Of those, the paths an earlier predicted conflict's item also changes: a dry run cannot
    # apply that item, so these may only follow from it; ``after`` names those items.
    knock_on: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @property
    def knock_on_only(self) -> bool:
        """Every predicted conflict of the item may follow from an earlier one."""
        return bool(self.conflict) and set(self.conflict) <= set(self.knock_on)

    @classmethod
    def of(cls, d: dict[str, Any]) -> Planned:
        hits = d.get("translation_hits")
        return cls(
            _pr(d),
            _str(d, "title"),
            _str(d, "upstream_commit"),
            _strs(d, "paths"),
            hits if isinstance(hits, int) else 0,
            _strs(d, "left_out"),
            _strs(d, "conflict"),
            bool(d.get("empty")),
            _strs(d, "knock_on"),
            _strs(d, "after"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "paths": list(self.paths),
            "translation_hits": self.translation_hits,
            "left_out": list(self.left_out),
            "conflict": list(self.conflict),
            "knock_on": list(self.knock_on),
            "after": list(self.after),
            "empty": self.empty,
        }


@dataclass(frozen=True)
class ConflictFile:
    path: str
    why: str
    hunks: tuple[str, ...]
    hint: str = ""  # the left-out upstream PR the conflicting lines come from


@dataclass(frozen=True)
class Conflict:
    """The item the carry stopped at, and its files in conflict."""

    pr: int | None
    title: str
    upstream_commit: str
    files: tuple[ConflictFile, ...]

    @classmethod
    def of(cls, d: dict[str, Any] | None) -> Conflict | None:
        if not isinstance(d, dict):
            return None
        raw = d.get("files")
        files = tuple(
            ConflictFile(_str(f, "path"), _str(f, "why"), _strs(f, "hunks"), _str(f, "hint"))
            for f in (raw if isinstance(raw, list) else [])
            if isinstance(f, dict)
        )
        return cls(_pr(d), _str(d, "title"), _str(d, "upstream_commit"), files)

    def to_json(self) -> dict[str, Any]:
        return {
            "pr": self.pr,
            "title": self.title,
            "upstream_commit": self.upstream_commit,
            "files": [
                {"path": f.path, "why": f.why, "hunks": list(f.hunks), "hint": f.hint or None}
                for f in self.files
            ],
        }


def _label(pr: int | None, sha: str, title: str) -> str:
    return f"#{pr} {title}" if pr is not None else f"{sha[:12]} (direct) {title}"


@dataclass(frozen=True)
class CarryResult:
    """A carry started, continued or skipped on: what it carried, skipped, planned or stopped at."""

    status: CarryStatus
    base: str = ""
    tip: str = ""
    carried: tuple[Carried, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    conflict: Conflict | None = None
    planned: tuple[Planned, ...] = ()
    branch: str | None = None
    worktree: str | None = None
    pin_commit: str | None = None
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.CARRY

    @property
    def exit_code(self) -> int:
        return EXIT_CHECK_FAILED if self.status is CarryStatus.CONFLICT else EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {
            "status": self.status.value,
            "range": {"base": self.base, "tip": self.tip},
            "carried": [c.to_json() for c in self.carried],
            "skipped": [s.to_json() for s in self.skipped],
            "conflict": self.conflict.to_json() if self.conflict else None,
            "planned": [p.to_json() for p in self.planned],
            "branch": self.branch,
            "worktree": self.worktree,
            "pin_commit": self.pin_commit,
            "notes": list(self.notes),
            **({"message": "nothing to carry"} if self.status is CarryStatus.NOTHING else {}),
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        """One case per PR (or direct commit): carried passes, skipped is skipped with its reason,
        the one stopped at fails with its files; in a dry run, one that would conflict fails. No
        annotation: a conflict is in the worktree, not at a line of the checkout. (Built here,
        not in outputs/findings.py: the typed result belongs to this layer, after outputs.)"""
        cases = [Case(_label(c.pr, c.upstream_commit, c.title), "carry") for c in self.carried]
        for s in self.skipped:
            cases.append(Case(_label(s.pr, s.upstream_commit, s.title), "carry", skipped=s.reason))
        if self.conflict is not None:
            c = self.conflict
            files = ", ".join(f.path for f in c.files)
            detail = "\n".join(f"{f.path} ({f.why})" for f in c.files)
            name = _label(c.pr, c.upstream_commit, c.title)
            cases.append(Case(name, "carry", failure=f"conflict in {files}", detail=detail))
        for p in self.planned:
            failure = f"would conflict in {', '.join(p.conflict)}" if p.conflict else None
            cases.append(Case(_label(p.pr, p.upstream_commit, p.title), "carry (dry run)", failure=failure))
        summary = f"## Carry {self.base[:12]}..{self.tip[:12]}\n\n{self.status.value}: "
        summary += f"{len(self.carried)} carried, {len(self.skipped)} skipped.\n"
        return Findings((Suite(f"carry: {self.base[:12]}..{self.tip[:12]}", tuple(cases)),), (), summary)

    @classmethod
    def of(cls, result: Any) -> CarryResult:
        """The carry engine's result (:class:`vimesync.carry.run.Result`), typed."""
        return cls(
            status=CarryStatus(result.status),
            base=result.base,
            tip=result.tip,
            carried=tuple(Carried.of(c) for c in result.carried),
            skipped=tuple(Skipped.of(s) for s in result.skipped),
            conflict=Conflict.of(result.conflict),
            planned=tuple(Planned.of(p) for p in result.planned),
            branch=result.branch,
            worktree=result.worktree,
            pin_commit=result.pin_commit,
            notes=tuple(result.notes),
        )


@dataclass(frozen=True)
class CarryStatusResult:
    """``--status``: the carry in progress, if any (the next items as the state keeps them)."""

    in_progress: bool
    status: CarryStatus | None = None
    branch: str = ""
    worktree: str = ""
    base: str = ""
    tip: str = ""
    done: int = 0
    total: int = 0
    phase: CarryPhase | None = None
    carried: tuple[Carried, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    conflict: Conflict | None = None
    next: tuple[dict[str, Any], ...] = ()
    kind: Kind = Kind.CARRY_STATUS
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        if not self.in_progress:
            return document(self.kind, self.exit_code, {"in_progress": False})
        assert self.status is not None and self.phase is not None
        body = {
            "in_progress": True,
            "status": self.status.value,
            "branch": self.branch,
            "worktree": self.worktree,
            "base": self.base,
            "tip": self.tip,
            "done": self.done,
            "total": self.total,
            "phase": self.phase.value,
            "carried": [c.to_json() for c in self.carried],
            "skipped": [s.to_json() for s in self.skipped],
            "conflict": self.conflict.to_json() if self.conflict else None,
            "next": list(self.next),
        }
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())  # --status checks nothing

    @classmethod
    def of(cls, doc: dict[str, Any]) -> CarryStatusResult:
        if not doc.get("in_progress"):
            return cls(False)
        return cls(
            True,
            CarryStatus(doc["status"]),
            doc["branch"],
            doc["worktree"],
            doc["base"],
            doc["tip"],
            doc["done"],
            doc["total"],
            CarryPhase(doc["phase"]),
            tuple(Carried.of(c) for c in doc["carried"]),
            tuple(Skipped.of(s) for s in doc["skipped"]),
            Conflict.of(doc["conflict"]),
            tuple(doc["next"]),
        )


@dataclass(frozen=True)
class AbortResult:
    """``--abort``: what was removed (None: nothing the carry made was left to remove)."""

    branch: str | None
    worktree: str | None
    notes: tuple[str, ...] = ()
    kind: Kind = Kind.CARRY
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def to_json(self) -> dict[str, Any]:
        body = {"aborted": True, "branch": self.branch, "worktree": self.worktree, "notes": list(self.notes)}
        return document(self.kind, self.exit_code, body)

    def findings(self) -> Findings:
        return Findings(())  # --abort checks nothing


@dataclass(frozen=True)
class CarryRequest:
    """What carry's own flags say: the mode, and a new carry's options (``--range``, ``--policy``
    and the repositories are the sync's: the workspace's)."""

    mode: CarryMode = CarryMode.START
    options: CarryOptions = field(default_factory=CarryOptions)


def carry(ws: Workspace, request: CarryRequest) -> CarryResult | CarryStatusResult | AbortResult:
    """Start a carry, or act on the one in progress (``request.mode``)."""
    from vimesync.carry import session
    from vimesync.carry import state as state_mod

    mode = request.mode
    if mode is not CarryMode.START and (given := _new_carry_flags(ws, request.options)):
        raise BadInput(f"{', '.join(given)}: not used by {mode.value} (the carry in progress has its own)")
    repo = ws.require_downstream()
    if mode is CarryMode.STATUS:
        return CarryStatusResult.of(session.status(repo))
    if mode is CarryMode.ABORT:
        doc = session.abort(repo)
        return AbortResult(doc["branch"], doc["worktree"], tuple(doc["notes"]))
    try:
        return _run(ws, request, repo)
    except (KeyboardInterrupt, Terminated) as exc:
        # A carry stopped by a signal (Ctrl-C, a CI timeout, ``timeout``) resumes like a killed
        # one: --continue reconciles the state with the branch. Said only when there is a carry.
        if not state_mod.exists(repo):
            raise
        signum = signal.SIGINT if isinstance(exc, KeyboardInterrupt) else signal.SIGTERM
        raise Interrupted(INTERRUPTED, signum=signum) from None


INTERRUPTED = "interrupted: `vimesync carry --continue` resumes"


def _new_carry_flags(ws: Workspace, options: CarryOptions) -> list[str]:
    """The flags of a new carry given to a mode that would ignore them."""
    f = ws.flags
    sync = (
        ("--range", f.range_),
        ("--policy", f.policy),
        ("--upstream", f.upstream),
        ("--pr-metadata", f.pr_metadata),
        ("--accept-similar", f.accept_similar or None),
    )
    given = options.given() + [flag for flag, value in sync if value]
    order = ["--range", "--pr", "--policy", "--branch", "--onto", "--worktree", "--squash", "--direct"]
    order += ["--dry-run", "--upstream", "--pr-metadata", "--accept-similar"]
    return sorted(given, key=order.index)


def _run(ws: Workspace, request: CarryRequest, repo: Path) -> CarryResult:
    """Start, continue or skip on a carry (the modes that carry items)."""
    from vimesync.app import steps
    from vimesync.carry import run as carry_run
    from vimesync.carry import session
    from vimesync.carry import state as state_mod
    from vimesync.upstream.policy import load_policy
    from vimesync.upstream.translate import load_transform

    mode, cfg = request.mode, ws.config
    transform = load_transform(cfg)
    identity = committer(repo, ws.settings)
    if mode is CarryMode.CONTINUE:
        return CarryResult.of(session.resume(repo, transform, identity=identity))
    if mode is CarryMode.SKIP:
        return CarryResult.of(session.skip(repo, transform, identity=identity))
    options = request.options
    if state_mod.exists(repo):
        raise state_mod.in_progress(state_mod.state_path(repo))
    carry_run.check_direct(options.direct)
    upstream = ws.upstream
    if upstream is None:
        raise BadInput("no upstream repository given", hint="pass --upstream PATH or set [upstream] path")
    walked = steps.walk(ws, at=git.resolve(repo, options.onto))
    policy = load_policy(ws.policy, ws.reader) if ws.policy else None
    return CarryResult.of(
        carry_run.start(repo, cfg, transform, options, walked, policy, upstream=upstream, identity=identity)
    )


def committer(repo: Path, settings: Settings) -> dict[str, str]:
    """The committer of the commits carry makes: GIT_COMMITTER_* of the job, else ``user.name``/
    ``user.email`` of the repository's own config or of ``~/.gitconfig``, else vimesync's."""
    from vimesync import git

    def clean(value: str | None) -> str | None:
        value = (value or "").strip()
        return value if value and not any(c in value for c in "\0\n<>") and len(value) < 200 else None

    who: dict[str, str] = {}
    for key in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"):
        if value := clean(settings.committer.get(key)):
            who[key] = value
    sources: list[list[str]] = [[]]
    home = settings.home / ".gitconfig" if settings.home is not None else None
    if home is not None and home.is_file():
        sources.append(["--file", str(home)])
    for key, env in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL")):
        for source in sources:
            if env in who:
                break
            out = git.run(repo, ["config", *source, "--get", key], check=False).decode("utf-8", "replace")
            if value := clean(out):
                who[env] = value
    return who
