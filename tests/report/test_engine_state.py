"""The Engine patches table carries the upstream state of the engine PRs each patch's header
names (issue 31 item 4): asked of a GitHub stand-in on loopback as ``pin radar`` asks, placed
against the demo's real engine pin, bounded, and "not checked" (never an error) without a token
or a reachable GitHub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.headchange import committed_change
from vimesync.cli.app import main
from vimesync.demo.build import Demo, build_demo
from vimesync.github import PullState
from vimesync.report.enginemd import _upstream_cell
from vimesync.report.radar import UpstreamRef, scan_patches

PR = 59060  # the engine PR the demo's vllm-aux-output-reset.patch names
ROW = "| `vllm-aux-output-reset.patch` |"
OTHERS = (53199, 55708)  # the engine PRs the demo's other patches name
LINK = f"[vllm-project/vllm#{PR}](https://github.com/vllm-project/vllm/pull/{PR})"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Demo:
    monkeypatch.chdir(built.downstream)
    monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
    return built


@pytest.fixture
def github(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(range(0))
    fake.pull_states = {n: {"state": "open", "merged": False} for n in OTHERS}
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield fake


def report(demo: Demo, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    argv = ["report", "--baseline", demo.baseline, "--sync", "s", "--skip-gate", "ci", *extra]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and TOKEN not in out + err
    return int(exc.value.code or 0), out


def _row(md: str) -> str:
    """The patch's Purpose / PR cell (the row's second column)."""
    (row,) = [line for line in md.splitlines() if line.startswith(ROW)]
    return row.removeprefix(ROW).split(" | ")[0]


@pytest.mark.slow
def test_a_merged_pr_absent_from_the_pin_is_said_so_in_its_row(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    title = "@vllm-project/maintainers [click](https://evil.example) <img src=x> closes #1"
    github.pull_states[PR] = {"state": "closed", "merged": True, "merge_commit_sha": "c" * 40, "title": title}
    _, md = report(demo, capsys)
    assert _row(md).endswith(f" Upstream: merged {LINK}, absent from the pin.")
    assert "@vllm-project/maintainers" not in md and "evil.example" not in md  # no title is shown
    asked = [p for p, _ in github.requests if "/pulls/" in p]
    # asked about the engine's PRs only (aoshen02/vllm#83 is another repository's)
    assert asked == [f"/repos/vllm-project/vllm/pulls/{n}" for n in (*OTHERS, PR)]
    _, out = report(demo, capsys, "--format", "json")
    (row,) = [r for r in json.loads(out)["engine"]["patches"] if r["name"] == "vllm-aux-output-reset.patch"]
    assert row["upstream"] == [
        {
            "ref": f"vllm-project/vllm#{PR}",
            "state": "merged",
            "merge_commit": "c" * 40,
            "in_pin": False,
            "why": None,
        }
    ]
    # the merge commit the pin holds: in the pin
    github.pull_states[PR]["merge_commit_sha"] = demo.engine_rev
    _, md = report(demo, capsys)
    assert _row(md).endswith(f" Upstream: merged {LINK}, in the pin.")
    github.pull_states[PR] = {"state": "open", "merged": False}
    _, md = report(demo, capsys)
    assert _row(md).endswith(f" Upstream: open {LINK}.")


@pytest.mark.slow
def test_without_a_token_or_a_reachable_github_it_says_not_checked(
    demo: Demo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, md = report(demo, capsys)
    assert "Upstream:" not in _row(md)
    assert (
        "Upstream state of the engine PRs named: not checked"
        " (no GITHUB\\_TOKEN or GH\\_TOKEN in the environment)." in md
    )
    monkeypatch.setenv("VIMESYNC_GITHUB_API", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    again, md = report(demo, capsys)
    assert again == code  # never an error of its own
    assert _row(md).endswith(f" Upstream: {LINK} not checked.")


@pytest.mark.slow
@pytest.mark.parametrize(
    "answer",
    [
        {"state": ["closed"], "merged": True},  # a state of the wrong type
        {"state": "closed", "merged": True, "merge_commit_sha": "not a sha\n| x |"},
        {"state": "merged"},  # not one of GitHub's two states
    ],
)
def test_an_odd_answer_is_not_checked_or_merged_with_no_commit(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str], answer: dict[str, Any]
) -> None:
    github.pull_states[PR] = answer
    _, md = report(demo, capsys)
    row = _row(md)
    assert row.endswith((f" Upstream: {LINK} not checked.", f" Upstream: merged {LINK}."))
    assert "not a sha" not in md


@pytest.mark.slow
def test_a_header_naming_10000_prs_is_asked_about_50_and_shows_10(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "patches/vllm-aux-output-reset.patch"
    text = (demo.downstream / name).read_text()
    github.pull_states.update({n: {"state": "open", "merged": False} for n in (*range(1, 100), PR)})
    many = " ".join(f"vllm-project/vllm#{n}" for n in range(1, 10_001))
    with committed_change(demo, name, text.replace("Last-Update:", f"Bug: {many}\nLast-Update:", 1)) as d:
        _, md = report(d, capsys)
    asked = [p for p, _ in github.requests if "/pulls/" in p]
    assert len(asked) == 50
    upstream = _row(md).split(" Upstream: ", 1)[1]
    assert upstream.count("; ") == 10 and upstream.endswith("; and 9,991 more.")


def test_the_cell_is_bounded_and_names_each_state() -> None:
    refs = [UpstreamRef(f"o/r#{n}", number=n) for n in range(1, 13)]
    states = {1: PullState(1, "merged", "a" * 40), 2: PullState(2, "closed"), 3: PullState(3, "open")}

    def ask(n: int) -> PullState:
        return states.get(n, PullState(n, "open"))

    (row,) = scan_patches([("p", refs)], ask=ask, max_asked=3)
    cell = _upstream_cell(row.refs, "o/r")
    parts = cell.split("; ")
    assert parts[0] == "merged [o/r#1](https://github.com/o/r/pull/1)"  # no git pin: not placed
    assert parts[1:4] == [
        "closed unmerged [o/r#2](https://github.com/o/r/pull/2)",
        "open [o/r#3](https://github.com/o/r/pull/3)",
        "[o/r#4](https://github.com/o/r/pull/4) not checked",
    ]
    assert parts[-1] == "and 2 more" and len(parts) == 11


FOOTER = (
    "Upstream state of the engine PRs named: not checked (a GitHub lookup failed, not with a 404,"
    " and the PRs after it were not asked about)."
)


@pytest.mark.slow
def test_after_a_failed_lookup_the_footer_says_why_once(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 404 is one PR's answer (no footer); a failure other than a 404 stops the lookups, the
    rows after it read "not checked", and the footer says why once, in a fixed phrase (never
    GitHub's words)."""
    github.pull_states[PR] = {"state": "open", "merged": False}
    github.script = [(404, {})]  # the first PR asked: not a pull request
    _, md = report(demo, capsys)
    assert FOOTER not in md and _row(md).endswith(f" Upstream: open {LINK}.")
    github.script = [(404, {}), (401, {})]  # then GitHub refuses: nothing more is asked
    _, md = report(demo, capsys)
    assert _row(md).endswith(f" Upstream: {LINK} not checked.")
    assert md.count(FOOTER) == 1 and "boom" not in md
    assert [p for p, _ in github.requests if "/pulls/" in p][
        -1
    ] == f"/repos/vllm-project/vllm/pulls/{OTHERS[1]}"


@pytest.mark.slow
def test_after_a_lookup_that_answered_the_footer_says_partly_checked(
    demo: Demo, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first PR asked is answered, the next lookup fails: the answered PR's row shows its
    state, so the footer does not say the PRs were not checked; it says they were partly."""
    github.script = [(0, {}), (401, {})]
    _, md = report(demo, capsys)
    first = f"[vllm-project/vllm#{OTHERS[0]}](https://github.com/vllm-project/vllm/pull/{OTHERS[0]})"
    assert f"open {first}" in md and _row(md).endswith(f" Upstream: {LINK} not checked.")
    assert FOOTER not in md
    assert md.count(FOOTER.replace(": not checked (", ": partly checked (")) == 1
