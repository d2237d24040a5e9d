"""Property: for generated upstream histories (squash, merge, direct commits, renames, deletes,
binary files, symlinks, mode changes) and a downstream that is the mapped + translated upstream
at BASE, carrying BASE..TIP yields exactly the mapped + translated upstream at TIP, and a second
carry does nothing."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders.gitrepo import Repo
from tests.builders.pair import CONFIG, PIN, cli, tree

pytestmark = pytest.mark.slow  # property: generated histories carried end to end

DIRS = ["slime/", "slime/sub/", "docs/"]
NAMES = ["a.py", "b.py", "c.txt", "d.bin", "e.sh", "f.md"]
LINES = ["from slime import x", "import slime.y", "x = 1", "print('slime')", "", "import slimey", "y = 2"]
REG, EXE, LINK = 0o100644, 0o100755, 0o120000

text = st.lists(st.sampled_from(LINES), min_size=1, max_size=6).map(
    lambda ls: ("\n".join(ls) + "\n").encode()
)
binary = st.binary(min_size=1, max_size=20).map(lambda b: b"\0" + b)
content = st.one_of(text, text, binary, st.just(b"target").map(lambda b: b))
path = st.builds(lambda d, n: d + n, st.sampled_from(DIRS), st.sampled_from(NAMES))
op = st.one_of(
    st.tuples(st.just("write"), path, content, st.sampled_from([REG, REG, EXE, LINK])),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("rename"), st.integers(0, 50), path),
    st.tuples(st.just("chmod"), st.integers(0, 50)),
)
step = st.tuples(
    st.sampled_from(["squash", "squash", "merge", "direct"]), st.lists(op, min_size=1, max_size=3)
)


def _apply(model: dict[str, tuple[int, bytes]], ops: list) -> dict[str, tuple[int, bytes]]:
    model = dict(model)
    for o in ops:
        names = sorted(model)
        if o[0] == "write":
            _, p, data, mode = o
            model[p] = (mode, data if mode != LINK else b"target-" + data[:5].hex().encode())
        elif not names:
            continue
        elif o[0] == "delete":
            del model[names[o[1] % len(names)]]
        elif o[0] == "rename":
            old = names[o[1] % len(names)]
            if o[2] not in model:
                model[o[2]] = model.pop(old)
        elif o[0] == "chmod":
            p = names[o[1] % len(names)]
            mode, data = model[p]
            if mode != LINK:
                model[p] = (EXE if mode == REG else REG, data)
    return model


def _materialize(repo: Repo, model: dict[str, tuple[int, bytes]]) -> None:
    """Make the work tree and index hold exactly ``model``."""
    for p in repo.git("ls-files", "-z").split("\0"):
        if p and p not in model and not p.startswith(("pins/", "vimesync.toml")):
            repo.git("rm", "-q", "--", p)
    for p, (mode, data) in model.items():
        full = repo.path / p
        full.parent.mkdir(parents=True, exist_ok=True)
        if full.is_symlink() or full.exists():
            full.unlink()
        if mode == LINK:
            os.symlink(data.decode(), full)
        else:
            full.write_bytes(data)
            full.chmod(0o755 if mode == EXE else 0o644)
        repo.git("add", "--", p)


def _down(model: dict[str, tuple[int, bytes]]) -> dict[str, tuple[int, bytes]]:
    out = {}
    for p, (mode, data) in model.items():
        if mode != LINK and b"\0" not in data:
            data = re.sub(rb"\b(from|import) slime\b", rb"\1 vime", data)
        out["vime/" + p[len("slime/") :] if p.startswith("slime/") else p] = (mode, data)
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.lists(st.tuples(path, text), min_size=1, max_size=4),
    steps=st.lists(step, min_size=1, max_size=6),
)
def test_carry_yields_the_mapped_translated_tip(capsys, start, steps) -> None:
    root = Path(tempfile.mkdtemp(prefix="carry-prop-"))
    try:
        up = Repo(root / "up")
        model = {p: (REG, data) for p, data in start}
        _materialize(up, model)
        up.git("commit", "-q", "-m", "init")
        base = up.head()
        base_model = model
        for n, (kind, ops) in enumerate(steps, start=1):
            model = _apply(model, ops)
            if kind == "merge":
                up.branch(f"pr{n}")
                _materialize(up, model)
                up.git("commit", "-q", "--allow-empty", "-m", f"work {n}")
                up.checkout("main")
                up.merge(f"pr{n}", f"Merge pull request #{n} from c/pr{n}\n\nPR {n}")
            else:
                _materialize(up, model)
                subject = f"PR {n} (#{n})" if kind == "squash" else f"direct {n}"
                up.git("commit", "-q", "--allow-empty", "-m", subject)
        tip = up.head()
        down = Repo(root / "down")
        _materialize(down, _down(base_model))
        down.write({"vimesync.toml": CONFIG, "pins/slime.toml": PIN.format(base=base)})
        down.git("commit", "-q", "-m", "import")
        code, out, err = cli(capsys, "carry", "--direct", "include", cwd=down.path)
        assert code == 0, out + err
        branch = f"sync/{tip[:8]}"
        got = {
            p: v for p, v in tree(down.path, branch).items() if not p.startswith(("pins/", "vimesync.toml"))
        }
        assert got == _down(model)
        # A second carry, from the sync branch: nothing to carry, no commit.
        wt = root / f"down.sync-{tip[:8]}"
        before = down.git("rev-parse", branch)
        code, out, err = cli(capsys, "carry", cwd=wt)
        assert code == 0 and "nothing to carry" in out
        assert down.git("rev-parse", branch) == before
    finally:
        shutil.rmtree(root, ignore_errors=True)
