"""GitHub workflow commands: escaped as GitHub's toolkit does, so nothing a file name or message
holds can end a command, add a property or start another one."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from vimesync.outputs.annotations import command, commands, escape_data, escape_property, stop_commands
from vimesync.outputs.model import Annotation

# The runner's reading of one line (actions/runner ActionCommand.TryParseV2), reduced to what
# the tests need: "::name props::data"; props split at "," then at the first "=".
_COMMAND = re.compile(r"^::([A-Za-z-]+)(?: ([^:]*))?::(.*)$")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    m = _COMMAND.match(line.lstrip())
    assert m, line
    props = {}
    for pair in (m[2] or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            props[key] = unquote(value)
    return m[1], props, unquote(m[3])


HOSTILE = [
    "patches/a,line=1,title=x::forged",
    "p:q\n::warning::second command",
    "100% sure\r\n::add-mask::x",
    "%0A::error::already escaped",
    "esc\x1b[31mred\u202e",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_stays_inside_its_own_command(text: str) -> None:
    line = command(Annotation("error", text, text, file=text, line=7))
    assert "\n" not in line and "\r" not in line
    assert ":" not in line.split("::")[1]  # the properties end where the command says (data may hold "::")
    name, props, data = parse(line)
    assert name == "error" and set(props) == {"file", "line", "title"} and props["line"] == "7"
    assert "\x1b" not in props["file"] + data and "\u202e" not in data
    # Read back, the message is the text (controls shown as escapes, newlines kept as newlines).
    assert data.split("\n")[0] == text.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e").split("\n")[
        0
    ].replace("\r", "\\r")


def test_escaping_is_githubs() -> None:
    assert escape_data("50%\r\nok: a,b") == "50%25\\r%0Aok: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25\\n"


def test_plain_annotation_and_the_cap() -> None:
    a = Annotation("error", "t", "m", file="f.py", line=3, col=2)
    assert command(a) == "::error file=f.py,line=3,col=2,title=t::m"
    assert command(Annotation("notice", "", "run-level")) == "::notice::run-level"
    lines = commands([a] * 60, limit=50)
    assert len(lines) == 51 and lines[-1].startswith("::notice title=vimesync::10 more not annotated")


def test_stop_commands_token_is_fresh() -> None:
    (stop1, resume1), (stop2, _) = stop_commands(), stop_commands()
    assert stop1 != stop2 and resume1 == "::" + stop1.split("::")[2] + "::"
    assert re.fullmatch(r"::stop-commands::[0-9a-f]{32}", stop1)
