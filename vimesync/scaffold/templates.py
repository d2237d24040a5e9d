"""The text of the files ``vimesync init`` writes: every key present, set or as a commented
example, with one line on what it does. docs/config.md documents each key in full."""

from __future__ import annotations

import json


def _q(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _line(key: str, value: str | None, example: str, comment: str) -> str:
    """``key = value  # comment``, or a commented example when the value is unknown."""
    if value is None:
        return f"# {key} = {_q(example)}  # {comment}"
    return f"{key} = {_q(value)}  # {comment}"


def config_toml(
    *,
    name: str,
    repo: str | None,
    path: str | None,
    url: str | None,
    branch: str | None,
    maps: tuple[tuple[str, str], ...],
    upstream_pin: str,
    engine_pin: str,
    engine_source: str | None,
) -> str:
    clone = f"  (git clone {url})" if url else ""
    map_line = (
        "map = [" + ", ".join(_q(f"{s}={d}") for s, d in maps) + "]  # upstream folder = downstream folder"
        if maps
        else '# map = ["slime/=vime/"]  # upstream folder = downstream folder (carry, audit, mirrored PRs)'
    )
    return f"""\
# vimesync configuration (docs/config.md documents every key). Every value also has a
# command-line flag, and flags win. Relative paths are relative to this file. vimesync finds this
# file from any folder of the repository; --config FILE or $VIMESYNC_CONFIG name another.

[upstream]
name = {_q(name)}  # display name in reports
{_line("repo", repo, "THUDM/slime", "owner/name on GitHub: PR links, --github")}
{_line("path", path, "../slime", "a local clone or bare mirror of the upstream" + clone)}
{_line("branch", branch, "origin/main", "the upstream tip; origin/main follows `git fetch`")}
pin = {_q(upstream_pin)}  # records the last upstream commit carried here
policy = "sop/policy.toml"  # which upstream PRs a sync carries
{map_line}

[downstream]
path = "."  # this repository

[engine]
pin = {_q(engine_pin)}  # the exact engine source the patch stack applies to
{_line("source", engine_source, "../vllm.git", "on this machine: a clone, mirror, folder, wheel or sdist")}
"""


def upstream_pin(*, repo: str | None, synced: str | None) -> str:
    return f"""\
# The last upstream commit carried into this downstream: `vimesync walk` starts after it.
# Bump it to the tip you carried when a sync merges.
[upstream]
{_line("repo", repo, "THUDM/slime", "owner/name")}
{_line("synced", synced, "<40-hex sha>", "full sha of the last upstream commit carried")}
"""


def engine_pin(*, name: str | None, repo: str | None, rev: str | None) -> str:
    return f"""\
# The exact engine source the patch stack in ../patches is applied to.
[engine]
{_line("name", name, "vLLM", "display name in reports")}
{_line("repo", repo, "vllm-project/vllm", "owner/name on GitHub: links in reports")}
{_line("rev", rev, "<40-hex sha>", "full sha of the engine commit (git sources; a wheel is its own pin)")}
series = "../patches/series"  # the quilt series file
strip = 1  # the default -pN of every patch (slime's docker/patch stacks use 2)
# python = "3.12"  # the grammar files must parse under (default: the tree's requires-python)
"""


SERIES = """\
# The patch stack, applied in this order to the engine pin (quilt format).
# One patch file per line, relative to this folder; a line may end with -pN to override the
# pin's strip; blank lines and # comments are ignored. An empty series means "no patches".
# vllm-pull_weights.patch
# vllm-score-centering.patch -p2
"""

POLICY = """\
# Which upstream PRs a sync carries. The first matching [[rule]] decides; no match = applicable.
# A rule has an action ("include" or "exclude"), a reason (shown next to the PR) and one or more
# matchers, all of which must hold: prs (numbers), title (an RE2 regex, searched), labels (any
# of them; needs PR metadata: --github or --pr-metadata), paths (gitignore-style globs; matches
# when EVERY path the PR changes matches one of them).

# [[rule]]
# action = "exclude"
# reason = "Ascend NPU work is not carried"
# title = '(?i)\\b(npu|ascend)\\b'

# [[rule]]
# action = "exclude"
# reason = "NPU backend only"
# paths = ["slime/backends/npu/**", "docker/npu_patch/**"]

# [[rule]]
# action = "include"
# reason = "carried as requested"
# prs = [2199]
"""


def sync_md(*, upstream: str, up_pin: str, eng_pin: str, path: str | None) -> str:
    clone = path or "<upstream clone>"
    return f"""\
# The sync procedure

How a maintainer carries {upstream} into this downstream and keeps the engine patch stack
applying to its exact pin. Each step ends in a **gate**: a command whose exit code says whether
the step is done (0 done, 1 not yet, 2 the inputs are wrong). Run everything from this
checkout; `vimesync.toml` supplies the paths.

## 0. Prepare
- Fetch the upstream: `git -C {clone} fetch origin`.
- Read `{up_pin}`: `synced` is the last upstream commit already carried.
- Branch: `git switch -c sync/<tip8>`.

## 1. Walk and classify
`vimesync walk` lists every merged PR from `synced` to the upstream tip as `applicable`,
`excluded` (with the policy rule's reason) or `mirrored` (already carried). Policy changes go
in `sop/policy.toml`, each rule with a reason.

**Gate:** `vimesync walk --json` exits 0.

## 2. Carry the applicable PRs
Cherry-pick or translate each applicable PR, oldest first, with trailers so the next walk
sees them as mirrored:

    Upstream-PR: owner/name#N
    Upstream-Commit: <sha>

## 3. Engine patch stack
If the engine pin moves, update `{eng_pin}` (`rev`) and refresh the patches in `patches/`.

**Gate:** `vimesync patches check` exits 0: every patch applies to the exact pin and every
Python file of the patched tree parses.

## 4. Audit every changed path
`vimesync audit --baseline <pre-sync commit>` classifies each changed path; review each and
record it with `vimesync audit review PATH... --by <you> --baseline <pre-sync commit>`.

**Gate:** `vimesync audit --baseline <pre-sync commit>` exits 0.

## 5. Report and merge
`vimesync report --baseline <pre-sync commit> --output sync.md` writes the PR description.
Then bump `synced` in `{up_pin}` to the tip you carried.

**Gate:** `vimesync report` exits 0.
"""
