"""The GNU patch reference: real ``patch -p1 --fuzz=N [--forward] --batch`` on one file in a
temporary directory, its per-hunk report parsed, and the builtin GNU applier compared with it.

Backups and rejects are never written (``--no-backup-if-mismatch -r -``), so the directory holds
exactly what patch made of the file. Tests that need the binary skip when it is absent (``.ci/run``
installs Debian's ``patch``).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vimesync.patches.diffparse import parse_patch
from vimesync.patches.gnuapply import GnuFile, gnu_apply

GNU_PATCH = shutil.which("patch")
_HUNK = re.compile(
    rb"^Hunk #(\d+) (succeeded|FAILED|ignored) at (-?\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?"
)


@dataclass(frozen=True)
class GnuRun:
    """What real GNU patch did: exit code, (hunk -> (verdict, fuzz, offset)), the file after."""

    code: int
    hunks: dict[int, tuple[str, int, int]]
    reversed: bool
    skipped: bool
    data: bytes | None  # None: the file is gone (or was never there)
    output: str


def run_gnu_patch(original: bytes | None, patch: bytes, *, fuzz: int = 2, forward: bool = False) -> GnuRun:
    """Run real GNU patch on ``f.txt`` holding ``original`` (None: absent)."""
    assert GNU_PATCH is not None
    with tempfile.TemporaryDirectory(prefix="vimesync-gnu-") as tmp:
        root = Path(tmp)
        target = root / "f.txt"
        if original is not None:
            target.write_bytes(original)
        args = [GNU_PATCH, "-p1", f"--fuzz={fuzz}", "--no-backup-if-mismatch", "-r", "-", "--batch"]
        if forward:
            args.append("--forward")
        proc = subprocess.run(args, cwd=root, input=patch, capture_output=True, timeout=30, check=False)
        text = proc.stdout + proc.stderr
        hunks: dict[int, tuple[str, int, int]] = {}
        for line in text.splitlines():
            m = _HUNK.match(line)
            if m:
                verdict = m.group(2).decode()
                hunks[int(m.group(1))] = (verdict, int(m.group(4) or 0), int(m.group(5) or 0))
        leftovers = sorted(p.name for p in root.iterdir() if p.name != "f.txt")
        assert not leftovers, f"patch left {leftovers}"
        data = target.read_bytes() if target.exists() else None
        return GnuRun(
            code=proc.returncode,
            hunks=hunks,
            # "Reversed (or previously applied) patch detected!", or before any hunk is tried "The
            # next patch would empty out the file f.txt, which is already empty!  Assuming -R."
            # With --forward the same "already empty" case says "Skipping patch." instead: the
            # file is already as the patch leaves it, which is what "reversed" means here.
            reversed=b"Reversed (or previously applied)" in text
            or b"Assuming -R" in text
            or b"which is already empty!" in text,
            skipped=b"Skipping patch" in text,
            data=data,
            output=text.decode("utf-8", "replace"),
        )


def builtin_gnu(original: bytes, patch: bytes, *, fuzz: int = 2, forward: bool = False) -> GnuFile:
    parsed = parse_patch(patch, name="p.patch", strip=1)
    assert len(parsed.files) == 1
    fp = parsed.files[0]
    return gnu_apply(original, fp.hunks, fuzz=fuzz, forward=forward, strip_cr=fp.crlf_header)


def disagreement(original: bytes, patch: bytes, *, fuzz: int = 2, forward: bool = False) -> str | None:
    """None when the builtin GNU applier does what real GNU patch does to ``original`` with
    ``patch`` (verdicts, fuzz and offset of every hunk, reversed/skipped, the bytes written);
    else what differs."""
    real = run_gnu_patch(original, patch, fuzz=fuzz, forward=forward)
    ours = builtin_gnu(original, patch, fuzz=fuzz, forward=forward)
    if ours.reversed != real.reversed or ours.skipped != real.skipped:
        theirs = f"{real.reversed}/{real.skipped}"
        return f"reversed/skipped: ours {ours.reversed}/{ours.skipped}, GNU's {theirs}\n{real.output}"
    if (real.code == 0) != ours.ok:
        return f"verdict: ours {ours.ok}, GNU exit {real.code}\n{real.output}"
    for h in ours.hunks:
        verdict = "ignored" if h.ignored else "succeeded" if h.applied else "FAILED"
        # GNU names a hunk only when it moved, fuzzed or failed ("ignored" only with --verbose)
        want = real.hunks.get(h.number, ("ignored" if real.skipped else "succeeded", 0, 0))
        if verdict == "FAILED":
            got: tuple[str, int, int] = (verdict, want[1], want[2])  # a failure reports no fuzz
        else:
            got = (verdict, h.fuzz, h.offset)
        if got != want:
            return f"hunk {h.number}: ours {got}, GNU's {want}\n{real.output}"
    expected = real.data if not real.skipped else original
    written = ours.data if ours.data is not None else original
    if written != expected:
        return f"bytes differ:\nours {written!r}\nGNU's {expected!r}\n{real.output}"
    return None


WORDS = ["a", "b", "c", "x = 1", "", "}", "  pass", "d", "e"]  # few: context repeats


def _lines(rng: random.Random, n: int) -> list[bytes]:
    return [rng.choice(WORDS).encode() + b"\n" for _ in range(n)]


def _edit(rng: random.Random, lines: list[bytes], ops: int) -> list[bytes]:
    out = list(lines)
    for _ in range(ops):
        op = rng.choice(["insert", "delete", "replace"])
        at = rng.randint(0, len(out))
        if op == "insert":
            out[at:at] = _lines(rng, rng.randint(1, 3))
        elif at < len(out):
            if op == "delete":
                del out[at : at + rng.randint(1, 2)]
            else:
                out[at] = rng.choice(WORDS).encode() + b"\n"
    return out


def gnu_case(seed: int) -> tuple[bytes, bytes, int, bool]:
    """A generated (file, patch, fuzz, forward): a real ``git diff`` of a small file, met by the file
    drifted (lines inserted and deleted: offsets; context lines changed: fuzz), already patched
    (reversed) or drifted after patching, with context repeating so positions are ambiguous."""
    rng = random.Random(seed)
    base = _lines(rng, rng.randint(3, 40))
    target = _edit(rng, base, rng.randint(1, 4))
    if rng.randint(0, 5) == 0 and target:
        target[-1] = target[-1].rstrip(b"\n")  # no newline at end of file
    patch = _git_diff(b"".join(base), b"".join(target), rng.choice([3, 3, 2, 1]))
    kind = rng.choice(["drift", "drift", "drift", "reversed", "reversed-drift", "exact"])
    if kind == "exact":
        now = base
    elif kind == "reversed":
        now = target
    else:
        now = _edit(rng, target if kind == "reversed-drift" else base, rng.randint(1, 5))
    return b"".join(now), patch, rng.choice([0, 1, 2, 2, 3]), rng.random() < 0.5


def _git_diff(before: bytes, after: bytes, context: int) -> bytes:
    from tests.builders.trees import git_diff

    return git_diff({"f.txt": before}, {"f.txt": after}, extra=(f"-U{context}",))
