"""``vimesync carry``: bring the applicable upstream PRs into a new sync branch.

Exit codes: 0 carried (or nothing to carry, or a plan printed); 1 stopped at a conflict (the
worktree is in git's conflict state; resolve, ``git add``, ``--continue``), or ``--continue`` with
files still unresolved; 2 bad input.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vimesync.cli import output
from vimesync.cli.options import (
    AbortOpt,
    BranchOpt,
    ConfigOpt,
    ContinueOpt,
    DirectOpt,
    DownstreamOpt,
    DryRunOpt,
    FormatOpt,
    JsonOpt,
    OntoOpt,
    PolicyOpt,
    PrMetadataOpt,
    PrOpt,
    RangeOpt,
    SkipOpt,
    SquashOpt,
    StatusOpt,
    UpstreamOpt,
    WorktreeOpt,
    output_format,
)
from vimesync.errors import EXIT_CHECK_FAILED, EXIT_OK, BadInput


def _identity(repo: Path) -> dict[str, str]:
    """The committer of the commits carry makes: GIT_COMMITTER_* of the job, else ``user.name``/
    ``user.email`` of the repository's own config or of ``~/.gitconfig``, else vimesync's."""
    from vimesync import git

    def clean(value: str | None) -> str | None:
        value = (value or "").strip()
        return value if value and not any(c in value for c in "\0\n<>") and len(value) < 200 else None

    who: dict[str, str] = {}
    for key in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"):
        if value := clean(os.environ.get(key)):
            who[key] = value
    sources: list[list[str]] = [[]]
    home = os.path.expanduser("~/.gitconfig")
    if os.path.isfile(home):
        sources.append(["--file", home])
    for key, env in (("user.name", "GIT_COMMITTER_NAME"), ("user.email", "GIT_COMMITTER_EMAIL")):
        for source in sources:
            if env in who:
                break
            out = git.run(repo, ["config", *source, "--get", key], check=False).decode("utf-8", "replace")
            if value := clean(out):
                who[env] = value
    return who


def _label(pr: Any, sha: str = "") -> str:
    return f"#{pr}" if pr is not None else f"{sha[:12]} (direct)"


def _render(result: Any) -> None:
    for c in result.carried:
        commit = (c.get("commit") or "")[:12]
        output.stdout.print(
            output.styled(
                ("carried ", "green"), f"{_label(c['pr'], c['upstream_commit'])} {c['title']}  -> {commit}"
            )
        )
    for s in result.skipped:
        output.stdout.print(
            output.styled(
                ("skipped ", "yellow"),
                f"{_label(s['pr'], s.get('upstream_commit', ''))} {s['title']}: {s['reason']}",
            )
        )
    for p in result.planned:
        tags = []
        if p["conflict"]:
            tags.append(f"would conflict in {', '.join(p['conflict'])}")
        if p["empty"]:
            tags.append("empty after the merge")
        if p["translation_hits"]:
            tags.append(f"{p['translation_hits']} translation hit(s)")
        if p["left_out"]:
            tags.append(f"leaves out {', '.join(p['left_out'])}")
        output.stdout.print(
            output.styled(
                ("plan ", "cyan"),
                f"{_label(p['pr'], p['upstream_commit'])} {p['title']}"
                + (f"  [{'; '.join(tags)}]" if tags else ""),
            )
        )
        for path in p["paths"]:
            output.stdout.print(output.styled(f"    {path}"))
    for note in result.notes:
        output.warn(note)
    if result.status == "nothing":
        output.out(f"nothing to carry: {result.base[:12]}..{result.tip[:12]}")
    elif result.status == "planned":
        n = sum(1 for p in result.planned if p["conflict"])
        output.out(f"dry run: {len(result.planned)} to carry, {n} would conflict; nothing was changed")
    elif result.status == "conflict":
        c = result.conflict
        output.stdout.print(
            output.styled(("conflict ", "bold red"), f"{_label(c['pr'], c['upstream_commit'])} {c['title']}")
        )
        for f in c["files"]:
            output.stdout.print(
                output.styled(
                    f"    {f['path']} ({f['why']})" + (f": {', '.join(f['hunks'])}" if f["hunks"] else "")
                )
            )
        output.stdout.print(output.styled(f"worktree: {result.worktree}"))
        output.out(
            "resolve the files there and git add them, then: vimesync carry --continue"
            "  (or --skip to leave this PR out, --abort to drop the carry)"
        )
    else:
        output.stdout.print(output.styled(f"branch {result.branch} in worktree {result.worktree}"))
        output.out(f"{len(result.carried)} carried, {len(result.skipped)} skipped")


def _doc(result: Any) -> dict[str, Any]:
    return {
        "status": result.status,
        "range": {"base": result.base, "tip": result.tip},
        "carried": result.carried,
        "skipped": result.skipped,
        "conflict": result.conflict,
        "planned": result.planned,
        "branch": result.branch,
        "worktree": result.worktree,
        "pin_commit": result.pin_commit,
        "notes": result.notes,
        **({"message": "nothing to carry"} if result.status == "nothing" else {}),
    }


def _downstream(cfg: Any, downstream: Path | None) -> Path:
    from vimesync import git
    from vimesync.repopaths import repository_path

    path = repository_path(downstream, cfg, "downstream_path") or Path.cwd()
    git.git_dir(path)
    top = git.run(path, ["rev-parse", "--show-toplevel"], check=False).decode().strip()
    return Path(top) if top else path


def _repository_here() -> Path | None:
    from vimesync import git

    top = git.run(Path.cwd(), ["rev-parse", "--show-toplevel"], check=False).decode().strip()
    return Path(top) if top else None


def carry_command(
    range_: RangeOpt = None,
    pr: PrOpt = None,
    policy: PolicyOpt = None,
    branch: BranchOpt = None,
    onto: OntoOpt = "HEAD",
    worktree: WorktreeOpt = None,
    squash: SquashOpt = False,
    direct: DirectOpt = "skip",
    dry_run: DryRunOpt = False,
    continue_: ContinueOpt = False,
    skip: SkipOpt = False,
    abort: AbortOpt = False,
    status: StatusOpt = False,
    upstream: UpstreamOpt = None,
    downstream: DownstreamOpt = None,
    pr_metadata: PrMetadataOpt = None,
    fmt: FormatOpt = None,
    json_: JsonOpt = False,
    config: ConfigOpt = None,
) -> int:
    """Carry the applicable upstream PRs into a new sync branch (path map, translations, 3-way merge)."""
    from vimesync.carry import run as carry_run
    from vimesync.carry import session
    from vimesync.carry.transform import load_transform
    from vimesync.config import load_config

    json_ = output_format(fmt, json_) == "json"

    modes = [
        name
        for name, on in (
            ("--continue", continue_),
            ("--skip", skip),
            ("--abort", abort),
            ("--status", status),
        )
        if on
    ]
    if len(modes) > 1:
        raise BadInput(f"{' and '.join(modes)}: give one of them")
    if modes:
        # Options of a new carry would be silently ignored by --continue/--skip/--abort/--status.
        given = [
            flag
            for flag, value in (
                ("--range", range_),
                ("--pr", pr),
                ("--policy", policy),
                ("--branch", branch),
                ("--onto", onto if onto != "HEAD" else None),
                ("--worktree", worktree),
                ("--squash", squash or None),
                ("--direct", direct if direct != "skip" else None),
                ("--dry-run", dry_run or None),
                ("--upstream", upstream),
                ("--pr-metadata", pr_metadata),
            )
            if value
        ]
        if given:
            raise BadInput(f"{', '.join(given)}: not used by {modes[0]} (the carry in progress has its own)")
    cfg = load_config(config)
    # A carry in progress belongs to the repository we are in (its state is in the common git dir,
    # shared by the worktree): run from the worktree, the config found there is the sync branch's,
    # which carried upstream changes may have written, so its [downstream] path is not asked.
    here = _repository_here() if modes and downstream is None else None
    repo = here or _downstream(cfg, downstream)
    if status:
        doc = session.status(repo)
        if json_:
            output.emit_json(doc)
        elif not doc["in_progress"]:
            output.out("no carry in progress")
        else:
            output.out(
                f"carry {doc['base'][:12]}..{doc['tip'][:12]} on {doc['branch']} ({doc['worktree']}):"
                f" {doc['done']}/{doc['total']} done"
            )
            if doc["conflict"]:
                c = doc["conflict"]
                output.stdout.print(
                    output.styled(
                        f"stopped at a conflict: {_label(c['pr'], c['upstream_commit'])} {c['title']}"
                    )
                )
                for f in c["files"]:
                    output.stdout.print(output.styled(f"    {f['path']} ({f['why']})"))
                output.out("next: resolve, git add, vimesync carry --continue (or --skip, --abort)")
            else:
                output.out("interrupted: vimesync carry --continue goes on, --abort drops it")
        return EXIT_OK
    if abort:
        doc = session.abort(repo)
        if json_:
            output.emit_json(doc)
        else:
            output.stdout.print(
                output.styled(f"aborted: removed branch {doc['branch']} and worktree {doc['worktree']}")
            )
            for note in doc["notes"]:
                output.warn(note)
        return EXIT_OK
    transform = load_transform(cfg)
    if continue_:
        result = session.resume(repo, transform, identity=_identity(repo))
    elif skip:
        result = session.skip(repo, transform, identity=_identity(repo))
    else:
        opts = carry_run.Options(
            range_=range_,
            prs=tuple(pr or ()),
            policy=policy,
            branch=branch,
            onto=onto,
            worktree=worktree,
            squash=squash,
            direct=direct,
            dry_run=dry_run,
            pr_metadata=pr_metadata,
        )
        result = carry_run.start(repo, cfg, transform, opts, upstream=upstream, identity=_identity(repo))
    if json_:
        output.emit_json(_doc(result))
    else:
        _render(result)
    return EXIT_CHECK_FAILED if result.status == "conflict" else EXIT_OK
