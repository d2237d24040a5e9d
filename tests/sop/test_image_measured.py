"""The image a job ran in, measured (issue 31): what the container declares (podman's
``/run/.containerenv``, under a root the test points elsewhere) or the job's setup
(``VIMESYNC_IMAGE``), read bounded, never through a symlink, nothing of it echoed; stored in the
run's measured part, compared with the images ``sop record image`` recorded at the head, and
rendered in the Validation line."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.builders.cli import run
from vimesync.demo.build import Demo
from vimesync.errors import ConfigError
from vimesync.sop import imagefacts
from vimesync.sop.imagefacts import IMAGE_ENV, ImageFacts, image_facts
from vimesync.sop.results import load_results

D1 = "sha256:" + "ab" * 32
D2 = "sha256:" + "cd" * 32
ID = "ef" * 32
REF = f"ghcr.io/acme/slime:v7@{D1}"


def _containerenv(root: Path, data: bytes) -> Path:
    (root / "run").mkdir(parents=True, exist_ok=True)
    path = root / "run/.containerenv"
    path.write_bytes(data)
    return path


def _podman(image: str, imageid: str = ID) -> bytes:
    return (
        f'engine="podman-4.9.3"\nname="job"\nid="0123"\nimage="{image}"\nimageid="{imageid}"\nrootless=1\n'
    ).encode()


# --- reading what is declared -----------------------------------------------------------------


def test_nothing_declared_outside_a_container(tmp_path: Path) -> None:
    assert image_facts(None, root=tmp_path) == (None, ())
    _containerenv(tmp_path, b'engine="podman-4.9.3"\n')  # a container that names no image
    assert image_facts(None, root=tmp_path) == (None, ())


def test_podman_declares_the_image_and_its_id(tmp_path: Path) -> None:
    _containerenv(tmp_path, _podman(REF))
    facts, notes = image_facts(None, root=tmp_path)
    assert notes == ()
    assert facts == ImageFacts(ref=REF, digest=D1, id=f"sha256:{ID}", source="/run/.containerenv")
    _containerenv(tmp_path, _podman("docker.io/library/fedora:40"))  # run by tag: an id, no digest
    facts, _ = image_facts(None, root=tmp_path)
    assert facts is not None and facts.digest == "" and facts.id == f"sha256:{ID}"


def test_the_environment_declares_a_reference_with_a_digest(tmp_path: Path) -> None:
    _containerenv(tmp_path, _podman("docker.io/library/fedora:40"))
    facts, notes = image_facts(f"registry.example:5000/lab/img@{D2}", root=tmp_path)
    assert notes == () and facts is not None
    assert (facts.digest, facts.source, facts.id) == (D2, IMAGE_ENV, "")
    # a tag names no image for sure: not a measured digest; the container's word is taken
    facts, notes = image_facts("ghcr.io/acme/slime:v7", root=tmp_path)
    assert facts is not None and facts.source == "/run/.containerenv"
    assert notes == (
        f"{IMAGE_ENV} is not an image reference with a digest (REGISTRY/NAME@sha256:...): not recorded",
    )


HOSTILE_VALUES = [
    f"ghcr.io/a/b@sha256:{'ab' * 31}",  # a digest one byte short
    f"ghcr.io/a/b@sha256:{'AB' * 32}",  # upper case
    f"ghcr.io/a/`b`@{D1}",  # Markdown
    f"ghcr.io/a/b@{D1}\n- [x](https://evil.example)",  # a second line
    f"ghcr.io/a/b@{D1} <!-- vimesync -->",
    "ghcr.io/a/\x1b[31mb@" + D1,
    "x" * 300 + "@" + D1,
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_a_hostile_declaration_records_nothing_and_echoes_nothing(tmp_path: Path, value: str) -> None:
    facts, notes = image_facts(value, root=tmp_path)
    assert facts is None and len(notes) == 1 and "evil" not in notes[0] and "`" not in notes[0]
    _containerenv(tmp_path, f'image="{value}"\nimageid="{ID}"\n'.encode())
    facts, notes = image_facts(None, root=tmp_path)
    # (a value with a newline is cut there: what is left is no reference either)
    assert facts is None and len(notes) == 1, notes
    assert notes[0] == "/run/.containerenv: its image is not an image reference; no image recorded"


def test_a_malformed_image_id_records_nothing(tmp_path: Path) -> None:
    _containerenv(tmp_path, _podman("docker.io/library/fedora:40", imageid="sha256:xyz"))
    assert image_facts(None, root=tmp_path) == (
        None,
        ("/run/.containerenv: its imageid is not a sha256; no image recorded",),
    )


def test_a_file_that_is_not_utf8_records_nothing(tmp_path: Path) -> None:
    _containerenv(tmp_path, _podman(REF) + b"\xff\xfe\x00")
    assert image_facts(None, root=tmp_path) == (None, ("/run/.containerenv: not UTF-8; no image recorded",))


NOT_READ = "/run/.containerenv: not read (a symlink, not a regular file, or over 64 KiB); no image recorded"


def test_a_huge_file_is_not_read(tmp_path: Path) -> None:
    path = _containerenv(tmp_path, _podman(REF))
    with open(path, "r+b") as fh:
        fh.truncate(1 << 30)  # a gigabyte (sparse): refused by its size, not read
    started = time.monotonic()
    assert image_facts(None, root=tmp_path) == (None, (NOT_READ,))
    assert time.monotonic() - started < 1


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "containerenv").write_bytes(_podman(REF))
    (tmp_path / "run").mkdir()
    (tmp_path / "run/.containerenv").symlink_to(elsewhere / "containerenv")
    assert image_facts(None, root=tmp_path) == (None, (NOT_READ,))
    other = tmp_path / "other"
    other.mkdir()
    (elsewhere / "run").mkdir()
    (elsewhere / "run/.containerenv").write_bytes(_podman(REF))
    (other / "run").symlink_to(elsewhere / "run")  # a symlinked folder on the way
    assert image_facts(None, root=other) == (None, (NOT_READ,))


def test_a_fifo_is_not_opened(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    os.mkfifo(tmp_path / "run/.containerenv")
    got: list[object] = []
    worker = threading.Thread(target=lambda: got.append(image_facts(None, root=tmp_path)), daemon=True)
    worker.start()
    worker.join(10)
    assert got == [(None, (NOT_READ,))]


# --- recorded and rendered --------------------------------------------------------------------

RECORD = ["sop", "record", "run", "--name", "in image", "--"]


def test_a_run_in_a_recorded_image_says_so_in_validation(
    demo: Demo, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imagefacts, "ROOT", tmp_path)
    _containerenv(tmp_path, _podman(REF))
    assert run(capsys, "sop", "record", "image", "--arch", "amd64", "--digest", D1)[0] == 0
    code, out, err = run(capsys, *RECORD, "true")
    assert code == 0, err
    said = ", as /run/.containerenv declares it, the recorded amd64 image"
    assert "in image ghcr.io/acme/slime:v7@sha256:abababab" + said in out
    (rec,) = _runs(demo)
    assert rec.measured is not None and rec.measured.image is not None
    assert rec.measured.image.facts.digest == D1 and rec.measured.image.arch == "amd64"
    md = run(capsys, "report", "--baseline", demo.baseline)[1]
    assert "in image `ghcr.io/acme/slime:v7@sha256:abababab`" + said in md
    # another digest, declared by the job's setup: measured, and not one the records hold
    monkeypatch.setenv(IMAGE_ENV, f"ghcr.io/acme/slime:v8@{D2}")
    assert run(capsys, *RECORD[:-1], "--again", "--", "true")[0] == 0
    md = run(capsys, "report", "--baseline", demo.baseline)[1]
    said = ", as VIMESYNC\\_IMAGE declares it, not an image recorded at the head"
    assert "in image `ghcr.io/acme/slime:v8@sha256:cdcdcdcd`" + said in md


def test_without_image_records_the_image_is_measured_only(
    demo: Demo, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imagefacts, "ROOT", tmp_path)
    _containerenv(tmp_path, _podman("docker.io/library/fedora:40"))
    assert run(capsys, *RECORD, "true")[0] == 0
    md = run(capsys, "report", "--baseline", demo.baseline)[1]
    image = f"`docker.io/library/fedora:40 (image id sha256:{ID[:8]})`"
    assert f"in image {image}, as /run/.containerenv declares it." in md


def test_a_hostile_declaration_still_runs_the_job_and_says_so_once(
    demo: Demo, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imagefacts, "ROOT", tmp_path)
    monkeypatch.setenv(IMAGE_ENV, "ghcr.io/a/b:`x`\n# pwned")
    code, out, err = run(capsys, *RECORD, "true")
    assert code == 0 and "pwned" not in out + err and "`x`" not in out + err
    assert f"warning: {IMAGE_ENV} is not an image reference with a digest" in err
    (rec,) = _runs(demo)
    assert rec.measured is not None and rec.measured.image is None


@pytest.mark.parametrize(
    "line",
    [
        'ref = "ghcr.io/a/b`x`"',
        'ref = "ghcr.io/a/b\\n- [x](https://evil.example)"',
        'digest = "sha256:xyz"',
        'arch = "amd64 `x`"',
        'source = "somewhere"',
    ],
)
def test_a_hostile_image_table_in_the_records_file_is_refused(demo: Demo, capsys, line: str) -> None:
    assert run(capsys, *RECORD, "true")[0] == 0
    path = sorted((demo.downstream / "sop/records").glob("*.toml"))[0]
    key = next(ln for ln in path.read_text().splitlines() if ln.endswith(".measured]"))
    path.write_text(path.read_text() + f"\n{key[:-1]}.image]\n{line}\n")
    with pytest.raises(ConfigError) as exc:
        load_results(demo.downstream, path.stem)
    assert "evil" not in str(exc.value) and "`x`" not in str(exc.value)


def _runs(demo: Demo) -> tuple:
    path = sorted((demo.downstream / "sop/records").glob("*.toml"))[0]
    return load_results(demo.downstream, path.stem).runs
