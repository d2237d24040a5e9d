"""The sync's gates in the SOP's order, each evaluated: ``vimesync sop status``.

The report's gates (classified, carried, patches, audit, tests, ci) come from the report itself,
but *carried* is evaluated here (the applicable PRs of the range the head does not carry: the
report's Summary when it looked at the head, else a walk of the range at the head); this adds
what the report does not cover: *images* (the records of sop/records/<sync>.toml: each
architecture recorded at the head, every one after the first only once the first is, and only
once exact-head CI is green)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vimesync.report.model import Skipped, SyncReport
from vimesync.sop.gates import GATE_NAMES, Gate, GateState, command_of, gate, off_gate
from vimesync.sop.gates import carried_gate as uncarried_gate
from vimesync.sop.records import ImageRecord
from vimesync.upstream.model import APPLICABLE, PullRequest, WalkResult


@dataclass(frozen=True)
class SopStatus:
    sync: str
    head: str
    gates: tuple[Gate, ...]

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.gates)


@dataclass(frozen=True)
class Uncarried:
    """The applicable PRs of the walked range the head does not carry, of ``walked`` PRs."""

    numbers: tuple[int, ...]
    walked: int

    @classmethod
    def of_walk(cls, walk_at_head: WalkResult) -> Uncarried:
        """From a walk classified at the head: what is still applicable there is not carried."""

        def status(pr: PullRequest) -> str:
            return pr.decision.status if pr.decision else APPLICABLE

        left = tuple(pr.number for pr in walk_at_head.prs if status(pr) == APPLICABLE)
        return cls(left, len(walk_at_head.prs))


def carried_gate(uncarried: Uncarried | Skipped) -> Gate:
    if isinstance(uncarried, Skipped):
        return gate("carried", "not checked", uncarried.reason)
    return uncarried_gate(uncarried.numbers, uncarried.walked)


def images_gate(
    records: Mapping[str, ImageRecord] | Skipped, head: str, architectures: Sequence[str], ci: Gate
) -> Gate:
    """Each architecture recorded at the head (an image, or blocked with its reason: accounted
    for, and said so), every image after the first only once the first is, and all of it only
    once exact-head CI is green (pending while CI runs). With an architecture blocked the gate
    is *blocked*, naming it and its reason: not held, not failed, never "all gates hold"."""
    if isinstance(records, Skipped):
        return gate("images", "not checked", records.reason)
    missing = []
    first = records.get(architectures[0]) if architectures else None
    for i, arch in enumerate(architectures):
        rec = records.get(arch)
        if rec is None:
            missing.append(f"{arch} not recorded")
        elif rec.sha != head:
            what = "blocked" if rec.is_blocked else "recorded"
            missing.append(f"{arch} {what} at {rec.sha[:8]}, not the head {head[:8]}")
        elif i > 0 and not rec.is_blocked and (first is None or first.sha != head or first.is_blocked):
            missing.append(f"{arch} recorded before {architectures[0]} at this head")
    if missing:
        return gate("images", "failed", "; ".join(missing))
    if all(records[a].is_blocked for a in architectures):
        return gate(
            "images", "failed", "every architecture is blocked: " + _images_done(records, architectures)
        )
    if ci.state not in ("held", "off"):
        # Every image is there: what moves the gate now is CI, not another record; CI still
        # running is pending, not a failure.
        state: GateState = "pending" if ci.state == "pending" else "failed"
        why = f"recorded, but exact-head CI is not green ({ci.state})"
        return Gate("images", state, why, ci.command or command_of("ci"))
    blocked = [a for a in architectures if records[a].is_blocked]
    if blocked:  # accounted for, not done: its own state, named first
        done = [f"{a} {records[a].digest[:19]}…" for a in architectures if a not in blocked]
        why = "; ".join(f"{a}: {records[a].blocked}" for a in blocked)
        return gate("images", "blocked", f"{why} (recorded at {head[:8]}: {', '.join(done)})")
    return gate("images", "held", f"recorded at {head[:8]}: {_images_done(records, architectures)}")


def _images_done(records: Mapping[str, ImageRecord], architectures: Sequence[str]) -> str:
    """``amd64 sha256:1ad4d005f6c5…; arm64: blocked at f32a36f1: no approved ARM64 host``."""
    parts = []
    for a in architectures:
        r = records[a]
        parts.append(f"{a}: blocked at {r.sha[:8]}: {r.blocked}" if r.is_blocked else f"{a} {r.digest[:19]}…")
    return "; ".join(parts) if any(records[a].is_blocked for a in architectures) else ", ".join(parts)


def evaluate(
    report: SyncReport,
    *,
    sync: str,
    head: str,
    uncarried: Uncarried | Skipped,
    evidence_head: str | None = None,
    records: Mapping[str, ImageRecord] | Skipped,
    architectures: Sequence[str],
    off: Sequence[tuple[str, str]] = (),
) -> SopStatus:
    """Every gate of the SOP in order; a gate switched off shows as off with its reason."""
    switched = dict(off)
    covered = {g.name: g for g in report.gates}
    gates: list[Gate] = []
    for name in GATE_NAMES:
        if name in switched:
            gates.append(off_gate(name, switched[name]))
        elif name == "carried":
            # the report's own, unless it did not look at the head: then a walk at the head
            gates.append(carried_gate(uncarried))
        elif name in covered:
            gates.append(covered[name])
        else:
            ci = next(g for g in gates if g.name == "ci")
            # Images bind to the evidence head: committing their record does not make them stale.
            gates.append(images_gate(records, evidence_head or head, architectures, ci))
    return SopStatus(sync=sync, head=head, gates=tuple(gates))


def status_to_dict(s: SopStatus) -> dict[str, object]:
    return {
        "ok": s.ok,
        "sync": s.sync,
        "head": s.head,
        "gates": [
            {"name": g.name, "state": g.state, "detail": g.detail, "command": g.command} for g in s.gates
        ],
    }
