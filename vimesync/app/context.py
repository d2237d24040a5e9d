"""The sync's context, resolved once: flags > config > pins > git.

``report``, ``audit``, ``audit review``, ``sop status`` and ``sop record`` all ask the same
questions — which downstream, which upstream, which head, which baseline, which sync — and used
to answer them each in its own way. :func:`resolve` answers them here, in one order, and returns
the notes a command shows (which baseline was taken and why, which upstream tip) instead of
printing them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal

from vimesync import git
from vimesync.audit.syncname import determine_baseline, upstream_base_of
from vimesync.config import Config, load_config, missing_input, parse_map
from vimesync.errors import BadInput
from vimesync.github import is_repo_name
from vimesync.repopaths import repository_path


@dataclass(frozen=True)
class SyncRequest:
    """What the flags say about the sync (None: not given)."""

    config: Path | None = None
    downstream: Path | None = None
    upstream: Path | None = None
    upstream_repo: str | None = None
    upstream_tip: str | None = None
    upstream_base: str | None = None
    range_: str | None = None
    baseline: str | None = None
    head: str = "HEAD"
    sync: str | None = None
    path_map: tuple[str, ...] | None = None
    policy: Path | None = None


# How a command wants the downstream found when neither a flag nor the config names it: the
# folder it runs in (audit, sop), or not at all (report: its audit is then skipped, saying why).
DownstreamDefault = Literal["cwd", "none"]
# How the baseline is found when --baseline is not given: the sync branch's fork point, which
# must exist (audit: without it every file would count as changed), or may not (report, sop).
BaselineRule = Literal["required", "optional"]


@dataclass(frozen=True)
class SyncContext:
    """The facts of one sync every command of it shares."""

    config: Config  # the checkout's config: locations, the review ledgers, the records
    request: SyncRequest
    downstream: Path | None
    head: str | None  # the full sha of --head in the downstream (None: no downstream)
    baseline: str | None  # the pre-sync downstream commit, as given or found (None: unknown)
    path_map: tuple[tuple[str, str], ...]
    policy: Path | None
    notes: tuple[str, ...] = ()

    @cached_property
    def upstream(self) -> Path | None:
        """--upstream, else the config's location: resolved when first asked for, so that a
        command that needs no upstream (a record with --sync NAME) is not refused for one it
        would not read (in CI a location outside the checkout comes only from a flag)."""
        return repository_path(self.request.upstream, self.config, "upstream_path")

    def require_upstream(self) -> Path:
        if self.upstream is None:
            raise missing_input(
                self.config, "no upstream repository given", flag="--upstream PATH", key="[upstream] path"
            )
        return self.upstream

    def require_downstream(self) -> Path:
        if self.downstream is None:
            raise missing_input(
                self.config,
                "no downstream repository given",
                flag="--downstream PATH",
                key="[downstream] path",
            )
        return self.downstream

    def require_baseline(self) -> str:
        if self.baseline is None:
            raise BadInput(
                "no --baseline given", hint="pass --baseline REV, the downstream commit before the sync"
            )
        return self.baseline

    def upstream_tip(self) -> tuple[str, str | None]:
        """--upstream-tip as given, else the configured branch or the fetched tip ahead of it,
        and a note when that is not the branch itself."""
        if self.request.upstream_tip is not None:
            return self.request.upstream_tip, None
        carried = self._carried_to()
        if carried is not None:
            return carried, None
        from vimesync.upstream.tip import configured_tip

        return configured_tip(self.require_upstream(), self.config.upstream_branch or "HEAD")

    def _carried_to(self) -> str | None:
        """The upstream commit the head carries through: the upstream pin's ``synced`` as the
        head has it, when the sync moved it (as the report's range ends there). A carry that
        stopped before the branch tip (``--pr``, a partial range) is audited against what it
        carried, not against upstream changes it never took (every file would read as an overlay)."""
        if self.downstream is None or self.baseline is None or self.head is None:
            return None
        from vimesync.pins import pinned_at

        pin = self.config.upstream_pin.file
        before = pinned_at(self.downstream, self.baseline, pin, "upstream", "synced")
        now = pinned_at(self.downstream, self.head, pin, "upstream", "synced")
        return now if now and now != before else None

    def upstream_base(self, tip: str, *, explicit: str | None = None) -> str | None:
        """The upstream commit the sync starts from (see :func:`upstream_base_of`)."""
        return upstream_base_of(
            self.config,
            upstream=self.require_upstream(),
            tip=tip,
            downstream=self.downstream,
            baseline=self.baseline,
            upstream_base=explicit or self.request.upstream_base,
        )

    def sync_name(self, tip: str | None = None, *, base: str | None = None) -> str:
        """``--sync`` as given, else ``<upstream base8>..<tip8>`` (the review ledger's and the
        records' name: the same before and after the sync bumps its pin)."""
        if self.request.sync:
            return self.request.sync
        if self.upstream is None:
            raise BadInput("no sync name: pass --sync NAME (or set [upstream] path to derive it)")
        from vimesync.audit.compare import default_sync_name

        tip = tip if tip is not None else self.upstream_tip()[0]
        base = base if base is not None else self.upstream_base(tip)
        return default_sync_name(base, git.resolve(self.upstream, tip))


def load(request: SyncRequest) -> Config:
    """The checkout's config with the flags that override it applied."""
    cfg = load_config(request.config)
    if request.upstream_repo is not None:
        if not is_repo_name(request.upstream_repo):
            raise BadInput(
                f"--upstream-repo {request.upstream_repo!r}: expected owner/name, e.g. THUDM/slime"
            )
        cfg = replace(cfg, upstream_repo=request.upstream_repo)
    return cfg


def resolve(
    request: SyncRequest,
    *,
    config: Config | None = None,
    downstream_default: DownstreamDefault = "cwd",
    baseline_rule: BaselineRule = "optional",
) -> SyncContext:
    """Every fact of the sync, in one order: flags, then the config, then git."""
    cfg = config if config is not None else load(request)
    downstream = repository_path(request.downstream, cfg, "downstream_path")
    if downstream is None and downstream_default == "cwd":
        downstream = Path.cwd()
    notes: list[str] = []
    head = git.resolve(downstream, request.head) if downstream is not None else None
    baseline = request.baseline
    if baseline is None and downstream is not None:
        try:
            baseline, how = determine_baseline(downstream, request.head)
            if baseline_rule == "required":
                notes.append(f"--baseline {baseline[:12]}: {how}")
        except BadInput:
            if baseline_rule == "required":
                raise
            baseline = None
    return SyncContext(
        config=cfg,
        request=request,
        downstream=downstream,
        head=head,
        baseline=baseline,
        path_map=parse_map(request.path_map) if request.path_map else cfg.path_map,
        policy=request.policy or cfg.policy,
        notes=tuple(notes),
    )
