"""Running git: one call (:func:`run`, :func:`run_status`, :func:`run_ok`), a long-lived process
with pipes (:func:`popen`) and streamed output under a deadline (:func:`stream`).

Each one checks the repository first (:mod:`vimesync.git.repocheck`) and runs the disarmed
command line in the disarmed environment (:mod:`vimesync.git.disarm`), with an explicit ``cwd``.

A call runs to its end through the process runner (:func:`vimesync.procrun.capture`: its own
process group, ended with it and on Ctrl-C or SIGTERM), unbounded: git is ours and disarmed,
what it prints is the data, and a call costs what ``subprocess.run`` did (timed on the demo's
~250 git runs and ``bench/bench_walk.py``). :func:`popen` and :func:`stream` stay conversations
over pipes that their reader drives (a fast-import fed for a whole carry; a log read as it
streams, killed at its own deadline): they run in our process group and are waited for, or
killed, when their reader stops.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from vimesync.errors import GitError, GitTimeout
from vimesync.git.disarm import MAX_MESSAGE, argv, command, env_for, message
from vimesync.git.repocheck import guard
from vimesync.procrun import Command, ProcessRun, capture


def run(
    repo: Path,
    args: Sequence[str],
    *,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
) -> bytes:
    """Run ``git args`` in ``repo`` and return stdout. Raise GitError with git's message on failure."""
    try:
        guard(repo, args, env)
        done = _capture(repo, args, env, input)
    except FileNotFoundError as exc:
        if not repo.exists():
            raise GitError(f"{repo}: no such directory") from exc
        raise GitError("git is not installed or not on PATH") from exc
    except NotADirectoryError as exc:
        raise GitError(f"{repo}: not a directory") from exc
    if check and done.code != 0:
        raise GitError(message(repo, args, done.stderr))
    return done.output


def run_status(
    cwd: Path, args: Sequence[str], *, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run ``git args`` in ``cwd``; return (exit code, stdout, stderr) without raising on failure."""
    try:
        guard(cwd, args, env)
        done = _capture(cwd, args, env)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    return _code(done), done.output, done.stderr


def run_ok(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> bool:
    """True when ``git args`` exits 0 (for predicates such as ``merge-base --is-ancestor``)."""
    guard(repo, args, env)
    return _capture(repo, args, env).code == 0


def _capture(
    cwd: Path, args: Sequence[str], env: dict[str, str] | None, input: bytes | None = None
) -> ProcessRun:
    """One git run to its end through the process runner: no deadline and no cap (git is ours,
    disarmed, and what it prints is the data), its group ended with it."""
    return capture(Command(argv(args), cwd, env_for(args, env)), input=input)


def _code(done: ProcessRun) -> int:
    assert done.code is not None  # an unbounded run is never stopped
    return done.code


def popen(repo: Path, args: Sequence[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A long-lived ``git args`` (``fast-import``) with pipes to its stdin and stdout; stderr goes
    to a temporary file the caller reads on failure (``proc.stderr_file``). Hardened like :func:`run`."""
    guard(repo, args, env)
    errf = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        argv(args),
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errf,
        env=env_for(args, env),
    )
    proc.stderr_file = errf  # type: ignore[attr-defined]
    return proc


def stream(
    repo: Path,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    deadline: float | None = None,
) -> Iterator[bytes]:
    """Yield chunks of ``git args`` stdout as it runs (one process, for long logs); ``input`` is
    written to its stdin by a helper thread, so neither side can block the other. ``deadline``
    (seconds): git is killed when it runs longer, and GitTimeout is raised after the chunks it
    wrote (hostile content can make git's own diffing take minutes)."""
    import threading

    guard(repo, args, env)
    # stderr to a file: a chatty git must never block on a full stderr pipe we do not read yet.
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(
            argv(args),
            cwd=repo,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errf,
            env=env_for(args, env),
        )
        assert proc.stdout is not None
        writer = None
        if input is not None:
            stdin = proc.stdin
            assert stdin is not None

            def feed() -> None:
                try:
                    stdin.write(input)
                    stdin.close()
                except (BrokenPipeError, ValueError, OSError):
                    pass  # git stopped reading; its exit code says why

            writer = threading.Thread(target=feed, name="git-stream-stdin", daemon=True)
            writer.start()
        timer = threading.Timer(deadline, proc.kill) if deadline is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            while chunk := proc.stdout.read(1 << 16):
                yield chunk
        finally:
            proc.stdout.close()
            if proc.poll() is None and writer is not None and writer.is_alive():
                proc.kill()
            code = proc.wait()
            if timer is not None:
                timer.cancel()
            if writer is not None:
                writer.join(timeout=5)
        if timer is not None and timer.finished.is_set() and code != 0:
            raise GitTimeout(f"{repo}: git {command(args)} ran over {deadline:g} s and was stopped")
        if code != 0:
            errf.seek(0)
            raise GitError(message(repo, args, errf.read(MAX_MESSAGE * 4)))
