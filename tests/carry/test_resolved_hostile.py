"""What a resolved conflict shows of upstream content cannot break the report (issue 29, item 8):
fences, mentions, closing keywords, HTML, the publish markers, control characters, a path with
a newline and binary files, from a real carry stopped at a conflict and resolved by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gfm import html
from tests.builders.gitrepo import Repo
from tests.builders.pair import CONFIG, PIN, Pair, cli
from vimesync import git

pytestmark = pytest.mark.slow  # a carry with conflicts in real repositories

TITLE = "Fix `x` ``` @alice closes #1 <script>alert(1)</script> <!-- vimesync:report:end -->"
HOSTILE = [
    "````",
    "```",
    "~~~",
    "@bob please look",
    "fixes #9",
    "<details><summary>x</summary>",
    "<!-- vimesync:report:start -->",
    "\x1b[31mred\x1b[0m",
    "carriage\rreturn",
]
WEIRD = "slime/we\nird.py"


def _build(root: Path) -> Pair:
    up = Repo(root / "up")
    up.commit("init", {"slime/h.py": "a = 1\n", WEIRD: "w = 1\n", "slime/blob.bin": b"\0old"})
    base = up.head()
    new = "a = 2\n" + "\n".join(HOSTILE) + "\n"
    up.commit(f"{TITLE} (#2)", {"slime/h.py": new, WEIRD: "w = 2\n", "slime/blob.bin": b"\0new"})
    tip = up.head()
    down = Repo(root / "down")
    down.commit(
        "import",
        {
            "vime/h.py": "a = 1\n",
            "vime/we\nird.py": "w = 1\n",
            "vime/blob.bin": b"\0old",
            "vimesync.toml": CONFIG,
            "pins/slime.toml": PIN.format(base=base),
        },
    )
    down.commit("diverge", {"vime/h.py": "a = 3\n", "vime/we\nird.py": "w = 3\n", "vime/blob.bin": b"\0down"})
    return Pair(root=root, up=up, down=down, base=base, tip=tip)


def test_hostile_upstream_content_stays_in_its_code_blocks(tmp_path: Path, capsys) -> None:
    pair = _build(tmp_path)
    code, doc = pair.carry(capsys)
    assert code == 1 and {f["path"] for f in doc["conflict"]["files"]} == {
        "vime/h.py",
        "vime/we\nird.py",
        "vime/blob.bin",
    }
    wt = pair.worktree()
    # the maintainer keeps the downstream side of every file, and adds nothing else
    git.run(wt, ["checkout", "--ours", "--", "vime/h.py", "vime/we\nird.py", "vime/blob.bin"])
    git.run(wt, ["add", "--", "vime/h.py", "vime/we\nird.py", "vime/blob.bin"])
    code, doc = pair.carry(capsys, "--continue", cwd=wt)
    assert code == 0, doc
    args = ["report", "--baseline", "main", "--head", f"sync/{pair.tip[:8]}"]
    code, out, _ = cli(capsys, *args, "--format", "json", cwd=pair.down.path)
    (item,) = json.loads(out)["summary"]["resolved"]["items"]
    files = {f["path"]: f for f in item["files"]}
    assert set(files) == {"vime/h.py", "vime/we\nird.py", "vime/blob.bin"}
    blob = files["vime/blob.bin"]
    assert blob["note"] == "binary: not compared line by line" and blob["dropped"] == []
    assert files["vime/h.py"]["dropped_count"] == 1 + len(HOSTILE)
    assert "\\x1b[31mred\\x1b[0m" in files["vime/h.py"]["dropped"]  # shown escaped, also in JSON

    code, md, _ = cli(capsys, *args, cwd=pair.down.path)
    assert "\x1b" not in md and "\r" not in md
    assert "<!-- vimesync:report:end -->" not in md and "<!-- vimesync:report:start -->" not in md
    rendered = html(md)
    assert "<script>" not in rendered and "<details>" not in rendered
    # every hostile line shows inside a code block, as it was written (escaped controls aside)
    blocks = rendered.split('<pre><code class="language-diff">')[1:]
    assert len(blocks) == 2  # h.py and the file with a newline in its name; not the binary one
    body = blocks[0].split("</code></pre>")[0]
    for line in ("-a = 2", "-````", "-```", "-~~~", "-@bob please look", "-fixes #9"):
        assert line in body, line
    assert "-&lt;details&gt;&lt;summary&gt;x&lt;/summary&gt;" in body
    # outside code: the title's mention and closing keyword are inert, the path on one line
    assert "@alice" not in rendered.replace("<code>@alice</code>", "")
    assert "`vime/we ird.py`" in md
    assert "- `vime/blob.bin`: conflict: binary, resolved by hand; binary: not compared line by line." in md
