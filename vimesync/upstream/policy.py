r"""The sync policy: ``[[rule]]`` tables that exclude (or explicitly include) upstream PRs.

::

    [[rule]]
    action = "include"                       # "include" | "exclude"
    reason = "mirrored as requested"         # required: shown next to the PR
    prs = [2199]                             # matchers (one or more, all must hold):
    # title = "(?i)\\b(npu|ascend)\\b"       #   RE2 regex, searched in the title
    # labels = ["npu"]                       #   any of these labels (needs PR metadata)
    # paths = ["docker/npu_patch/**"]        #   gitignore-style globs; EVERY changed path must match

The first matching rule decides; no match means applicable. Errors name the file, the rule
(1-based) and its line, since tomllib reports lines only for syntax errors.

Title regexes run on RE2 (``google-re2``), which matches in time linear in the title whatever
the pattern, so a policy cannot stall a run with catastrophic backtracking (``(a+)+$``). The
syntax is Python's for everything RE2 has: classes, ``|``, groups (also ``(?P<name>…)`` and
``(?:…)``), greedy and lazy repeats ``* + ? {m,n}`` (``n`` at most 1000), anchors ``^ $ \A \z``,
``\b \B``, ``\d \w \s`` (ASCII only, unlike Python), flags ``(?i) (?m) (?s) (?U)``. Not
accepted: look-ahead/behind ``(?=…) (?!…) (?<=…) (?<!…)``, back-references ``\1 (?P=name)``,
possessive repeats, ``\Z`` (write ``\z``), ``\uXXXX`` escapes (write the character, or a TOML
``\u`` escape). A pattern is at most ``MAX_TITLE_REGEX`` characters with at most
``MAX_TITLE_GROUPS`` groups; anything else is a ConfigError naming the rule.

Path matching costs (rules with ``paths``) × (paths a PR changes), and an upstream PR may change
tens of thousands of files, so a policy holds at most ``MAX_RULES`` (256) rules and a rule at most
``MAX_RULE_GLOBS`` (64) globs (a ConfigError naming the file otherwise); each rule's globs are
compiled once, and each rule matches a PR's paths at most once per PR.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from vimesync.config import read_text
from vimesync.errors import ConfigError
from vimesync.globs import GlobLists, PathGlobs
from vimesync.readers import WORKTREE, Reader
from vimesync.safefs import excerpt, loads_toml
from vimesync.text import file_lines
from vimesync.upstream.model import APPLICABLE, EXCLUDED, Decision, PullRequest

ACTIONS = ("include", "exclude")
MATCHERS = ("prs", "title", "labels", "paths")
RULE_KEYS = {"action", "reason", *MATCHERS}

_RULE_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]")
MAX_TITLE_REGEX = 1000  # characters
MAX_TITLE_GROUPS = 100
MAX_RULES = 256
MAX_RULE_GLOBS = 64


@dataclass(frozen=True)
class TitleRegex:
    """A title matcher: an RE2 pattern (linear-time search; see the module docstring)."""

    pattern: str
    _compiled: Any = field(repr=False, compare=False)

    @classmethod
    def compile(cls, pattern: str) -> TitleRegex:
        """Compile ``pattern``; ValueError (with RE2's reason) when it is too long, has too many
        groups or is not RE2 syntax."""
        if len(pattern) > MAX_TITLE_REGEX:
            raise ValueError(f"longer than {MAX_TITLE_REGEX} characters")
        from vimesync.regex import compile_re2

        compiled = compile_re2(pattern)
        if compiled.groups > MAX_TITLE_GROUPS:
            raise ValueError(f"{compiled.groups} groups, over the limit of {MAX_TITLE_GROUPS}")
        return cls(pattern, compiled)

    def search(self, title: str) -> bool:
        """Whether the pattern occurs in ``title``."""
        try:
            return self._compiled.search(title) is not None
        except UnicodeError:  # lone surrogates (from JSON escapes) cannot be UTF-8 for RE2
            return self._compiled.search(title.encode("utf-8", "replace").decode("utf-8")) is not None


@dataclass(frozen=True)
class Rule:
    index: int  # 1-based position in the file
    line: int | None  # line of its [[rule]] header
    action: str
    reason: str
    prs: frozenset[int] | None = None
    title: TitleRegex | None = None
    labels: frozenset[str] | None = None
    paths: tuple[str, ...] | None = None
    _spec: PathGlobs | None = None

    def path_matches(self, paths: Iterable[str]) -> list[str]:
        """The given paths this rule's globs match (all of them when it has no globs)."""
        if self._spec is None:
            return list(paths)
        return [p for p in paths if self._spec(p)]

    def matches(self, pr: PullRequest, hits: Callable[[], list[str]] | None = None) -> bool:
        """All of the rule's matchers hold for ``pr``. The paths, the costly matcher, are looked at
        last, through ``hits`` (``path_matches(pr.paths)``, cached by the caller) when given."""
        if self.prs is not None and pr.number not in self.prs:
            return False
        if self.title is not None and not self.title.search(pr.title):
            return False
        if self.labels is not None and not self.labels.intersection(pr.labels):
            return False
        if self.paths is not None:
            # A PR that changes nothing is not "all in these paths": never exclude it by paths.
            if not pr.paths:
                return False
            return len(hits() if hits else self.path_matches(pr.paths)) == len(pr.paths)
        return True


@dataclass(frozen=True)
class Policy:
    file: Path | None
    rules: tuple[Rule, ...] = ()
    _globs: GlobLists = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The rules' globs share one prefilter (see GlobLists); frozen, so set it this way.
        object.__setattr__(self, "_globs", GlobLists([r._spec for r in self.rules if r._spec is not None]))

    @property
    def needs_labels(self) -> bool:
        return any(r.labels is not None for r in self.rules)


EMPTY_POLICY = Policy(file=None)


def _rule_lines(text: str) -> list[int]:
    """1-based line numbers of each ``[[rule]]`` header, in order (skipping multi-line strings)."""
    lines: list[int] = []
    in_string: str | None = None
    for no, line in enumerate(file_lines(text), start=1):
        if in_string is None and _RULE_HEADER.match(line):
            lines.append(no)
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 and in_string in (None, quote):
                in_string = None if in_string else quote
    return lines


def _key_line(text: str, start: int | None, key: str) -> int | None:
    """The line of ``key = …`` inside the rule starting at ``start`` (else the header line)."""
    if start is None:
        return None
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for no, line in enumerate(file_lines(text)[start:], start=start + 1):
        if _RULE_HEADER.match(line) or line.lstrip().startswith("["):
            break
        if pattern.match(line):
            return no
    return start


@dataclass(frozen=True)
class _RuleSite:
    """Where a ``[[rule]]`` is (its file and text, its number and header line): its errors' words."""

    path: Path
    text: str
    index: int
    line: int | None

    def fail(self, message: str, key: str | None = None, hint: str | None = None) -> ConfigError:
        """ConfigError for this rule, at the line of ``key`` when given (else the header's)."""
        at = _key_line(self.text, self.line, key) if key else self.line
        return ConfigError(str(self.path), f"rule {self.index}: {message}", line=at, hint=hint)


def _parse_rule(path: Path, text: str, index: int, line: int | None, raw: Any) -> Rule:
    site = _RuleSite(path, text, index, line)
    if not isinstance(raw, dict):
        raise site.fail("must be a table ([[rule]])")
    unknown = sorted(set(raw) - RULE_KEYS)
    if unknown:
        known = ", ".join(sorted(RULE_KEYS))
        raise site.fail(f"unknown key {unknown[0]!r}", unknown[0], hint=f"known keys: {known}")
    action = raw.get("action")
    if action not in ACTIONS:
        raise site.fail(
            f'action must be "include" or "exclude", not {action!r}', "action" if action else None
        )
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise site.fail("needs a non-empty reason", "reason" if "reason" in raw else None)
    if not any(k in raw for k in MATCHERS):
        raise site.fail(f"needs at least one matcher ({', '.join(MATCHERS)})")
    return Rule(index=index, line=line, action=action, reason=reason.strip(), **_matchers(raw, site))


def _matchers(raw: dict[str, Any], site: _RuleSite) -> dict[str, Any]:
    """The rule's matchers (``prs``, ``title``, ``labels``, ``paths``) as Rule's fields, checked."""
    kwargs: dict[str, Any] = {}
    if "prs" in raw:
        prs = raw["prs"]
        if not isinstance(prs, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in prs):
            raise site.fail("prs must be a list of PR numbers", "prs")
        kwargs["prs"] = frozenset(prs)
    if "title" in raw:
        kwargs["title"] = _title(raw["title"], site)
    if "labels" in raw:
        labels = raw["labels"]
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels) or not labels:
            raise site.fail("labels must be a non-empty list of strings", "labels")
        kwargs["labels"] = frozenset(labels)
    if "paths" in raw:
        kwargs["_spec"] = _path_globs(raw["paths"], site)
        kwargs["paths"] = tuple(raw["paths"])
    return kwargs


def _title(title: Any, site: _RuleSite) -> TitleRegex:
    if not isinstance(title, str):
        raise site.fail("title must be a regex string", "title")
    try:
        return TitleRegex.compile(title)
    except ValueError as exc:
        shown = title if len(title) <= 60 else title[:57] + "..."
        raise site.fail(
            f"bad title regex {shown!r}: {exc}", "title", hint="title regexes use RE2 syntax"
        ) from None


def _path_globs(globs: Any, site: _RuleSite) -> PathGlobs:
    if not isinstance(globs, list) or not globs or not all(isinstance(g, str) and g for g in globs):
        raise site.fail("paths must be a non-empty list of glob strings", "paths")
    if len(globs) > MAX_RULE_GLOBS:
        raise site.fail(f"{len(globs)} paths globs, over the limit of {MAX_RULE_GLOBS}", "paths")
    try:
        return PathGlobs(globs)
    except ValueError as exc:  # pathspec's or RE2's reason
        raise site.fail(f"bad paths glob: {exc}", "paths") from None


def parse_policy(text: str, path: Path) -> Policy:
    """Parse policy TOML ``text`` (read from ``path``, named in errors)."""
    data = loads_toml(text, where=str(path))  # bounded nesting and integers
    unknown = sorted(set(data) - {"rule"})
    if unknown:
        raise ConfigError(
            str(path),
            f"unknown top-level key {excerpt(unknown[0])}",
            hint="a policy is a list of [[rule]] tables",
        )
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        raise ConfigError(str(path), "'rule' must be an array of tables: write [[rule]], not [rule]")
    if len(raw_rules) > MAX_RULES:
        raise ConfigError(
            str(path),
            f"{len(raw_rules)} rules, over the limit of {MAX_RULES}",
            hint="merge rules: one rule may list many PRs, labels or globs",
        )
    lines = _rule_lines(text)
    rules = tuple(
        _parse_rule(path, text, i, lines[i - 1] if i - 1 < len(lines) else None, raw)
        for i, raw in enumerate(raw_rules, start=1)
    )
    return Policy(file=path, rules=rules)


def load_policy(path: Path, reader: Reader = WORKTREE) -> Policy:
    """Load and validate a policy file (as ``reader`` holds it: the working tree, or a commit);
    ConfigError (exit 2) with file, rule and line on any problem."""
    text = read_text(path, reader=reader)
    return parse_policy(text, path)


def decide(pr: PullRequest, policy: Policy) -> Decision:
    """The decision of the first matching rule; applicable when none matches.

    Applicable PRs that an exclude ``paths`` rule matches only partly carry those paths in
    ``partial_paths`` so a maintainer can see PRs that are half in an excluded area.
    """
    hits: dict[int, list[str]] = {}  # rule index -> the PR's paths its globs match, each once
    candidates: list[list[str]] = []  # [the PR's paths some rule may match], found once

    def hits_of(rule: Rule) -> list[str]:
        if not candidates:
            candidates.append(policy._globs.candidates(pr.paths))
        if rule.index not in hits:
            hits[rule.index] = rule.path_matches(candidates[0])
        return hits[rule.index]

    for rule in policy.rules:
        if rule.matches(pr, partial(hits_of, rule)):
            status = EXCLUDED if rule.action == "exclude" else APPLICABLE
            return Decision(status=status, reason=rule.reason, rule=rule.index, action=rule.action)
    half: set[str] = set()
    for rule in policy.rules:
        if rule.action == "exclude" and rule.paths is not None and pr.paths:
            hit = hits_of(rule)
            if hit and len(hit) < len(pr.paths):
                half.update(hit)
    return Decision(status=APPLICABLE, reason="", partial_paths=tuple(sorted(half)))


def classify(prs: Iterable[PullRequest], policy: Policy) -> tuple[PullRequest, ...]:
    """``prs`` with ``decision`` set by ``policy`` (order kept)."""
    return tuple(replace(pr, decision=decide(pr, policy)) for pr in prs)
