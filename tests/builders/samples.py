"""Model objects for report tests: a demo-like sync and its tricky variants."""

from __future__ import annotations

from dataclasses import replace

from vimesync.audit.model import (
    DELETED,
    DOWNSTREAM_ONLY,
    EXCLUDED,
    IDENTICAL,
    OVERLAY,
    REVIEWED,
    STALE,
    TRANSLATED_VERIFIED,
    UNREVIEWED,
    VERIFIED,
    AuditResult,
    PathAudit,
)
from vimesync.audit.owncommits import OwnChanges, OwnCommit
from vimesync.check.model import CheckReport, SourceInfo
from vimesync.patches.model import Dep3, HunkFailure, PatchResult
from vimesync.pycheck.model import ParseReport
from vimesync.upstream.model import (
    APPLICABLE,
    MIRRORED,
    Decision,
    DirectCommit,
    PullRequest,
    WalkResult,
)
from vimesync.upstream.model import (
    EXCLUDED as PR_EXCLUDED,
)

BASE = "4c193f1f" + "a" * 32
TIP = "8c17b676" + "b" * 32
PIN = "e9757321527ca1ecd514c07c1418dd2c53da3d19"


def _pr(n: int, title: str, status: str = APPLICABLE, reason: str = "", **kw: object) -> PullRequest:
    decision = Decision(status=status, reason=reason, **kw)  # type: ignore[arg-type]
    return PullRequest(
        number=n,
        title=title,
        commits=(f"{n:040x}",),
        paths=("slime/x.py",),
        merge_commit=f"{n:040x}",
        kind="squash",
        decision=decision,
    )


def walk() -> WalkResult:
    return WalkResult(
        base=BASE,
        tip=TIP,
        upstream="THUDM/slime",
        prs=(
            _pr(2401, "Score centering for GRPO"),
            _pr(2410, "Straw-backed fully-async rollout (follow-up to #2401)"),
            _pr(
                2424,
                "Ascend NPU backend",
                PR_EXCLUDED,
                "Ascend is not supported downstream",
                rule=1,
                action="exclude",
            ),
            _pr(
                2428,
                "Biren/SUPA accelerator support",
                APPLICABLE,
                "requested by the Vime maintainers",
                rule=2,
                action="include",
            ),
            _pr(2431, "PipelineRL flush", APPLICABLE, partial_paths=("docs/ascend.md",)),
            replace(_pr(2432, 'Revert "Score centering for GRPO"'), reverts=2401),
            _pr(2433, "Checkpoint continuation", MIRRORED, mirrored_by="trailer Upstream-PR"),
        ),
        direct_commits=(DirectCommit(sha="c0ffee00" + "c" * 32, title="Fix typo in README"),),
        notes=("the policy has labels rules but no PR metadata was given (--pr-metadata or --github)",),
    )


def _dep3(**fields: str) -> Dep3:
    items = tuple((k.replace("_", "-").lower(), v) for k, v in fields.items())
    return Dep3(text="\n".join(f"{k}: {v}" for k, v in items), fields=items)


def patches() -> tuple[PatchResult, ...]:
    return (
        PatchResult(
            "vllm-pull_weights.patch",
            ok=True,
            files=2,
            hunks=5,
            dep3=_dep3(
                Description="Pull-checkpoint transport", Origin="https://github.com/aoshen02/vllm/pull/45"
            ),
        ),
        PatchResult(
            "vllm.patch",
            ok=True,
            files=4,
            hunks=9,
            dep3=_dep3(
                Subject="Weight-version propagation",
                Origin="vllm-project/vllm#53199",
                Forwarded="https://github.com/vllm-project/vllm/pull/55708",
                Applied_Upstream="https://github.com/vllm-project/vllm/pull/47933",
            ),
        ),
        PatchResult(
            "vllm-score-centering.patch",
            ok=True,
            files=1,
            hunks=2,
            dep3=_dep3(
                Description="Sampling-mask transport and exact top-p extension\n"
                "Long description that stays out of the table.",
                Bug="aoshen02/vllm#83",
            ),
        ),
        PatchResult(
            "vllm-aux-output-reset.patch",
            ok=True,
            files=1,
            hunks=1,
            dep3=_dep3(
                Description="Backport merged fix, absent from the pin",
                Origin="backport, https://github.com/vllm-project/vllm/commit/" + "d" * 40,
            ),
        ),
    )


def parse_ok(files: int = 2533) -> ParseReport:
    return ParseReport(
        files=files,
        failed=(),
        version="3.12",
        version_source="--python",
        interpreter="/usr/bin/python3.12 (3.12.1)",
    )


_PARSED = object()


def check(patch_results: tuple[PatchResult, ...] | None = None, python: object = _PARSED) -> CheckReport:
    return CheckReport(
        source=SourceInfo(kind="git", path="/src/vllm", rev=PIN),
        series="patches/series",
        patches=patches() if patch_results is None else patch_results,
        python=parse_ok() if python is _PARSED else python,  # type: ignore[arg-type]
        engine="vLLM",
    )


def audit(ok: bool = True) -> AuditResult:
    paths = [
        PathAudit("README.md", IDENTICAL, "1" * 40, "README.md", "1" * 40, VERIFIED),
        PathAudit(
            "vime/rollout.py",
            OVERLAY,
            "2" * 40,
            "slime/rollout.py",
            "3" * 40,
            REVIEWED,
            "alice",
            "2" * 40,
            rules=("vimesync.toml:9 '\\bslime\\b' -> 'vime' (2 matches)",),
            residue="a" * 64,
            residue_added=3,
            residue_removed=1,
            residue_diff="@@ -1 +1,3 @@\n-x = 1\n+x = 2\n+y = 3\n+z = 4\n",
            dropped_comments=("1: # why x is 1",),
            reviewed_residue="a" * 64,
        ),
        PathAudit(
            "vime/train.py",
            TRANSLATED_VERIFIED,
            "6" * 40,
            "slime/train.py",
            "7" * 40,
            VERIFIED,
            rules=("vimesync.toml:9 '\\bslime\\b' -> 'vime' (1 match)",),
        ),
        PathAudit(
            "vime/overlay.py", DOWNSTREAM_ONLY, "4" * 40, "slime/overlay.py", None, REVIEWED, "bob", "4" * 40
        ),
        PathAudit("vime/old.py", DELETED, "0" * 40, "slime/old.py", None, REVIEWED, "bob", "0" * 40),
        PathAudit(
            "vime/backends/ascend/x.py",
            EXCLUDED,
            "5" * 40,
            "slime/backends/ascend/x.py",
            "6" * 40,
            REVIEWED,
            "alice",
            "5" * 40,
        ),
    ]
    if not ok:
        paths[1] = replace(paths[1], review=STALE, reviewed_oid="7" * 40)
        paths[3] = replace(paths[3], review=UNREVIEWED, reviewed_by=None, reviewed_oid=None)
    return AuditResult(
        baseline="f" * 40,
        head="e" * 40,
        upstream_tip=TIP,
        sync="4c193f1f..8c17b676",
        ledger_path="sop/reviews/4c193f1f..8c17b676.toml",
        paths=tuple(sorted(paths, key=lambda p: p.path)),
        path_map=(("slime/", "vime/"),),
    )


def own() -> OwnChanges:
    """The maintainer's commits on the sync branch (the seed PR's audit fixes)."""
    return OwnChanges(
        commits=(
            OwnCommit("a1" * 20, "aoshen02", "Remove obsolete per-file R3 spill", 38, 540),
            OwnCommit("b2" * 20, "aoshen02", "Restore omitted upstream comments | docs", 12, 22, binary=1),
        ),
        carried=14,
        pin_bumps=1,
    )


def failing_check() -> CheckReport:
    ok = patches()
    bad = PatchResult(
        "vllm.patch",
        ok=False,
        files=4,
        hunks=9,
        dep3=ok[1].dep3,
        failures=(
            HunkFailure(
                file="vllm/v1/engine/output_processor.py",
                hunk=2,
                header="@@ -120,7 +120,9 @@ class X:",
                reason="context does not match",
                first_mismatch=3,
                expected="    return out",
                found="    return outputs",
                nearest_line=131,
            ),
            HunkFailure(file="vllm/new.py", hunk=0, header="", reason="file already exists"),
        ),
    )
    skipped = PatchResult("vllm-score-centering.patch", ok=False, skipped=True, dep3=ok[2].dep3)
    return check((ok[0], bad, skipped), python=None)
