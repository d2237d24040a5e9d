"""``vimesync sop promote --ref vllm/vime:latest``: a floating tag moves only when exact-head CI is
green (a GitHub-shaped server on loopback), every architecture has an image at the head (or is
blocked) and the evidence gate holds; the promotion is recorded and the report says where the
tag stands. ``sop record image`` refuses floating tags."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders.cli import run
from tests.builders.fakegithub import TOKEN, FakeGitHub, serve
from tests.builders.headchange import committed_change
from vimesync.demo.build import Demo, build_demo

A = "sha256:" + "a" * 64
B = "sha256:" + "b" * 64
INDEX = "sha256:" + "c" * 64
LATEST = "vllm/vime:latest"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return build_demo(tmp_path_factory.mktemp("demo") / "d")


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(range(1, 2))
    with serve(fake) as url:
        monkeypatch.setenv("VIMESYNC_GITHUB_API", url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("VIMESYNC_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


@pytest.fixture
def demo(built: Demo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Demo]:
    """The demo with ``CPU regressions`` required, committed (a record is refused while
    sop/gates.toml differs from HEAD): its head is that commit."""
    monkeypatch.chdir(built.downstream)
    for name in ("CI", "GITHUB_ACTIONS", "VIMESYNC_UNTRUSTED", "GH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    text = (
        built.downstream / "sop/gates.toml"
    ).read_text() + '\n[evidence]\nrequired = ["CPU regressions"]\n'
    assert f'promote = ["{LATEST}"]' in text  # the demo's own gates.toml names it, as the seed's sync
    with committed_change(built, "sop/gates.toml", text) as configured:
        yield configured
    shutil.rmtree(built.downstream / "sop/records", ignore_errors=True)


def _record_tests(capsys, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>'
    )
    assert run(capsys, "sop", "record", "tests", "--suite", "CPU regressions", "--junit", str(junit))[0] == 0


def _ci(fake: FakeGitHub, sha: str, state: str) -> None:
    fake.statuses[sha] = [{"context": "buildkite/vime", "state": state, "description": "", "target_url": ""}]


def _promote(capsys, *extra: str) -> tuple[int, dict]:
    code, out, _ = run(
        capsys, "sop", "promote", "--ref", LATEST, "--ci-repo", "vime-org/vime", "--json", *extra
    )
    return code, json.loads(out)


@pytest.mark.slow
def test_promotion_is_refused_while_ci_is_pending_and_allowed_once_green(
    demo: Demo, github: FakeGitHub, capsys, tmp_path: Path
) -> None:
    _record_tests(capsys, tmp_path)
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    assert (
        run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", "no approved ARM64 host")[0]
        == 0
    )
    _ci(github, demo.head, "pending")
    code, doc = _promote(capsys)
    assert code == 1 and doc["ok"] is False and doc["promoted"] is False and doc["promotion"] is None
    assert [m.split(":")[0] for m in doc["missing"]] == ["ci", "images"]
    assert doc["missing"][0].startswith("ci: pending at ")
    # CI still running is pending, not failed (issue 29)
    assert doc["missing"][1] == "images: recorded, but exact-head CI is not green (pending)"
    assert doc["gates"][2]["command"] == "vimesync ci --pr N"  # CI moves it now, not another record
    records = next((demo.downstream / "sop/records").iterdir())
    assert "promotions" not in records.read_text()
    code, out, _ = run(capsys, "sop", "promote", "--ref", LATEST, "--ci-repo", "vime-org/vime")
    flat = " ".join(out.split())
    assert code == 1 and f"{LATEST} remains unchanged: promotion refused at {demo.head[:8]}" in flat
    assert "✗ ci pending at" in flat and "✓ tests at" in flat
    code, md, _ = run(capsys, "report", "--baseline", demo.baseline, "--ci-repo", "vime-org/vime")
    assert f"`{LATEST}` remains unchanged." in md

    _ci(github, demo.head, "success")
    code, doc = _promote(capsys)
    assert code == 0 and doc["ok"] and doc["promoted"] and doc["missing"] == []
    p = doc["promotion"]
    assert (p["ref"], p["digest"], p["sha"], p["images"]) == (LATEST, A, demo.head, {"amd64": A})
    assert f'[promotions."{LATEST}"]' in records.read_text() and p["promoted_at"] in records.read_text()
    code, md, _ = run(capsys, "report", "--baseline", demo.baseline, "--ci-repo", "vime-org/vime")
    # No registry was read: the move is recorded, never claimed (issue 29).
    assert f"`{LATEST}` to be moved to `{A}` (recorded, not verified)." in md and "moves to" not in md
    code, out, _ = run(capsys, "report", "--baseline", demo.baseline, "--ci-repo", "vime-org/vime", "--json")
    assert json.loads(out)["images"]["floating"][0]["moves_to"] == A
    # CI turning red later does not rewrite history, but a new promotion is refused.
    _ci(github, demo.head, "failure")
    assert _promote(capsys)[0] == 1


@pytest.mark.slow
def test_several_images_need_the_index_digest_and_every_gate_is_listed(
    demo: Demo, github: FakeGitHub, capsys, tmp_path: Path
) -> None:
    _ci(github, demo.head, "success")
    code, doc = _promote(capsys)
    assert code == 1 and [m.split(":")[0] for m in doc["missing"]] == ["tests", "images"]
    assert "amd64 not recorded; arm64 not recorded" in doc["missing"][1]
    _record_tests(capsys, tmp_path)
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    assert run(capsys, "sop", "record", "image", "--arch", "arm64", "--digest", B)[0] == 0
    code, out, err = run(capsys, "sop", "promote", "--ref", LATEST, "--ci-repo", "vime-org/vime")
    assert code == 2 and "--digest is required: 2 architectures have images (amd64, arm64)" in err
    code, doc = _promote(capsys, "--digest", INDEX)
    assert code == 0 and doc["promotion"]["digest"] == INDEX
    assert doc["promotion"]["images"] == {"amd64": A, "arm64": B}


@pytest.mark.parametrize(
    "ref", ["vllm/vime:latest", "vllm/vime", "localhost:5000/vime", "ghcr.io/vime/vime:stable"]
)
def test_record_image_refuses_a_floating_tag(demo: Demo, capsys, ref: str) -> None:
    gates = demo.downstream / "sop/gates.toml"
    text = gates.read_text().replace("[images]\n", '[images]\nfloating = ["stable"]\n', 1)
    gates.unlink()
    gates.write_text(text)
    code, _, err = run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--ref", ref)
    assert code == 2 and "is a floating tag" in err and f"vimesync sop promote --ref {ref}" in err
    assert not (demo.downstream / "sop/records").exists()
    ok = "localhost:5000/vime:sync-1" if "5000" in ref else "ghcr.io/vime/vime@" + A
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--ref", ok)[0] == 0


@pytest.mark.parametrize(
    "ref, needle",
    [
        ("vllm/vime@" + A, "expected NAME:TAG"),
        ("Vllm/Vime:latest", "expected an image reference"),
        ("vllm/vime:lat\nest", "expected an image reference"),
        ("../x:latest", "expected an image reference"),
        ("x" * 300 + ":latest", "expected an image reference"),
    ],
)
def test_a_bad_promote_ref_is_bad_input(demo: Demo, capsys, ref: str, needle: str) -> None:
    code, _, err = run(capsys, "sop", "promote", "--ref", ref)
    assert code == 2 and needle in err and "Traceback" not in err


@pytest.mark.parametrize(
    "table, needle",
    [
        (f'[promotions."{LATEST}"]\ndigest = "sha256:x"\nsha = "{"a" * 40}"\n', "digest must be sha256"),
        (f'[promotions."{LATEST}"]\ndigest = "{A}"\nsha = "nope"\n', "sha must be a full commit sha"),
        (
            f'[promotions."{LATEST}"]\ndigest = "{A}"\nsha = "{"a" * 40}"\nimages = {{ "a b" = "{A}" }}\n',
            "images must map",
        ),
        ('[promotions."bad\\u001b[2J"]\n', "expected an image reference"),
        *(
            (
                f'[promotions."{LATEST}"]\ndigest = "{A}"\nsha = "{"a" * 40}"\nverified = {v}\n',
                "verified must name",
            )
            for v in ('"ghcr.io/\\u001b[2J"', '"a b"', "true", '"x:99999999"', '"' + "h" * 300 + '"')
        ),
        ("promotions = 3\n", "[promotions] must be a table"),
    ],
)
def test_hostile_promotion_records_are_refused(demo: Demo, capsys, table: str, needle: str) -> None:
    records = demo.downstream / "sop/records"
    records.mkdir(parents=True, exist_ok=True)
    name = json.loads(run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--json")[1])[
        "sync"
    ]
    file = records / f"{name}.toml"
    file.write_text(table + "\n" + file.read_text())  # top-level keys first: TOML's rule
    code, _, err = run(capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci")
    assert code == 2 and needle in err and "\x1b" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "value, needle",
    [
        ('floating = ["ok", "no good"]', "[images] floating must be a list"),
        (
            "floating = " + json.dumps([f"t{i}" for i in range(33)]),
            "[images] floating must be a list of at most 32",
        ),
        ('promote = ["vllm/vime@' + A + '"]', "is no image reference name:tag"),
        ('promote = ["a\\u001b[2J"]', "[images] promote must be a list"),
        ("promote = 1", "[images] promote must be a list"),
    ],
)
def test_hostile_floating_and_promote_lists_are_refused(tmp_path: Path, value: str, needle: str) -> None:
    from vimesync.errors import ConfigError
    from vimesync.sop.gatesfile import load_gates

    (tmp_path / ".git").mkdir()
    (tmp_path / "sop").mkdir()
    (tmp_path / "sop/gates.toml").write_text(f"[images]\n{value}\n")
    with pytest.raises(ConfigError) as exc:
        load_gates(tmp_path)
    assert needle in str(exc.value) and "\x1b" not in str(exc.value)


@pytest.mark.slow
def test_off_counts_as_it_does_for_sop_status(demo: Demo, capsys, tmp_path: Path) -> None:
    # (An untrusted checkout never honours [off]: skip_flags, as for sop status. The demo's
    # upstream lies outside its checkout, which an untrusted run refuses before any gate.)
    _record_tests(capsys, tmp_path)  # before the checkout's gates.toml is edited: on HEAD's tree
    gates = demo.downstream / "sop/gates.toml"
    text = gates.read_text().replace("[off]\n", '[off]\nci = "no CI in this lab"\n', 1)
    gates.unlink()
    gates.write_text(text)
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A)[0] == 0
    code, out, _ = run(capsys, "sop", "promote", "--ref", LATEST, "--json")
    assert code == 1 and json.loads(out)["missing"] == ["images: arm64 not recorded"]
    assert (
        run(capsys, "sop", "record", "image", "--arch", "arm64", "--blocked", "no approved ARM64 host")[0]
        == 0
    )
    code, out, _ = run(capsys, "sop", "promote", "--ref", LATEST, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["promotion"]["digest"] == A and doc["gates"][0]["state"] == "off"


@pytest.mark.parametrize(
    "images, moves",
    [({"amd64": A}, True), ({"amd64": B}, False), ({}, False), ({"amd64": A, "arm64": B}, False)],
)
def test_a_promotion_counts_only_with_the_images_recorded_at_the_head(
    demo: Demo, capsys, images: dict[str, str], moves: bool
) -> None:
    """A hand-written promotion "at this head" whose images are not the ones recorded for it
    (another digest, none, one more) is not repeated by the report as a move."""
    doc = json.loads(run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", A, "--json")[1])
    file = demo.downstream / "sop/records" / f"{doc['sync']}.toml"
    inline = ", ".join(f'{k} = "{v}"' for k, v in images.items())
    table = f'[promotions."{LATEST}"]\ndigest = "{INDEX}"\nsha = "{doc["sha"]}"\nimages = {{ {inline} }}\n'
    file.write_text(file.read_text() + "\n" + table)
    code, md, err = run(capsys, "report", "--baseline", demo.baseline, "--skip-gate", "ci")
    assert "Traceback" not in err
    line = f"`{LATEST}` to be moved to `{INDEX}` (recorded, not verified)."
    line = line if moves else f"`{LATEST}` remains unchanged."
    assert line in md, md
