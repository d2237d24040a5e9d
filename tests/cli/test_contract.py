"""The CLI contract every command follows (docs/ARCHITECTURE.md, "Adding a command").

Registration in one place, one declaration per option, ``--format text|json`` and ``--json`` on
every command, ``-h``, shell completion, options that always apply, and start-up that does not
pay for typer or rich before it needs them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders.cli import run_cli
from tests.builders.gitrepo import Repo
from vimesync.cli.app import build_app, main

ROOT = Path(__file__).resolve().parents[2]


def _leaves():  # type: ignore[no-untyped-def]
    """Every command as click sees it: (\"audit review\", command), ... — groups that run included."""
    import typer.main

    root = typer.main.get_command(build_app())
    found = []

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        subs = getattr(cmd, "commands", None)
        if subs is None or getattr(cmd, "invoke_without_command", False):
            if path:
                found.append((" ".join(path), cmd))
        for name, sub in (subs or {}).items():
            walk(sub, [*path, name])

    walk(root, [])
    return found


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_every_command_is_in_the_one_table_and_no_command_module_imports_it_back() -> None:
    from vimesync.cli.tree import TREE

    names = {name for name, _ in _leaves()}
    # a new command joins the table (cli/tree.py TREE), and every test below then covers it
    assert names == {n.path for n in TREE if not n.is_group or n.function}
    assert names >= {"walk", "patches check", "patches lint", "patches describe", "audit", "audit review"}
    for module in (ROOT / "vimesync" / "cli").glob("*.py"):
        if module.name not in ("app.py", "tree.py"):
            text = module.read_text()
            assert "vimesync.cli.app" not in text and "vimesync.cli.tree" not in text, module.name


@pytest.mark.parametrize(
    "args, inner",
    [
        (["sop", "record", "image", "--arch", "x"], ("sop", "sop record")),
        (["sop", "record"], ("sop",)),
        (["sop", "-h"], ()),
        (["audit", "review", "p"], ("audit",)),
        (["audit", "--json"], ()),
        (["patches", "check"], ("patches",)),
        (["pin", "bogus"], ()),
        (["walk", "--help"], ()),
    ],
)
def test_the_groups_a_run_names_a_command_inside(args: list[str], inner: tuple[str, ...]) -> None:
    from vimesync.cli.tree import inner_groups

    assert inner_groups(args) == inner
    assert inner_groups(args, completing=True) == ()


def test_every_command_takes_format_and_json() -> None:
    for name, cmd in _leaves():
        opts = {o for p in cmd.params for o in p.opts}
        assert {"--format", "--json", "-h", "--help"} <= opts | {"-h", "--help"}, name
        fmt = next(p for p in cmd.params if "--format" in p.opts)
        # a choice typer checks (completed from its values; test_format_is_checked... refuses others)
        choices = {
            c.value for c in fmt.shell_complete(cmd.make_context(name, [], resilient_parsing=True), "")
        }
        assert "json" in choices and "text" in choices, name


def test_a_flag_takes_one_kind_of_value_everywhere() -> None:
    """``--pr N`` in one command and ``--pr NAME`` in another would be a contradiction."""
    seen: dict[str, tuple[str, str]] = {}
    for name, cmd in _leaves():
        for p in cmd.params:
            for opt in p.opts:
                kind = (str(p.metavar), "flag" if getattr(p, "is_flag", False) else "value")
                if opt == "--format":
                    continue  # report and demo print Markdown as their text form
                first = seen.setdefault(opt, (name, *kind))
                assert first[1:] == kind, f"{name} {opt} {kind} vs {first}"
    assert len(seen) > 20


# How a help text speaks of a command: "carry takes", "; init also", "(report: ...", "for audit, ...",
# "for a record it ..." (not "for patches": a command's name is often a noun too).
_OTHER = re.compile(
    r"\bfor (?:an? )?(?P<a>{names})(?:,| it\b)"
    r"|(?:^|[(;] ?)(?P<b>{names})(?::| also\b| takes\b| judges\b| enables\b)"
)


def test_no_help_text_describes_another_command() -> None:
    """One flag may mean more in one command than in another: that command then has its own alias
    and help (tests/cli, vimesync/cli/options/), and a help text never says what another
    command does with the flag (``ci --pr`` once said "carry takes only these upstream PRs")."""
    leaves = list(_leaves())
    names = sorted({word for name, _ in leaves for word in name.split()}, key=len, reverse=True)
    pattern = re.compile(_OTHER.pattern.format(names="|".join(names)))
    assert pattern.search("carry takes only these") and pattern.search("for a record it must")
    for name, cmd in leaves:
        own = set(name.split())
        for p in cmd.params:
            for m in pattern.finditer(getattr(p, "help", None) or ""):
                assert (m["a"] or m["b"]) in own, f"{name} {p.opts[0]}: {p.help!r} describes another command"


@pytest.mark.parametrize(
    "command",
    [
        "",
        "walk",
        "patches",
        "patches check",
        "patches lint",
        "patches describe",
        "audit",
        "audit review",
        "report",
        "demo",
    ],
)
def test_dash_h_is_help_and_help_has_no_type_noise(capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, out, err = run(capsys, *command.split(), "-h")
    assert code == 0 and err == ""
    assert out.startswith(f"Usage: vimesync {command}".rstrip())
    for noise in ("<bool>", "<str>", "<path>", "<int", "TEXT", "BOOLEAN"):
        assert noise not in out, (command, noise)


def test_completion_is_available(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-h")
    assert code == 0 and "--install-completion SHELL" in out and "--show-completion SHELL" in out
    # The shell named wins, whatever runs the tests: typer's flags guessed it from the parent
    # processes (zsh printed bash's script under bash, and nothing worked without a shell parent).
    code, out, _ = run(capsys, "--show-completion", "bash")
    assert code == 0 and "_VIMESYNC_COMPLETE" in out and "complete -o default -F" in out
    code, out, _ = run(capsys, "--show-completion", "zsh")
    assert code == 0 and out.startswith("#compdef vimesync")
    code, out, err = run(capsys, "--show-completion", "csh")
    assert code == 2 and out == "" and "'csh' is not one of 'bash', 'zsh'" in err
    code, _, err = run(capsys, "--show-completion")
    assert code == 2 and "requires an argument" in err


def test_completion_installs_for_the_shell_named(tmp_path: Path) -> None:
    # A process without a shell among its parents (setsid, no SHELL), as under CI or cron.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-m", "vimesync", "--install-completion", "bash"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "_VIMESYNC_COMPLETE" in (tmp_path / ".bash_completions" / "vimesync.sh").read_text()
    assert ".bash_completions/vimesync.sh" in (tmp_path / ".bashrc").read_text()


def test_format_is_checked_and_json_cannot_contradict_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "walk", "--format", "yaml")
    assert code == 2 and out == "" and "'yaml' is not one of 'text', 'json'" in err
    code, out, err = run(capsys, "walk", "--json", "--format", "text")
    assert code == 2 and "--json contradicts --format text" in err
    assert json.loads(out) == {
        "kind": "error",
        "ok": False,
        "error": err.split("error: ")[1].strip(),
        "exit_code": 2,
    }
    code, out, err = run(capsys, "report", "--format", "text", "--json")
    assert code == 2 and "--json contradicts --format text" in err


@pytest.fixture()
def upstream(tmp_path: Path) -> Path:
    up = Repo(tmp_path / "up")
    up.commit("first (#1)", {"a.py": "a = 1\n"})
    up.commit("second (#2)", {"a.py": "a = 2\n"})
    return up.path


def test_json_and_format_json_print_the_same(capsys: pytest.CaptureFixture[str], upstream: Path) -> None:
    common = ["walk", "--upstream", str(upstream), "--range", "HEAD"]
    docs = []
    for flags in (["--json"], ["--format", "json"], ["--format=json"], ["--json", "--format", "JSON"]):
        code, out, _ = run(capsys, *common, *flags)
        assert code == 0
        docs.append(json.loads(out))
    assert docs[0]["totals"]["prs"] == 2 and all(d == docs[0] for d in docs)
    code, out, _ = run(capsys, *common, "--format", "text")
    assert code == 0 and "2 PRs: 2 applicable" in out


@pytest.fixture()
def synced(tmp_path: Path) -> tuple[Path, Path]:
    up = Repo(tmp_path / "up")
    up.commit("upstream", {"slime/a.py": "a = 2\n"})
    down = Repo(tmp_path / "down")
    down.commit("baseline", {"vime/a.py": "a = 1\n"})
    down.commit("sync", {"vime/a.py": "a = 3\n"})
    return up.path, down.path


@pytest.mark.parametrize("before", [["--sync", "s"], ["--json"], ["--baseline", "HEAD~1"], ["--map", "x=y"]])
def test_audit_options_before_review_are_refused(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path], before: list[str]
) -> None:
    """`vimesync audit --sync X review ...` used to drop --sync silently."""
    _, down = synced
    args = ["audit", *before, "review", "vime/a.py", "--by", "al", "--downstream", str(down), "--sync", "t"]
    code, out, err = run(capsys, *args)
    assert code == 2 and "Traceback" not in err
    assert f"error: {before[0]} before 'review' would not apply to it" in err
    assert not (down / "sop").exists()
    if before == ["--json"]:
        assert json.loads(out)["exit_code"] == 2


def test_review_refuses_ledger_naming_options_it_would_not_use(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path]
) -> None:
    up, down = synced
    args = ["audit", "review", "vime/a.py", "--by", "al", "--downstream", str(down), "--sync", "s"]
    code, _, err = run(capsys, *args, "--upstream", str(up), "--upstream-tip", "HEAD")
    assert code == 2 and "--upstream, --upstream-tip only name the ledger, which --sync already names" in err
    assert not (down / "sop").exists()


@pytest.mark.slow
def test_audit_and_audit_review_each_apply_their_options(
    capsys: pytest.CaptureFixture[str], synced: tuple[Path, Path]
) -> None:
    up, down = synced
    check = ["audit", "--downstream", str(down), "--upstream", str(up), "--baseline", "HEAD~1"]
    check += ["--map", "slime/=vime/", "--sync", "s"]
    code, out, _ = run(capsys, *check, "--json")
    assert code == 1 and json.loads(out)["sync"] == "s"
    # review names the ledger from the upstream options when no --sync is given
    review = ["audit", "review", "vime/a.py", "--by", "al", "--downstream", str(down), "--baseline", "HEAD~1"]
    upstream = Repo(up)
    base = upstream.head()[:8]
    tip = upstream.commit("later", {"slime/b.py": "b = 1\n"})[:8]
    code, out, _ = run(
        capsys, *review, "--upstream", str(up), "--upstream-base", "HEAD~1", "--format", "json"
    )
    doc = json.loads(out)
    assert (
        code == 0 and doc["sync"] == f"{base}..{tip}" and doc["ledger"] == f"sop/reviews/{base}..{tip}.toml"
    )
    assert [r["path"] for r in doc["reviews"]] == ["vime/a.py"]
    code, out, _ = run(capsys, *review, "--sync", "s")
    assert code == 0 and "recorded 1 review by al in sop/reviews/s.toml" in out
    code, out, _ = run(capsys, *check)
    assert code == 0 and "OK: every changed path" in out


def _modules_after(*args: str) -> tuple[str, set[str]]:
    """``vimesync ARGS`` in a fresh interpreter: its stdout, and every module it had loaded."""
    code = (
        "import sys\nfrom vimesync.cli.app import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return proc.stdout, set(proc.stderr.split())


def _packages(modules: set[str], *tops: str) -> set[str]:
    return {m for m in modules if m.split(".")[0] in tops}


def test_version_imports_neither_typer_nor_rich() -> None:
    assert _packages(_modules_after("--version")[1], "typer", "rich") == set()
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("vimesync ")


def test_help_does_not_import_rich() -> None:
    loaded = _packages(_modules_after("walk", "--help")[1], "typer", "rich")
    assert "typer" in loaded and not any(m.split(".")[0] == "rich" for m in loaded)


def test_a_run_with_options_imports_no_pydantic(upstream: Path) -> None:
    """typer below 0.29 (pyproject.toml; README, "Dependencies"): from 0.29 every option value
    goes through a pydantic TypeAdapter, ~90 ms of a walk's start-up."""
    import typer
    from packaging.version import Version

    if Version(typer.__version__) >= Version("0.29"):
        pytest.skip(f"typer {typer.__version__} is outside the declared range (reinstall: pip install -e .)")
    out, loaded = _modules_after("walk", "--upstream", str(upstream), "--range", "HEAD", "--json")
    assert json.loads(out)["ok"] and _packages(loaded, "pydantic") == set()


# What a walk must not load (bench/bench_startup.py: a walk of a whole upstream history is run
# often, and every import is start-up): the engine check, the report, GitHub, the gates, and the
# C libraries only a blob hash or a trusted tool run needs.
NOT_IN_A_WALK = (
    "vimesync.check.model",
    "vimesync.report",
    "vimesync.github",
    "vimesync.sop",
    "vimesync.audit",
)
NOT_IN_A_WALK_C = ("ctypes", "_hashlib", "pydantic")


def test_a_walk_loads_only_what_a_walk_needs(upstream: Path) -> None:
    out, loaded = _modules_after("walk", "--upstream", str(upstream), "--range", "HEAD", "--json")
    assert json.loads(out)["ok"]
    assert "vimesync.upstream.walk" in loaded  # the walk did run in this process
    wrong = [m for m in loaded if m.startswith(NOT_IN_A_WALK) or m.split(".")[0] in NOT_IN_A_WALK_C]
    assert not wrong, wrong


# What a patch-stack check must not load (bench/bench_check.py: the warm check is mostly
# start-up): the upstream walk, GNU patch's rules when git's are asked for, the mail decoder.
NOT_IN_A_CHECK = (
    "vimesync.upstream",
    "vimesync.patches.gnuapply",
    "vimesync.report",
    "vimesync.sop",
    "email",
)


def test_a_check_loads_only_what_a_check_needs(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "p.patch").write_text("--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    (tmp_path / "series").write_text("p.patch\n")
    args = ("patches", "check", "--source", str(tree), "--series", str(tmp_path / "series"), "--json")
    out, loaded = _modules_after(*args)
    assert json.loads(out)["ok"] and "vimesync.pycheck.scan" in loaded  # the check did run here
    wrong = [m for m in loaded if m.startswith(NOT_IN_A_CHECK)]
    assert not wrong, wrong


@pytest.mark.parametrize(
    "args",
    [
        ["walk", "--help"],
        ["walk", "--bogus"],
        ["walk", "--format", "yaml"],
        ["patches"],
        ["patches", "bogus"],
        ["patches", "check", "-h"],
        ["patches", "check", "--bogus"],
        ["pin", "bump", "-h"],
        ["sop", "record", "image", "-h"],
        ["sop", "record", "image", "--bogus"],
        ["audit", "review", "-h"],
        ["audit", "--bogus"],
        ["report", "-h"],
        ["demo", "--json", "--format", "markdown"],
    ],
)
def test_a_run_that_names_its_command_builds_only_that_command_and_says_the_same(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    from vimesync.cli import tree

    assert tree.only_command(args) == args[0]
    alone = run(capsys, *args)
    monkeypatch.setattr(tree, "only_command", lambda args, **kw: None)
    monkeypatch.setattr(tree, "inner_groups", lambda args, **kw: ())  # every group keeps its --help
    assert run(capsys, *args) == alone


def test_the_whole_tree_is_built_for_anything_else(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer.main

    from vimesync.cli.tree import COMMANDS, only_command

    assert only_command(["--json", "walk"]) is None and only_command(["--version", "walk"]) is None
    assert only_command(["walk"], completing=True) is None  # $_VIMESYNC_COMPLETE: a shell completes
    assert set(typer.main.get_command(build_app()).commands) == set(COMMANDS)  # type: ignore[attr-defined]
    assert set(typer.main.get_command(build_app("report")).commands) == {"report"}  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", [[], ["-h"], ["--help"]])
def test_the_root_help_comes_from_an_outline_and_says_the_same(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """``vimesync``, ``-h`` and ``--help`` build no command's options, yet print what the whole
    tree prints: every command with its one-line help, in the same order."""
    import typer.main

    from vimesync.cli import tree

    assert tree.only_command(args) == ""
    outline = typer.main.get_command(build_app(""))
    assert list(outline.commands) == list(typer.main.get_command(build_app()).commands)  # type: ignore[attr-defined]
    alone = run(capsys, *args)
    assert "carry" in alone[1] + alone[2] and "sop" in alone[1] + alone[2]  # no args: help on stderr
    monkeypatch.setattr(tree, "only_command", lambda args, **kw: None)
    assert run(capsys, *args) == alone
