"""The flag groups and a command's own options as groups (cli/groups.py, cli/ownoptions.py): each flag
names an alias of the options package, and a group that builds a request builds it by keyword from
exactly the flags it has, so a command that offers every flag cannot miss a field."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import vimesync.cli.options as options
from vimesync.cli import groups, ownoptions
from vimesync.cli.groups import REQUIRED, Group, expand
from vimesync.errors import BadInput

ALL = {
    name: value
    for module in (groups, ownoptions)
    for name, value in vars(module).items()
    if isinstance(value, Group)
}


def test_every_flag_names_an_alias() -> None:
    assert {"SYNC", "ENGINE", "CI", "OUTPUT", "INIT", "CARRY", "DESCRIBE", "IMAGE", "RUN"} <= set(ALL)
    for name, group in ALL.items():
        for flag, spec in group.flags.items():
            assert spec.alias in options._MODULE_OF, f"{name}.{flag}: {spec.alias}"


@pytest.mark.parametrize("name", ["INIT", "CARRY", "DESCRIBE", "IMAGE", "RUN"])
def test_a_request_group_builds_its_request_from_its_defaults(name: str) -> None:
    group = ALL[name]
    values = {flag: ("x" if spec.default is REQUIRED else spec.default) for flag, spec in group.flags.items()}
    request = group.make(**values)
    assert dataclasses.is_dataclass(request)
    assert set(group.flags) <= {f.name for f in dataclasses.fields(request)}


def test_a_command_offers_a_whole_group_and_a_required_flag_has_no_default() -> None:
    from vimesync.cli.sop import record_image

    params = inspect.signature(expand(record_image)).parameters
    flat = [p for p in params if p.startswith("request_")]
    assert flat == [f"request_{flag}" for flag in ownoptions.IMAGE.flags]
    assert params["request_arch"].default is inspect.Parameter.empty
    assert params["request_digest"].default is None


def test_one_mode_at_most() -> None:
    from vimesync.app.carry import CarryMode

    none = dict.fromkeys(ownoptions.CARRY_MODE.flags, False)
    assert ownoptions.CARRY_MODE.make(**none) is CarryMode.START
    assert ownoptions.CARRY_MODE.make(**{**none, "skip": True}) is CarryMode.SKIP
    with pytest.raises(BadInput, match="--continue and --abort: give one of them"):
        ownoptions.SYNC_MODE.make(continue_=True, abort=True, status=False)
