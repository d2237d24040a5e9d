"""``pre-commit run --files`` of the sync's changed paths as a record, in ``sop/records/<sync>.toml``
beside the suites and runs (:mod:`vimesync.sop.results`)::

    [precommit."changed files".f32a36f1d8f811260f92c1901e808c35ad13c4ea]
    exit = 0                       # pre-commit's own exit status: the verdict
    files = 150                    # the paths the audit lists (deleted ones left out)
    recorded_at = "2026-11-30T19:00:00Z"

    [precommit."changed files".f32a36f1d8f811260f92c1901e808c35ad13c4ea.hooks.ruff]
    name = "ruff"
    result = "passed"              # passed | failed | skipped
    duration = 0.4
    output = ""                    # failed hooks: the last lines of their output, capped

What each hook did is read from pre-commit's ``--verbose`` text (``name....Passed``, ``- hook id:``,
``- duration: 0.4s``, ``- exit code: 1``); the verdict is its exit status, so output a hook
prints that looks like another hook's line can add a line to the record, never turn a failed
run green. Pure: data in, data out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

NAME = "changed files"  # the one record name: "Changed-file pre-commit passes"
HookState = Literal["passed", "failed", "skipped"]
STATES: tuple[HookState, ...] = ("passed", "failed", "skipped")
MAX_HOOKS = 200
MAX_EXCERPT = 500
HOOK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,99}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_RESULT = re.compile(
    r"(?P<name>.*?[^.])\.{1,200}(?:\((?P<why>[^()]{0,100})\))?(?P<result>Passed|Failed|Skipped)"
)
_FIELD = re.compile(r"- (?P<key>hook id|duration|exit code): (?P<value>.{0,200})")


@dataclass(frozen=True)
class HookResult:
    id: str
    name: str
    result: HookState
    duration: float | None = None
    exit: int | None = None
    modified: bool = False  # "files were modified by this hook"
    output: str = ""  # the last lines a failed hook printed, one line, capped

    @property
    def ok(self) -> bool:
        return self.result != "failed"


@dataclass(frozen=True)
class PrecommitRecord:
    sha: str  # the evidence head it ran at
    exit: int  # pre-commit's exit status
    files: int
    hooks: tuple[HookResult, ...] = ()
    recorded_at: str = ""

    @property
    def name(self) -> str:
        return NAME

    @property
    def ok(self) -> bool:
        return self.exit == 0 and all(h.ok for h in self.hooks)

    @property
    def failed(self) -> tuple[HookResult, ...]:
        return tuple(h for h in self.hooks if not h.ok)


def one_line(text: str, limit: int = MAX_EXCERPT) -> str:
    """Text a tool printed as one stored line: escapes removed, control characters as ``?``."""
    text = _CONTROL.sub("?", _ANSI.sub("", text)).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _seconds(value: str) -> float | None:
    m = re.fullmatch(r"(\d{1,7}(?:\.\d{1,6})?)s", value.strip())
    return float(m.group(1)) if m else None


def parse_output(text: str) -> tuple[HookResult, ...]:
    """The hooks of ``pre-commit run --verbose --color never``'s output, in order (at most
    MAX_HOOKS). A result line counts only when the next line names its hook id."""
    lines = _ANSI.sub("", text).splitlines()
    hooks: list[HookResult] = []
    i = 0
    while i < len(lines) and len(hooks) < MAX_HOOKS:
        m = _RESULT.fullmatch(lines[i].rstrip())
        nxt = _FIELD.fullmatch(lines[i + 1].rstrip()) if i + 1 < len(lines) else None
        if not m or not nxt or nxt.group("key") != "hook id":
            i += 1
            continue
        fields: dict[str, str] = {}
        modified = False
        i += 1
        while i < len(lines):
            f = _FIELD.fullmatch(lines[i].rstrip())
            if f:
                fields.setdefault(f.group("key"), f.group("value").strip())
            elif lines[i].strip() == "- files were modified by this hook":
                modified = True
            else:
                break
            i += 1
        start = i
        while i < len(lines) and not _is_next_hook(lines, i):
            i += 1
        state: HookState = m.group("result").lower()  # type: ignore[assignment]
        printed = [ln for ln in lines[start:i] if ln.strip()]
        code = fields.get("exit code", "")
        hook_id = fields.get("hook id", "")
        hooks.append(
            HookResult(
                id=hook_id if HOOK_ID.fullmatch(hook_id) else one_line(hook_id, 100) or "?",
                name=one_line(m.group("name"), 200),
                result=state,
                duration=_seconds(fields.get("duration", "")),
                exit=int(code) if re.fullmatch(r"-?\d{1,6}", code) else None,
                modified=modified,
                output=one_line(" / ".join(printed[-5:])) if state == "failed" else "",
            )
        )
    return tuple(hooks)


def _is_next_hook(lines: list[str], i: int) -> bool:
    if not _RESULT.fullmatch(lines[i].rstrip()) or i + 1 >= len(lines):
        return False
    f = _FIELD.fullmatch(lines[i + 1].rstrip())
    return f is not None and f.group("key") == "hook id"


def precommit_phrase(rec: PrecommitRecord) -> str:
    """``Changed-file pre-commit passes (4 hooks, 1 skipped; 150 files)`` or ``... fails`` (numbers
    and fixed words only: hook ids are the caller's to show, escaped)."""
    from vimesync.text import plural

    skipped = sum(h.result == "skipped" for h in rec.hooks)
    detail = [plural(len(rec.hooks), "hook")] if rec.hooks else []
    if skipped:
        detail.append(f"{skipped:,} skipped")
    files = plural(rec.files, "file")
    counts = f" ({', '.join(detail)}; {files})" if detail else f" ({files})"
    if rec.ok:
        return "Changed-file pre-commit passes" + counts
    return f"Changed-file pre-commit fails (exit {rec.exit})" + counts


def precommit_values(rec: PrecommitRecord) -> dict[str, Any]:
    """The record's table as written (``hooks``: a table of tables, by hook id)."""
    hooks: dict[str, dict[str, Any]] = {}
    for h in rec.hooks:
        key = h.id
        n = 2
        while key in hooks:  # one id twice (the same hook in two repos): both kept
            key, n = f"{h.id}#{n}", n + 1
        hooks[key] = {
            k: v
            for k, v in (
                ("name", h.name),
                ("result", h.result),
                ("duration", h.duration),
                ("exit", h.exit),
                ("modified", h.modified or None),
                ("output", h.output),
            )
            if v not in ("", None)
        }
    return {"exit": rec.exit, "files": rec.files, "recorded_at": rec.recorded_at, "hooks": hooks}


def read_precommit(path: str, sha: str, rec: dict[str, Any], text: Any, count: Any) -> PrecommitRecord:
    """The record of ``[precommit."changed files".SHA]`` as the file holds it, every value checked
    (``text``/``count``: sop.results' checked readers, ``(where, table, key, limit)``)."""
    from vimesync.errors import ConfigError

    where = f"[precommit.{NAME!r}.{sha[:8]}]"
    hooks = rec.get("hooks", {})
    if not isinstance(hooks, dict) or len(hooks) > MAX_HOOKS:
        raise ConfigError(path, f"{where} hooks must be a table of at most {MAX_HOOKS} hooks")
    out = []
    for key, h in hooks.items():
        if not HOOK_ID.fullmatch(key.split("#", 1)[0]) or not isinstance(h, dict):
            raise ConfigError(path, f"{where} hook {key[:40]!r}: expected a hook id holding a table")
        state = h.get("result")
        if state not in STATES:
            raise ConfigError(path, f"{where} hook {key[:40]!r}: result must be passed, failed or skipped")
        duration = h.get("duration")
        if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))):
            raise ConfigError(path, f"{where} hook {key[:40]!r}: duration must be seconds")
        modified = h.get("modified", False)
        out.append(
            HookResult(
                id=key.split("#", 1)[0],
                name=text(where, h, "name", 200),
                result=state,
                duration=float(duration) if duration is not None else None,
                exit=count(where, h, "exit", -255, 255) if "exit" in h else None,
                modified=modified is True,
                output=text(where, h, "output", MAX_EXCERPT),
            )
        )
    if "exit" not in rec:
        raise ConfigError(path, f"{where} has no exit")
    return PrecommitRecord(
        sha=sha,
        exit=count(where, rec, "exit", -255, 255),
        files=count(where, rec, "files", 0, 10_000_000),
        hooks=tuple(out),
        recorded_at=text(where, rec, "recorded_at", 40),
    )
