"""The README's examples run (issue 17, item 14): its ``--rev e9757321`` example was refused, since
a rev must be a full sha. Every ``vimesync`` line of the "Using it" block is checked: each flag
exists for its command, each ``--rev`` is a full sha, and every example that needs no network, no
token and no file we do not have runs against the demo downstream without a usage error."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.builders.cli import run
from vimesync.demo.build import Demo, build_demo

pytestmark = pytest.mark.slow  # one command per example on the demo's real repositories

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
# Examples that need what a test does not have: GitHub (a token, a PR), a wheel, a newer engine
# tag, a registry (tests/sop/test_registry_verify.py runs --verify against the real one).
NOT_RUN = ("--publish", " ci ", " bot ", "vllm-0.33.0.whl", "v0.33.0", "--verify", "figures.json")
# ...or a carry in progress (they are exit 2 without one, as they should be).
NOT_RUN += ("--continue", "--skip", "--abort")
README_REV = "e9757321527ca1ecd514c07c1418dd2c53da3d19"  # the real vLLM pin the README names


def _examples() -> list[str]:
    block = README.split("## Using it", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    out = []
    for line in block.splitlines():
        line = re.split(r"\s+#\s", line)[0].strip()
        if not line.startswith("vimesync "):
            continue
        if " | " in line:  # "carry --continue | --skip | ...": one example each
            head, *alts = line.split(" | ")
            base = head.rsplit(" ", 1)[0]
            out += [head] + [f"{base} {alt}" for alt in alts]
        else:
            out.append(line)
    return out


EXAMPLES = _examples()


def test_the_block_has_the_examples() -> None:
    assert len(EXAMPLES) >= 15 and any("--rev" in e for e in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_flag_exists_and_every_rev_is_a_full_sha(example: str) -> None:
    import typer.main

    from vimesync.cli.app import build_app

    words = shlex.split(example.replace("<", "'<").replace(">", ">'"))[1:]
    command = typer.main.get_command(build_app())
    while words and hasattr(command, "commands") and words[0] in command.commands:  # type: ignore[attr-defined]
        command = command.commands[words.pop(0)]  # type: ignore[attr-defined]
    known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    ours = words[: words.index("--")] if "--" in words else words  # after "--": the job's argv
    flags = [w.split("=", 1)[0] for w in ours if w.startswith("--")]
    assert set(flags) <= known, f"{example}: unknown {sorted(set(flags) - known)}"
    for rev in re.findall(r"--rev (\S+)", example):
        assert re.fullmatch(r"[0-9a-f]{40}", rev), f"{example}: --rev must be a full sha"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


def _on_demo(example: str, demo: Demo) -> list[str]:
    text = example.replace("<pre-sync commit>", demo.baseline).replace(
        "sha256:<64 hex>", "sha256:" + "1" * 64
    )
    words = shlex.split(text)[1:]
    subst = {
        "4c193f1f..8c17b676": f"{demo.base[:12]}..{demo.tip[:12]}",
        "../vllm.git": str(demo.engine),
        "vime/rollout": "vime",
    }
    return [demo.engine_rev if w == README_REV else subst.get(w, w) for w in words]


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not any(n in f" {e} " for n in NOT_RUN)])
def test_the_example_runs_on_the_demo(
    example: str,
    demo: Demo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(demo.downstream)
    args = _on_demo(example, demo)
    if "--output" in args:
        args[args.index("--output") + 1] = str(tmp_path / "sync.md")
    if "report.xml" in args:  # a suite's JUnit file, as pytest --junitxml writes it
        junit = tmp_path / "report.xml"
        junit.write_text(
            '<testsuites><testsuite name="s" tests="1"><testcase name="t"/></testsuite></testsuites>'
        )
        args[args.index("report.xml")] = str(junit)
    code, out, err = run(capsys, *args)
    assert code in (0, 1), f"{example}: exit {code}: {err}"
    assert "Traceback" not in err
