"""``[ci]`` in vimesync.toml and ``sop/gates.toml``: repository content, so shapes and sizes are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from vimesync.config import load_config
from vimesync.errors import ConfigError
from vimesync.sop.gatesfile import load_gates


def test_ci_table(tmp_path: Path) -> None:
    cfg = tmp_path / "vimesync.toml"
    cfg.write_text('[ci]\nrepo = "vime-org/vime"\nrequired = ["buildkite/vime", "lint"]\n')
    c = load_config(cfg)
    assert c.ci_repo == "vime-org/vime" and c.ci_required == ("buildkite/vime", "lint")


@pytest.mark.parametrize(
    "text",
    [
        "ci = 3\n",
        '[ci]\nrequired = "buildkite/vime"\n',
        "[ci]\nrequired = [1]\n",
        '[ci]\nrequired = ["a\\u001b[2J"]\n',
        "[ci]\nrequired = [" + ", ".join(['"x"'] * 101) + "]\n",
        '[ci]\nrepo = "a/b\\nc"\n',
        "[ci]\nother = 1\n",
    ],
)
def test_bad_ci_tables_name_the_file(tmp_path: Path, text: str) -> None:
    cfg = tmp_path / "vimesync.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    assert str(cfg) in exc.value.message and "\x1b" not in exc.value.message


def test_gates_file_defaults_and_values(tmp_path: Path) -> None:
    assert load_gates(tmp_path).architectures == ("amd64", "arm64")
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").write_text(
        '[off]\nimages = "no images"\n[ci]\nrequired = ["x"]\n[images]\narchitectures = ["amd64"]\n'
    )
    g = load_gates(tmp_path)
    assert (
        g.off == (("images", "no images (sop/gates.toml)"),)
        and g.required == ("x",)
        and g.architectures == ("amd64",)
        and g.evidence == ()
    )
    (tmp_path / "sop/gates.toml").write_text(
        '[evidence]\nrequired = ["CPU regressions", "CPU regressions"]\n'
    )
    assert load_gates(tmp_path).evidence == ("CPU regressions",)


@pytest.mark.parametrize(
    "text, needle",
    [
        ('[off]\nnope = "x"\n', "is no gate"),
        ("[off]\nci = true\n", "reason"),
        ('[off]\nci = "a\\nb"\n', "reason"),
        ('[images]\narchitectures = ["../x"]\n', "architectures"),
        ("[images]\narchitectures = []\n", "at least one"),
        ("[other]\n", "unknown table"),
        ("off = 1\n", "must be a table"),
        ('[evidence]\nrequired = "CPU"\n', "evidence"),
        ('[evidence]\nrequired = ["a\\u001b[2J"]\n', "evidence"),
        ('[evidence]\nrequired = [" padded"]\n', "no suite, run or matrix name"),
        ("[evidence]\nother = 1\n", "known keys"),
    ],
)
def test_bad_gates_files(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_gates(tmp_path)


def test_gates_file_through_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.toml").write_text('[off]\nci = "x"\n')
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").symlink_to(tmp_path / "elsewhere.toml")
    with pytest.raises(ConfigError, match="symbolic link"):
        load_gates(tmp_path)
