"""An upstream and a downstream that is its mapped + translated copy at BASE (tests only)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from vimesync import git
from vimesync.cli.app import main

CONFIG = """\
[upstream]
name = "Slime"
repo = "THUDM/slime"
path = "../up"
pin = "pins/slime.toml"
map = ["slime/=vime/"]

[[upstream.translate]]
pattern = '\\b(from|import) slime\\b'
replace = '\\1 vime'

[downstream]
path = "."
"""

PIN = """\
# Last upstream commit carried downstream (vimesync carry bumps it).
[upstream]
repo = "THUDM/slime"  # owner/name
synced = "{base}"
"""


@dataclass
class Pair:
    root: Path
    up: Repo
    down: Repo
    base: str
    tip: str

    def carry(
        self, capsys: pytest.CaptureFixture[str], *args: str, cwd: Path | None = None
    ) -> tuple[int, dict]:
        code, out, err = cli(capsys, "carry", "--json", *args, cwd=cwd or self.down.path)
        return code, json.loads(out)

    def walked(self, capsys: pytest.CaptureFixture[str], rev: str, tip: str | None = None) -> list[dict]:
        """The PRs of BASE..``tip`` (default: TIP) as ``walk --json`` sees them with the downstream
        read at ``rev`` (e.g. the sync branch): mirrored ones carry how they were found."""
        range_ = f"{self.base}..{tip or self.tip}"
        _, out, _ = cli(
            capsys,
            "walk",
            "--json",
            "--downstream",
            ".",
            "--downstream-rev",
            rev,
            "--range",
            range_,
            cwd=self.down.path,
        )
        return json.loads(out)["prs"]

    def worktree(self, name: str | None = None) -> Path:
        return self.root / f"down.{(name or 'sync/' + self.tip[:8]).replace('/', '-')}"


def cli(capsys: pytest.CaptureFixture[str], *args: str, cwd: Path) -> tuple[int, str, str]:
    old = Path.cwd()
    import os

    os.chdir(cwd)
    try:
        with pytest.raises(SystemExit) as exc:
            main(list(args))
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def translate(text: str) -> str:
    import re

    return re.sub(r"\b(from|import) slime\b", r"\1 vime", text)


def build_pair(root: Path, *, config: str = CONFIG) -> Pair:
    """Upstream: squash PRs, a merge PR, a rename, a direct push; downstream = mapped copy at BASE."""
    up = Repo(root / "up")
    up.commit(
        "init",
        {
            "slime/a.py": "from slime import x\nprint(1)\n",
            "slime/util.py": "def f():\n    return 1\n",
            "README.md": "Slime\n",
            "slime/blob.bin": b"\0\1\2",
        },
    )
    base = up.head()
    up.commit("Add c (#1)", {"slime/c.py": "import slime.c\n"})
    up.branch("feat")
    up.commit("work on a", {"slime/a.py": "from slime import x\nprint(2)\n"})
    up.commit("more", {"slime/util.py": "def f():\n    return 2\n"})
    up.checkout("main")
    up.merge("feat", "Merge pull request #2 from alice/feat\n\nChange a and util\n\nLonger text.")
    up.git("mv", "slime/c.py", "slime/d.py")
    up.commit("Rename c (#3)")
    up.commit("direct thing", {"README.md": "Slime 2\n"})
    tip = up.head()
    down = Repo(root / "down")
    down.commit(
        "import",
        {
            "vime/a.py": "from vime import x\nprint(1)\n",
            "vime/util.py": "def f():\n    return 1\n",
            "README.md": "Slime\n",
            "vime/blob.bin": b"\0\1\2",
            "vimesync.toml": config,
            "pins/slime.toml": PIN.format(base=base),
        },
    )
    return Pair(root=root, up=up, down=down, base=base, tip=tip)


def tree(repo: Path, rev: str) -> dict[str, tuple[int, bytes]]:
    with git.CatFile(repo) as cat:
        return {e.path: (e.mode, cat.read(e.oid)) for e in git.ls_tree(repo, rev) if e.kind == "blob"}
