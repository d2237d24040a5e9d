"""A sync that cannot run because of the checkout's configuration (issue 32): an engine pin with
no engine source, a records file the parser rejects. The bot still writes the dashboard, saying
the sync could not run and why in fixed words (never the file's content or name), pushes
nothing, and exits 2; a second run with the same failure writes nothing."""

from __future__ import annotations

import pytest

from tests.builders.botrun import maintainer_push
from tests.builders.pair import Pair, cli
from vimesync.audit.syncname import default_sync_name

pytestmark = pytest.mark.slow  # real syncs in real repositories

HOSTILE = "@alice closes #1 <!-- vimesync:dashboard --> `x` ](javascript:alert(1))"
NO_SOURCE = f"""\
[engine]
name = "Eng {HOSTILE[:20]}"
repo = "eng-org/eng"
series = "../patches/series"
strip = 1
"""


def engine_without_source(pair: Pair) -> None:
    config = (pair.down.path / "vimesync.toml").read_text() + '\n[engine]\npin = "pins/eng.toml"\n'
    files = {"vimesync.toml": config, "pins/eng.toml": NO_SOURCE, "patches/series": "a.patch\n"}
    pair.down.commit("an engine pin with no source", files)


def records_rejected(pair: Pair) -> None:
    sync = default_sync_name(pair.base, pair.tip)
    pair.down.commit("bad records", {f"sop/records/{sync}.toml": f"{HOSTILE} = [\n"})


@pytest.mark.parametrize(
    ("breaks", "says"),
    [
        (engine_without_source, "an input the sync needs is missing or refused"),
        (
            records_rejected,
            "a configuration file (vimesync.toml, a pin, a ledger or a records file) was refused",
        ),
    ],
)
def test_a_sync_that_cannot_run_is_on_the_dashboard_and_exits_2(fork, capsys, breaks, says) -> None:
    pair, fake = fork
    breaks(pair)
    maintainer_push(pair.down.path, "main")
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and "Traceback" not in err  # today: exit 2 and no dashboard at all
    assert fake.pulls == {} and fake.head_of(f"sync/{pair.tip[:8]}") is None
    body = fake.dashboard()["body"]
    (line,) = [ln for ln in body.splitlines() if ln.startswith("**The sync could not run**: ")]
    assert says in line and "alice" not in line and "Eng" not in line and "toml [" not in line
    assert "javascript" not in body and body.count("<!-- vimesync:dashboard -->") == 1
    assert " @alice" not in body and "closes #1" not in body  # the radar names the engine, neutralised
    assert "sop/records" not in body and "pins/eng.toml" not in body
    writes = len(fake.writes)
    code, out, err = cli(capsys, "bot", "--repo", "vime-org/vime", cwd=pair.down.path)
    assert code == 2 and len(fake.writes) == writes
