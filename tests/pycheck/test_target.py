"""Which grammar a tree targets."""

from __future__ import annotations

import sys

import pytest

from vimesync.errors import BadInput, ConfigError
from vimesync.pycheck import target as t
from vimesync.pycheck.target import resolve_target


def reader(files: dict[str, str]) -> t.Reader:
    return lambda path: files[path].encode() if path in files else None


def pyproject(spec: str) -> str:
    return f'[project]\nname = "eng"\nrequires-python = "{spec}"\n'


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        (">=3.10", (3, 10)),
        (">=3.10,<3.14", (3, 10)),
        ("<3.14,>=3.9.2", (3, 9)),
        (">3.9", (3, 9)),
        ("~=3.11", (3, 11)),
        ("==3.12.*", (3, 12)),
        (">= 3.8, != 3.9.*", (3, 8)),
    ],
)
def test_requires_python_lower_bound(spec: str, version: tuple[int, int]) -> None:
    found = t.resolve_target(None, reader({"pyproject.toml": pyproject(spec)}))
    assert found == t.Target(version, t.FROM_PYPROJECT)


def test_unbounded_below_falls_through_to_python_version() -> None:
    files = {"pyproject.toml": pyproject("<3.14"), ".python-version": "# pinned\n3.12.1\n"}
    assert t.resolve_target(None, reader(files)) == t.Target((3, 12), t.FROM_PYTHON_VERSION)


def test_broken_pyproject_is_not_fatal() -> None:
    assert t.resolve_target(None, reader({"pyproject.toml": "[project\n"})).source == t.FROM_RUNNING


def test_flag_wins_and_running_is_the_default() -> None:
    files = {"pyproject.toml": pyproject(">=3.10")}
    assert t.resolve_target("3.13", reader(files)) == t.Target((3, 13), t.FROM_FLAG)
    assert t.resolve_target(None, reader({})) == t.Target(sys.version_info[:2], t.FROM_RUNNING)
    assert t.resolve_target(None, reader({})).text == "{}.{}".format(*sys.version_info[:2])


@pytest.mark.parametrize("text", ["3", "three", "3.x", ""])
def test_bad_flag(text: str) -> None:
    with pytest.raises(BadInput, match="not a Python version"):
        t.parse_version(text)


@pytest.mark.parametrize(("spec", "version"), [(">=3.99", (3, 99)), (">=3.10,!=3.10.*", (3, 11))])
def test_lower_bound_edges(spec: str, version: tuple[int, int]) -> None:
    assert t.lower_bound(spec) == version


def test_excluded_minor_moves_the_bound_up() -> None:
    # packaging is a declared dependency: 3.11 always, never 3.10 from a plain-text guess.
    found = t.resolve_target(None, reader({"pyproject.toml": pyproject(">=3.10,!=3.10.*")}))
    assert found == t.Target((3, 11), t.FROM_PYPROJECT)


@pytest.mark.parametrize("spec", [">=3.10 or so", "3.10+", ">=" + "9" * 2000])
def test_invalid_specifier_falls_through(spec: str) -> None:
    assert t.lower_bound(spec) is None
    files = {"pyproject.toml": pyproject(spec), ".python-version": "3.12\n"}
    assert t.resolve_target(None, reader(files)) == t.Target((3, 12), t.FROM_PYTHON_VERSION)


def test_wheel_metadata_declares_the_target() -> None:
    meta = "Metadata-Version: 2.1\nName: eng\nRequires-Python: >=3.10\n\nlong description\n"
    files = {"eng-1.0.dist-info/METADATA": meta, "eng/__init__.py": ""}
    names = t.metadata_files([*files, "eng/sub/x.dist-info/METADATA"])
    assert names == ["eng-1.0.dist-info/METADATA"]
    found = t.resolve_target(None, reader(files), names)
    assert found == t.Target((3, 10), "Requires-Python in eng-1.0.dist-info/METADATA")
    # pyproject.toml, when there is one, wins
    files["pyproject.toml"] = pyproject(">=3.12")
    assert t.resolve_target(None, reader(files), names).version == (3, 12)


def _reader(files: dict[str, bytes]):
    return lambda path: files.get(path)


@pytest.mark.parametrize(
    "pyproject",
    [
        b'[project]\nrequires-python = ">=3.10"\nx = ' + b"[" * 50_000 + b"]" * 50_000,
        b'[project]\nrequires-python = ">=3.10"\nx = ' + b"9" * 5000,
    ],
)
def test_hostile_patched_pyproject_is_a_config_error(pyproject: bytes) -> None:
    with pytest.raises(ConfigError, match=r"pyproject.toml \(patched tree\)"):
        resolve_target(None, _reader({"pyproject.toml": pyproject}))


def test_huge_numbers_in_version_files_are_not_tracebacks() -> None:
    files = {
        ".python-version": b"3" * 5000 + b"." + b"1" * 5000 + b"\n3.11\n",
        "pyproject.toml": b'[project]\nrequires-python = ">=3.' + b"1" * 5000 + b'"\n',
    }
    assert resolve_target(None, _reader(files)).version == (3, 11)
    with pytest.raises(BadInput, match="not a Python version"):
        resolve_target("3." + "1" * 5000, _reader({}))


def test_metadata_requires_python_is_read_from_the_header_only() -> None:
    # 20 MB of spaces after the field: a quadratic regex would take hours on it.
    meta = b"Metadata-Version: 2.1\nRequires-Python: >=3.9" + b" " * 20_000_000 + b"x\n"
    t = resolve_target(None, _reader({"x.dist-info/METADATA": meta}), ["x.dist-info/METADATA"])
    assert t.version == (3, 9)
