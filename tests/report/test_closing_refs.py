"""Upstream text in the published report closes no downstream issue (issue 18, finding 12).

GitHub closes an issue when a merged PR's description says "closes #1", "fixes owner/repo#2" or
"resolves <issue URL>". An upstream PR titled so, carried into the sync report, would close the
downstream's issue of that number when the sync merges: the reference goes into ``<code>``,
where GitHub links (and closes) nothing, as a mention does.
"""

from __future__ import annotations

import pytest

from vimesync.report.build import ReportParts, build_report
from vimesync.report.markdown import render_markdown
from vimesync.report.mentions import neutralize_mentions
from vimesync.upstream.model import PullRequest, WalkResult


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tidy docs (closes vime-org/vime#1)", "Tidy docs (closes <code>vime-org/vime#1</code>)"),
        (
            "fixes https://github.com/vime-org/vime/issues/2",
            "fixes <code>https://github.com/vime-org/vime/issues/2</code>",
        ),
        ("Fixes: #3", "Fixes: <code>#3</code>"),
        ("RESOLVED #4", "RESOLVED <code>#4</code>"),
        ("closed GH-5", "closed <code>GH-5</code>"),
        (
            "fix https://github.com/vime-org/vime/pull/6",
            "fix <code>https://github.com/vime-org/vime/pull/6</code>",
        ),
        ("closes\n#7", "closes\n<code>#7</code>"),
    ],
)
def test_a_reference_after_a_closing_keyword_becomes_code(text: str, expected: str) -> None:
    assert neutralize_mentions(text) == expected
    assert neutralize_mentions(expected) == expected  # twice changes nothing


@pytest.mark.parametrize(
    "text",
    ["see #1", "enclosed #2", "prefixes #3", "`closes #4`", "closes #5a", "closes the #6"],
)
def test_other_references_are_left_alone(text: str) -> None:
    assert neutralize_mentions(text) == text


def test_a_carried_title_in_the_report_closes_nothing() -> None:
    title = "Tidy docs, closes vime-org/vime#1 and fixes https://github.com/vime-org/vime/issues/2"
    pr = PullRequest(
        number=9,
        title=title,
        kind="squash",
        merge_commit="a" * 40,
        commits=("a" * 40,),
        paths=("slime/a.py",),
    )
    walk = WalkResult(upstream="THUDM/slime", base="b" * 40, tip="a" * 40, prs=(pr,), direct_commits=())
    md = render_markdown(
        build_report(ReportParts(walk=walk, upstream_name="Slime", upstream_repo="THUDM/slime"))
    )
    assert "closes <code>vime-org/vime#1</code>" in md
    assert "fixes <code>https://github.com/vime-org/vime/issues/2</code>" in md


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Tidy docs (closes #9)", "Tidy docs (closes `#9`)"),
        ("Fixes:  #10", "Fixes:  `#10`"),
        ("see #11", "see [THUDM/slime#11](https://github.com/THUDM/slime/pull/11)"),
        ("prefixed#12", "prefixed#12"),
    ],
)
def test_a_number_after_a_closing_keyword_is_not_linked(title: str, expected: str) -> None:
    """The report links a bare "#N" of an upstream title to the upstream's PR; after a closing
    keyword a link ("closes [THUDM/slime#9](...)") escapes the neutraliser, which looks for the
    reference right after the keyword: it stays code."""
    from vimesync.report.mdtext import escape

    assert escape(title, repo="THUDM/slime") == expected
    assert neutralize_mentions(expected) == expected
