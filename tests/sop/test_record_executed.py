"""``sop record run --name NAME -- CMD`` (issue 31 item 1): vimesync runs the job itself at the head
and records what it measured, apart from what is typed. Real processes: a job that writes a
gigabyte, forks daemons (in its group and out of it), writes bytes that are not UTF-8, prints its
secrets, is interrupted or passes its deadline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.builders.cli import run
from vimesync.demo.build import Demo
from vimesync.sop.results import RunRecord, load_results

PY = sys.executable


def _records(demo: Demo) -> Path | None:
    found = sorted((demo.downstream / "sop/records").glob("*.toml"))
    return found[0] if found else None


def _runs(demo: Demo) -> tuple[RunRecord, ...]:
    path = _records(demo)
    return () if path is None else load_results(demo.downstream, path.stem).runs


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return False


def _sleeper(pids: Path) -> str:
    """A job that starts a child in its group, says so, and sleeps."""
    return (
        "import subprocess, time; p = subprocess.Popen(['sleep', '300']);"
        f" open({str(pids)!r}, 'w').write(str(p.pid)); print('up', flush=True); time.sleep(300)"
    )


def _cli(demo: Demo, *args: str, **kw: object) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED")}
    return subprocess.Popen(
        [PY, "-m", "vimesync", *args],
        cwd=demo.downstream,
        env={**env, **kw.pop("env", {})},  # type: ignore[dict-item]
        stdout=subprocess.PIPE,
        stderr=kw.pop("stderr", subprocess.PIPE),  # type: ignore[arg-type]
        text=True,
    )


def test_an_executed_run_records_what_was_measured_apart_from_typed_values(demo: Demo, capsys) -> None:
    code, out, err = run(
        capsys,
        "sop",
        "record",
        "run",
        "--name",
        "unit",
        "--",
        PY,
        "-c",
        "print('ran here'); import sys; sys.exit(0)",
    )
    assert code == 0, err
    assert "ran here" in err  # teed live on stderr; stdout keeps the one result
    assert "measured on" in out
    (rec,) = _runs(demo)
    m = rec.measured
    assert m is not None and rec.exit == 0 and rec.duration is not None and rec.host == ""
    assert m.host and m.os and m.cpus >= 1 and m.python.startswith(("CPython", "PyPy"))
    assert m.started_at.endswith("Z") and m.tail == ("ran here",) and m.log_bytes == len("ran here\n")
    import hashlib

    assert m.log_sha256 == hashlib.sha256(b"ran here\n").hexdigest()
    assert m.command[1:] == ("-c", "print('ran here'); import sys; sys.exit(0)")


def test_a_failing_job_is_recorded_and_exits_1_a_signal_is_named(demo: Demo, capsys) -> None:
    code, out, _ = run(
        capsys,
        "sop",
        "record",
        "run",
        "--name",
        "killed",
        "--",
        PY,
        "-c",
        "import os; os.kill(os.getpid(), 9)",
    )
    assert code == 1
    (rec,) = _runs(demo)
    assert rec.exit == -9 and "SIGKILL" in out


def test_the_job_runs_in_the_checkout_root_on_a_clean_tree_only(demo: Demo, capsys, tmp_path: Path) -> None:
    where = tmp_path / "cwd"
    code, _, err = run(
        capsys,
        "sop",
        "record",
        "run",
        "--name",
        "cwd",
        "--",
        PY,
        "-c",
        f"import os; open({str(where)!r}, 'w').write(os.getcwd())",
    )
    assert code == 0, err
    assert Path(where.read_text()).resolve() == demo.downstream.resolve()
    (demo.downstream / "train.py").write_text("# changed\n")
    try:
        marker = tmp_path / "ran"
        code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--", "touch", str(marker))
        assert code == 2 and "differs from HEAD" in err and err.count("\n") == 1
        assert not marker.exists()  # refused before anything ran
    finally:
        from vimesync import git

        git.run(demo.downstream, ["checkout", "-q", "--", "train.py"])


def test_typed_and_executed_flags_do_not_mix(demo: Demo, capsys) -> None:
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--exit", "0", "--", "true")
    assert code == 2 and "--exit: measured when vimesync runs the job" in err
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--retries", "2", "--exit", "0")
    assert code == 2 and "--retries: only with a job to run" in err
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x")
    assert code == 2 and "give the job after --" in err
    assert _runs(demo) == ()


def test_a_program_in_the_checkout_is_not_found_on_path(demo: Demo, capsys, monkeypatch) -> None:
    tool = demo.downstream / "bin-evil"
    tool.mkdir()
    (tool / "myjob").write_text("#!/bin/sh\necho evil\n")
    (tool / "myjob").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool}{os.pathsep}{os.environ['PATH']}")
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--", "myjob")
    assert code == 2 and "not found on PATH (outside the checkout)" in err
    assert "evil" not in err


@pytest.mark.parametrize("name", ["two\nlines", "*bold* [x](http://e)", "a\x1b[31m", "  pad", "x" * 81])
def test_a_hostile_name_is_refused_in_one_line_before_the_job_runs(
    demo: Demo, capsys, tmp_path: Path, name: str
) -> None:
    marker = tmp_path / "ran"
    code, _, err = run(capsys, "sop", "record", "run", "--name", name, "--", "touch", str(marker))
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err
    assert not marker.exists()


def test_secrets_are_dropped_from_the_env_and_masked_in_the_tail(demo: Demo, capsys, monkeypatch) -> None:
    monkeypatch.setenv("LAB_API_TOKEN", "tok-123456789")
    monkeypatch.setenv("DB_PASSWORD", "pw-abcdefgh")
    job = (
        "import os; print('token', os.environ.get('LAB_API_TOKEN'));"
        " print('pw', os.environ.get('DB_PASSWORD')); print('echoed tok-123456789');"
        " print('HF_TOKEN=hf_zzzzzzzz other'); print('Authorization: Bearer abcdefghij')"
    )
    code, out, err = run(
        capsys, "sop", "record", "run", "--name", "env", "--keep-env", "DB_PASSWORD", "--", PY, "-c", job
    )
    assert code == 0, err
    tail = "\n".join(_runs(demo)[0].measured.tail)  # type: ignore[union-attr]
    assert "token None" in tail  # dropped from the job's environment
    assert "pw ***" in tail  # kept (--keep-env), masked in what is stored
    assert "tok-123456789" not in tail and "hf_zzzzzzzz" not in tail and "abcdefghij" not in tail
    text = _records(demo).read_text()  # type: ignore[union-attr]
    assert "tok-123456789" not in text and "pw-abcdefgh" not in text and "hf_zzzzzzzz" not in text
    code, _, err = run(
        capsys, "sop", "record", "run", "--name", "env2", "--keep-env", "NOT_SET_ANYWHERE", "--", "true"
    )
    assert code == 2 and "not set" in err


def test_non_utf8_and_escapes_in_the_output_are_stored_as_plain_lines(demo: Demo) -> None:
    job = (
        r"import sys; sys.stdout.buffer.write(b'\xff\xfe bad\n\x1b[31mred\x1b[0m\x07\n\x1b]0;title\x07ok\n')"
    )
    proc = _cli(
        demo, "sop", "record", "run", "--name", "bytes", "--", PY, "-c", job, stderr=subprocess.DEVNULL
    )
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    tail = _runs(demo)[0].measured.tail  # type: ignore[union-attr]
    assert tail == ("\ufffd\ufffd bad", "red?", "ok")


def test_several_runs_of_one_name_are_kept_as_independent_runs(demo: Demo, capsys) -> None:
    argv = ["sop", "record", "run", "--name", "PipelineRL", "--"]
    assert run(capsys, *argv, "true")[0] == 0
    code, _, err = run(capsys, *argv, "true")
    assert code == 2 and "already recorded" in err and "--again" in err
    assert run(capsys, *argv[:-1], "--again", "--", "true")[0] == 0
    runs = _runs(demo)
    assert [r.run for r in runs] == [1, 2] and all(r.measured and r.exit == 0 for r in runs)
    assert run(capsys, *argv[:-1], "--again", "--replace", "--", "true")[0] == 2


def test_a_job_that_forks_daemons_leaves_none_behind(demo: Demo, capsys, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    job = (
        "import subprocess, sys\n"
        "a = subprocess.Popen(['sleep', '300'])\n"  # in the job's group
        "b = subprocess.Popen(['sleep', '301'], start_new_session=True)\n"  # a daemon out of it
        f"open({str(pids)!r}, 'w').write(f'{{a.pid}} {{b.pid}}')\n"
        "print('forked')\n"
    )
    code, _, err = run(capsys, "sop", "record", "run", "--name", "daemon", "--", PY, "-c", job)
    assert code == 0, err
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), pid


def test_timeout_ends_the_whole_group_and_records_nothing(demo: Demo, capsys, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    job = _sleeper(pids)
    started = time.monotonic()
    code, out, err = run(
        capsys, "sop", "record", "run", "--name", "slow", "--timeout", "1", "--json", "--", PY, "-c", job
    )
    assert code == 1 and time.monotonic() - started < 30
    doc = json.loads(out)
    assert doc["ok"] is False and doc["exit_code"] == 1 and "took more than 1 s" in doc["error"]
    assert err == "up\nerror: the job stopped: it took more than 1 s (--timeout 1); nothing recorded\n"
    assert _runs(demo) == () and not _alive(int(pids.read_text()))


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_signal_during_the_run_ends_the_job_and_records_nothing(
    demo: Demo, tmp_path: Path, sig: int, code: int, as_json: bool
) -> None:
    pids = tmp_path / "pids"
    job = _sleeper(pids)
    flags = ["--json"] if as_json else []
    proc = _cli(demo, "sop", "record", "run", "--name", "sig", *flags, "--", PY, "-c", job)
    deadline = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    lines = [ln for ln in err.splitlines() if ln and ln != "up"]
    assert len(lines) == 1 and ("interrupted" in lines[0] or "terminated" in lines[0]), err
    if as_json:
        json.loads(out)  # one document
    else:
        assert out == ""
    assert _runs(demo) == () and not _alive(int(pids.read_text()))


def _fake_gpu_tool(tmp_path: Path, body: str) -> dict[str, str]:
    """A ``nvidia-smi`` outside the checkout, first on the job's PATH."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "nvidia-smi").write_text(f"#!{PY}\n{body}\n")
    (tools / "nvidia-smi").chmod(0o755)
    return {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}


def test_gpus_are_what_nvidia_smi_on_the_path_lists(demo: Demo, capsys, tmp_path: Path, monkeypatch) -> None:
    env = _fake_gpu_tool(tmp_path, "print('NVIDIA H200'); print('NVIDIA H200')")
    monkeypatch.setenv("PATH", env["PATH"])
    code, out, err = run(capsys, "sop", "record", "run", "--name", "gpu", "--", "true")
    assert code == 0, err
    assert _runs(demo)[0].measured.gpus == ("NVIDIA H200", "NVIDIA H200")  # type: ignore[union-attr]
    assert "measured on" in out


def test_sigint_while_the_host_is_probed_records_nothing_and_ends_the_probe(
    demo: Demo, tmp_path: Path
) -> None:
    """SIGINT before the job started (a GPU tool that hangs): one line, 130, nothing recorded."""
    marker = tmp_path / "probing"
    body = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(300)"
    job = tmp_path / "job-ran"
    proc = _cli(
        demo,
        "sop",
        "record",
        "run",
        "--name",
        "early",
        "--",
        "touch",
        str(job),
        env=_fake_gpu_tool(tmp_path, body),
    )
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "error: interrupted", err
    assert _runs(demo) == () and not job.exists() and not _alive(int(marker.read_text()))


# Runs argv[2:] and writes the largest descendant it waited for (KiB) to argv[1]: measured in a
# process of its own, since the test process's children include every earlier test's.
_MAXRSS = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[2:], stderr=subprocess.DEVNULL).returncode\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


@pytest.mark.slow
def test_a_gigabyte_of_output_keeps_memory_and_the_record_bounded(demo: Demo, tmp_path: Path) -> None:
    job = "import os\nb = b'x' * 1023 + b'\\n'\nfor _ in range(1 << 20): os.write(1, b)\nprint('last line')"
    rss = tmp_path / "maxrss"
    argv = ("-c", _MAXRSS, str(rss), PY, "-m", "vimesync", "sop", "record", "run", "--name", "big")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED")}
    cmd = [PY, *argv, "--", PY, "-c", job]
    done = subprocess.run(cmd, cwd=demo.downstream, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout
    # the largest process waited for (vimesync, or the job itself): far below the gigabyte
    assert int(rss.read_text()) < 200 * 1024  # KiB
    (rec,) = _runs(demo)
    m = rec.measured
    assert m is not None and m.log_bytes == (1 << 30) + len("last line\n")
    assert m.tail[-1] == "last line" and len(m.tail) <= 40 and all(len(t) <= 300 for t in m.tail)
    assert _records(demo).stat().st_size  # type: ignore[union-attr] < 64 * 1024


def test_a_control_run_that_reproduces_the_failure_exits_0_one_that_does_not_exits_1(
    demo: Demo, capsys, tmp_path: Path
) -> None:
    job = "import sys; print('OSError: [Errno 24] Too many open files'); sys.exit(1)"
    control = ["sop", "record", "run", "--name", "FD control", "--expect-exit", "1"]
    code, out, err = run(capsys, *control, "--expect-output", r"Errno 24\] Too many", "--", PY, "-c", job)
    assert code == 0 and "expected failure reproduced" in out, err
    code, out, _ = run(capsys, *control, "--again", "--expect-output", "never printed", "--", PY, "-c", job)
    assert code == 1 and "not as expected (the expected output not found)" in out
    assert [r.ok for r in _runs(demo)] == [True, False]  # written either way
    marker = tmp_path / "ran"
    code, _, err = run(
        capsys, *control, "--again", "--expect-output", "(unclosed", "--", "touch", str(marker)
    )
    assert code == 2 and "--expect-output: not an RE2 pattern" in err and not marker.exists()


def test_retries_rerun_the_job_unchanged_and_keep_every_attempt(demo: Demo, capsys, tmp_path: Path) -> None:
    count = tmp_path / "count"
    job = (
        f"import os, pathlib; p = pathlib.Path({str(count)!r});"
        " n = int(p.read_text() or 0) if p.exists() else 0; p.write_text(str(n + 1));"
        " os.kill(os.getpid(), 9) if n == 0 else print('passed')"
    )
    code, out, err = run(
        capsys, "sop", "record", "run", "--name", "GPU", "--retries", "2", "--", PY, "-c", job
    )
    assert code == 0, err
    assert "passed on an unchanged retry (attempt 1: exit -9 (SIGKILL))" in out
    (rec,) = _runs(demo)
    assert (
        rec.measured is not None
        and [a.exit for a in rec.measured.attempts] == [-9]
        and count.read_text() == "2"
    )
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--retries", "11", "--", "true")
    assert code == 2 and "--retries 11" in err


def test_the_report_says_what_was_measured_and_what_was_typed(demo: Demo, capsys) -> None:
    assert run(capsys, "sop", "record", "run", "--name", "smoke", "--", "true")[0] == 0
    assert run(capsys, "sop", "record", "run", "--name", "smoke", "--again", "--", "true")[0] == 0
    assert run(capsys, "sop", "record", "run", "--name", "lab", "--exit", "0", "--duration", "4m03s")[0] == 0
    code, out, _ = run(capsys, "report", "--baseline", demo.baseline)
    assert "- smoke: two independent complete runs, both exit 0, " in out
    assert "  - run 2: exit 0 in " in out and ", measured on `" in out
    assert "- lab: exit 0 in 4m03s, typed." in out


JUNIT = (
    '<testsuite><testcase classname="t" name="a"/>'
    '<testcase classname="t" name="b"><failure/></testcase></testsuite>'
)


def _writer(path: Path, data: bytes) -> list[str]:
    """A job that writes ``data`` to ``path`` (a copy of a file beside it: no argv limit)."""
    source = path.with_name(path.name + ".src")
    source.write_bytes(data)
    return ["cp", str(source), str(path)]


def test_junit_the_job_wrote_is_counted_and_a_failing_test_makes_the_run_red(
    demo: Demo, capsys, tmp_path: Path
) -> None:
    xml = tmp_path / "out.xml"
    argv = ["sop", "record", "run", "--name", "pytest", "--junit", str(xml), "--"]
    code, out, err = run(capsys, *argv, *_writer(xml, JUNIT.encode()))
    assert code == 1, err  # the job exited 0, a test failed: not green
    (rec,) = _runs(demo)
    assert rec.measured is not None and rec.measured.tests == (1, 1, 0, 0) and not rec.ok
    os.utime(xml, (1, 1))  # a file from an earlier run
    code, _, err = run(capsys, *argv[:-1], "--again", "--", "true")
    assert code == 2 and "not written by this run; nothing recorded" in err and len(_runs(demo)) == 1


def test_figures_the_job_wrote_are_recorded_and_escaped_in_the_report(
    demo: Demo, capsys, tmp_path: Path
) -> None:
    figures = tmp_path / "figures.json"
    data = json.dumps(
        {"observed FD count": 1614, "soft FD limit": 1024, "engine": "vllm *0.11* <b>"}
    ).encode()
    code, _, err = run(
        capsys,
        "sop",
        "record",
        "run",
        "--name",
        "FD",
        "--figures",
        str(figures),
        "--",
        *_writer(figures, data),
    )
    assert code == 0, err
    assert _runs(demo)[0].measured.figures == (  # type: ignore[union-attr]
        ("observed FD count", "1614"),
        ("soft FD limit", "1024"),
        ("engine", "vllm *0.11* <b>"),
    )
    _, out, _ = run(capsys, "report", "--baseline", demo.baseline)
    assert "; observed FD count 1614, soft FD limit 1024, engine vllm \\*0.11\\* \\<b\\>." in out


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (
            b"[" * 100_000 + b"]" * 100_000,
            "invalid JSON: nested deeper than 64 levels",
        ),  # deep nesting: refused, no recursion error
        (b'{"a": {"b": 1}}', "figure #1: expected a number or a short string"),
        (b'{"a": [1]}', "figure #1: expected a number or a short string"),
        (b'{"a\\nb": 1}', "figure #1: expected a name"),
        (b'{"[x](http://e)": 1}', "figure #1: expected a name"),
        (b'{"a": "two\\nlines"}', "figure #1: expected one line"),
        (b'{"a": true}', "figure #1: expected a number"),
        (b'{"a": 1e999}', "figure #1: expected a finite number"),
        (b'{"a": "\xff\xfe"}', "not UTF-8"),
        (json.dumps({f"k{i}": i for i in range(10_000)}).encode(), "10,000 figures, at most 100"),
    ],
    ids=["nested", "object", "list", "newline-name", "markdown-name", "newline-value", "bool", "inf"]
    + ["not-utf8", "10k-keys"],  # short ids: pytest puts the id in the job's environment
)
def test_a_hostile_figures_file_records_nothing_and_echoes_nothing(
    demo: Demo, capsys, tmp_path: Path, data: bytes, why: str
) -> None:
    figures = tmp_path / "figures.json"
    code, _, err = run(
        capsys,
        "sop",
        "record",
        "run",
        "--name",
        "F",
        "--figures",
        str(figures),
        "--",
        *_writer(figures, data),
    )
    assert code == 2 and why in err and err.count("\n") == 1, err
    assert "http://e" not in err and "two" not in err and _runs(demo) == ()


def test_a_figures_file_of_a_gigabyte_or_behind_a_symlink_is_refused(
    demo: Demo, capsys, tmp_path: Path
) -> None:
    big = tmp_path / "big.json"
    job = [PY, "-c", f"open({str(big)!r}, 'wb').truncate(1 << 30)"]  # sparse: a gigabyte, not read
    code, _, err = run(capsys, "sop", "record", "run", "--name", "F", "--figures", str(big), "--", *job)
    assert code == 2 and "over the 1048576-byte limit" in err
    link = tmp_path / "link.json"
    (tmp_path / "real.json").write_text('{"a": 1}')
    link.symlink_to(tmp_path / "real.json")
    code, _, err = run(capsys, "sop", "record", "run", "--name", "F", "--figures", str(link), "--", "true")
    assert code == 2 and _runs(demo) == ()


def test_worktree_runs_the_job_in_a_temporary_worktree_of_the_head(
    demo: Demo, capsys, tmp_path: Path
) -> None:
    where = tmp_path / "cwd"
    job = (
        "import os, pathlib; pathlib.Path('train.py').write_text('# the job edits its tree');"
        " pathlib.Path('out.xml').write_text('<testsuite><testcase name=\"a\"/></testsuite>');"
        f" open({str(where)!r}, 'w').write(os.getcwd())"
    )
    argv = [
        "sop",
        "record",
        "run",
        "--name",
        "wt",
        "--in-worktree",
        "--junit",
        "out.xml",
        "--",
        PY,
        "-c",
        job,
    ]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    ran = Path(where.read_text())
    assert ran.resolve() != demo.downstream.resolve() and not ran.exists()  # removed afterwards
    assert "the job edits" not in (demo.downstream / "train.py").read_text()
    assert not (demo.downstream / "out.xml").exists()
    assert _runs(demo)[0].measured.tests == (1, 0, 0, 0)  # type: ignore[union-attr]


@pytest.mark.parametrize("marker", [("VIMESYNC_UNTRUSTED", "1"), ("CI", "true")])
def test_an_untrusted_checkout_runs_no_job(
    demo: Demo, capsys, tmp_path: Path, monkeypatch, marker: tuple[str, str]
) -> None:
    monkeypatch.setenv(*marker)
    ran = tmp_path / "ran"
    code, _, err = run(capsys, "sop", "record", "run", "--name", "x", "--", "touch", str(ran))
    assert code == 2 and "refused in an untrusted checkout" in err
    assert not ran.exists() and _runs(demo) == ()
