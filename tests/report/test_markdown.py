from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.builders import samples
from vimesync.patches.model import PatchResult
from vimesync.pycheck.model import ConflictMarker, ParseFailure
from vimesync.report import ReportParts, build_report, render_json, render_markdown
from vimesync.report.mdtext import MAX_LIST, _capped, cell, code, escape
from vimesync.report.publish import END
from vimesync.upstream.model import WalkResult

GOLDEN = Path(__file__).parent / "golden"
# Regenerate the golden files: VIMESYNC_UPDATE_GOLDEN=1 pytest tests/report
UPDATE = os.environ.get("VIMESYNC_UPDATE_GOLDEN") == "1"


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"missing golden {name}: run with VIMESYNC_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs (VIMESYNC_UPDATE_GOLDEN=1 to accept)"


def _demo(**kw: object):
    args = dict(
        walk=samples.walk(),
        check=samples.check(),
        audit=samples.audit(),
        upstream_name="Slime",
        downstream_name="Vime",
        upstream_repo="THUDM/slime",
        engine_repo="vllm-project/vllm",
        previous_engine_pin=samples.PIN,
        own=samples.own(),
    )
    args.update(kw)
    return build_report(ReportParts(**args))  # type: ignore[arg-type]


def test_full_report_golden() -> None:
    report = _demo()
    md = render_markdown(report)
    _golden("full.md", md)
    assert "Mirror Slime from 4c193f1f through 8c17b676: 5 applicable merged PRs;" in md
    assert f"The vLLM source pin remains {samples.PIN}." in md
    # Verified paths are not counted as reviewed (issue 29 item 14): each says how it was cleared.
    assert (
        "6 changed paths against the Slime tip and the pre-sync Vime baseline: 2 verified against upstream, "
        "4 reviewed (1 identical, 1 translated-verified, 1 overlay, 1 downstream-only, 1 deleted, "
        "1 excluded)."
    ) in md
    assert "Reviewed all" not in md and "Existing Vime-native overlays" in md
    assert "## Downstream changes in this sync" in md and "net -512 lines" in md
    assert (
        f"All 4 patches apply sequentially to the exact pin {samples.PIN}; 2,533 patched Python files" in md
    )
    assert report.checks_ok


def test_full_report_json_holds_the_same_facts() -> None:
    doc = render_json(_demo())
    _golden("full.json", json.dumps(doc, indent=2) + "\n")
    assert doc["ok"] is True
    assert doc["summary"]["applicable_count"] == 5
    assert [p["number"] for p in doc["summary"]["excluded"]] == [2424]
    assert doc["engine"]["pin_changed"] is False
    assert doc["validation"]["python"]["files"] == 2533
    assert (doc["downstream_changes"]["net"], len(doc["downstream_changes"]["commits"])) == (-512, 2)
    rollout = {p["path"]: p for p in doc["audit"]["paths"]}["vime/rollout.py"]
    assert (rollout["class"], rollout["cls"], rollout["residue_added"]) == ("overlay", "overlay", 3)
    assert doc["audit"]["overlays"] == ["vime/rollout.py"]
    assert doc["audit"]["counts"] == {
        "identical": 1,
        "translated-verified": 1,
        "overlay": 1,
        "downstream-only": 1,
        "deleted": 1,
        "excluded": 1,
        "resolved": 0,
    }


def test_no_applicable_prs_golden() -> None:
    walk = WalkResult(base=samples.BASE, tip=samples.TIP, prs=(), direct_commits=(), upstream="THUDM/slime")
    md = render_markdown(_demo(walk=walk))
    _golden("no-applicable.md", md)
    assert "Mirror Slime from 4c193f1f through 8c17b676: 0 applicable merged PRs." in md


def test_failing_patch_golden() -> None:
    report = _demo(check=samples.failing_check(), audit=samples.audit(ok=False))
    md = render_markdown(report)
    _golden("failing-patch.md", md)
    assert not report.checks_ok
    assert "1 of 3 patches fails to apply sequentially" in md
    assert "; the one after it was not applied; the patched Python files were not parsed." in md
    assert "hunk #2" in md and "nearest match at line 131" in md
    assert "not applied (an earlier patch failed)" in md
    assert "Audited 6 changed paths against the Slime tip and the pre-sync Vime baseline (" in md
    assert "): 2 verified against upstream, 2 reviewed; 2 still need review:" in md
    assert render_json(report)["ok"] is False


def _stack(*outcomes: str) -> tuple[PatchResult, ...]:
    """A stack from each patch's outcome, in order: ok, fail or skip."""
    return tuple(PatchResult(f"{i}.patch", ok=o == "ok", skipped=o == "skip") for i, o in enumerate(outcomes))


@pytest.mark.parametrize(
    "outcomes,head",
    [
        (
            ("ok", "fail", "skip", "skip"),
            "1 of 4 patches fails to apply sequentially to the exact pin {pin}; "
            "the 2 after it were not applied;",
        ),
        (
            ("fail", "skip"),
            "1 of 2 patches fails to apply sequentially to the exact pin {pin}; "
            "the one after it was not applied;",
        ),
        (("ok", "ok", "fail"), "1 of 3 patches fails to apply sequentially to the exact pin {pin};"),
        # --keep-going: several patches may fail, none are skipped
        (("fail", "fail", "ok"), "2 of 3 patches fail to apply sequentially to the exact pin {pin};"),
        (("fail",), "1 of 1 patch fails to apply sequentially to the exact pin {pin};"),
    ],
)
def test_validation_counts_failed_and_skipped_patches_apart(outcomes: tuple[str, ...], head: str) -> None:
    md = render_markdown(_demo(check=samples.check(_stack(*outcomes), python=None)))
    validation = md.split("## Validation\n\n")[1]
    assert validation.startswith(head.format(pin=samples.PIN)), validation.splitlines()[0]


def test_patch_without_header_renders_dash_golden() -> None:
    bare = (PatchResult("local-hack.patch", ok=True, files=1, hunks=1), *samples.patches()[:1])
    md = render_markdown(_demo(check=samples.check(bare), previous_engine_pin=None))
    _golden("no-header.md", md)
    assert "| `local-hack.patch` | — |" in md
    assert f"The vLLM source pin is {samples.PIN}." in md


def test_pipes_and_newlines_golden() -> None:
    walk = replace(
        samples.walk(),
        prs=(replace(samples.walk().prs[0], title="a | b\nsecond line <!-- vimesync:report:end -->"),),
    )
    dep3 = replace(samples.patches()[0].dep3, fields=(("subject", "Fix | table\r\nbreaking `code`"),))
    patch = PatchResult("weird|name.patch", ok=True, dep3=dep3)
    md = render_markdown(_demo(walk=walk, check=samples.check((patch,))))
    _golden("pipes.md", md)
    row = next(line for line in md.splitlines() if line.startswith("| `weird"))
    assert row == r"| `weird\|name.patch` | Fix \| table breaking \`code\` |"
    assert "a \\| b second line \\<!-- vimesync:report:end --\\>" in md
    assert END not in md  # a title can never forge the publish markers


def test_skipped_sections_say_so_in_one_line() -> None:
    md = render_markdown(build_report(ReportParts(upstream_name="Slime")))
    sections = md.split("## ")[1:]
    assert len(sections) == 4
    for s in sections[:3]:
        assert len(s.strip().splitlines()) == 3  # heading, blank, the one line
    # Validation: its one line, the CI's one line, then every gate the report covers, none checked.
    validation = sections[3].strip().splitlines()
    assert validation[2].startswith("No engine source") and validation[4].startswith("Exact-head CI was not")
    gates = [line for line in validation if line.startswith("- ")]
    assert [g.split("**")[1] for g in gates] == ["classified", "carried", "patches", "audit", "tests", "ci"]
    assert all("not checked" in g for g in gates)
    # What moves a gate is the maintainer's (stderr, JSON): never in the PR body (issue 29 item 17).
    assert "next:" not in md and "GITHUB_TOKEN" not in md
    assert "no audit" in md


def test_parse_failures_are_listed() -> None:
    py = replace(
        samples.parse_ok(),
        failed=(ParseFailure("vllm/a.py", 12, "invalid syntax"),),
        conflict_markers=(ConflictMarker("vllm/b.py", 3, "<<<<<<< HEAD"),),
    )
    md = render_markdown(_demo(check=samples.check(python=py)))
    assert "All 4 patches apply sequentially" in md and "2 of 2,533 patched Python files fail to parse" in md
    assert "- `vllm/a.py:12`: invalid syntax" in md
    assert "conflict marker `<<<<<<< HEAD`" in md


@pytest.mark.parametrize(
    ("text", "expected"),
    [("plain", "plain"), ("a*b_c", r"a\*b\_c"), ("x\ny", "x y"), ("$5 & [x]", r"\$5 \& \[x\]")],
)
def test_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


def test_escape_links_bare_numbers_to_the_right_repo() -> None:
    assert (
        escape("see #12", repo="THUDM/slime")
        == "see [THUDM/slime#12](https://github.com/THUDM/slime/pull/12)"
    )
    assert escape("a/b#3 and &#39;") == r"a/b#3 and \&#39;"


def test_code_and_cell() -> None:
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert code("a|b", in_table=True) == r"`a\|b`"
    assert cell("one\n\ntwo|") == r"one<br>two\|"


@pytest.mark.parametrize(
    "n,more", [(MAX_LIST + 1, "- … and 1 more path"), (MAX_LIST + 3, "- … and 3 more paths")]
)
def test_capped_lists_say_how_many_more(n: int, more: str) -> None:
    lines = _capped([f"- p{i}" for i in range(n)], "path")
    assert len(lines) == MAX_LIST + 1 and lines[-1] == more


HOSTILE = "x | y\n`tick` <!-- c --> <script>alert(1)</script> <details> \x1b[31m \u202e [a](javascript:x)"


def _hostile_engine() -> str:
    """The engine section of a report whose pins, names and headers hold hostile text."""
    from vimesync.report.build import build_engine
    from vimesync.report.enginemd import render_engine

    dep3 = replace(
        samples.patches()[0].dep3,
        fields=(
            ("description", HOSTILE),
            ("origin", "https://example.com/a|b<c>`d`(e) <!--x-->"),
            ("bug", "javascript:alert(1) https://x.org/ok"),
            ("forwarded", "https://github.com/o/r/pull/5|injected"),
        ),
    )
    engine = build_engine(
        [("0001-" + HOSTILE.replace("\n", " ") + ".patch", dep3)],
        engine=HOSTILE,
        pin="main | <!-- vimesync:report:end --> `x` \x1b[2J",
        source="",
        engine_repo="o/r",
        previous_pin="v1 <script>",
    )
    return "\n".join(render_engine(engine))


def test_pin_rev_and_header_values_are_escaped() -> None:
    md = _hostile_engine()
    assert "\x1b" not in md and "\u202e" not in md  # shown as \x1b, \u202e
    line = md.splitlines()[2]
    assert line.startswith("The x \\| y \\`tick\\` \\<!-- c --\\> \\<script\\>alert(1)\\</script\\>")
    # A pin that is no commit sha (read from a pin file, no source given) is code, not markdown.
    assert line.endswith(
        "source pin is ``main | <!-- vimesync:report:end --> `x` \\x1b[2J`` (was `v1 <script>`)."
    )
    (row,) = [line for line in md.splitlines() if line.startswith("| ``0001-")]
    # One row of exactly two cells: no unescaped pipe beyond the three borders.
    assert len(re.findall(r"(?<!\\)\|", row)) == 3
    assert "[https://example.com/a\\|b](https://example.com/a%7Cb)" in row
    assert "[https://x.org/ok](https://x.org/ok)" in row and "javascript:alert" not in row
    assert "forwarded [o/r#5](https://github.com/o/r/pull/5) |" in row


def test_only_http_urls_become_links() -> None:
    from vimesync.report.links import Ref
    from vimesync.report.mdtext import link, safe_url

    assert safe_url("javascript:alert(1)") is None and safe_url("data:text/html,x") is None
    assert safe_url("https://x.org/a b|c") == "https://x.org/a%20b%7Cc"
    assert link(Ref(text="javascript:alert(1)", url="javascript:alert(1)")) == "`javascript:alert(1)`"


def test_titles_with_html_backticks_and_controls_stay_inert() -> None:
    walk = replace(samples.walk(), prs=(replace(samples.walk().prs[0], title=HOSTILE),))
    md = render_markdown(_demo(walk=walk))
    (item,) = [line for line in md.splitlines() if "tick" in line]
    assert item.endswith(
        "x \\| y \\`tick\\` \\<!-- c --\\> \\<script\\>alert(1)\\</script\\> \\<details\\> \\\\x1b\\[31m "
        "\\\\u202e \\[a\\](javascript:x)"
    )


def test_lone_surrogates_are_shown_escaped_and_encodable() -> None:
    """A non-UTF-8 file name (surrogate-escaped) or a ``\\ud800`` title: escaped in every Markdown
    form, so the report encodes as UTF-8."""
    from vimesync.report.mdtext import safe_url
    from vimesync.text import utf8_safe, visible

    assert visible("a\udcffb\ud800") == "a\\udcffb\\ud800"
    assert utf8_safe("x/\udcff.py") == "x/\ufffd.py"
    for out in (escape("t \ud800 x"), cell("vime/\udcffbad.py"), code("vime/\udcffbad.py", in_table=True)):
        out.encode("utf-8")
        assert "udcff" in out or "ud800" in out
    assert safe_url("https://x.org/\udcff") == "https://x.org/%3F"


def test_a_blank_context_line_is_named_not_an_empty_code_span() -> None:
    from vimesync.patches.model import HunkFailure
    from vimesync.report.validationmd import render_validation

    failing = samples.failing_check()
    blank = HunkFailure(
        file="vllm/a.py", hunk=1, header="@@ -1,3 +1,3 @@", reason="context does not match",
        first_mismatch=2, expected="\n", found="x = 1\n",
    )  # fmt: skip
    bad = replace(failing.patches[1], failures=(blank,))
    text = "\n".join(render_validation(replace(failing, patches=(failing.patches[0], bad))))
    assert "expected (blank line); found `x = 1`" in text
    assert "``" not in text


def test_the_engine_is_named_after_its_source_when_no_pin_names_it(tmp_path: Path) -> None:
    from tests.builders.workspaces import options as check_options
    from vimesync.check.model import engine_name
    from vimesync.config import Config, load_engine_pin

    assert engine_name("", "/r/sglang-0.5.15.post1-cp311-cp311-manylinux_2_34_x86_64.whl") == "sglang"
    assert engine_name("", "/r/vllm.git") == "vllm" and engine_name("vLLM", "/r/x") == "vLLM"
    assert engine_name("", None) == "unnamed"
    pin = tmp_path / "pins/sglang.toml"
    pin.parent.mkdir()
    pin.write_text("[engine]\n")
    assert load_engine_pin(pin).name == "sglang"
    opts = check_options(Config(), source=tmp_path / "megatron-lm.git", series=tmp_path / "series")
    assert opts.engine == "megatron-lm"


def test_a_fork_with_no_name_is_not_called_vime() -> None:
    # Issue 29 item 14: "Vime-native" was written for any fork.
    md = render_markdown(_demo(downstream_name=""))
    assert "Vime-native" not in md and "Vime baseline" not in md
    assert "Existing downstream-native overlays" in md and "the pre-sync baseline:" in md
    named = render_markdown(_demo(downstream_name="Forky <b>\x1b @octocat"))
    assert "Existing Forky \\<b\\>\\\\x1b <code>@octocat-native</code> overlays" in named  # escaped, no ping
