"""``sop/records/<sync>.toml`` is repository content: its suites, runs and CI snapshots are read
by their field types (sop/results.py, through safefs.decode). A value of the wrong shape is bad
input naming the file and the key, never the value."""

from __future__ import annotations

import pytest

from vimesync.errors import ConfigError
from vimesync.sop.results import RunRecord, TestRecord, parse_results

SHA = "f32a36f1d8f811260f92c1901e808c35ad13c4ea"
DIGEST = "sha256:" + "a" * 64
WHERE = "sop/records/a..b.toml"
MEASURED = f'[runs."R".{SHA}]\nexit = 0\n[runs."R".{SHA}.measured]\nstarted_at = "x"\n'

GOOD = f"""
[tests."CPU regressions".{SHA}]
passed = 292
skipped = 3
duration = 83.2
failing = []
image = "{DIGEST}"
recorded_at = "2026-11-30T19:00:00Z"

[runs."PipelineRL four-GPU".{SHA}]
exit = 0
duration = 243
host = "h200-01"
figures = {{ rollouts = "3" }}
note = "one trainer"

[ci."1445".{SHA}]
source = "buildkite"
state = "passed"
passed = 49
url = "https://buildkite.com/vime/vime/builds/1445"

[images.amd64]
digest = "{DIGEST}"
sha = "{SHA}"
"""


def test_the_records_as_written_are_read() -> None:
    results = parse_results(GOOD, WHERE)
    assert results.tests == (
        TestRecord("CPU regressions", SHA, 292, 0, 0, 3, 83.2, (), DIGEST, "2026-11-30T19:00:00Z"),
    )
    assert results.runs == (
        RunRecord("PipelineRL four-GPU", SHA, 0, 243.0, "h200-01", "", (("rollouts", "3"),), "one trainer"),
    )
    assert results.ci[0].passed == 49 and results.ci[0].source == "buildkite"


def test_a_measured_run_and_its_independent_runs_are_written_and_read_back(tmp_path) -> None:
    """A record vimesync measured round-trips, its second independent run beside it (``SHA/2``)."""
    from vimesync.sop.measured import Attempt, Expectation, Measured
    from vimesync.sop.results import load_results, record_run

    m = Measured(
        started_at="2026-12-07T00:00:00Z",
        host="h200-01",
        os="Linux",
        kernel="6.8.0",
        cpus=224,
        python="CPython 3.12.3",
        gpus=("NVIDIA H200",) * 4,
        command=("python3", "train.py"),
        log_sha256="a" * 64,
        log_bytes=123,
        tail=("last line",),
        attempts=(Attempt(-9, 30.0, "2026-12-07T00:00:00Z"),),
        expect=Expectation(1, "Too many open files", True),
        tests=(3, 0, 0, 1),
        figures=(("observed FD count", "1614"),),
    )
    first = RunRecord("FD control", SHA, 1, 12.0, recorded_at="2026-12-07T00:01:00Z", measured=m)
    second = RunRecord("FD control", SHA, 1, 13.0, recorded_at="2026-12-07T00:02:00Z", measured=m, run=2)
    (tmp_path / ".git").mkdir()
    record_run(tmp_path, "a..b", first)
    record_run(tmp_path, "a..b", second)
    assert load_results(tmp_path, "a..b").runs == (first, second)


@pytest.mark.parametrize(
    "table, needle",
    [
        (f'[tests."CPU".{SHA}]\npassed = true\n', f"tests['CPU'][{SHA!r}].passed: expected a whole number"),
        (f'[tests."CPU".{SHA}]\npassed = -1\n', "passed: expected a whole number from 0 to 100,000,000"),
        (f'[tests."CPU".{SHA}]\nduration = nan\n', "duration: expected a number"),
        (f'[tests."CPU".{SHA}]\nfailing = ["a\\u0000hunter2"]\n', "failing[0]: expected one line"),
        (f'[tests."CPU".{SHA}]\nfailing = {["t"] * 101}\n', "failing: expected at most 100 items"),
        (f'[tests."CPU".{SHA}]\nimage = "hunter2"\n', "image: expected sha256:<64 hex digits>"),
        (f'[tests."CPU".{SHA}]\nhunter2 = 1\n', "unknown key 'hunter2'"),
        (
            f'[tests."CPU".{SHA}]\nrecorded_at = "{"9" * 41}"\n',
            "recorded_at: expected one line (of at most 40",
        ),
        ('[tests."CPU".hunter2]\npassed = 1\n', "tests['CPU']: key #1: expected a full commit sha"),
        (f'[tests."\\u001b[2Jhunter2".{SHA}]\n', "tests: key #1: expected a name of 1-80 plain characters"),
        ("tests = 3\n", "tests: expected a table"),
        (f'[runs."R".{SHA}]\nduration = 1\n', "exit: missing"),
        (f'[runs."R".{SHA}]\nexit = 256\n', "exit: expected a whole number from -255 to 255"),
        (f'[runs."R".{SHA}]\nexit = 0\nhost = "bad host hunter2"\n', "host: expected a host name"),
        (f'[runs."R".{SHA}]\nexit = 0\nfigures = {{ "a b" = "1" }}\n', "figures: key #1: expected a figure"),
        (f'[runs."R".{SHA}]\nexit = 0\nnote = "a\\u202ehunter2"\n', "note: expected one line (no control"),
        (
            f'[runs."R"."{SHA}/1"]\nexit = 0\n',
            "runs['R']: key #1: expected a full commit sha (/N: its Nth run)",
        ),
        (f'[runs."R"."{SHA}/100"]\nexit = 0\n', "runs['R']: key #1: expected a full commit sha"),
        (
            f'[runs."R".{SHA}]\nexit = 0\n[runs."R".{SHA}.measured]\nhost = "h"\n',
            "measured.started_at: missing",
        ),
        (
            f'{MEASURED}tail = ["a\\nhunter2"]\n',
            "tail[0]: expected one line",
        ),
        (
            f"{MEASURED}tail = {['t'] * 41}\n",
            "tail: expected at most 40 items",
        ),
        (
            f'{MEASURED}log_sha256 = "hunter2"\n',
            "log_sha256: expected a sha256",
        ),
        (
            f"{MEASURED}hunter2 = 1\n",
            "unknown key 'hunter2'",
        ),
        (f'[ci."1".{SHA}]\nsource = "hunter2"\n', "source: expected one of buildkite, github"),
        (f'[ci."1".{SHA}]\nsource = "github"\nurl = "file:///hunter2"\n', "url: expected an http(s) URL"),
        (f'[ci."x".{SHA}]\nsource = "github"\n', "ci: key #1: expected a build number (or github)"),
    ],
)
def test_a_record_of_the_wrong_shape_names_the_key_never_the_value(table: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_results(table, WHERE)
    message = str(info.value)
    assert message.startswith(f"{WHERE}: ") and needle in message, message
    assert "hunter2" not in message or "unknown key" in needle
    assert "\x1b" not in message and "\x00" not in message and "\u202e" not in message
