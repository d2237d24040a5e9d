r"""``[[upstream.verify]]``: what the head's files must not (or must) contain (Copybara's
``verify_match``), checked by the audit on every file the sync changed that the head holds::

    [[upstream.verify]]
    pattern = '\bimport slime\b'     # RE2, as [[upstream.translate]] patterns
    paths = ["vime/**"]              # gitignore globs on the downstream path; default: all
    must = "not-match"               # a match is a finding (file:line); "match": no match is

Patterns run on RE2 over the file's bytes, in time linear in the file. Binary files, symbolic
links and submodules are not checked; files over ``MAX_VERIFIED`` bytes are checked on their first
``MAX_VERIFIED`` bytes. At most ``MAX_HITS`` findings are reported per rule and file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vimesync import git
from vimesync.audit.model import Violation
from vimesync.config import Config, VerifySpec
from vimesync.errors import ConfigError
from vimesync.globs import PathGlobs
from vimesync.regex import compile_re2
from vimesync.safefs import excerpt

__all__ = ["MAX_HITS", "VerifyRule", "Violation", "check_rules", "load_verify"]

MAX_PATTERN = 1000
MAX_VERIFIED = 16 << 20
MAX_HITS = 20
MAX_TEXT = 200  # characters of a matching line shown
_BINARY_PROBE = 8000


@dataclass(frozen=True)
class VerifyRule:
    spec: VerifySpec
    where: str  # "vimesync.toml:14"
    _regex: Any = field(repr=False, compare=False)
    _globs: PathGlobs | None = field(repr=False, compare=False)

    def applies_to(self, path: str) -> bool:
        return self._globs is None or self._globs(path)

    def check(self, path: str, data: bytes) -> list[Violation]:
        """The rule's findings in one file's content."""
        if self.spec.must == "match":
            if self._regex.search(data) is None:
                return [Violation(path, 0, self.where, self.spec.pattern, "match")]
            return []
        out = []
        for m in self._regex.finditer(data):
            start = data.rfind(b"\n", 0, m.start()) + 1
            end = data.find(b"\n", m.start())
            line = data.count(b"\n", 0, m.start()) + 1
            text = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace").strip()
            out.append(Violation(path, line, self.where, self.spec.pattern, "not-match", text[:MAX_TEXT]))
            if len(out) >= MAX_HITS:
                break
        return out


def _compile(spec: VerifySpec, where: str) -> VerifyRule:
    def fail(message: str) -> ConfigError:
        return ConfigError(where.rpartition(":")[0] if spec.line else where, message, line=spec.line)

    if len(spec.pattern) > MAX_PATTERN:
        raise fail(f"[[upstream.verify]] pattern is at most {MAX_PATTERN} characters")
    try:
        regex = compile_re2(spec.pattern.encode("utf-8"))
    except ValueError as exc:
        raise fail(
            f"[[upstream.verify]] pattern {excerpt(spec.pattern)} is not an RE2 regex: {exc}"
        ) from None
    globs = None
    if spec.paths is not None:
        try:
            globs = PathGlobs(spec.paths)
        except ValueError as exc:
            raise fail(f"[[upstream.verify]] paths: not gitignore globs ({excerpt(str(exc))})") from None
    return VerifyRule(spec=spec, where=where, _regex=regex, _globs=globs)


def load_verify(config: Config) -> tuple[VerifyRule, ...]:
    """The config's ``[[upstream.verify]]`` rules, compiled; ConfigError naming file and line."""
    where = str(config.file) if config.file else "vimesync.toml"
    return tuple(_compile(s, f"{where}:{s.line}" if s.line else where) for s in config.verify)


def check_rules(
    downstream: Path,
    head: Mapping[str, tuple[int, str]],
    paths: Sequence[str],
    rules: Sequence[VerifyRule],
) -> tuple[Violation, ...]:
    """Every rule on every one of ``paths`` it applies to, read at the head (one cat-file batch)."""
    wanted = [p for p in paths if p in head and head[p][0] not in (0o120000, 0o160000)]
    wanted = [p for p in wanted if any(r.applies_to(p) for r in rules)]
    if not wanted:
        return ()
    data = dict(git.cat_blobs(downstream, sorted({head[p][1] for p in wanted})))
    out: list[Violation] = []
    for path in wanted:
        content = data[head[path][1]][:MAX_VERIFIED]
        if b"\0" in content[:_BINARY_PROBE]:
            continue
        for rule in rules:
            if rule.applies_to(path):
                out += rule.check(path, content)
    return tuple(out)
