from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders.upstream import POLICY, Upstream
from vimesync.errors import ConfigError
from vimesync.upstream.model import APPLICABLE, EXCLUDED, PullRequest
from vimesync.upstream.policy import classify, decide, load_policy, parse_policy
from vimesync.upstream.walk import walk


def _pr(
    number: int = 1, title: str = "t", paths: tuple[str, ...] = (), labels: tuple[str, ...] = ()
) -> PullRequest:
    return PullRequest(number, title, ("a" * 40,), paths, "a" * 40, "squash", labels=labels)


def _policy(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    f = tmp_path / "policy.toml"
    f.write_text(text)
    return load_policy(f)


def test_classify_the_shapes(tmp_path: Path, upstream: Upstream) -> None:
    prs = {p.number: p for p in classify(walk(upstream.path, None, "main").prs, _policy(tmp_path, POLICY))}
    d = {n: p.decision for n, p in prs.items()}
    assert (
        d[6].status == EXCLUDED and d[6].rule == 2 and d[6].reason == "Ascend/NPU is not carried downstream"
    )
    assert d[8].status == EXCLUDED and d[8].rule == 3
    # Include wins because it comes first, even though #9 touches NPU files.
    assert d[9].status == APPLICABLE and d[9].reason == "mirrored as requested" and d[9].action == "include"
    assert d[1].status == APPLICABLE and d[1].rule is None and d[1].reason == ""
    assert d[10].status == APPLICABLE  # no paths: never "all paths excluded"


def test_partial_path_matches_are_flagged(tmp_path: Path) -> None:
    pol = _policy(tmp_path, POLICY.replace("prs = [9]", "prs = [99]"))
    mixed = decide(_pr(9, "Refactor core", ("docker/npu_patch/b.patch", "slime/core.py")), pol)
    assert mixed.status == APPLICABLE and mixed.partial_paths == ("docker/npu_patch/b.patch",)
    assert decide(_pr(9, "x", ("slime/core.py",)), pol).partial_paths == ()


@pytest.mark.parametrize(
    "globs,paths,hit",
    [
        (["docker/**"], ("docker/a/b/c.txt", "docker/x"), True),
        (["docker/**"], ("docker/x", "README.md"), False),
        (["**/npu/**"], ("slime/backends/npu/x.py",), True),
        (["**/npu/**"], ("slime/backends/npux/x.py",), False),
        (["*.md"], ("docs/deep/a.md", "b.md"), True),  # gitignore: no slash matches at any depth
        (["/README.md"], ("docs/README.md",), False),  # anchored
        (["docs/"], ("docs/a/b.md",), True),  # a directory pattern covers its files
    ],
)
def test_paths_every_path_must_match(
    tmp_path: Path, globs: list[str], paths: tuple[str, ...], hit: bool
) -> None:
    quoted = ", ".join(f'"{g}"' for g in globs)
    pol = _policy(tmp_path, f'[[rule]]\naction = "exclude"\nreason = "r"\npaths = [{quoted}]\n')
    assert (decide(_pr(paths=paths), pol).status == EXCLUDED) is hit


def test_all_matchers_must_hold_and_labels(tmp_path: Path) -> None:
    pol = _policy(
        tmp_path,
        '[[rule]]\naction = "exclude"\nreason = "npu label"\nlabels = ["npu"]\ntitle = "(?i)backend"\n',
    )
    assert decide(_pr(title="NPU backend", labels=("npu", "x")), pol).status == EXCLUDED
    assert decide(_pr(title="NPU backend"), pol).status == APPLICABLE
    assert decide(_pr(title="docs", labels=("npu",)), pol).status == APPLICABLE
    assert pol.needs_labels


BAD = [
    ("[[rule]\naction = 1\n", 1, "invalid TOML"),
    (
        '[[rule]]\naction = "exclude"\nreason = "r"\nprs = [1]\n\n'
        '[[rule]]\naction = "exclude"\nreason = "x"\ntittle = "a"\n',
        9,
        "rule 2: unknown key 'tittle'",
    ),
    ('[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "(unclosed"\n', 4, "rule 1: bad title regex"),
    # Python syntax RE2 does not have, a pattern over the length cap, a thousand groups.
    ('[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "(?<=a)b"\n', 4, "rule 1: bad title regex"),
    (
        '[[rule]]\nprs = [1]\naction = "exclude"\nreason = "r"\ntitle = "%s"\n' % ("a" * 1001),
        5,
        "longer than 1000",
    ),
    ('[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "%s"\n' % ("()" * 150), 4, "150 groups, over"),
    ('# c\n\n[[rule]]\naction = "exclude"\nprs = [1]\n', 3, "rule 1: needs a non-empty reason"),
    ('[[rule]]\naction = "drop"\nreason = "r"\nprs = [1]\n', 2, "rule 1: action must be"),
    ('[[rule]]\naction = "exclude"\nreason = "r"\n', 1, "needs at least one matcher"),
    ('[[rule]]\naction = "exclude"\nreason = "r"\nprs = ["12"]\n', 4, "prs must be a list of PR numbers"),
    ('[[rule]]\naction = "exclude"\nreason = "r"\npaths = "docs/**"\n', 4, "paths must be a non-empty list"),
    (
        's = """\n[[rule]]\n"""\n[[rule]]\naction = "x"\nreason = "r"\nprs = [1]\n',
        None,
        "unknown top-level key",
    ),
    ('[rule]\naction = "exclude"\n', None, "write [[rule]], not [rule]"),
]


@pytest.mark.parametrize("text,line,message", BAD)
def test_malformed_policy_names_file_rule_and_line(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        _policy(tmp_path, text)
    err = exc.value
    assert message in err.message and str(tmp_path / "policy.toml") in err.message
    assert err.line == line
    assert err.exit_code == 2


def test_rule_lines_skip_multiline_strings() -> None:
    text = '[[rule]]\naction = "exclude"\nreason = """\n[[rule]]\n"""\nprs = [1]\n\n[[rule]]\naction = "no"\n'
    text += 'reason = "r"\nprs = [2]\n'
    with pytest.raises(ConfigError) as exc:
        parse_policy(text, Path("p.toml"))
    assert exc.value.line == 9 and "rule 2" in exc.value.message


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_policy(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "text", ["[[rule]]\nx = " + "{a = " * 2000 + "1" + "}" * 2000, "[[rule]]\nx = " + "1" * 5000]
)
def test_policy_toml_bombs_are_config_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        load_policy(path)
    assert info.value.path == str(path)


def test_symlinked_policy_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vimesync.toml").write_text("")
    (tmp_path / "sop").symlink_to("/proc/self")
    with pytest.raises(ConfigError, match="sop: it is a symbolic link"):
        load_policy(tmp_path / "sop/environ")


@pytest.mark.parametrize(
    "title_regex", ["(a+)+$", "^(.+)+\\u0000", "(x+x+)+y", "^(a|a?)+$"], ids=["nested", "nul", "xx", "alt"]
)
def test_title_regexes_run_in_linear_time(tmp_path: Path, title_regex: str) -> None:
    # Each of these backtracks exponentially in Python's re: 100,000 characters would never end.
    pol = _policy(tmp_path, f'[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "{title_regex}"\n')
    for title in ("a" * 100_000 + "b", "x" * 100_000, "Fix the scheduler " * 5_000):
        assert decide(_pr(title=title), pol).status == APPLICABLE


def test_title_regex_matches_like_python_for_the_documented_syntax(tmp_path: Path) -> None:
    pol = _policy(
        tmp_path, '[[rule]]\naction = "exclude"\nreason = "r"\ntitle = \'(?i)\\b(npu|ascend)\\b\'\n'
    )
    assert decide(_pr(title="[NPU] fix"), pol).status == EXCLUDED
    assert decide(_pr(title="Ascend: kernels"), pol).status == EXCLUDED
    assert decide(_pr(title="input fix"), pol).status == APPLICABLE
    assert decide(_pr(title="lone \ud800 surrogate npu"), pol).status == EXCLUDED


def test_bad_title_regex_prints_nothing_of_its_own(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="rule 1: bad title regex"):
        _policy(tmp_path, '[[rule]]\naction = "exclude"\nreason = "r"\ntitle = "(?!x)"\n')
    assert capfd.readouterr() == ("", "")  # RE2's own logging is off


def _rules(n: int, globs: str) -> str:
    return "".join(
        f'[[rule]]\naction = "exclude"\nreason = "r{i}"\npaths = {globs.format(i=i)}\n' for i in range(n)
    )


def test_rule_and_glob_caps_name_the_policy_file(tmp_path: Path) -> None:
    from vimesync.upstream.policy import MAX_RULE_GLOBS, MAX_RULES

    assert len(_policy(tmp_path, _rules(MAX_RULES, '["docker/x{i}/**"]')).rules) == MAX_RULES
    with pytest.raises(
        ConfigError, match=rf"policy\.toml: {MAX_RULES + 1} rules, over the limit of {MAX_RULES}"
    ):
        _policy(tmp_path, _rules(MAX_RULES + 1, '["docker/x{i}/**"]'))
    many = "[" + ", ".join(f'"d{j}/**"' for j in range(MAX_RULE_GLOBS + 1)) + "]"
    with pytest.raises(ConfigError, match=rf"policy\.toml:4: rule 1: {MAX_RULE_GLOBS + 1} paths globs, over"):
        _policy(tmp_path, _rules(1, many))


@pytest.mark.slow
def test_many_rules_against_a_huge_pr_match_each_path_once(tmp_path: Path) -> None:
    """256 path rules × 100,000 changed paths: 25.6M glob matches (~30 s) before; now the paths
    no rule can match are dropped by one prefilter pass, and each rule sees the rest once."""
    pol = _policy(tmp_path, _rules(256, '["docker/x{i}/**", "slime/keep{i}.py", "!docker/x{i}/keep"]'))
    paths = tuple(
        sorted(f"slime/mod{i % 50}/f{i}.py" for i in range(100_000)) + ["docker/x7/a", "slime/keep9.py"]
    )
    d = decide(_pr(1, "big", paths), pol)
    assert d.status == APPLICABLE and d.partial_paths == ("docker/x7/a", "slime/keep9.py")
    assert decide(_pr(2, "npu", ("docker/x7/a", "docker/x7/b/c")), pol).rule == 8
    from vimesync.upstream.policy import Policy

    assert (
        decide(_pr(2, "npu", ("docker/x7/a",)), Policy(file=None, rules=pol.rules)).rule == 8
    )  # same prefilter
    # A rule's own negations still hold: docker/x7/keep is not excluded by rule 8.
    assert decide(_pr(3, "k", ("docker/x7/a", "docker/x7/keep")), pol).partial_paths == ("docker/x7/a",)


@pytest.mark.slow
def test_audit_matches_every_exclude_rule_of_a_policy_at_the_caps(tmp_path: Path) -> None:
    """256 rules × 64 globs: one pathspec set of 16,384 globs is more than RE2 compiles ("failed
    to compile Set", a traceback); one set per rule, behind sharded prefilters, is not."""
    from vimesync.audit.compare import excluded_matcher
    from vimesync.audit.run import load_excluded_globs

    globs = "[" + ", ".join(f'"d{{i}}/s{j}/**"' for j in range(63)) + ', "!d{i}/s0/keep"]'
    f = tmp_path / "policy.toml"
    f.write_text(_rules(256, globs))
    is_excluded = excluded_matcher(load_excluded_globs(f))
    assert is_excluded("d255/s62/a.py") and is_excluded("d0/s0/x")
    assert not is_excluded("d0/s0/keep") and not is_excluded("d0/s63/a.py") and not is_excluded("x.py")
    assert is_excluded("d3/s1/\udcff.py")  # a non-UTF-8 name still matches
