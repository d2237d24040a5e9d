"""``pin radar``: for every upstream PR or commit the patches reference, where it stands on
GitHub and in the pin, and per patch what to do (drop it, keep it until the next bump, ...)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vimesync.app.result import Kind, document
from vimesync.app.workspace import Workspace
from vimesync.check.flags import EngineFlags
from vimesync.errors import EXIT_OK, BadInput

if TYPE_CHECKING:
    from vimesync.check.model import CheckOptions
    from vimesync.report.backports import Backports
    from vimesync.report.radar import GitPin, PatchRadar


@dataclass(frozen=True)
class RadarRequest:
    """What the flags say (None: not given)."""

    offline: bool = False
    backports: bool = False  # list backport candidates (up to ``to``, else the source's HEAD)
    to: str | None = None
    max_candidates: int | None = None


@dataclass(frozen=True)
class RadarResult:
    engine: str
    repo: str
    pin: str | None  # the git pin's commit; None for an archive or folder source
    patches: tuple[PatchRadar, ...]
    notes: tuple[str, ...] = field(default=())  # what could not be asked, and why
    backports: Backports | None = None  # asked for with --backports / --to
    kind: Kind = Kind.RADAR

    # A radar reads; it does not judge the stack: a patch to drop is news, not a failure.
    ok: bool = True
    exit_code: int = EXIT_OK

    def to_json(self) -> dict[str, Any]:
        from vimesync.report.backports import candidates_doc

        return document(
            self.kind,
            self.exit_code,
            {
                "engine": self.engine,
                "repo": self.repo,
                "pin": self.pin,
                "patches": [
                    {
                        "name": p.name,
                        "verdict": p.verdict,
                        "words": p.words,
                        "refs": [
                            {
                                "ref": r.ref.text,
                                "state": r.state,
                                "merge_commit": r.merge_commit,
                                "in_pin": r.in_pin,
                                "first_tag": r.first_tag,
                                "why": r.why or None,
                            }
                            for r in p.refs
                        ],
                    }
                    for p in self.patches
                ],
                "backports": _backports_doc(self.backports),
                "candidates": candidates_doc(self.backports.candidates if self.backports else ()),
                "notes": list(self.notes),
            },
        )


def _backports_doc(b: Backports | None) -> dict[str, Any] | None:
    if b is None:
        return None
    return {"to": b.to, "tip": b.tip, "read": b.read, "total": b.total, "left_off": b.left_off}


def radar(ws: Workspace, engine: EngineFlags, request: RadarRequest) -> RadarResult:
    """Read every patch's DEP-3 header, ask GitHub about the engine's PRs it names (unless
    offline or without a token), and place each merge commit against a git pin."""
    from vimesync import git
    from vimesync.github import is_repo_name
    from vimesync.patches.dep3 import parse_dep3
    from vimesync.patches.series import load_series, read_patch
    from vimesync.report.radar import GitPin, scan_patches, upstream_refs

    r = request
    opts = ws.engine_plan_one(engine)
    repo = engine.engine_repo or opts.engine_repo
    if not repo or not is_repo_name(repo):
        raise BadInput(
            "pin radar needs the engine's GitHub repository (owner/name)",
            hint="set repo in the engine pin, or pass --engine-repo OWNER/NAME",
        )
    series = load_series(opts.series, default_strip=opts.strip, reader=opts.reader)
    patches = [
        (e.name, upstream_refs(parse_dep3(read_patch(e, reader=opts.reader)), repo)) for e in series.entries
    ]
    pin = None
    if opts.source is not None and opts.rev is not None and git.repo_at(opts.source) is not None:
        pin = GitPin(opts.source, git.resolve(opts.source, opts.rev))
    wants_backports = r.backports or r.to is not None
    if r.max_candidates is not None and not wants_backports:
        raise BadInput("--max-candidates goes with --backports or --to REV (backport candidates)")
    if wants_backports and pin is None:
        flag = "--to" if r.to is not None else "--backports"
        raise BadInput(
            f"{flag}: backport candidates need a git engine source (a repository or mirror and a rev)",
            hint="pass --source REPO --rev PIN, or pin the engine at a git commit",
        )
    notes: list[str] = []
    token = ws.settings.github.token
    why_not = ""
    if r.offline:
        why_not = "--offline"
    elif token is None:
        why_not = "no GITHUB_TOKEN or GH_TOKEN in the environment"
    if pin is None:
        notes.append("the pin is not a git commit: whether it holds a merged PR is not known")
    # before GitHub is asked: a bad --to is bad input, and costs no request
    backports = _backports(r, opts, pin) if wants_backports and pin is not None else None
    if backports is not None:
        notes += backports.notes
    client = None
    if not why_not:
        from vimesync.github import GitHubClient

        client = GitHubClient(repo, ws.settings.github)
    try:
        rows = scan_patches(patches, ask=client.pull_state if client else None, why_not=why_not, pin=pin)
    finally:
        if client is not None:
            client.close()
    unknown = sorted({s.ref.text for p in rows for s in p.refs if s.state == "unknown"})
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        notes.append(f"not asked or not answered: {shown} ({why_not or 'see each reference'})")
    return RadarResult(opts.engine, repo, pin.commit if pin else None, rows, tuple(notes), backports)


def _backports(r: RadarRequest, opts: CheckOptions, pin: GitPin) -> Backports:
    """The engine commits after the pin (up to ``--to``, else HEAD) that touch the stack's files."""
    from vimesync.check.run import load_stack
    from vimesync.report.backports import MAX_CANDIDATES, find_backports

    stack = load_stack(opts.series, strip=opts.strip, reader=opts.reader)
    cap = MAX_CANDIDATES if r.max_candidates is None else r.max_candidates
    return find_backports(pin.repo, pin.commit, r.to or "HEAD", stack, max_candidates=cap)
