"""Several engines in one config: every engine checked (or the one ``--engine`` names), labels
from the engine actually checked, and flags that never mix one pin's settings with another's
source. Exact pins: a git rev is a full sha (else refused with the sha to write)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.stack import ENGINE, Stack
from tests.builders.workspaces import plan as check_plan
from vimesync.config import load_config
from vimesync.errors import BadInput, ConfigError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TwoEngines:
    """A downstream checkout naming two engines, each its own repo, series and strip."""

    def __init__(self, tmp: Path) -> None:
        self.a = Stack(tmp / "a")  # patches made with a/ b/ prefixes: -p1
        self.a.add("0001-a.patch", {"eng/util.py": ENGINE["eng/util.py"] + "\n\ndef a():\n    return 1\n"})
        self.b = Stack(tmp / "b")
        self.b.add("0001-b.patch", {"eng/core.py": ENGINE["eng/core.py"] + "\n\ndef b():\n    return 2\n"})
        # Engine B's patch is re-rooted one folder deeper: it only applies with -p2.
        patch = self.b.dir / "0001-b.patch"
        patch.write_text(patch.read_text().replace(" a/", " a/x/").replace(" b/", " b/x/"))
        self.root = tmp / "down"
        (self.root / ".git").mkdir(parents=True)
        for s, name, strip in ((self.a, "sglang", 1), (self.b, "megatron", 2)):
            folder = self.root / "patches" / name
            folder.mkdir(parents=True)
            for f in s.dir.iterdir():
                (folder / f.name).write_bytes(f.read_bytes())
            _write(
                self.root / f"pins/{name}.toml",
                f'[engine]\nname = "{name.upper()}"\nrev = "{s.pin}"\nseries = "../patches/{name}"\n'
                f'strip = {strip}\nsource = "{s.repo.path}"\n',
            )
        self.config = _write(
            self.root / "vimesync.toml",
            '[[engine]]\nname = "sglang"\npin = "pins/sglang.toml"\n'
            '[[engine]]\nname = "megatron"\npin = "pins/megatron.toml"\n',
        )


@pytest.fixture()
def two(tmp_path: Path) -> TwoEngines:
    return TwoEngines(tmp_path)


@pytest.mark.slow
def test_every_engine_is_checked_each_with_its_own_pin(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    code, out, err = run(capsys, "patches", "check", "--config", str(two.config), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["ok"] is True and [e["engine"] for e in doc["engines"]] == ["SGLANG", "MEGATRON"]
    a, b = doc["engines"]
    assert a["source"]["path"] == str(two.a.repo.path) and b["source"]["path"] == str(two.b.repo.path)
    assert a["pin_file"].endswith("pins/sglang.toml") and b["pin_file"].endswith("pins/megatron.toml")
    assert a["exact_pin"] is True and b["exact_pin"] is True
    assert [p["name"] for p in b["patches"]] == ["0001-b.patch"]  # applied with the pin's -p2

    code, out, _ = run(capsys, "patches", "check", "--config", str(two.config))
    assert code == 0
    assert f"SGLANG source: git {two.a.repo.path}" in out and f"MEGATRON source: git {two.b.repo.path}" in out


@pytest.mark.slow
def test_engine_flag_checks_one_and_keeps_the_one_engine_document(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    code, out, err = run(
        capsys, "patches", "check", "--config", str(two.config), "--engine", "megatron", "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert "engines" not in doc and doc["engine"] == "MEGATRON"
    assert doc["source"]["rev"] == two.b.pin
    # the pin's display name selects too, in any case
    code, out, _ = run(
        capsys, "patches", "check", "--config", str(two.config), "--engine", "Sglang", "--json"
    )
    assert code == 0 and json.loads(out)["engine"] == "SGLANG"
    code, _, err = run(capsys, "patches", "check", "--config", str(two.config), "--engine", "vllm")
    assert code == 2 and "no engine named 'vllm'" in err and "sglang, megatron" in err.replace("'", "")


def test_a_flag_with_several_engines_must_say_which(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    code, out, err = run(
        capsys, "patches", "check", "--config", str(two.config), "--source", str(two.b.repo.path)
    )
    assert code == 2 and out == ""
    assert "names 2 engines (sglang, megatron)" in err and "--engine NAME" in err and "--source" in err


@pytest.mark.slow
def test_a_series_flag_picks_the_engine_whose_series_it_is(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    # The reported bug: --source/--series of the other engine were labelled with the first pin
    # and applied with its strip. Now the series names the engine: its label, its -p2.
    series = two.root / "patches/megatron/series"
    code, out, err = run(
        capsys,
        "patches",
        "check",
        "--config",
        str(two.config),
        "--series",
        str(series),
        "--source",
        str(two.b.repo.path),
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["engine"] == "MEGATRON" and doc["ok"] is True


def test_another_series_than_the_only_pin_drops_the_pin_and_says_so(tmp_path: Path, two: TwoEngines) -> None:
    config = _write(two.root / "one.toml", '[engine]\npin = "pins/sglang.toml"\n')
    plan = check_plan(
        load_config(config), series=two.root / "patches/megatron", source=two.b.repo.path, rev=two.b.pin
    )
    (opts,) = plan
    assert opts.engine == "engine" and opts.strip == 1 and opts.pin_file is None  # not SGLANG's
    assert opts.notes and "not used" in opts.notes[0] and "pins/sglang.toml" in opts.notes[0]


def test_the_single_engine_table_still_works(two: TwoEngines) -> None:
    config = _write(two.root / "one.toml", '[engine]\npin = "pins/megatron.toml"\n')
    (opts,) = check_plan(load_config(config))
    assert opts.engine == "MEGATRON" and opts.strip == 2 and opts.rev == two.b.pin


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[engine]]\npin = "pins/sglang.toml"\n', "needs a name"),
        ('[[engine]]\nname = "a\\u001b[31m"\npin = "pins/sglang.toml"\n', "control characters"),
        ('[[engine]]\nname = "a\\u0000"\npin = "pins/sglang.toml"\n', "NUL"),
        ('[[engine]]\nname = "  "\npin = "pins/sglang.toml"\n', "needs a name"),
        ('[[engine]]\nname = "x"\n[[engine]]\nname = "X"\n', "two [[engine]] tables are named 'X'"),
        ('[[engine]]\nname = "x"\nrev = "abc"\n', "unknown key 'rev'"),
        ("engine = 3\n", "[engine] table or [[engine]] tables"),
        ("engine = [1, 2]\n", "[engine] table or [[engine]] tables"),
        ("".join(f'[[engine]]\nname = "e{i}"\n' for i in range(40)), "more than 32"),
        ('[[engine]]\nname = "x"\npin = "../../outside.toml"\n', "must be inside"),
    ],
)
def test_hostile_engine_tables_are_refused_naming_the_file(two: TwoEngines, text: str, needle: str) -> None:
    config = _write(two.root / "bad.toml", text)
    with pytest.raises(ConfigError) as exc:
        load_config(config)
    assert str(config) in str(exc.value) and needle in str(exc.value)


@pytest.mark.parametrize("rev", ["main", "{short}", None])
def test_a_git_pin_without_a_full_rev_is_refused_with_the_sha_to_write(
    capsys: pytest.CaptureFixture[str], two: TwoEngines, rev: str | None
) -> None:
    pin = two.root / "pins/sglang.toml"
    text = pin.read_text().replace(f'rev = "{two.a.pin}"\n', "" if rev is None else f'rev = "{rev}"\n')
    pin.write_text(text.replace("{short}", two.a.pin[:10]))
    head = two.a.repo.head()  # the stack's tip: what HEAD names today
    for args in ((), ("--json",)):
        code, out, err = run(capsys, "patches", "check", "--config", str(two.config), *args)
        assert code == 2, err
        want = two.a.pin if rev == "{short}" else head  # main and HEAD: the tip
        assert str(pin) in err and f'write rev = "{want}"' in err and "not an exact pin" in err
        if args:
            assert json.loads(out)["ok"] is False


@pytest.mark.slow
def test_a_short_rev_flag_is_refused_with_the_sha_to_pass(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    code, _, err = run(
        capsys, "patches", "check", "--config", str(two.config), "--engine", "sglang", "--rev", two.a.pin[:12]
    )
    assert code == 2 and f"--rev: rev '{two.a.pin[:12]}'" in err and f"pass --rev {two.a.pin}" in err


@pytest.mark.slow
def test_several_engines_and_an_engine_flag_in_the_plan(two: TwoEngines) -> None:
    cfg = load_config(two.config)
    assert [o.engine for o in check_plan(cfg)] == ["SGLANG", "MEGATRON"]
    with pytest.raises(BadInput, match="--export"):
        check_plan(cfg, export=two.root / "out")


@pytest.mark.slow
def test_the_report_has_one_table_and_one_validation_line_per_engine(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    skips = ("--skip-gate", "classified", "--skip-gate", "carried", "--skip-gate", "audit")
    skips += ("--skip-gate", "ci", "--skip-gate", "tests")
    code, out, err = run(capsys, "report", "--config", str(two.config), *skips)
    assert code == 0, err  # the patches gate holds for both engines
    assert "SGLANG: 1 patch apply, the tree parses; MEGATRON: 1 patch apply" in out
    assert out.count("## Engine patches") == 1 and out.count("## Validation") == 1
    assert f"The SGLANG source pin is {two.a.pin}." in out
    assert f"The MEGATRON source pin is {two.b.pin}." in out
    assert f"SGLANG: All 1 patch apply sequentially to the exact pin {two.a.pin}" in out
    assert f"MEGATRON: All 1 patch apply sequentially to the exact pin {two.b.pin}" in out

    code, out, _ = run(capsys, "report", "--config", str(two.config), "--format", "json")
    doc = json.loads(out)
    assert [e["engine"] for e in doc["engines"]] == ["SGLANG", "MEGATRON"]
    assert [v["engine"] for v in doc["validations"]] == ["SGLANG", "MEGATRON"]
    assert doc["engine"] == doc["engines"][0]  # the one-engine keys stay, as the first engine

    code, out, _ = run(capsys, "report", "--config", str(two.config), "--engine", "megatron", *skips)
    assert code == 0 and "MEGATRON source pin" in out and "SGLANG" not in out
    code, _, err = run(capsys, "report", "--config", str(two.config), "--rev", two.a.pin)
    assert code == 2 and "--engine NAME" in err


@pytest.mark.slow
def test_the_report_refuses_a_moving_rev(capsys: pytest.CaptureFixture[str], two: TwoEngines) -> None:
    pin = two.root / "pins/megatron.toml"
    pin.write_text(pin.read_text().replace(two.b.pin, two.b.pin[:8]))
    code, _, err = run(capsys, "report", "--config", str(two.config))
    assert code == 2 and f'write rev = "{two.b.pin}"' in err


@pytest.mark.slow
def test_engine_and_another_series_says_which_settings_apply(two: TwoEngines) -> None:
    (opts,) = check_plan(load_config(two.config), engine="megatron", series=two.root / "patches/sglang")
    assert opts.engine == "MEGATRON" and opts.strip == 2
    assert opts.notes and "still apply" in opts.notes[0] and "pins/megatron.toml" in opts.notes[0]


@pytest.mark.slow
def test_lint_strict_with_several_engines_needs_engine_for_a_source(
    capsys: pytest.CaptureFixture[str], two: TwoEngines
) -> None:
    code, _, err = run(
        capsys, "patches", "lint", "--config", str(two.config), "--strict", "--source", str(two.a.repo.path)
    )
    assert code == 2 and "--engine NAME" in err
    code, out, err = run(capsys, "patches", "lint", "--config", str(two.config), "--strict", "--json")
    doc = json.loads(out)
    assert [len(s["findings"]) for s in doc["series"]] == [1, 1]  # H001 each; both apply cleanly
    assert {f["code"] for s in doc["series"] for f in s["findings"]} == {"H001"}


def test_an_engine_flag_that_names_two_engines_is_refused(two: TwoEngines) -> None:
    # A pull request adds an engine whose key is new but whose pin's display name is MEGATRON:
    # the job's --engine megatron (and its --source) must not silently go to that decoy.
    pin = _write(two.root / "pins/decoy.toml", two.root.joinpath("pins/megatron.toml").read_text())
    config = _write(
        two.root / "decoy.toml",
        f'[[engine]]\nname = "decoy"\npin = "{pin.relative_to(two.root)}"\n'
        '[[engine]]\nname = "megatron"\npin = "pins/megatron.toml"\n',
    )
    cfg = load_config(config)
    for flag in ("megatron", "MEGATRON"):
        with pytest.raises(ConfigError, match="names 2 engines") as exc:
            check_plan(cfg, engine=flag)
        assert str(config) in str(exc.value)
    (decoy,) = check_plan(cfg, engine="decoy")
    assert decoy.series == check_plan(load_config(two.config), engine="megatron")[0].series
