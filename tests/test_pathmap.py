"""The one path map: a pair's side holds the path it names and everything below it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vimesync.errors import ConfigError
from vimesync.pathmap import PathMap


@pytest.mark.parametrize(
    ("pairs", "upstream", "downstream"),
    [
        ((("slime/", "vime/"),), "slime/x.py", "vime/x.py"),
        ((("slime", "vime"),), "slime/x.py", "vime/x.py"),  # no trailing slash: the same folder
        ((("slime/", "vime"),), "slime/a/b.py", "vime/a/b.py"),
        ((("slime", "vime"),), "slimeextra/x.py", "slimeextra/x.py"),  # not below slime/
        ((("slime/", "vime/"),), "slimeextra/x.py", "slimeextra/x.py"),
        ((("slime", "vime"),), "slime.py", "slime.py"),
        ((("slime/", "vime/"),), "slime", "vime"),  # the path a side names, file or folder
        ((("slime/", "vime/"),), "top/slime/x.py", "top/slime/x.py"),  # a prefix of the whole path only
        ((("a.py", "b.py"),), "a.py", "b.py"),  # one file
        ((("a.py", "b.py"),), "a.pyc", "a.pyc"),
        ((("a/b/", "c/"),), "a/b/x", "c/x"),
        ((("a/b/", "c/"),), "a/bc/x", "a/bc/x"),
        ((("slime/", "vime/"), ("slime/", "other/")), "slime/x", "vime/x"),  # the first pair wins
        ((("slime/sub/", "v2/"), ("slime/", "vime/")), "slime/sub/x", "v2/x"),
        ((("slime/sub/", "v2/"), ("slime/", "vime/")), "slime/subx", "vime/subx"),
        ((), "slime/x.py", "slime/x.py"),
    ],
)
def test_folder_boundaries(pairs: tuple[tuple[str, str], ...], upstream: str, downstream: str) -> None:
    pm = PathMap(pairs)
    assert pm.forward(upstream) == downstream
    assert pm.forward(upstream.encode()) == downstream.encode()  # bytes (diff headers) alike


@pytest.mark.parametrize(
    ("pairs", "downstream", "upstream"),
    [
        ((("slime/", "vime/"),), "vime/x.py", "slime/x.py"),
        ((("slime", "vime"),), "vime/x.py", "slime/x.py"),
        ((("slime", "vime"),), "vimeextra/x.py", "vimeextra/x.py"),  # no pair holds it: itself
        ((("slime/", "vime/"),), "vimeextra/x.py", "vimeextra/x.py"),
        ((("slime/", "vime/"),), "README.md", "README.md"),
        ((("a.py", "b.py"),), "b.py", "a.py"),
        ((("a.py", "b.py"),), "b.pyi", "b.pyi"),
        ((("slime/", "vime/"), ("other/", "vime/")), "vime/x", "slime/x"),  # the first pair wins
        # a narrower DST inside a wider one: written first, or the wider pair shadows it
        ((("other/", "vime/sub/"), ("slime/", "vime/")), "vime/sub/x.py", "other/x.py"),
        ((("slime/", "vime/"), ("other/", "vime/sub/")), "vime/sub/x.py", "slime/sub/x.py"),
        ((("doc", "docs"),), "docs/guide.md", "doc/guide.md"),
    ],
)
def test_reverse_boundaries(pairs: tuple[tuple[str, str], ...], downstream: str, upstream: str) -> None:
    pm = PathMap(pairs)
    assert pm.reverse(downstream) == upstream
    assert pm.reverse(downstream.encode()) == upstream.encode()


def test_non_utf8_paths_keep_their_bytes() -> None:
    pm = PathMap((("sl\udcffme/", "v\u00efme/"),))  # a --map argument with a stray byte
    assert pm.forward(b"sl\xffme/x") == "v\u00efme/x".encode()
    assert pm.forward("sl\udcffme/x") == "v\u00efme/x"
    assert pm.reverse("v\u00efme/\udcfe") == "sl\udcffme/\udcfe"


@pytest.mark.parametrize("pair", [("", "x/"), ("slime/", ""), ("/", "vime/")])
def test_an_empty_side_is_refused(pair: tuple[str, str]) -> None:
    with pytest.raises(ConfigError, match="SRC and DST must both name a path"):
        PathMap.of([("slime/", "vime/"), pair], where="vimesync.toml")


_name = st.text(alphabet="abx._", min_size=1, max_size=4).filter(lambda s: s not in (".", ".."))
_path = st.lists(_name, min_size=1, max_size=4).map("/".join)


def _nests(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


@st.composite
def _maps(draw: st.DrawFn) -> PathMap:
    """Maps whose SRCs do not nest in each other, nor their DSTs: the two directions are inverses."""
    pairs: list[tuple[str, str]] = []
    for src, dst in draw(st.lists(st.tuples(_path, _path), min_size=1, max_size=4)):
        if any(_nests(src, s.rstrip("/")) or _nests(dst, d.rstrip("/")) for s, d in pairs):
            continue
        slash = draw(st.sampled_from(["", "/"]))
        pairs.append((src + slash, dst + draw(st.sampled_from(["", "/"]))))
    return PathMap(tuple(pairs))


@given(_maps(), st.data())
def test_reverse_undoes_forward(pm: PathMap, data: st.DataObject) -> None:
    src, dst = data.draw(st.sampled_from(pm.pairs))
    rest = data.draw(st.one_of(st.just(""), _path.map(lambda p: "/" + p)))
    upstream = src.rstrip("/") + rest
    downstream = pm.forward(upstream)
    assert downstream == dst.rstrip("/") + rest
    assert pm.reverse(downstream) == upstream
    assert pm.reverse(downstream.encode()) == upstream.encode()


@given(_maps(), st.data())
def test_forward_undoes_reverse(pm: PathMap, data: st.DataObject) -> None:
    src, dst = data.draw(st.sampled_from(pm.pairs))
    rest = data.draw(st.one_of(st.just(""), _path.map(lambda p: "/" + p)))
    downstream = dst.rstrip("/") + rest
    assert pm.forward(pm.reverse(downstream)) == downstream


@given(_maps(), _path)
def test_a_path_no_pair_holds_keeps_its_name(pm: PathMap, path: str) -> None:
    def held(stem: str) -> bool:
        stem = stem.rstrip("/")
        return path == stem or path.startswith(stem + "/")

    if not any(held(s) for s, _ in pm.pairs):
        assert pm.forward(path) == path
    if not any(held(d) for _, d in pm.pairs):
        assert pm.reverse(path) == path
