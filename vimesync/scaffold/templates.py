"""The text of the files ``vimesync init`` writes: every key present, set or as a commented
example, with one line on what it does. docs/config.md documents each key in full."""

from __future__ import annotations

import json

from vimesync.scaffold.facts import EngineFacts, UpstreamFacts


def _q(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _line(key: str, value: str | None, example: str, comment: str) -> str:
    """``key = value  # comment``, or a commented example when the value is unknown."""
    if value is None:
        return f"# {key} = {_q(example)}  # {comment}"
    return f"{key} = {_q(value)}  # {comment}"


def config_toml(
    up: UpstreamFacts,
    eng: EngineFacts,
    *,
    maps: tuple[tuple[str, str], ...],
    upstream_pin: str,
    engine_pin: str,
) -> str:
    """vimesync.toml: the upstream and the engine as found, the path map, the two pins."""
    clone = f"  (git clone {up.url})" if up.url else ""
    map_line = (
        "map = [" + ", ".join(_q(f"{s}={d}") for s, d in maps) + "]  # upstream folder = downstream folder"
        if maps
        else '# map = ["slime/=vime/"]  # upstream folder = downstream folder (carry, audit, mirrored PRs)'
    )
    translate = _renamed_package(maps)
    return f"""\
# vimesync configuration (docs/config.md documents every key). Every value also has a
# command-line flag, and flags win. Relative paths are relative to this file. vimesync finds this
# file from any folder of the repository; --config FILE or $VIMESYNC_CONFIG name another.

[upstream]
name = {_q(up.name)}  # display name in reports
{_line("repo", up.repo, "THUDM/slime", "owner/name on GitHub: PR links, --github")}
{_line("path", up.path, "../slime", "a local clone or bare mirror of the upstream" + clone)}
{_line("branch", up.branch, "origin/main", "the upstream tip; origin/main follows `git fetch`")}
pin = {_q(upstream_pin)}  # records the last upstream commit carried here
policy = "sop/policy.toml"  # which upstream PRs a sync carries
{map_line}
{translate}
[downstream]
path = "."  # this repository

[engine]
pin = {_q(engine_pin)}  # the exact engine source the patch stack applies to
{_line("source", eng.source, "../vllm.git", "on this machine: a clone, mirror, folder, wheel or sdist")}
"""


def _package(folder: str, default: str) -> str:
    """``slime/`` -> ``slime``: a folder's last part when it is a Python name, else ``default``."""
    name = folder.rstrip("/").rpartition("/")[2]
    return name if name.isidentifier() and name.isascii() else default


def _renamed_package(maps: tuple[tuple[str, str], ...]) -> str:
    """Commented ``[[upstream.translate]]`` and ``[[upstream.verify]]`` tables for a fork that
    renamed the upstream's package (``slime/`` -> ``vime/``: ``import slime`` -> ``import vime``),
    named after the first path map when it names two packages."""
    up, down = ("slime", "vime")
    if maps:
        up, down = _package(maps[0][0], up), _package(maps[0][1], down)
        if up == down:
            up, down = ("slime", "vime")
    return f"""
# A fork that renamed the upstream's package: every carried file's imports rewritten as carry
# brings it (after the path map; RE2 regexes, applied in order), and what must not remain at the
# sync head (the audit fails on a hit, naming file:line). docs/config.md has every key.
# [[upstream.translate]]
# pattern = '\\b(from|import) {up}\\b'  # `import {up}`, `from {up}.x import y`
# replace = '\\1 {down}'
# paths = ["**/*.py"]
#
# [[upstream.verify]]
# pattern = '\\b(from|import) {up}\\b'
# paths = ["{down}/**"]
# must = "not-match"
"""


def upstream_pin(*, repo: str | None, synced: str | None) -> str:
    return f"""\
# The last upstream commit carried into this downstream: `vimesync walk` starts after it.
# Bump it to the tip you carried when a sync merges.
[upstream]
{_line("repo", repo, "THUDM/slime", "owner/name")}
{_line("synced", synced, "<40-hex sha>", "full sha of the last upstream commit carried")}
"""


def engine_pin(*, name: str | None, repo: str | None, rev: str | None, sha256: str | None = None) -> str:
    return f"""\
# The exact engine source the patch stack in ../patches is applied to.
[engine]
{_line("name", name, "vLLM", "display name in reports")}
{_line("repo", repo, "vllm-project/vllm", "owner/name on GitHub: links in reports")}
{_line("rev", rev, "<40-hex sha>", "full sha of the engine commit (git sources; a wheel is its own pin)")}
{_line("sha256", sha256, "<64-hex digest>", "an archive source's digest (a wheel, sdist or pypi:NAME==VER)")}
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


GATES = """\
# Which gates of the sync procedure (sop/SYNC.md) apply to this downstream, the CI contexts that
# must be green at the sync head, and the container-image architectures in build order.
# `vimesync sop status` evaluates every gate; `vimesync report` those it covers.

[ci]
# The contexts (status contexts or check runs) that must be green at the sync head, e.g.
# required = ["buildkite/vime"]
required = []

[images]
architectures = ["amd64", "arm64"]  # arm64 is recorded only after amd64, at the same head
# The hosts an image may be built on (`sop record image --host`); absent: any host, e.g.
# allowed_hosts = ["build-amd64-01", "gh200-lab-02"]
# Tags that float besides latest (only `sop promote` moves them), and the floating tags the
# report says stay or move, e.g.
# floating = ["stable"]
# promote = ["vllm/vime:latest"]

[evidence]
# What must be recorded green at the sync head's evidence head: test suites (sop record tests
# --suite), runs (sop record run --name), regression matrices by their name (sop regress --name:
# every test passes after) and "pre-commit" (sop record precommit: every hook passed); then
# remove tests from [off]. With none named the gate cannot hold (nothing is evidence): it reads
# "not checked", so it starts off below. E.g.
# required = ["CPU regressions", "PipelineRL four-GPU", "serving regressions", "pre-commit"]
required = []

[off]
# A gate switched off, with the reason shown in its place (not honoured in an untrusted CI
# checkout: there only --skip-gate NAME switches a gate off), for example:
# images = "this downstream publishes no container images"
tests = "no test suites are required yet: name them in [evidence] required"
"""


def sync_md(*, upstream: str, up_pin: str, eng_pin: str, path: str | None) -> str:
    clone = path or "<upstream clone>"
    return f"""\
# The sync procedure

How a maintainer carries {upstream} into this downstream and keeps the engine patch stack
applying to its exact pin. Each step ends in a **gate**: a command whose exit code says whether
the step is done (0 done, 1 not yet, 2 the inputs are wrong). Run everything from this
checkout; `vimesync.toml` supplies the paths.

`vimesync sop status` evaluates every gate below in order and prints a checklist (held, failed,
not run, off) with the command that moves each unmet gate. Which gates apply, the required CI
contexts and the image architectures are in `sop/gates.toml`.

## The main path: `vimesync sync`
`vimesync sync` runs the steps below in one go from this checkout (walk, carry, patches, audit,
status, report) and stops only where a human must decide: a carry conflict, a patch that no
longer applies, paths to review, CI still running. Each stop names the decision and prints the
command that moves on, then `vimesync sync --continue` goes on from there (no finished step is
redone). `vimesync sync --status` says where it stands; `vimesync sync --abort` drops it. The
steps below are what it runs, each also a command of its own.

## 0. Prepare
- Fetch the upstream: `git -C {clone} fetch origin`.
- Read `{up_pin}`: `synced` is the last upstream commit already carried.
- No branch to make by hand: `vimesync carry` creates `sync/<tip8>` in a linked worktree.

## 1. Walk and classify
`vimesync walk` lists every merged PR from `synced` to the upstream tip as `applicable`,
`excluded` (with the policy rule's reason) or `mirrored` (already carried). Policy changes go
in `sop/policy.toml`, each rule with a reason.

**Gate `classified`:** `vimesync walk --json` exits 0.

## 2. Carry the applicable PRs
`vimesync carry --dry-run` shows the plan; `vimesync carry` carries each applicable PR, oldest
first, onto a new branch `sync/<tip8>` in a linked worktree: the path map and the translations
of `vimesync.toml` applied, each file merged three-way, each commit with the upstream author and
message and the trailers the next walk reads as mirrored (`Upstream-PR:`, `Upstream-Commit:`).
The last commit bumps `synced` in `{up_pin}`; you never edit it by hand.

At a conflict it stops (exit 1) naming the PR, the files and the upstream hunks, with the
worktree in git's conflict state: resolve, `git add`, `vimesync carry --continue`; or `--skip`
(the report lists the PR as not carried), or `--abort`. `--status` says where it stands.

**Gate `carried`:** `vimesync carry` on the sync branch says "nothing to carry".

## 3. Engine patch stack
To move the engine pin: `vimesync pin bump --to <rev or wheel>` shows every patch at both pins;
`--refresh --write` re-makes the patches that moved and updates `{eng_pin}`.

**Gate `patches`:** `vimesync patches check` exits 0: every patch applies to the exact pin and
every Python file of the patched tree parses.

## 4. Audit every changed path
`vimesync audit` classifies each path the sync changed (the baseline is where the sync branch
left main); review each one against the upstream tip and the baseline and record it with
`vimesync audit review PATH... --by <you>` (ledger in `sop/reviews/`).

**Gate `audit`:** `vimesync audit` exits 0: no unreviewed or stale paths.

## 5. Exact-head CI and images
Push the sync branch; `vimesync ci --pr N` reads the CI of the PR's current head (earlier heads
are not evidence). Record each image built from that head:
`vimesync sop record image --arch amd64 --digest sha256:... --ref <registry>/<name>:<tag>`.

**Gate `ci`:** `vimesync ci --pr N` exits 0. **Gate `images`:** `vimesync sop status` shows it held.

## 5b. Evidence bound to the head
Record the rest of the Validation section in `sop/records/<sync>.toml` and commit it with the PR
(a commit of only the records and review ledgers, `sop/records/<sync>.toml` and
`sop/reviews/<sync>.toml`, keeps the evidence head; any other commit moves it):
- a job vimesync runs and measures itself (exit, duration, host, GPUs, the image its container
  declares, the tail of its output): `vimesync sop record run --name NAME [--junit FILE]
  [--figures FILE] -- CMD [ARG...]`; a control that must fail adds `--expect-exit N
  --expect-output REGEX`, a second independent run `--again`;
- test suites: `vimesync sop record tests --suite NAME --junit FILE`;
- the CI jobs behind the head: `vimesync sop record ci`;
- pre-commit on the changed files: `vimesync sop record precommit`, and a before/after matrix:
  `vimesync sop regress --test NODEID`;
- only for a run that cannot be repeated here, typed as a fallback (it reads "typed" wherever it
  is shown): `vimesync sop record run --name NAME --exit N --duration 4m03s`.

`sop record run -- CMD`, `sop record precommit` and `sop regress` run this repository's code
and are refused in CI.

**Gate `tests`:** the suites, runs, regression matrices and `pre-commit` that
`sop/gates.toml [evidence] required` names are recorded green at the head (off until it names one).

## 6. Report and merge
`vimesync report --output sync.md` writes the PR description with every figure computed;
`--publish owner/repo#N` puts it into the PR between markers.

**Gate:** `vimesync report` exits 0: every gate it covers holds.
"""
