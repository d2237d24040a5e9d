"""Real upstream/downstream histories reproducing every shape the walk must handle (tests only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.builders.gitrepo import Repo

CORE = "".join(f"line {i} of the core module\n" for i in range(40))
BAR = "".join(f"def bar_{i}():\n    return {i} * 2 + 1\n\n" for i in range(12))
BIG = "".join(f"def big_{i}(x):\n    return x + {i} * 3\n\n" for i in range(12))


@dataclass
class Upstream:
    repo: Repo
    shas: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.repo.path


def build_upstream(path: Path) -> Upstream:
    """Root commit, squash, merge, merge carrying a fork's PR merges, rebase merge, direct pushes,
    reverts (by sha, by subject, of a merge), NPU PRs (by title, by paths, partly)."""
    r = Repo(path)
    u = Upstream(r)
    s = u.shas
    s["root"] = r.commit("init", {"slime/__init__.py": "", "slime/core.py": CORE, "README.md": "slime\n"})
    s["pr1"] = r.commit("Add foo (#1)", {"slime/foo.py": "def foo():\n    return 'foo'\n" * 3})

    # PR 2: a classic merge commit of a two-commit branch.
    r.branch("feat")
    s["pr2a"] = r.commit("bar: first", {"slime/bar.py": BAR})
    s["pr2b"] = r.commit("bar: docs", {"docs/bar.md": "# bar\nhow to bar\nmore about bar\n"})
    r.checkout("main")
    s["pr2"] = r.merge("feat", "Merge pull request #2 from alice/feat\n\nAdd bar")

    # PR 3: its branch merged a PR of the author's fork (#7 there) and main itself.
    r.branch("big")
    s["pr3a"] = r.commit("big: start", {"slime/big.py": BIG})
    r.branch("part")
    s["fork7"] = r.commit("part: helper", {"slime/helper.py": "def helper():\n    return 42\n" * 2})
    r.checkout("big")
    s["fork7m"] = r.merge("part", "Merge pull request #7 from carol/part\n\nhelper")
    r.checkout("main")
    s["direct1"] = r.commit("fix typo", {"README.md": "slime!\n"})
    r.checkout("big")
    s["bigsync"] = r.merge("main", "Merge branch 'main' into big")
    r.checkout("main")
    s["pr3"] = r.merge("big", "Merge pull request #3 from carol/big\n\nBig feature")

    # PR 4: rebase-merged, two first-parent commits carrying the same number.
    s["pr4a"] = r.commit("Part one (#4)", {"slime/parts.py": "one = 1\nalso_one = 1\nstill_one = 1\n"})
    s["pr4b"] = r.commit("Part two (#4)", {"slime/parts2.py": "two = 2\nalso_two = 2\nstill_two = 2\n"})

    # Reverts: a PR reverting PR 1 by sha; a direct revert of the PR 2 merge (by its subject).
    r.git("revert", "--no-edit", s["pr1"])
    r.git("commit", "-q", "--amend", "-m", f'Revert "Add foo" (#5)\n\nThis reverts commit {s["pr1"]}.')
    s["pr5"] = r.head()
    r.git("revert", "--no-edit", "-m", "1", s["pr2"])
    s["direct2"] = r.head()

    # NPU: excluded by title, by paths (all paths), flagged (some paths).
    s["pr6"] = r.commit("Add Ascend NPU backend (#6)", {"slime/backends/npu/x.py": "npu = True\n"})
    s["pr8"] = r.commit("Update patches (#8)", {"docker/npu_patch/a.patch": "a\n"})
    s["pr9"] = r.commit(
        "Refactor core (#9)", {"slime/core.py": CORE + "tail\n", "docker/npu_patch/b.patch": "b\n"}
    )
    s["pr10"] = r.commit("Empty change (#10)")
    return u


POLICY = """\
# sync policy
[[rule]]
action = "include"
reason = "mirrored as requested"
prs = [9]

[[rule]]
action = "exclude"
reason = "Ascend/NPU is not carried downstream"
title = "(?i)\\\\b(npu|ascend)\\\\b"

[[rule]]
action = "exclude"
reason = "NPU-only files"
paths = ["docker/npu_patch/**", "**/npu/**"]
"""


def build_downstream(path: Path, up: Upstream) -> Repo:
    """A separate repo (``vime/`` for upstream ``slime/``) carrying some upstream PRs:
    #1 by an Upstream-PR trailer, #4 by ``cherry-pick -x`` lines, #2 reworded without trailer
    (patch-id), #3 reworded with a small conflict edit (similar content)."""
    d = Repo(path)
    d.commit("vime: start", {"vime/__init__.py": "", "vime/core.py": CORE, "README.md": "vime\n"})
    d.commit("Port foo\n\nUpstream-PR: THUDM/slime#1", {"vime/foo.py": "def foo():\n    return 'foo'\n" * 3})
    d.commit(
        f"parts one\n\n(cherry picked from commit {up.shas['pr4a']})",
        {"vime/parts.py": "one = 1\nalso_one = 1\nstill_one = 1\n"},
    )
    d.commit(
        "bar support, ported", {"vime/bar.py": BAR, "docs/bar.md": "# bar\nhow to bar\nmore about bar\n"}
    )
    d.commit(
        "big feature for vime",
        {
            "vime/big.py": BIG.replace("x + 11 * 3", "x + 11 * 3  # vime"),
            "vime/helper.py": "def helper():\n    return 42\n" * 2,
        },
    )
    d.commit("vime-only change", {"vime/own.py": "mine = True\n"})
    return d
