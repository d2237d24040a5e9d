"""Shell completion in a real bash (issue 17, item 15): after ``--install-completion bash`` every
TAB printed "Shell bash not supported."; commands, options and patch names complete."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vimesync.demo.build import Demo, build_demo

pytestmark = [
    pytest.mark.slow,  # a bash and a vimesync process per TAB
    pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash"),
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


def _complete(words: list[str], cwd: Path, tmp_path: Path) -> list[str]:
    """What bash offers for ``words`` (the last one being completed), through the script
    ``vimesync --show-completion bash`` prints, as a user's shell runs it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "vimesync"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vimesync "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("_VIMESYNC_COMPLETE", None)
    script = subprocess.run(
        ["vimesync", "--show-completion", "bash"], capture_output=True, text=True, env=env, check=True
    ).stdout
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        '_vimesync_completion vimesync\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    assert "not supported" not in out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if line]


def test_commands_options_and_patch_names_complete(demo: Demo, tmp_path: Path) -> None:
    here = demo.downstream
    assert _complete(["vimesync", "pa"], here, tmp_path) == ["patches"]
    assert set(_complete(["vimesync", "patches", ""], here, tmp_path)) >= {"check", "lint", "describe"}
    assert "--range" in _complete(["vimesync", "walk", "--ra"], here, tmp_path)
    names = _complete(["vimesync", "patches", "describe", "vllm-s"], here, tmp_path)
    assert names == ["vllm-score-centering.patch"]
    assert _complete(["vimesync", "patches", "describe", "nope"], here, tmp_path) == []
