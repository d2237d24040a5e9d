"""The workspace of a command: every fact of a sync worked out once, in one order (flags, then the
environment, then the config, then the pins, then git), and passed down.

Every command about a sync asks the same questions — which config, which downstream and upstream,
which head and baseline, which upstream range, which sync (the ledger's and records' name), which
path map and engines. :meth:`Workspace.resolve` answers them here and nowhere else; the use cases
receive the workspace and hand resolved values to the domain, which never looks anything up itself.

What a command says *about a head* is what the head commit holds: a workspace that reads the head
(``reading="head"``: audit, report, sop) loads the config, pins, series and policy through a
:class:`~vimesync.readers.CommitReader` of the head, under the checkout's own paths (a file is
named in an error where the user knows it). The review ledgers, the evidence records and
``sop/gates.toml`` are the checkout's (:attr:`Workspace.checkout`): each entry binds itself to what
it vouches for, and a review written a moment ago counts before it is committed. Locations the
config names (``[upstream] path``, ``[downstream] path``) are places on this machine: the
checkout's config gives them.

A command about a sync never presents the pre-sync tree as the sync: run from the main checkout
(HEAD on the main line, the sync on its own branch), it describes the sync branch this repository
records (``vimesync sync``/``carry`` state), or refuses, naming ``--head`` and ``--baseline``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from vimesync import git
from vimesync.app.flags import SyncFlags
from vimesync.app.syncpoint import BaselineRule, find_baseline, head_or_none
from vimesync.check.flags import EngineFlags
from vimesync.config import Config, EnginePin, load_config, missing_input, parse_map, read_config
from vimesync.errors import BadInput
from vimesync.readers import WORKTREE, CommitReader, Reader
from vimesync.repopaths import repository_path
from vimesync.safefs import lexical
from vimesync.settings import PIP_TIMEOUT, Settings

if TYPE_CHECKING:  # a walk loads neither the check nor the gates; a check loads no walk
    from vimesync.audit.bookkeeping import Bookkeeping
    from vimesync.check.model import CheckOptions, PlanRules
    from vimesync.sop.gatesfile import GatesConfig
    from vimesync.upstream.pipeline import UpstreamRange

# What the workspace reads: the working tree (walk, carry, patches, pin), or the head commit
# (audit, report, sop: what they say is about a commit).
Reading = Literal["worktree", "head"]
# Where the downstream is when --downstream does not say: [downstream] path, else the repository
# the command runs in ("cwd"); [downstream] path, else nowhere ("none": walk compares with a
# downstream only when told); the repository the command runs in, whatever the config says
# ("here": a carry in progress belongs to the repository it runs in, and in its worktree the config
# is the sync branch's, which carried upstream changes may have written).
DownstreamDefault = Literal["cwd", "none", "here"]
T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Workspace:
    """The resolved facts of one command's sync. Close it (or use it as a context manager): a
    workspace that reads a commit keeps one ``git cat-file`` for it."""

    settings: Settings
    flags: SyncFlags
    checkout: Config  # as the checkout holds it: locations, ledgers, records, gates
    config: Config  # what is read: the head's config (reading="head"), else the checkout's
    reader: Reader  # the head commit, or the working tree
    downstream: Path | None  # the downstream's work tree (its top); None: none given or found
    head: str | None  # the full sha of the head (None: no downstream)
    baseline: str | None  # the pre-sync downstream commit (None: unknown)
    notes: tuple[str, ...] = ()
    baseline_how: str | None = None  # how the baseline was found when --baseline was not given
    cwd: Path = field(default_factory=Path.cwd)
    _done: dict[Hashable, object] = field(init=False, default_factory=dict, repr=False, compare=False)

    # --- resolving -----------------------------------------------------------------------------
    @classmethod
    def resolve(
        cls,
        flags: SyncFlags,
        settings: Settings,
        *,
        reading: Reading = "worktree",
        baseline: BaselineRule = "none",
        downstream: DownstreamDefault = "cwd",
        engines: bool = True,
        cwd: Path | None = None,
        worktree: Reader = WORKTREE,
    ) -> Workspace:
        """Every fact of the sync, in order: flags, environment, config, pins, git. ``engines=False``:
        no engine pin is read (walk, carry); ``worktree``: how the working tree is read."""
        here = cwd or Path.cwd()
        checkout = _checkout_config(flags, settings, here, engines, worktree)
        down = _downstream(flags, checkout, settings, here, downstream)
        if down is None:
            return cls(settings, flags, checkout, checkout, worktree, None, None, flags.baseline, cwd=here)
        head_rev = flags.head or "HEAD"
        head = git.resolve(down, head_rev) if reading == "head" or flags.head else head_or_none(down)
        notes: list[str] = []
        base: str | None = git.resolve(down, flags.baseline) if flags.baseline else None
        how = None
        if base is None and head is not None and baseline != "none":
            point = find_baseline(down, head, head_rev, baseline, explicit_head=flags.head, notes=notes)
            if point.root != down:  # the sync branch's worktree: resolved as if run there
                there = replace(flags, downstream=point.root, head=point.head, baseline=point.baseline)
                ws = cls.resolve(
                    there, settings, reading=reading, engines=engines, cwd=point.root, worktree=worktree
                )
                return replace(ws, flags=flags, notes=(*notes, *ws.notes), baseline_how=point.how)
            head, base, how = point.head, point.baseline, point.how
        ws = cls(settings, flags, checkout, checkout, worktree, down, head, base, tuple(notes), how, here)
        return ws._reading_head(engines) if reading == "head" and head is not None else ws

    def _reading_head(self, engines: bool) -> Workspace:
        """This workspace reading the head commit: its config as the head holds it (the checkout's,
        with a note, when the head has none or the config lies outside the downstream)."""
        assert self.downstream is not None and self.head is not None
        reader = CommitReader(self.downstream, self.head, self.downstream)
        file = self.checkout.file
        if file is None or not lexical(file).is_relative_to(reader.root):
            return replace(self, reader=reader)
        if reader.kind(file) == "missing":
            rel = lexical(file).relative_to(reader.root).as_posix()
            note = f"{rel} is not in {self.head[:12]}: the checkout's config was read"
            return replace(self, reader=reader, notes=(*self.notes, note))
        config = _overridden(read_config(file, reader=reader, engines=engines), self.flags)
        return replace(self, reader=reader, config=config)

    def elsewhere(self, downstream: Path, *, worktree: Reader = WORKTREE) -> Workspace:
        """The same flags at another downstream, read as its working tree holds it (the checkout
        of a sync run from the sync's worktree)."""
        flags = replace(self.flags, downstream=downstream)
        return Workspace.resolve(flags, self.settings, cwd=self.cwd, worktree=worktree)

    # --- the lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        if isinstance(self.reader, CommitReader):
            self.reader.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, worked out the first time ``key`` is asked and kept (not when it raises):
        the head, baseline and config are fixed, so a later step (``sync`` runs its gates on one
        workspace) takes what an earlier one computed. None are kept after ``replace()``."""
        if key not in self._done:
            self._done[key] = make()
        return self._done[key]  # type: ignore[return-value]

    @property
    def baseline_note(self) -> tuple[str, ...]:
        """How the baseline was found, when --baseline was not given (for the commands that must
        have one: they say which they took)."""
        if self.baseline is None or self.baseline_how is None:
            return ()
        return (f"--baseline {self.baseline[:12]}: {self.baseline_how}",)

    # --- the repositories --------------------------------------------------------------------
    @cached_property
    def upstream(self) -> Path | None:
        """--upstream, else the config's location: resolved when first asked for, so that a
        command that needs no upstream (a record with --sync NAME) is not refused for one it
        would not read (in CI a location outside the checkout comes only from a flag)."""
        return repository_path(self.flags.upstream, self.checkout, "upstream_path", untrusted=self.untrusted)

    @property
    def untrusted(self) -> bool:
        return self.settings.untrusted

    def require_upstream(self) -> Path:
        if self.upstream is None:
            raise missing_input(
                self.config, "no upstream repository given", flag="--upstream PATH", key="[upstream] path"
            )
        return self.upstream

    def require_downstream(self) -> Path:
        if self.downstream is None:
            if self.flags.downstream is None and self.config.downstream_path is None:
                git.git_dir(self.cwd)  # run outside a repository: it says so
            what = "no downstream repository given"
            raise missing_input(self.config, what, flag="--downstream PATH", key="[downstream] path")
        return self.downstream

    def require_baseline(self) -> str:
        if self.baseline is None:
            hint = "pass --baseline REV, the downstream commit before the sync"
            raise BadInput("no --baseline given", hint=hint)
        return self.baseline

    # --- what the config says, flags over it -------------------------------------------------
    @cached_property
    def path_map(self) -> tuple[tuple[str, str], ...]:
        return parse_map(self.flags.path_map) if self.flags.path_map else self.config.path_map

    @cached_property
    def policy(self) -> Path | None:
        return self.flags.policy or self.config.policy

    def engine_plan(self, flags: EngineFlags, *, require_exact: bool = False) -> tuple[CheckOptions, ...]:
        """One check per engine to check (flags over the pin over the config): every engine of the
        config, or the one --engine names."""
        from vimesync.check.model import check_plan

        rules = self._plan_rules(require_exact)
        return self.once(("engine plan", flags, require_exact), lambda: check_plan(self.config, flags, rules))

    def engine_plan_one(self, flags: EngineFlags) -> CheckOptions:
        """The check of one engine; BadInput when the config names several and neither --engine
        nor a flag says which."""
        from vimesync.check.model import check_options

        return check_options(self.config, flags, self._plan_rules(False))

    def _plan_rules(self, require_exact: bool) -> PlanRules:
        from vimesync.check.model import PlanRules

        return PlanRules(
            untrusted=self.untrusted,
            require_exact=require_exact,
            reader=self.reader,
            cache_dir=self.settings.cache_dir,
            # read only when a pin names a package: a malformed value stops only what runs pip
            pip_timeout=self.settings.pip_timeout if any(e.package for e in self.engines) else PIP_TIMEOUT,
        )

    @property
    def engines(self) -> tuple[EnginePin, ...]:
        return self.config.engines

    @cached_property
    def gates(self) -> GatesConfig:
        """``sop/gates.toml`` beside the checkout's config: what the maintainer (or, in CI, only
        --skip-gate) asks to be checked, not what the head holds."""
        from vimesync.sop.gatesfile import gates_of

        return gates_of(self.checkout)

    def gates_off(self, skip: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """The gates switched off: ``[off]`` (not in an untrusted checkout) and --skip-gate."""
        from vimesync.sop.gatesfile import skip_flags

        return skip_flags(list(skip) or None, self.gates, untrusted=self.untrusted)

    @property
    def gate_notes(self) -> tuple[str, ...]:
        """What an untrusted checkout does not honour of ``[off]``, and the flag that does it."""
        from vimesync.sop.gatesfile import ignored_off

        return tuple(
            f"sop/gates.toml switches {name} off, not honoured in an untrusted checkout:"
            f" pass --skip-gate {name}"
            for name in ignored_off(self.gates, untrusted=self.untrusted)
        )

    def required_ci(self, require: tuple[str, ...]) -> tuple[str, ...]:
        """The CI contexts that must be green: --require, else [ci] required, else the gates'."""
        return require or self.config.ci_required or self.gates.required

    @property
    def sop_root(self) -> Path:
        """The folder holding sop/ (ledgers, records, gates): the checkout config's, else the
        folder the command runs in."""
        from vimesync.sop.gatesfile import sop_root

        return sop_root(self.checkout, self.cwd)

    @property
    def bookkeeping(self) -> Bookkeeping:
        """Where vimesync's own files are in the downstream (records beside vimesync.toml, the
        ledgers at the root): what does not move the evidence head nor call for a review."""
        from vimesync.audit.bookkeeping import DEFAULT, Bookkeeping

        if self.downstream is None:
            return DEFAULT
        try:
            rel = self.sop_root.resolve().relative_to(self.downstream.resolve())
        except ValueError:
            return DEFAULT
        return Bookkeeping.beside(rel.as_posix())

    # --- the upstream range and the sync's name ------------------------------------------------
    @cached_property
    def upstream_range(self) -> UpstreamRange:
        """BASE..TIP of the sync: --range as given (a missing BASE is the pin's ``synced``, a
        missing TIP the configured branch); else the upstream pin's ``synced`` as committed at the
        baseline (stable for the whole sync, even after the sync bumped its pin) through
        --upstream-tip, else ``synced`` as committed at the head when the sync moved it (a carry
        that stopped early is audited against what it carried), else the configured branch's tip
        (its fetched remote-tracking branch when that is ahead of it)."""
        from vimesync.upstream.pipeline import UpstreamRange, parse_range

        given = self.flags.range_
        if given is not None:
            base, tip = parse_range(given, self.config)
            tip, note = self._branch_tip(tip) if given.endswith("..") else (tip, None)
            return UpstreamRange(base, tip, explicit=True, pinned_base=given.startswith(".."), note=note)
        before = now = None
        if self._in_order():
            before = self._synced_at(self.baseline)
            now = self._synced_at(self.head) if before is not None else None
        base = before or self.config.upstream_pin.synced
        if self.flags.upstream_tip is not None:
            return UpstreamRange(base, self.flags.upstream_tip, explicit=False, pinned_base=True)
        if now is not None and before is not None and now != before:
            return UpstreamRange(base, now, explicit=False, pinned_base=True)
        tip, note = self._branch_tip(self.config.upstream_branch or "HEAD")
        return UpstreamRange(base, tip, explicit=False, pinned_base=True, note=note)

    def _in_order(self) -> bool:
        """The baseline is the head or an ancestor of it (reversed, the audit says so: the pins
        at them are not the sync's)."""
        if self.downstream is None or self.baseline is None or self.head is None:
            return False
        return self.baseline == self.head or git.is_ancestor(self.downstream, self.baseline, self.head)

    def _branch_tip(self, branch: str) -> tuple[str, str | None]:
        from vimesync.upstream.tip import configured_tip

        return configured_tip(self.require_upstream(), branch)

    def _synced_at(self, rev: str | None) -> str | None:
        if self.downstream is None or rev is None:
            return None
        from vimesync.pins import pinned_at

        return pinned_at(self.downstream, rev, self.config.upstream_pin.file, "upstream", "synced")

    @cached_property
    def upstream_base(self) -> str | None:
        """The upstream commit the sync starts from (a full sha when it resolves; None when unknown
        or when it is the tip itself): --upstream-base, else the range's base."""
        upstream = self.require_upstream()
        tip = git.resolve(upstream, self.upstream_range.tip)
        base = self.flags.upstream_base or self.upstream_range.base
        if base is None:
            return None
        with suppress(git.GitError):
            base = git.resolve(upstream, base)
        return None if base == tip else base

    @cached_property
    def sync_name(self) -> str:
        """--sync as given, else ``<upstream base8>..<tip8>`` (the review ledger's and the
        records' name: the same before and after the sync bumps its pin)."""
        if self.flags.sync:
            return self.flags.sync
        if self.upstream is None:
            raise BadInput("no sync name: pass --sync NAME (or set [upstream] path to derive it)")
        from vimesync.audit.syncname import default_sync_name

        tip = git.resolve(self.upstream, self.upstream_range.tip)
        return default_sync_name(self.upstream_base, tip)


# --- the steps of resolve() ----------------------------------------------------------------------


def _overridden(cfg: Config, flags: SyncFlags) -> Config:
    if flags.upstream_repo is None:
        return cfg
    from vimesync.github import is_repo_name

    if not is_repo_name(flags.upstream_repo):
        raise BadInput(f"--upstream-repo {flags.upstream_repo!r}: expected owner/name, e.g. THUDM/slime")
    return replace(cfg, upstream_repo=flags.upstream_repo)


def _checkout_config(
    flags: SyncFlags, settings: Settings, cwd: Path, engines: bool, reader: Reader
) -> Config:
    cfg = load_config(
        flags.config, cwd=cwd, engines=engines, named_by_env=settings.config_file, reader=reader
    )
    return _overridden(cfg, flags)


def _downstream(
    flags: SyncFlags, cfg: Config, settings: Settings, cwd: Path, default: DownstreamDefault
) -> Path | None:
    """--downstream, else [downstream] path, else (``default``) the repository the command runs
    in; its work tree's top when it has one."""
    path = None
    if default != "here" or flags.downstream is not None:
        path = repository_path(flags.downstream, cfg, "downstream_path", untrusted=settings.untrusted)
    if path is None and default == "none":
        return None
    if path is None:
        top = git.run(cwd, ["rev-parse", "--show-toplevel"], check=False).decode().strip()
        return Path(top) if top else None
    git.git_dir(path)  # BadInput: not a repository
    top = git.run(path, ["rev-parse", "--show-toplevel"], check=False).decode().strip()
    return Path(top) if top and lexical(Path(top)) != lexical(path) else path
