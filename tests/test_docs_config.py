"""docs/config.md documents every key the loaders accept (issue 17, item 14): each key set the
loaders check against appears in the section written for that file and table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vimesync import config
from vimesync.errors import ConfigError
from vimesync.sop import gatesfile

# Without its fenced examples: a TOML comment there ("# source = ...") is no heading.
DOCS = re.sub(
    r"^```.*?^```",
    "",
    (Path(__file__).resolve().parents[1] / "docs" / "config.md").read_text(),
    flags=re.M | re.S,
)

# Where each key set is documented: the docs heading that holds its table of keys.
SECTIONS = {
    "vimesync.toml": "## `vimesync.toml`",
    "vimesync.toml [upstream]": "### `[upstream]`",
    "vimesync.toml [[upstream.translate]]": "### `[[upstream.translate]]`",
    "vimesync.toml [[upstream.verify]]": "### `[[upstream.verify]]`",
    "vimesync.toml [downstream]": "### `[downstream]`",
    "vimesync.toml [ci]": "### `[ci]`",
    "vimesync.toml [engine]": "### `[engine]`",
    "vimesync.toml [[engine]]": "### `[[engine]]` (several engines)",
    "engine pin [engine]": "## The engine pin, `pins/<engine>.toml`",
    "upstream pin [upstream]": "## The upstream pin, `pins/<upstream>.toml`",
    "sop/gates.toml": "## The gates, `sop/gates.toml`",
    "sop/gates.toml [ci]": "## The gates, `sop/gates.toml`",
    "sop/gates.toml [images]": "## The gates, `sop/gates.toml`",
    "sop/gates.toml [evidence]": "## The gates, `sop/gates.toml`",
}


def _section(heading: str) -> str:
    start = DOCS.index(heading + "\n")
    level = heading.split(" ")[0]
    nxt = re.compile(rf"^#{{1,{len(level)}}} ", re.M)
    end = nxt.search(DOCS, start + len(heading) + 1)
    return DOCS[start : end.start() if end else len(DOCS)]


KNOWN = {**config.KNOWN_KEYS, **gatesfile.KNOWN_KEYS}


def test_every_key_set_has_a_section() -> None:
    assert set(KNOWN) == set(SECTIONS)


@pytest.mark.parametrize("where", sorted(KNOWN))
def test_every_key_is_documented_in_its_section(where: str) -> None:
    text = _section(SECTIONS[where])
    if where in ("vimesync.toml", "sop/gates.toml"):  # tables: each has a heading or row of its own
        missing = [k for k in KNOWN[where] if f"[{k}]" not in DOCS and f"[[{k}" not in DOCS]
    else:
        missing = [k for k in KNOWN[where] if not re.search(rf"\| `(\[\w+\] )?{k}`", text)]
    assert not missing, f"docs/config.md, {SECTIONS[where]}: undocumented {missing}"


def test_the_loaders_refuse_what_the_docs_do_not_list(tmp_path: Path) -> None:
    """The key sets are the loaders' own: an unknown key is refused naming the known ones."""
    (tmp_path / ".git").mkdir()
    cfg = tmp_path / "vimesync.toml"
    cfg.write_text('[upstream]\nnmae = "x"\n')
    with pytest.raises(ConfigError, match="unknown key 'nmae' in \\[upstream\\]"):
        config.load_config(cfg)
