"""The gates of the sync procedure (sop/SYNC.md) in order, the command that moves each, and their
evaluation: held, failed, pending, blocked, not checked, or off.

``vimesync report`` covers six of them (REPORT_GATES) and is the SOP's last gate: it holds only
when every gate it covers was evaluated and holds; ``vimesync sop status`` evaluates all seven.
A section that could not be computed (no upstream, no source, no baseline, no token) is *not
checked* — which fails the report as surely as a failure does, unless that gate is switched off
(``sop/gates.toml`` or ``--skip-gate NAME``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from vimesync.text import plural

# "pending": what it waits for is still running (exact-head CI); "blocked": accounted for but not
# done, with a reason (an architecture no host can build) -- it lets the sync go on (exit 0), and
# every summary names it: never "all gates hold" beside it.
GateState = Literal["held", "failed", "pending", "blocked", "not checked", "off"]

# Every gate of the sync procedure, in its order (sop/SYNC.md), with the command that moves it.
GATES: tuple[tuple[str, str, str], ...] = (
    ("classified", "every PR of the range classified", "vimesync walk"),
    (
        "carried",
        "nothing applicable left uncarried",
        "vimesync walk --downstream . (then carry what it lists)",
    ),
    ("patches", "each engine's patch stack applies and parses at its exact pin", "vimesync patches check"),
    ("audit", "every changed path reviewed", "vimesync audit review PATH... --by NAME"),
    (
        "tests",
        "every required suite, run, matrix and pre-commit recorded green at the evidence head",
        "vimesync sop record tests --suite NAME --junit FILE",
    ),
    ("ci", "exact-head CI green", "vimesync ci --pr N"),
    (
        "images",
        "container images recorded per architecture",
        "vimesync sop record image --arch ARCH --digest sha256:...",
    ),
)
GATE_NAMES = tuple(name for name, _, _ in GATES)
# what `vimesync report` evaluates
REPORT_GATES = ("classified", "carried", "patches", "audit", "tests", "ci")

# What makes a gate that could not be evaluated evaluable.
ENABLE = {
    "classified": "pass --upstream PATH (or set [upstream] path)",
    "carried": "pass --upstream PATH (or set [upstream] path)",
    "patches": "pass --source PATH (or set the engine pin's source)",
    "audit": "pass --baseline <pre-sync commit>",
    "tests": "name the suites and runs that must be green in sop/gates.toml [evidence] required",
    "ci": "set GITHUB_TOKEN and pass --ci-repo owner/name (or set [ci] repo)",
    "images": "vimesync sop record image --arch ARCH --digest sha256:...",
}


def describe(name: str) -> str:
    return next(what for n, what, _ in GATES if n == name)


def command_of(name: str) -> str:
    return next(cmd for n, _, cmd in GATES if n == name)


@dataclass(frozen=True)
class Gate:
    name: str  # one of GATE_NAMES
    state: GateState
    detail: str  # one line: what holds, what failed, or why it was not checked
    command: str = ""  # what moves an unmet gate

    @property
    def ok(self) -> bool:
        """Nothing keeps the sync from going on: held, off, or blocked with its reason said."""
        return self.state in ("held", "off", "blocked")


def gate(name: str, state: GateState, detail: str) -> Gate:
    """A gate with what moves it when it is not met: the gate's command when it failed, is
    pending or blocked, what makes it evaluable when it was not checked."""
    if state in ("held", "off"):
        return Gate(name, state, detail)
    return Gate(name, state, detail, ENABLE[name] if state == "not checked" else command_of(name))


def gates_verdict(gates: tuple[Gate, ...] | list[Gate]) -> str:
    """``all gates hold``, ``all gates hold but images: blocked — arm64: …`` or ``2 gates not
    met``: a blocked gate is never summed up as holding."""
    unmet = sum(not g.ok for g in gates)
    if unmet:
        return f"{plural(unmet, 'gate')} not met"
    blocked = [g for g in gates if g.state == "blocked"]
    if blocked:
        return "all gates hold but " + "; ".join(f"{g.name}: blocked — {g.detail}" for g in blocked)
    return "all gates hold"


def carried_gate(left: tuple[int, ...], walked: int) -> Gate:
    """``carried``: the applicable PRs of a walk of ``walked`` PRs that the head does not carry
    (``left``, their numbers) fail it; none left, it holds."""
    if not left:
        return gate("carried", "held", f"no applicable PR of {walked:,} left uncarried at the head")
    shown = ", ".join(f"#{n}" for n in left[:10]) + (" …" if len(left) > 10 else "")
    return gate("carried", "failed", f"{plural(len(left), 'applicable PR')} not carried at the head: {shown}")


def off_gate(name: str, why: str) -> Gate:
    return Gate(name, "off", why)


def check_gate_names(names: set[str] | frozenset[str] | list[str], *, where: str) -> None:
    """ValueError naming the first unknown gate (the caller turns it into BadInput/ConfigError)."""
    for n in names:
        if n not in GATE_NAMES:
            raise ValueError(f"{where}: unknown gate {n!r} (gates: {', '.join(GATE_NAMES)})")
