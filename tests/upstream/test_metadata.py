from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders.gitrepo import Repo
from tests.builders.upstream import Upstream
from vimesync.errors import ConfigError
from vimesync.upstream.metadata import apply_metadata, load_metadata
from vimesync.upstream.walk import walk


def _write(tmp_path: Path, data: object) -> Path:
    f = tmp_path / "prs.json"
    f.write_text(json.dumps(data))
    return f


@pytest.mark.slow
def test_gh_pr_list_json_enriches_titles_and_labels(tmp_path: Path, upstream: Upstream) -> None:
    gh = [
        {
            "number": 6,
            "title": "NPU backend for Ascend 910",
            "labels": [{"name": "npu", "color": "f00"}],
            "mergeCommit": {"oid": upstream.shas["pr6"]},
            "files": [{"path": "slime/backends/npu/x.py"}],
        },
        {
            "number": 2,
            "title": "Add bar (real title)",
            "labels": [],
            "mergeCommit": {"oid": upstream.shas["pr2"]},
        },
        {"number": 999, "title": "not in range", "labels": []},
    ]
    metas = load_metadata(_write(tmp_path, gh))
    assert metas[6].labels == ("npu",) and metas[6].files == ("slime/backends/npu/x.py",)
    r = apply_metadata(walk(upstream.path, None, "main"), metas)
    prs = {p.number: p for p in r.prs}
    assert prs[6].labels == ("npu",) and prs[6].title == "NPU backend for Ascend 910"
    assert prs[2].title == "Add bar (real title)" and prs[2].paths == ("docs/bar.md", "slime/bar.py")
    assert 999 not in prs


def test_merge_commit_attributes_a_rebase_merge_without_number(tmp_path: Path) -> None:
    r = Repo(tmp_path / "r")
    r.commit("init", {"a": "1"})
    r.commit("Add x (#1)", {"x": "1"})
    landed = r.commit("Use x everywhere", {"y": "1"})  # GitHub "rebase and merge": no (#N)
    r.commit("direct", {"z": "1"})
    result = walk(r.path, None, "main")
    assert [p.number for p in result.prs] == [1]
    enriched = apply_metadata(
        result,
        load_metadata(
            _write(
                tmp_path,
                [
                    {
                        "number": 2,
                        "title": "Use x",
                        "labels": [{"name": "core"}],
                        "mergeCommit": {"oid": landed},
                    },
                ],
            )
        ),
    )
    assert [p.number for p in enriched.prs] == [1, 2]
    assert enriched.prs[1].commits == (landed,) and enriched.prs[1].labels == ("core",)
    assert [d.title for d in enriched.direct_commits] == ["init", "direct"]


@pytest.mark.parametrize(
    "text,message",
    [("[{", "invalid JSON"), ('{"a": 1}', "must be a JSON list"), ('[{"title": "x"}]', "entry 0")],
)
def test_bad_metadata_file(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "m.json"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_metadata(f)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested deeper"),
        ('[{"number": ' + "7" * 5000 + "}]", "a number is too long"),
    ],
)
def test_pr_metadata_bombs_are_config_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prs.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_metadata(path)
    assert info.value.path == str(path)


def test_pr_metadata_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "prs.json").symlink_to("/proc/self/environ")
    with pytest.raises(ConfigError, match="symbolic link"):
        load_metadata(tmp_path / "prs.json")
