"""The standalone worker reports exactly what compiling to bytecode reports (ast.parse + the compiler's
own checks), under any interpreter it runs on."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from vimesync.errors import BadInput
from vimesync.pycheck.interp import find_interpreter
from vimesync.pycheck.pool import WORKER

CASES: dict[str, bytes] = {
    "ok": b"x = 1\n",
    "empty": b"",
    "syntax": b"def f(:\n    pass\n",
    "indent": b"x = 1\n  y = 2\n",
    "tabs": b"if x:\n\tif y:\n        pass\n\tpass\n",
    "unterminated": b"x = 'abc\n",
    "nul": b"x = 1\0\n",
    "parens": b"(" * 300 + b")" * 300,
    "deep_binop": b"1" + b"+1" * 20_000,
    "latin1_cookie": b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
    "bad_utf8": b"x = '\xff'\n",
    "bad_cookie": b"# coding: no-such-codec\nx = 1\n",
    "bom": b"\xef\xbb\xbfx = 1\n",
    # compiler errors, not parser ones: ast.parse accepts all of these
    "return_outside_function": b"x = 1\nreturn 1\n",
    "await_outside_function": b"await x\n",
    "yield_outside_function": b"yield 1\n",
    "duplicate_argument": b"def f(a, b, a):\n    pass\n",
    "nonlocal_at_module_level": b"nonlocal x\n",
    "used_before_global": b"def f():\n    print(x)\n    global x\n",
    "assigned_before_global": b"def f():\n    x = 1\n    global x\n",
    "break_outside_loop": b"break\n",
    "late_future_import": b"x = 1\nfrom __future__ import annotations\n",
    "invalid_escape": b"x = '\\d'\n",  # a SyntaxWarning at most
    "pep701": b'x = f"{\'a\' if x else "b"}"\n',
    "type_alias": b"type X = int\n",
    "match": b"match x:\n    case 1:\n        pass\n",
    "walrus": b"if (y := 1):\n    pass\n",
}

EXPECT = r"""
import ast, json, sys, warnings
warnings.simplefilter("ignore")
fv = None if len(sys.argv) < 2 else (3, int(sys.argv[1]))
out = []
for src in json.load(sys.stdin):
    data = src.encode("latin-1")
    try:
        compile(ast.parse(data, feature_version=fv) if fv else data, "<unknown>", "exec", dont_inherit=True)
        out.append([0, -1, -1, ""])
    except SyntaxError as e:
        out.append([1, e.lineno if e.lineno is not None else -1, e.offset if e.offset is not None else -1,
                    type(e).__name__ + ": " + e.msg])
    except Exception as e:
        out.append([1, -1, -1, type(e).__name__ + (": " + str(e) if str(e) else "")])
print(json.dumps(out))
"""


def expected(exe: str, cases: list[bytes], *extra: str) -> list[tuple[int, int, int, str]]:
    """What compile() itself says (after ast.parse with feature_version, if given), under ``exe``."""
    proc = subprocess.run(
        [exe, "-I", "-S", "-c", EXPECT, *extra],
        input=json.dumps([c.decode("latin-1") for c in cases]).encode(),
        capture_output=True,
        check=True,
    )
    return [tuple(x) for x in json.loads(proc.stdout)]


def drive(exe: str, cases: list[bytes], *args: str) -> list[tuple[int, int, int, str]]:
    """Speak the worker protocol directly: one request per case, then read every answer."""
    req = b"".join(struct.pack(">cII", b"D", i, len(c)) + c for i, c in enumerate(cases))
    proc = subprocess.run([exe, "-I", "-S", str(WORKER), *args], input=req, capture_output=True, check=True)
    out, pos, results = proc.stdout, 0, []
    while pos < len(out):
        ident, status, line, col, n = struct.unpack_from(">IBiiI", out, pos)
        pos += 17
        msg = out[pos : pos + n].decode()
        pos += n
        if ident != 0xFFFFFFFF:
            assert ident == len(results)
            results.append((status, line, col, msg))
    return results


def interpreter_or_skip(version: tuple[int, int]) -> str:
    try:
        found = find_interpreter(version, prefer_exact=True)
    except BadInput:
        pytest.skip(f"no python{version[0]}.{version[1]} found")
    if found.feature_version:
        pytest.skip(f"no python{version[0]}.{version[1]} found")
    return found.executable


@pytest.mark.slow
@pytest.mark.parametrize("version", [sys.version_info[:2], (3, 8), (3, 12), (3, 13)], ids=str)
def test_worker_matches_compile(version: tuple[int, int]) -> None:
    exe = sys.executable if version == sys.version_info[:2] else interpreter_or_skip(version)
    cases = list(CASES.values())
    got, want = drive(exe, cases), expected(exe, cases)
    for name, g, w in zip(CASES, got, want, strict=True):
        assert g == w, name


def test_worker_feature_version_matches_compile() -> None:
    cases = list(CASES.values())
    assert drive(sys.executable, cases, "--feature-version", "8") == expected(sys.executable, cases, "8")


def test_handshake_and_quit() -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(WORKER)], input=struct.pack(">cII", b"Q", 0, 0), capture_output=True
    )
    assert proc.returncode == 0
    ident, status, _, _, n = struct.unpack_from(">IBiiI", proc.stdout)
    assert ident == 0xFFFFFFFF and proc.stdout[17 : 17 + n].decode().startswith(sys.implementation.name)


def test_compiler_only_errors_are_caught_with_their_line() -> None:
    ends = ("_function", "_argument", "_level", "_global", "_loop", "_import")
    names = [n for n in CASES if n.endswith(ends)]
    got = dict(zip(names, drive(sys.executable, [CASES[n] for n in names]), strict=True))
    assert all(status == 1 and msg.startswith("SyntaxError: ") for status, _, _, msg in got.values()), got
    assert got["return_outside_function"][1] == 2 and got["used_before_global"][1] == 3
    assert "'await' outside function" in got["await_outside_function"][3]
    assert "duplicate argument 'a'" in got["duplicate_argument"][3]
    assert "nonlocal declaration not allowed at module level" in got["nonlocal_at_module_level"][3]
    assert "used prior to global declaration" in got["used_before_global"][3]
    assert "assigned to before global declaration" in got["assigned_before_global"][3]


def _keyed(exe: str, paths: list[bytes]) -> list[tuple[int, str, bytes, tuple[int, int, int]]]:
    """K requests for ``paths``: (status, message, blob id, (size, mtime_ns, inode)) per path."""
    req = b"".join(struct.pack(">cII", b"K", i, len(p)) + p for i, p in enumerate(paths))
    proc = subprocess.run(
        [exe, "-I", "-S", str(WORKER)], input=req, capture_output=True, check=True, timeout=60
    )
    out, pos, results = proc.stdout, 0, []
    while pos < len(out):
        ident, status, _, _, n = struct.unpack_from(">IBiiI", out, pos)
        pos += 17
        msg = out[pos : pos + n].decode()
        pos += n
        if ident == 0xFFFFFFFF:
            continue
        oid, size, mtime, inode = struct.unpack_from(">20sQqQ", out, pos)
        pos += struct.calcsize(">20sQqQ")
        results.append((status, msg, oid, (size, mtime, inode)))
    return results


def test_a_keyed_file_job_says_what_it_read_as_git_does(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_bytes(b"x = 1\n")
    bad.write_bytes(b"def (:\n")
    got = _keyed(sys.executable, [os.fsencode(good), os.fsencode(bad)])
    for (_, _, oid, stat), path in zip(got, (good, bad), strict=True):
        hashed = subprocess.run(
            ["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True
        )
        st = path.stat()
        assert oid.hex() == hashed.stdout.strip() and stat == (st.st_size, st.st_mtime_ns, st.st_ino)
    assert [g[0] for g in got] == [0, 1]


def test_a_keyed_file_job_never_follows_a_symlink_nor_waits_on_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "target.py").write_bytes(b"x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "target.py")
    os.mkfifo(tmp_path / "fifo.py")
    got = _keyed(sys.executable, [os.fsencode(tmp_path / n) for n in ("link.py", "fifo.py", "gone.py")])
    assert [(status, oid) for status, _, oid, _ in got] == [(1, bytes(20))] * 3
    assert got[1][1] == "cannot read file: not a regular file"
    assert all(msg.startswith("cannot read file: ") for _, msg, _, _ in got)
