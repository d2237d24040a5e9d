"""A carry's budget is set from the job's settings snapshot: each variable raises or lowers its
bound, and a malformed one is an error naming the variable, never its value."""

from __future__ import annotations

import pytest

from vimesync.carry.budget import BYTES, MATCHES, SECONDS, Budget
from vimesync.errors import BadInput
from vimesync.settings import Settings


def test_the_defaults_and_what_the_job_sets() -> None:
    plain = Budget.from_settings(Settings.of({}))
    assert (plain.max_bytes, plain.max_matches, plain.max_seconds) == (BYTES, MATCHES, SECONDS)
    env = {
        "VIMESYNC_CARRY_TRANSLATE_BYTES": "1000",
        "VIMESYNC_CARRY_TRANSLATE_MATCHES": "20",
        "VIMESYNC_CARRY_SECONDS": "2.5",
    }
    set_ = Budget.from_settings(Settings.of(env))
    assert (set_.max_bytes, set_.max_matches, set_.max_seconds) == (1000, 20, 2.5)


@pytest.mark.parametrize("value", ["lots", "0", "-1", "nan", "inf"])
def test_a_malformed_bound_names_the_variable_not_its_value(value: str) -> None:
    with pytest.raises(BadInput) as exc:
        Budget.from_settings(Settings.of({"VIMESYNC_CARRY_TRANSLATE_MATCHES": value}))
    assert "VIMESYNC_CARRY_TRANSLATE_MATCHES" in exc.value.message and value not in exc.value.message
