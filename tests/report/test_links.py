from __future__ import annotations

import pytest

from vimesync.patches.model import Dep3
from vimesync.report.links import Ref, dep3_refs, find_refs, github_repo_of
from vimesync.report.mdtext import escape, link


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://github.com/vllm-project/vllm/pull/53199", ["vllm-project/vllm#53199"]),
        ("https://github.com/vllm-project/vllm/pull/53199/files#diff-1", ["vllm-project/vllm#53199"]),
        ("https://github.com/a/b/issues/3#issuecomment-1", ["a/b#3"]),
        ("aoshen02/vllm#45", ["aoshen02/vllm#45"]),
        ("upstream, https://github.com/x/y/commit/" + "a" * 40, ["x/y@aaaaaaaa"]),
        ("upstream, commit:" + "b" * 40, ["e/v@bbbbbbbb"]),
        ("no", []),
        ("not-needed", []),
        ("see https://lore.kernel.org/x/1234.", ["https://lore.kernel.org/x/1234"]),
        ("fixes #12, see a/b#3", ["e/v#12", "a/b#3"]),
    ],
)
def test_find_refs(text: str, expected: list[str]) -> None:
    assert [r.text for r in find_refs(text, default_repo="e/v")] == expected


def test_pr_urls_link_to_the_pull_and_text_refs_to_issues() -> None:
    (pr,) = find_refs("https://github.com/a/b/pulls/7")
    assert pr.url == "https://github.com/a/b/pull/7"
    (text,) = find_refs("a/b#7")
    assert text.url == "https://github.com/a/b/issues/7"  # GitHub redirects issues/N to pull/N


def test_dep3_refs_in_field_order_each_once() -> None:
    dep3 = Dep3(
        text="",
        fields=(
            ("applied-upstream", "https://github.com/v/v/pull/3"),
            ("origin", "v/v#1"),
            ("forwarded", "no"),
            ("bug", "https://github.com/v/v/issues/1"),
            ("bug-vime", "https://github.com/vime/vime/issues/9"),
        ),
    )
    refs = dep3_refs(dep3)
    assert [(r.text, r.kind) for r in refs] == [("v/v#1", ""), ("v/v#3", "merged"), ("vime/vime#9", "")]
    assert dep3_refs(None) == ()


def test_unknown_repository_is_never_linked() -> None:
    assert escape("fixes #12") == "fixes `#12`"
    assert link(Ref(text="#12", url="")) == "`#12`"


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("git@github.com:THUDM/slime.git", "THUDM/slime"),
        ("https://github.com/THUDM/slime", "THUDM/slime"),
        ("https://github.com/THUDM/slime.git", "THUDM/slime"),
        ("https://gitlab.com/a/b", None),
    ],
)
def test_github_repo_of(url: str, repo: str | None) -> None:
    assert github_repo_of(url) == repo


@pytest.mark.slow
def test_many_references_are_found_in_linear_time_and_rendered_capped() -> None:
    """20,000 URLs and 20,000 ``owner/repo#N`` in one Origin: each match was checked against every
    earlier one (about a minute); now one pass. The Markdown cell shows the first MAX_REFS."""
    from vimesync.report.enginemd import _purpose_cell
    from vimesync.report.mdtext import MAX_REFS

    urls = " ".join(f"https://example.org/p/{i}" for i in range(20_000))
    shorts = " ".join(f"o/r#{i}" for i in range(20_000))
    dep3 = Dep3(text="", fields=(("origin", f"{urls} {shorts} commit:{'c' * 40} #7"),))
    refs = dep3_refs(dep3, default_repo="o/r")
    assert len(refs) == 40_001  # o/r#7 is already there
    assert refs[0].text == "https://example.org/p/0" and refs[-1].text == "o/r@cccccccc"
    cell = _purpose_cell("Fix", True, refs)
    assert cell.count("](") == MAX_REFS and cell.endswith(f"and {40_001 - MAX_REFS:,} more references")
    assert len(cell) < 2_000
    # Overlaps are still resolved the same way: a GitHub URL is not also a bare URL or a #N.
    assert [r.text for r in find_refs("https://github.com/a/b/pull/5 #5 x/y#5", default_repo="a/b")] == [
        "a/b#5",
        "a/b#5",
        "x/y#5",
    ]
