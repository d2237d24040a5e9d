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
  ``P`` = a file path (bytes) for the worker to read, ``Q`` = quit.
- response: ``id:u32 status:u8 line:i32 col:i32 msglen:u32`` then a UTF-8 message;
  status 0 = parses, 1 = does not (message "SyntaxError: invalid syntax", "ValueError: ...").
  line/col are -1 when unknown. One response per request, in request order, flushed at once,
  so the parent knows which file a crash or hang belongs to.
- at start-up the worker sends a response with id 0xFFFFFFFF whose message is
  "<implementation> <major>.<minor>.<micro>": the handshake.
"""

# Annotations stay strings (never evaluated), so ``int | None`` is fine under python3.8; typing is
# imported for mypy only: the worker starts with ``-I -S`` and imports as little as it can.
from __future__ import annotations

import gc
import struct
import sys
import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import BinaryIO

    Outcome = tuple[int, int | None, int | None, str]  # status, line, col, message

REQUEST = struct.Struct(">cII")
RESPONSE = struct.Struct(">IBiiI")
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

    def reply(ident: int, status: int, line: int | None, col: int | None, message: str) -> None:
        msg = message.encode("utf-8", "replace")[:MAX_MESSAGE]
        line = -1 if line is None else max(min(line, 2**31 - 1), -1)
        col = -1 if col is None else max(min(col, 2**31 - 1), -1)
        stdout.write(RESPONSE.pack(ident, status, line, col, len(msg)) + msg)
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
        if kind == b"P":
            try:
                with open(payload, "rb") as fh:
                    data = fh.read() if max_size is None else fh.read(max_size + 1)
            except OSError as exc:
                reply(ident, 1, None, None, f"cannot read file: {exc.strerror or exc}")
                continue
            if max_size is not None and len(data) > max_size:
                reply(ident, 1, None, None, f"file too large to parse (over {max_size} bytes)")
                continue
        else:
            data = payload
        try:
            result = parse(data, feature_version)
        except Exception as exc:  # noqa: BLE001 - whatever happens, report it against this file and go on
            result = (1, None, None, f"parser error: {type(exc).__name__}: {exc}")
        reply(ident, *result)
        del data, payload  # drop the source before waiting for the next request
        done += 1
        if done % 500 == 0:
            gc.collect()  # belt and braces: nothing should leak, but a worker lives for thousands of files


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
