from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.builders.workspaces import options as check_options
from vimesync.config import Config, load_config, load_engine_pin, parse_map
from vimesync.errors import BadInput, ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_no_config_file_is_empty(tmp_path: Path) -> None:
    assert load_config(cwd=tmp_path) == Config(searched=(tmp_path,))


def test_paths_resolve_against_the_file_that_names_them(tmp_path: Path) -> None:
    write(
        tmp_path / "pins/vllm.toml",
        '[engine]\nname = "vLLM"\nrev = "abc"\nseries = "../patches/series"\nstrip = 2\n',
    )
    write(tmp_path / "pins/slime.toml", '[upstream]\nrepo = "THUDM/slime"\nsynced = "deadbeef"\n')
    cfg = load_config(
        write(
            tmp_path / "vimesync.toml",
            '[upstream]\nname = "Slime"\npath = "../slime"\npin = "pins/slime.toml"\nmap = ["slime/=vime/"]\n'
            '[engine]\npin = "pins/vllm.toml"\nsource = "../vllm.git"\n',
        )
    )
    assert cfg.upstream_path == (tmp_path.parent / "slime").resolve()
    assert cfg.upstream_pin.synced == "deadbeef"
    assert cfg.path_map == (("slime/", "vime/"),)
    assert cfg.engine.series == (tmp_path / "patches/series").resolve()
    assert cfg.engine.source == (tmp_path.parent / "vllm.git").resolve()
    assert cfg.engine.strip == 2 and cfg.engine.name == "vLLM"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[upstream]\nnmae = 'x'\n", "unknown key 'nmae' in [upstream]"),
        ("[upstream\n", "invalid TOML"),
        ("[upstream]\nmap = 'slime/=vime/'\n", "map must be a list"),
        ("[frobnicate]\n", "unknown key 'frobnicate'"),
    ],
)
def test_malformed_config_names_the_file(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path / "vimesync.toml", text)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(path) in str(exc.value) and needle in str(exc.value)


def test_pin_type_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="strip must be an integer"):
        load_engine_pin(write(tmp_path / "p.toml", '[engine]\nstrip = "1"\n'))
    with pytest.raises(ConfigError, match="strip must be >= 0"):
        load_engine_pin(write(tmp_path / "q.toml", "[engine]\nstrip = -1\n"))


def test_parse_map_rejects_missing_equals() -> None:
    with pytest.raises(ConfigError, match="SRC=DST"):
        parse_map(["slime/"])


def test_flags_win_over_the_pin(tmp_path: Path) -> None:
    write(tmp_path / "pins/vllm.toml", '[engine]\nrev = "pinned"\nseries = "s"\nsource = "src"\nstrip = 2\n')
    cfg = load_config(write(tmp_path / "vimesync.toml", '[engine]\npin = "pins/vllm.toml"\n'))
    opts = check_options(cfg)
    assert opts.rev == "pinned" and opts.strip == 2 and opts.source == (tmp_path / "pins/src").resolve()
    opts = check_options(cfg, rev="other", strip=0, source=tmp_path)
    assert opts.rev == "other" and opts.strip == 0 and opts.source == tmp_path


def test_missing_source_is_bad_input() -> None:
    with pytest.raises(BadInput, match="--source"):
        check_options(Config())


@pytest.mark.parametrize(
    ("config", "pin", "key"),
    [
        ('[engine]\npin = "pins/e.toml"\n', '[engine]\nseries = "/proc/self/environ"\n', "[engine] series"),
        ('[engine]\npin = "pins/e.toml"\n', '[engine]\nseries = "../../outside/series"\n', "[engine] series"),
        ('[engine]\npin = "/etc/passwd"\n', "", "[engine] pin"),
        ('[upstream]\npolicy = "../policy.toml"\n', "", "[upstream] policy"),
        ('[upstream]\npin = "/proc/self/environ"\n', "", "[upstream] pin"),
    ],
)
def test_committed_files_cannot_point_outside_the_repository(
    tmp_path: Path, config: str, pin: str, key: str
) -> None:
    # A pull request can edit pins and vimesync.toml: the files they name must stay in the repo,
    # or the check could be pointed at secrets on the CI machine and echo them in a diagnostic.
    repo = tmp_path / "repo"
    write(repo / "pins/e.toml", pin or "[engine]\n")
    with pytest.raises(ConfigError, match=re.escape(key)) as exc:
        load_config(write(repo / "vimesync.toml", config))
    text = f"{exc.value} {exc.value.hint}"
    assert "PATH=" not in text and "root:" not in text  # names the key, never the target's content


def test_symlinked_series_escaping_the_repository_is_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "secret/series", "token\n")
    repo = tmp_path / "repo"
    (repo / "patches").mkdir(parents=True)
    (repo / "patches/series").symlink_to(outside)
    write(repo / "pins/e.toml", '[engine]\nseries = "../patches/series"\n')
    with pytest.raises(ConfigError, match="refusing to follow a symbolic link"):
        load_config(write(repo / "vimesync.toml", '[engine]\npin = "pins/e.toml"\n'))


@pytest.mark.parametrize("item", ["=vime/", "slime/=", "/=vime/"])
def test_path_map_sides_must_name_a_folder(item: str) -> None:
    with pytest.raises(ConfigError, match="SRC and DST must both name a path"):
        parse_map([item])


@pytest.mark.parametrize(
    "text",
    [
        '[upstream]\n"\\u001b[2J' + "k" * 5000 + '" = 1\n',  # an unknown key, as long as the file
        '["' + "k" * 5000 + '"]\n["' + "k" * 5000 + '"]\n',  # tomllib quotes the key it refuses
        '[upstream]\nmap = ["\\u001b[2J' + "m" * 5000 + '"]\n',
    ],
    ids=["unknown-key", "declared-twice", "bad-map"],
)
def test_config_errors_quote_keys_short_and_escaped(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path / "vimesync.toml", text))
    message = str(info.value)
    assert len(message) < len(str(tmp_path)) + 250 and "\x1b" not in message


def test_translate_tables_are_numbered_in_one_pass(tmp_path: Path) -> None:
    """Each [[upstream.translate]] table knows its header's line (for errors), counted in one pass
    over the file (issue 18, finding 15: counting from the start for each header was quadratic;
    bench/bench_config.py times a 1 MiB config)."""
    from vimesync.config.arrays import _header_lines

    text = "[upstream]\n" + "".join(
        f"\n# {i}\n[[upstream.translate]]\npattern = 'a'\nreplace = 'b'\n" for i in range(5)
    )
    assert _header_lines(text, 5) == [4, 9, 14, 19, 24]
    assert _header_lines(text, 2) == [4, 9]


def test_verify_tables_are_read_with_their_lines_and_bounded(tmp_path: Path) -> None:
    """[[upstream.verify]] (issue 20): pattern, paths, must; each table knows its header's line;
    bounded like [[upstream.translate]]."""
    from vimesync.audit.verify import load_verify
    from vimesync.config import MAX_VERIFY, VerifySpec

    cfg = load_config(
        write(
            tmp_path / "vimesync.toml",
            "[upstream]\n\n[[upstream.translate]]\npattern = 'a'\nreplace = 'b'\n\n"
            "[[upstream.verify]]\npattern = '\\bimport slime\\b'\npaths = [\"vime/**\"]\n",
        )
    )
    assert cfg.verify == (VerifySpec(r"\bimport slime\b", ("vime/**",), "not-match", 7),)
    assert [r.where for r in load_verify(cfg)] == [f"{tmp_path / 'vimesync.toml'}:7"]
    for body, error in (
        ("pattern = 'x'\nmust = 'never'", "must is"),
        ("pattern = ''", "non-empty"),
        ("pattern = 'x'\nreplace = 'y'", "unknown key"),
        ("pattern = 'x'\npaths = []", "list of globs"),
    ):
        path = write(tmp_path / "bad.toml", f"[upstream]\n[[upstream.verify]]\n{body}\n")
        with pytest.raises(ConfigError, match=error):
            load_config(path)
    many = "[upstream]\n" + "[[upstream.verify]]\npattern = 'x'\n" * (MAX_VERIFY + 1)
    with pytest.raises(ConfigError, match=f"more than {MAX_VERIFY}"):
        load_config(write(tmp_path / "many.toml", many))
    bad_regex = write(tmp_path / "re.toml", "[upstream]\n[[upstream.verify]]\npattern = '(?=x)'\n")
    with pytest.raises(ConfigError, match="not an RE2 regex"):
        load_verify(load_config(bad_regex))


def test_the_downstream_has_a_display_name(tmp_path: Path) -> None:
    # Issue 29 item 14: the report names the fork ("Vime-native") from [downstream] name only.
    assert load_config(write(tmp_path / "vimesync.toml", "[downstream]\npath = '.'\n")).downstream_name == ""
    cfg = load_config(write(tmp_path / "vimesync.toml", '[downstream]\nname = "Vime\\u001b[31m"\n'))
    assert cfg.downstream_name == "Vime\x1b[31m"  # a display name: shown escaped, never acted on
    with pytest.raises(ConfigError, match="NUL"):
        load_config(write(tmp_path / "vimesync.toml", '[downstream]\nname = "a\\u0000b"\n'))
    with pytest.raises(ConfigError, match="must be a string"):
        load_config(write(tmp_path / "vimesync.toml", "[downstream]\nname = 3\n"))
