"""A hostile upstream cannot make a PR look carried (issue 18, finding 1).

The branch commits of a merge-commit PR are public before it merges. An upstream PR titled
``Tidy docs (cherry picked from commit <12 hex of such a commit>)``, carried with that subject,
made walk read the other PR as "already mirrored" from then on: never carried, and the carried
gate held. Mirrored detection reads only carry's trailers and git's own ``-x`` line position; carry
defuses every upstream line it writes (subjects, bodies, left-out notes, --squash titles).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.pair import Pair, build_pair, cli
from vimesync import git
from vimesync.upstream.downstreamindex import cherry_picked

pytestmark = pytest.mark.slow  # carries end to end in real repositories


def _attack(pair: Pair) -> tuple[int, int]:
    """Two PRs after the tip: #10 titled to claim #11's branch commit, then #11 (a merge PR)."""
    up = pair.up
    up.branch("feat11")
    work = up.commit("the real change of #11", {"slime/e.py": "e = 11\n"})
    up.checkout("main")
    up.commit(f"Tidy docs (cherry picked from commit {work[:12]}) (#10)", {"docs/tidy.md": "tidy\n"})
    up.merge("feat11", "Merge pull request #11 from bob/feat11\n\nAdd e")
    return 10, 11


def test_a_title_claiming_another_prs_commit_does_not_make_it_mirrored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pair = build_pair(tmp_path)
    ten, eleven = _attack(pair)
    tip = pair.up.head()
    code, doc = pair.carry(capsys, "--range", f"{pair.base}..{tip}", "--pr", str(ten))
    assert code == 0, doc
    branch = doc["branch"]
    message = git.run(pair.down.path, ["log", "-1", "--format=%B", f"{branch}~1"]).decode()
    assert "(cherry picked from commit" not in message  # defused in the subject as in the body
    prs = {p["number"]: p for p in pair.walked(capsys, branch, tip)}
    assert prs[ten]["status"] == "mirrored"
    assert prs[eleven]["status"] == "applicable", prs[eleven]


@pytest.mark.parametrize(
    ("message", "picked"),
    [
        ("Fix\n\n(cherry picked from commit " + "a" * 40 + ")\n", ["a" * 40]),  # git cherry-pick -x
        ("Fix\n\nSigned-off-by: x <x@y>\n(cherry picked from commit " + "b" * 12 + ")", ["b" * 12]),
        ("Tidy docs (cherry picked from commit " + "c" * 12 + ")\n\nbody", []),  # in a subject
        ("Fix\n\nsee (cherry picked from commit " + "d" * 12 + ") above\n\nUpstream-PR: #1", []),
        ("Fix\n\n(cherry picked from commit " + "e" * 12 + ")\n\nmore text", []),  # not the last paragraph
    ],
)
def test_only_gits_own_line_counts(message: str, picked: list[str]) -> None:
    assert cherry_picked(message) == picked


def test_copied_lines_make_a_pending_pr_look_mirrored_never_carried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 2: an upstream PR that adds another pending PR's changed lines elsewhere (dead code)
    made that PR "already downstream (75% of changed lines)". Similarity suggests, never decides."""
    pair = build_pair(tmp_path)
    body = "".join(f"    step_{i} = compute({i})\n" for i in range(6))
    up = pair.up
    middle = "".join(f"# keep {i}\n" for i in range(8))
    up.commit("work.py (#19)", {"slime/work.py": middle})
    pair.down.commit("work.py\n\nUpstream-PR: THUDM/slime#19", {"vime/work.py": middle})
    up.branch("feat20")
    up.commit("real work", {"slime/work.py": f"def run():\n{body}{middle}"})
    up.checkout("main")
    up.commit("Unused helper (#21)", {"slime/work.py": f"{middle}def _never_called():\n{body}"})
    up.merge("feat20", "Merge pull request #20 from carol/feat20\n\nThe real work")
    tip = up.head()
    code, doc = pair.carry(capsys, "--range", f"{pair.tip}..{tip}", "--pr", "21")
    assert code == 0, doc
    prs = {p["number"]: p for p in pair.walked(capsys, doc["branch"], tip)}
    assert prs[21]["status"] == "mirrored"
    assert prs[20]["status"] == "applicable" and prs[20]["mirrored_by"] is None
    assert "looks mirrored" in prs[20]["reason"]
    # The maintainer who has checked it says so: --accept-similar counts it (walk and carry)
    args = [
        "walk",
        "--json",
        "--downstream",
        ".",
        "--downstream-rev",
        doc["branch"],
        "--range",
        f"{pair.tip}..{tip}",
    ]
    _, out, _ = cli(capsys, *args, "--accept-similar", cwd=pair.down.path)
    accepted = {p["number"]: p for p in json.loads(out)["prs"]}
    assert accepted[20]["status"] == "mirrored" and accepted[20]["mirrored_by"].startswith("similar content")
    code, again = pair.carry(
        capsys, "--range", f"{pair.tip}..{tip}", "--onto", doc["branch"], "--branch", "x", "--accept-similar"
    )
    assert code == 0 and 20 not in [c["pr"] for c in again.get("carried", [])]


def test_a_carried_gitattributes_runs_no_git_lfs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 3: the downstream has git-lfs installed (``git lfs install --local`` writes its
    filters); an upstream PR carries ``*.bin filter=lfs``, a pointer file and a .lfsconfig naming
    the attacker's server. The carry checks the files out (worktree, conflict state): git-lfs must
    not run."""
    pair = build_pair(tmp_path)
    marker = tmp_path / "git-lfs-ran"
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git-lfs").write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\ncat\n')
    (fake / "git-lfs").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{__import__('os').environ['PATH']}")
    for key, value in (("clean", "git-lfs clean -- %f"), ("smudge", "git-lfs smudge -- %f")):
        pair.down.git("config", f"filter.lfs.{key}", value)
    pair.down.git("config", "filter.lfs.required", "true")
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 4\n"
    pair.up.commit(
        "Add assets (#30)",
        {
            "slime/.gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n",
            "slime/assets/model.bin": pointer,
            ".lfsconfig": "[lfs]\n\turl = https://attacker.invalid/lfs\n",
        },
    )
    tip = pair.up.head()
    code, doc = pair.carry(capsys, "--range", f"{pair.tip}..{tip}", "--pr", "30")
    assert code == 0, doc
    worktree = Path(doc["worktree"])
    assert (worktree / "vime/assets/model.bin").read_text() == pointer  # checked out as committed
    assert not marker.exists(), marker.read_text()
