"""The dashboard's two read-only sections (issue 32 item 5): the engine patches whose named
upstream PR merged (asked as the report's Engine patches table asks: one GET per PR through the
client and its ETag cache, "not checked" without a token or a reachable GitHub), and the sync PR's
records made at an earlier head (read as ``sop status`` reads them); neither breaks the text it
sits in, and a second run with nothing new writes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.builders.botrun import bot, maintainer_push
from tests.builders.fakefork import FakeFork
from tests.builders.gitrepo import Repo
from tests.builders.pair import Pair, cli
from vimesync.audit.syncname import default_sync_name
from vimesync.bot.model import Board, MergedPatch, StaleRecord
from vimesync.bot.text import SHOWN, dashboard
from vimesync.safefs import MAX_CONFIG_BYTES

ENGINE = "eng-org/eng"
ENGINE_PIN = """\
[engine]
name = "Eng"
repo = "eng-org/eng"
series = "../patches/series"
strip = 1
source = "{source}"
rev = "{rev}"
"""
DIFF = """\
---
diff --git a/x.py b/x.py
--- a/x.py
+++ b/x.py
@@ -1 +1 @@
-a
+b
"""
HOSTILE = "@alice closes #1 <img src=x>"


def patch(pr: int) -> str:
    return f"Description: backport\nApplied-Upstream: https://github.com/{ENGINE}/pull/{pr}\n{DIFF}"


def engine_repo(pair: Pair) -> tuple[Path, str]:
    """The engine's source: a repository the patches apply to, and its commit (the pin)."""
    eng = Repo(pair.root / "eng")
    eng.commit("engine", {"x.py": "a\n"})
    return eng.path, eng.head()


def with_engine_and_records(pair: Pair) -> tuple[str, str]:
    """main gains an engine whose two patches name PRs 7 and 8, and a record of the coming sync
    at another head (the sync's records name): its sync name and the engine pin."""
    sync = default_sync_name(pair.base, pair.tip)
    source, rev = engine_repo(pair)
    config = (pair.down.path / "vimesync.toml").read_text() + '\n[engine]\npin = "pins/eng.toml"\n'
    records = f'[tests."CPU regressions".{"a" * 40}]\npassed = 3\n\n[runs.bench.{"b" * 40}]\nexit = 0\n'
    pair.down.commit(
        "an engine, and a record",
        {
            "vimesync.toml": config,
            "pins/eng.toml": ENGINE_PIN.format(source=source, rev=rev),
            "patches/series": "merged.patch\nopen.patch\n",
            "patches/merged.patch": patch(7),
            "patches/open.patch": patch(8),
            f"sop/records/{sync}.toml": records,
        },
    )
    maintainer_push(pair.down.path, "main")
    return sync, rev


@pytest.mark.slow
def test_merged_engine_prs_and_stale_records_are_on_the_dashboard_and_a_rerun_writes_nothing(
    fork: tuple[Pair, FakeFork], capsys: pytest.CaptureFixture[str]
) -> None:
    pair, fake = fork
    _, pin = with_engine_and_records(pair)
    fake.engine[ENGINE] = {
        7: {"state": "closed", "merged": True, "merge_commit_sha": pin},
        8: {"state": "open", "merged": False},
    }
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    body = fake.dashboard()["body"]
    merged = body.split("## Engine patches whose upstream PRs merged")[1].split("##")[0]
    assert "`merged.patch` (Eng): `eng-org/eng#7` merged, in the pin: drop the patch" in merged
    assert "open.patch" not in merged and "Not checked" not in merged
    assert f"/repos/{ENGINE}/pulls/7" in fake.asked  # asked through the client, as the radar asks
    stale = body.split("## Evidence gone stale")[1]
    assert "- tests `CPU regressions` at `aaaaaaaa`" in stale and "- runs `bench` at `bbbbbbbb`" in stale
    assert "@alice" not in body.replace("@\u2060alice", "") and "<img" not in body
    writes = len(fake.writes)
    code, doc, err = bot(capsys, pair)
    assert code == 0 and doc["case"] == "current" and doc["writes"] == [], err
    assert len(fake.writes) == writes and fake.dashboard()["body"] == body


@pytest.mark.slow
def test_an_unreachable_engine_repo_is_not_checked_and_no_records_is_said(
    fork: tuple[Pair, FakeFork], capsys: pytest.CaptureFixture[str]
) -> None:
    pair, fake = fork
    sync, _ = with_engine_and_records(pair)
    pair.down.git("rm", "-q", f"sop/records/{sync}.toml")
    pair.down.git("commit", "-qm", "no records")
    maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)  # the engine's PRs answer 404 here
    assert code == 0, err
    body = fake.dashboard()["body"]
    merged = body.split("## Engine patches whose upstream PRs merged")[1].split("##")[0]
    assert "Not checked:" in merged and "merged," not in merged
    assert "The sync PR's sync has no records." in body.split("## Evidence gone stale")[1]


def test_without_a_token_the_engine_prs_are_not_checked(tmp_path: Path) -> None:
    from tests.builders.pair import build_pair
    from vimesync.app.botboard import merged_patches
    from vimesync.app.enginestate import NO_TOKEN
    from vimesync.app.flags import SyncFlags
    from vimesync.app.workspace import Workspace
    from vimesync.settings import Settings

    pair = build_pair(tmp_path)
    with_engine_and_records_local(pair)
    flags = SyncFlags(downstream=pair.down.path)
    with Workspace.resolve(flags, Settings.of({}), cwd=pair.down.path) as ws:
        assert merged_patches(ws) == ((), NO_TOKEN)


def with_engine_and_records_local(pair: Pair) -> None:
    source, rev = engine_repo(pair)
    config = (pair.down.path / "vimesync.toml").read_text() + '\n[engine]\npin = "pins/eng.toml"\n'
    pair.down.commit(
        "an engine",
        {
            "vimesync.toml": config,
            "pins/eng.toml": ENGINE_PIN.format(source=source, rev=rev),
            "patches/series": "merged.patch\n",
            "patches/merged.patch": patch(7),
        },
    )


def board(**kw: object) -> Board:
    base = {"upstream": "Slime", "base": "main", "pin": "1" * 40, "tip": "2" * 40}
    base |= {"pull": None, "stopped": None}
    return Board(**{**base, **kw})  # type: ignore[arg-type]


def test_the_sections_are_bounded_and_neutralised() -> None:
    many = tuple(MergedPatch("E`ng", f"p{i}`.patch", f"{ENGINE}#{i}", i % 2 == 0) for i in range(SHOWN + 5))
    stale = tuple(StaleRecord("tests", f"{HOSTILE} {i}" + "x" * 500, "a" * 40) for i in range(SHOWN + 3))
    text = dashboard(board(merged=many, stale=stale))
    assert "- and 5 more" in text and "- and 3 more" in text
    assert "in the pin: drop the patch" in text and "not yet in the pin" in text
    outside = re.sub(r"`[^`\n]*`", "", text)  # in a code span nothing renders nor pings
    assert "<img" not in outside and "@alice" not in outside and "closes #1" not in outside
    assert "x" * 200 not in text  # a name is cut
    assert dashboard(board(merged=many, stale=stale)) == text  # deterministic


def test_not_checked_and_none_are_said() -> None:
    text = dashboard(board(merged_unchecked="no GITHUB_TOKEN or GH_TOKEN in the environment"))
    merged = text.split("## Engine patches whose upstream PRs merged")[1].split("##")[0]
    assert "Not checked: no GITHUB\\_TOKEN or GH\\_TOKEN in the environment." in merged
    assert "None." in text.split("## Evidence gone stale")[1]
    assert "No sync PR is open." in dashboard(board(stale_unread="No sync PR is open."))


def report_title(capsys: pytest.CaptureFixture[str], pair: Pair, head: str) -> str:
    """The title ``report`` gives the sync's head (what ``report --publish`` sets)."""
    code, out, err = cli(
        capsys, "report", "--format", "json", "--head", head, "--baseline", "main", cwd=pair.down.path
    )
    assert code in (0, 1), err
    return str(json.loads(out)["title"])


@pytest.mark.slow
@pytest.mark.parametrize("conflict", [False, True])
def test_the_pr_title_is_the_reports(
    fork: tuple[Pair, FakeFork], capsys: pytest.CaptureFixture[str], conflict: bool
) -> None:
    pair, fake = fork
    if conflict:  # upstream #2 changes vime/a.py too: the carry stops there, #1 is carried
        pair.down.commit("diverge", {"vime/a.py": "from vime import x\nprint(1)\nprint('downstream')\n"})
        maintainer_push(pair.down.path, "main")
    code, doc, err = bot(capsys, pair)
    assert code == 0, err
    title = fake.open_pull()["title"]
    assert title == report_title(capsys, pair, doc["sync"]["head"])
    assert title.startswith(f"[Sync] Mirror Slime through {pair.tip[:8]}")
    assert ("partly:" in title) is conflict


def stale_at(pair: Pair, head: str | None, sync: str) -> tuple[tuple[StaleRecord, ...], str | None]:
    from vimesync.app.botboard import stale_records
    from vimesync.app.flags import SyncFlags
    from vimesync.app.workspace import Workspace
    from vimesync.settings import Settings

    flags = SyncFlags(downstream=pair.down.path)
    with Workspace.resolve(flags, Settings.of({}), cwd=pair.down.path, engines=False) as ws:
        return stale_records(ws, head, sync)


@pytest.mark.parametrize(
    ("records", "says"),
    [
        (None, "The sync PR's sync has no records."),
        ("", "The sync PR's sync has no records."),
        ("[tests.x." + "a" * 40 + "]\npassed = 1\n" + "#" * (MAX_CONFIG_BYTES + 1), "could not be read"),
        ("[tests.x]\npassed = 'closes #1 @alice'\n", "could not be read"),  # malformed
    ],
    ids=["absent", "empty", "too big", "malformed"],
)
def test_the_records_at_the_pr_head_are_read_bounded(tmp_path: Path, records: str | None, says: str) -> None:
    from tests.builders.pair import build_pair

    pair = build_pair(tmp_path)
    sync = "12345678..9abcdef0"
    head = pair.down.commit("records", {f"sop/records/{sync}.toml": records} if records is not None else None)
    stale, why = stale_at(pair, head, sync)
    assert stale == () and why is not None and says in why
    assert "@alice" not in why and "closes" not in why  # never echoed


def test_a_symlinked_records_file_or_an_absent_head_is_not_followed(tmp_path: Path) -> None:
    from tests.builders.pair import build_pair

    pair = build_pair(tmp_path)
    sync = "12345678..9abcdef0"
    secret = tmp_path / "secret.toml"
    secret.write_text("[tests.x." + "a" * 40 + "]\npassed = 1\n")
    (pair.down.path / "sop" / "records").mkdir(parents=True)
    (pair.down.path / "sop" / "records" / f"{sync}.toml").symlink_to(secret)
    pair.down.git("add", "-A")
    pair.down.git("commit", "-qm", "a link")
    head = pair.down.head()
    assert stale_at(pair, head, sync) == ((), "Not read: the sync PR's records could not be read.")
    assert stale_at(pair, "f" * 40, sync) == ((), "Not read: the sync PR's head is not in this checkout.")
    assert stale_at(pair, None, sync) == ((), "No sync PR is open.")
    assert stale_at(pair, head, "../x") == ((), "Not read: the sync has no name records can have.")
