"""vimesync parse worker: a standalone script (no vimesync imports) that runs under python3.8+.

Started as ``python -I -S _worker.py [--feature-version MINOR] [--mem-limit BYTES] [--max-size BYTES]``.
It compiles Python sources to bytecode (``compile(src, name, "exec", dont_inherit=True)``), which
rejects everything ``ast.parse`` rejects and also what only the compiler sees (``return``/``await``/
``yield`` outside a function, duplicate argument names, ``nonlocal`` at module level, a name used
before its ``global`` declaration...), and reports the outcome; the code object is discarded at
once. An older grammar through ``--feature-version`` (honoured by the parser only) is parsed to an
AST with ``_feature_version``, then that AST is compiled.

Protocol, all integers big-endian, over stdin/stdout:

- request:  ``kind:1 id:u32 length:u32`` then ``length`` bytes; kind ``D`` = source bytes,
  ``P`` = a file path (bytes) for the worker to read, ``K`` = the same, and key what was read,
  ``Q`` = quit. A file is opened without following a symlink and read only when regular.
- response: ``id:u32 status:u8 line:i32 col:i32 msglen:u32`` then a UTF-8 message;
  status 0 = parses, 1 = does not (message "SyntaxError: invalid syntax", "ValueError: ...").
  line/col are -1 when unknown. One response per request, in request order, flushed at once,
  so the parent knows which file a crash or hang belongs to. A ``K`` response goes on with
  ``oid:20 size:u64 mtime_ns:i64 inode:u64``: the git blob id of the bytes parsed and the
  ``fstat`` of the file they were read from (all zero when it could not be read), so a cold run's
  parent reads no file at all: the workers read, key and compile in parallel.
- at start-up the worker sends a response with id 0xFFFFFFFF whose message is
  "<implementation> <major>.<minor>.<micro>": the handshake.
"""

# Annotations stay strings (never evaluated), so ``int | None`` is fine under python3.8; typing is
# imported for mypy only: the worker starts with ``-I -S`` and imports as little as it can.
from __future__ import annotations

import gc
import os
import stat
import struct
import sys
import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import BinaryIO

    Outcome = tuple[int, int | None, int | None, str]  # status, line, col, message

REQUEST = struct.Struct(">cII")
RESPONSE = struct.Struct(">IBiiI")
KEY = struct.Struct(">20sQqQ")  # after a K response: blob id, size, mtime_ns, inode
NO_KEY = KEY.pack(bytes(20), 0, 0, 0)
HANDSHAKE_ID = 0xFFFFFFFF
PyCF_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST, without importing ast
NAME = "<unknown>"  # the file name compile() puts in messages; ours carry no path (the parent knows it)
MAX_MESSAGE = 1000  # bytes: keeps every response small, so a batch of them never fills the pipe


def _limit_resources(mem_limit: int | None) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: run without limits
        return
    for which, value in ((resource.RLIMIT_AS, mem_limit), (resource.RLIMIT_CORE, 0)):
        if value is None:
            continue
        try:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):
            pass


def parse(data: bytes, feature_version: int) -> Outcome:
    """(status, line, col, message) for one source, as compiling it to bytecode sees it."""
    try:
        if feature_version < 0:
            compile(data, NAME, "exec", dont_inherit=True)
        else:
            fv = feature_version
            tree = compile(data, NAME, "exec", PyCF_ONLY_AST, dont_inherit=True, _feature_version=fv)
            compile(tree, NAME, "exec", dont_inherit=True)
    except SyntaxError as exc:  # includes IndentationError, TabError
        return 1, exc.lineno, exc.offset, f"{type(exc).__name__}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError, OverflowError, TypeError) as exc:
        text = str(exc)
        return 1, None, None, type(exc).__name__ + (": " + text if text else "")
    return 0, None, None, ""


def read_file(path: bytes, max_size: int | None) -> tuple[bytes, os.stat_result] | str:
    """A regular file's bytes and its fstat, or why not: never through a symlink, never waiting on
    a FIFO, at most ``max_size`` + 1 bytes (the caller sees a file that is too large)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "cannot read file: not a regular file"
        want = st.st_size + 1 if max_size is None else min(st.st_size, max_size) + 1
        parts = [os.read(fd, want)]
        while parts[-1] and (max_size is None or sum(map(len, parts)) <= max_size):
            parts.append(os.read(fd, 1 << 20))
        return (b"".join(parts) if len(parts) > 2 else parts[0]), st
    except OSError as exc:
        return f"cannot read file: {exc.strerror or exc}"
    finally:
        os.close(fd)


def blob_key(data: bytes, st: os.stat_result) -> bytes:
    """The KEY record of bytes read from a file: git's blob id of them, and the file's fstat."""
    import hashlib  # only K requests need it: a worker of D and P requests starts without it

    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return KEY.pack(h.digest(), st.st_size, st.st_mtime_ns, st.st_ino)


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError
    return data


def main(argv: list[str]) -> int:
    feature_version = -1
    mem_limit = None
    max_size = None
    args = list(argv)
    while args:
        opt = args.pop(0)
        if opt == "--feature-version":
            feature_version = int(args.pop(0))
        elif opt == "--mem-limit":
            mem_limit = int(args.pop(0))
        elif opt == "--max-size":
            max_size = int(args.pop(0))
        else:
            sys.stderr.write(f"unknown option {opt!r}\n")
            return 2
    _limit_resources(mem_limit)
    warnings.simplefilter("ignore")  # SyntaxWarning & co. must neither print nor turn into errors
    gc.disable()  # code objects and AST nodes hold no cycles; skipping the collector is faster
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def reply(
        ident: int, status: int, line: int | None, col: int | None, message: str, key: bytes = b""
    ) -> None:
        msg = message.encode("utf-8", "replace")[:MAX_MESSAGE]
        line = -1 if line is None else max(min(line, 2**31 - 1), -1)
        col = -1 if col is None else max(min(col, 2**31 - 1), -1)
        stdout.write(RESPONSE.pack(ident, status, line, col, len(msg)) + msg + key)
        stdout.flush()

    impl = sys.implementation.name
    reply(HANDSHAKE_ID, 0, None, None, "{} {}.{}.{}".format(impl, *sys.version_info[:3]))
    done = 0
    while True:
        try:
            kind, ident, length = REQUEST.unpack(_read_exact(stdin, REQUEST.size))
            payload = _read_exact(stdin, length)
        except EOFError:
            return 0
        if kind == b"Q":
            return 0
        key = b""
        if kind in (b"P", b"K"):
            got = read_file(payload, max_size)
            if isinstance(got, str):
                reply(ident, 1, None, None, got, NO_KEY if kind == b"K" else b"")
                continue
            data = got[0]
            if max_size is not None and len(data) > max_size:
                reply(
                    ident,
                    1,
                    None,
                    None,
                    f"file too large to parse (over {max_size} bytes)",
                    NO_KEY if kind == b"K" else b"",
                )
                continue
            if kind == b"K":
                key = blob_key(data, got[1])
        else:
            data = payload
        try:
            result = parse(data, feature_version)
        except Exception as exc:  # noqa: BLE001 - whatever happens, report it against this file and go on
            result = (1, None, None, f"parser error: {type(exc).__name__}: {exc}")
        reply(ident, *result, key)
        del data, payload  # drop the source before waiting for the next request
        done += 1
        if done % 500 == 0:
            gc.collect()  # belt and braces: nothing should leak, but a worker lives for thousands of files


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
