r"""What carrying does to an upstream file before merging it: the path map and the translations
(the carry applies them to files; mirrored detection to an upstream diff's lines, so a port made
by hand compares equal to its upstream PR).

The path map (``[upstream] map = ["slime/=vime/"]``) is :class:`vimesync.pathmap.PathMap`: the
first pair whose SRC holds a path (``slime/x``, never ``slimeextra/x``) renames it; other paths
keep their name. Every mapped path must stay a plain relative path of the work tree: never
``..``, ``.`` or an empty component, never into ``.git`` (in any case), and a map whose target
is not such a folder is refused when it is loaded.

Translations (``[[upstream.translate]]``, Copybara's ``core.replace``) rewrite the content of
carried text files::

    [[upstream.translate]]
    pattern = '\b(from|import) slime\b'   # RE2 syntax (Python's, without backtracking features)
    replace = '\1 vime'                    # \1..\99, \g<n>, \g<name>, \\ ; other text is literal
    paths = ["**/*.py"]                    # gitignore globs on the downstream path; default: all

Patterns run on RE2, in time linear in the file whatever the pattern (a hostile ``(a+)+$`` costs
nothing), over the file's bytes. Binary files (a NUL in the first 8,000 bytes, as git decides),
symbolic links and files over ``MAX_TRANSLATED`` bytes are never translated. One file's
translation may produce at most ``MAX_OUTPUT`` bytes and ``MAX_MATCHES`` matches; past that the
carry stops as bad input naming the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vimesync.config import Config, TranslateSpec
from vimesync.errors import BadInput, ConfigError
from vimesync.globs import PathGlobs
from vimesync.patches.safety import is_dotgit_alias
from vimesync.pathmap import PathMap
from vimesync.regex import compile_re2
from vimesync.safefs import excerpt

MAX_PATTERN = 1000  # characters of a pattern or a replacement
MAX_TRANSLATED = 16 << 20  # files larger than this are carried as they are
MAX_OUTPUT = 64 << 20  # bytes one translated file may grow to
MAX_MATCHES = 1_000_000  # matches of one table in one file
MAX_PATH = 4095
_BINARY_PROBE = 8000  # git's own heuristic: a NUL in the first 8,000 bytes

_REPL_TOKEN = re.compile(r"\\(?:([0-9]{1,2})|g<([^>]*)>|(\\)|(.?))", re.S)


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


def _bad_component(part: str) -> bool:
    # ".git" in every spelling a file system folds into it (the patch checker's rule: any case,
    # HFS+ ignorable code points, NTFS trailing dots/spaces, "::$INDEX_ALLOCATION", "GIT~1"), and
    # the same read with a backslash as the separator it is on Windows.
    if part in ("", ".", ".."):
        return True
    return any(p == ".." or is_dotgit_alias(p) for p in part.split("\\"))


def check_path(path: str, *, what: str) -> None:
    """BadInput unless ``path`` is a plain relative path outside ``.git`` (every component)."""
    parts = path.split("/")
    if (
        not path
        or len(path.encode("utf-8", "surrogateescape")) > MAX_PATH
        or path.startswith("/")
        or "\0" in path
        or any(_bad_component(p) for p in parts)
    ):
        raise BadInput(
            f"{what} {excerpt(path)}: not a plain path inside the work tree (no '..', '.', '.git' or"
            " empty components, not absolute)",
            hint="check [upstream] map in vimesync.toml",
        )


def load_map(pairs: Sequence[tuple[str, str]], *, where: str) -> PathMap:
    """The path map, each side checked as a plain folder path (``../x/``, ``.git/``, ``/etc/``
    refused: ConfigError naming ``where``)."""
    for src, dst in pairs:
        for side, value in (("SRC", src), ("DST", dst)):
            stem = value.rstrip("/")
            parts = stem.split("/")
            if value.startswith("/") or any(_bad_component(p) for p in parts) or "\0" in value:
                raise ConfigError(
                    where,
                    f"path map {excerpt(src + '=' + dst)}: {side} must be a plain folder path inside the"
                    " repository (no '..', '.', '.git' or empty components, not absolute)",
                )
    return PathMap.of(pairs, where=where)


@dataclass(frozen=True)
class Translation:
    spec: TranslateSpec
    where: str  # "vimesync.toml:12"
    _regex: Any = field(repr=False, compare=False)
    _pieces: tuple[bytes | int | str, ...] = field(repr=False, compare=False)  # literal, group, name
    _globs: PathGlobs | None = field(repr=False, compare=False)

    def applies_to(self, path: str) -> bool:
        return self._globs is None or self._globs(path)

    def apply(
        self, data: bytes, budget: int | None = None, over: Callable[[], BadInput] | None = None
    ) -> tuple[bytes, int]:
        """(translated data, number of matches); BadInput past the output or match bounds, or
        ``over()`` past ``budget`` matches (what the whole carry has left) when that comes first."""
        size = [len(data), 0]
        pieces = self._pieces
        limit = MAX_MATCHES if budget is None else min(MAX_MATCHES, budget)

        def repl(m: Any) -> bytes:
            size[1] += 1
            if size[1] > limit:
                if over is not None and limit < MAX_MATCHES:
                    raise over()
                raise BadInput(
                    f"{self.where}: translation matches more than {MAX_MATCHES:,} times in one file"
                )
            out = b"".join(p if isinstance(p, bytes) else (m.group(p) or b"") for p in pieces)
            size[0] += len(out)
            if size[0] > MAX_OUTPUT:
                raise BadInput(f"{self.where}: translation makes a file larger than {MAX_OUTPUT >> 20} MiB")
            return out

        result, count = self._regex.subn(repl, data)
        return result, count


def _compile(spec: TranslateSpec, where: str) -> Translation:
    def fail(message: str) -> ConfigError:
        return ConfigError(where.rpartition(":")[0] if spec.line else where, message, line=spec.line)

    if len(spec.pattern) > MAX_PATTERN or len(spec.replace) > MAX_PATTERN:
        raise fail(f"[[upstream.translate]] pattern and replace are at most {MAX_PATTERN} characters")
    if not spec.pattern:
        raise fail("[[upstream.translate]] pattern is empty")
    try:
        regex = compile_re2(spec.pattern.encode("utf-8"))
    except ValueError as exc:
        raise fail(
            f"[[upstream.translate]] pattern {excerpt(spec.pattern)} is not an RE2 regex: {exc}"
        ) from None
    pieces = _pieces(spec.replace, regex, fail)
    globs = None
    if spec.paths is not None:
        try:
            globs = PathGlobs(spec.paths)
        except ValueError as exc:
            raise fail(f"[[upstream.translate]] paths: not gitignore globs ({excerpt(str(exc))})") from None
    return Translation(spec=spec, where=where, _regex=regex, _pieces=pieces, _globs=globs)


def _pieces(replace: str, regex: Any, fail: Callable[[str], ConfigError]) -> tuple[bytes | int | str, ...]:
    """``replace`` as literal bytes and group numbers, in order: what :meth:`Translation.apply`
    joins for each match."""
    names = {k.decode() if isinstance(k, bytes) else k: v for k, v in regex.groupindex.items()}
    pieces: list[bytes | int | str] = []
    literal = bytearray()
    pos = 0
    for m in _REPL_TOKEN.finditer(replace):
        literal += replace[pos : m.start()].encode("utf-8")
        pos = m.end()
        number, name, backslash, other = m.groups()
        if backslash:
            literal += b"\\"
            continue
        if other is not None:
            raise fail(
                f"[[upstream.translate]] replace {excerpt(replace)}: unknown escape \\{excerpt(other)}"
                " (use \\1..\\99, \\g<name> or \\\\)"
            )
        if number is not None:
            group = int(number)
        elif name is not None and name.isdigit():
            group = int(name)
        elif name is not None and name in names:
            group = names[name]
        else:
            raise fail(f"[[upstream.translate]] replace names an unknown group {excerpt(name or '')}")
        if group > regex.groups:
            raise fail(
                f"[[upstream.translate]] replace refers to group {group}; the pattern has {regex.groups}"
            )
        if literal:
            pieces.append(bytes(literal))
            literal = bytearray()
        pieces.append(group)
    literal += replace[pos:].encode("utf-8")
    if literal:
        pieces.append(bytes(literal))
    return tuple(pieces)


@dataclass(frozen=True)
class Transform:
    """The path map and the translations of one carry."""

    path_map: PathMap = field(default_factory=PathMap)
    translations: tuple[Translation, ...] = ()

    def downstream_path(self, path: str) -> str:
        """Upstream ``path`` mapped; BadInput when it would land outside the work tree or in ``.git``."""
        mapped = self.path_map.forward(path)
        check_path(mapped, what=f"upstream path {excerpt(path)} maps to")
        return mapped

    def translates(self, path: str, data: bytes, mode: int) -> bool:
        """Whether :meth:`content` would run a translation over ``data``: never over symbolic
        links, submodules, binary or oversized files."""
        if not self.translations or mode in (0o120000, 0o160000) or len(data) > MAX_TRANSLATED:
            return False
        return not is_binary(data) and any(t.applies_to(path) for t in self.translations)

    def content(
        self,
        path: str,
        data: bytes,
        mode: int,
        *,
        max_matches: int | None = None,
        over: Callable[[], BadInput] | None = None,
    ) -> tuple[bytes, int]:
        """``data`` of the downstream file ``path`` translated, and the number of matches. Symbolic
        links, submodules, binary and oversized files are returned as they are. ``max_matches``
        (what the carry's budget has left) raises ``over()`` once passed."""
        if not self.translates(path, data, mode):
            return data, 0
        hits = 0
        for t in self.translations:
            if t.applies_to(path):
                left = None if max_matches is None else max_matches - hits
                data, n = t.apply(data, left, over)
                hits += n
        return data, hits

    def explain(self, path: str, data: bytes, mode: int) -> tuple[bytes, tuple[tuple[Translation, int], ...]]:
        """As :meth:`content`, with the translations that matched and their match counts, in
        config order (what the audit names when a translation explains a difference)."""
        if not self.translates(path, data, mode):
            return data, ()
        used = []
        for t in self.translations:
            if t.applies_to(path):
                data, n = t.apply(data)
                if n:
                    used.append((t, n))
        return data, tuple(used)

    def diff(self, diff: bytes, max_matches: int = MAX_MATCHES) -> tuple[bytes | None, int]:
        """A path-mapped ``git diff`` (or ``git log -p`` text) with the lines of its hunks
        translated, as the carry translates the files: what the downstream's copy of the change
        looks like, so its patch-id can match a port made by hand. The lines of one hunk are
        translated together, without their ``+``/``-``/`` `` marks (one RE2 pass per hunk);
        a translation that changes their number of lines is run line by line instead. A pattern
        that spans what a hunk does not show is not matched: such a port is found by its
        trailers only. (The diff, the matches made); the diff is None when the translation
        passes its bounds (:data:`MAX_OUTPUT` bytes, ``max_matches`` matches over the whole
        diff): then it proves nothing."""
        if not self.translations:
            return diff, 0
        max_matches = min(max_matches, MAX_MATCHES)
        out: list[bytes] = []
        active: list[Translation] = []
        run: list[bytes] = []  # consecutive lines of one hunk
        used = [0, 0]  # bytes out, matches

        def flush() -> None:
            if not run:
                return
            marks = [line[:1] for line in run]
            block = b"\n".join(line[1:] for line in run)
            for t in active:
                block, n = t.apply(block, max_matches - used[1])
                used[1] += n
            bodies = block.split(b"\n")
            if len(bodies) != len(run):  # a match took or made a line break: line by line
                bodies = []
                for line in run:
                    body = line[1:]
                    for t in active:
                        body, n = t.apply(body, max_matches - used[1])
                        used[1] += n
                    bodies.append(body)
            out.extend(m + b for m, b in zip(marks, bodies, strict=True))
            used[0] += sum(len(b) + 2 for b in bodies)
            run.clear()

        in_hunk = False
        try:
            for line in diff.split(b"\n"):
                if in_hunk and active and line[:1] in (b"+", b"-", b" "):
                    run.append(line)
                    continue
                flush()
                if line.startswith(b"diff --git "):
                    path = line.rsplit(b" b/", 1)[-1].decode("utf-8", "surrogateescape")
                    active = [t for t in self.translations if t.applies_to(path)]
                    in_hunk = False
                elif line.startswith(b"@@"):
                    in_hunk = True
                used[0] += len(line) + 1
                if used[0] > MAX_OUTPUT:
                    return None, used[1]
                out.append(line)
            flush()
        except BadInput:
            return None, max_matches
        if used[0] > MAX_OUTPUT:
            return None, used[1]
        return b"\n".join(out), used[1]


def transform_doc(transform: Transform) -> dict[str, Any]:
    """The map and translations as the carry state keeps them: a carry continues with the rules it
    started with, never with a ``vimesync.toml`` found where ``--continue`` runs (in the worktree,
    that file is the sync branch's, which the carried upstream changes may have written)."""
    return {
        "map": [list(p) for p in transform.path_map.pairs],
        "translate": [
            {
                "pattern": t.spec.pattern,
                "replace": t.spec.replace,
                "paths": list(t.spec.paths) if t.spec.paths is not None else None,
                "line": t.spec.line,
                "where": t.where,
            }
            for t in transform.translations
        ],
    }


def transform_from_doc(doc: Any, *, where: str) -> Transform:
    """:func:`transform_doc`'s document compiled again (every check of a config applies);
    ConfigError naming ``where`` (the state file) when it is not one."""
    try:
        pairs = [(str(a), str(b)) for a, b in doc["map"]]
        specs = []
        for t in doc["translate"]:
            paths = t["paths"]
            if not isinstance(t["pattern"], str) or not isinstance(t["replace"], str):
                raise TypeError("translate")
            if paths is not None and not (isinstance(paths, list) and all(isinstance(g, str) for g in paths)):
                raise TypeError("paths")
            line = t["line"] if isinstance(t["line"], int) else None
            specs.append(
                (
                    TranslateSpec(
                        t["pattern"], t["replace"], tuple(paths) if paths is not None else None, line
                    ),
                    str(t["where"]),
                )
            )
        if len(specs) > 64:
            raise ValueError("translate")
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            where, f"not a carry state vimesync can read ({exc})", hint="vimesync carry --abort removes it"
        ) from None
    return Transform(
        path_map=load_map(pairs, where=where),
        translations=tuple(_compile(spec, w) for spec, w in specs),
    )


def load_transform(config: Config, *, path_map: Sequence[tuple[str, str]] | None = None) -> Transform:
    """The config's map (or ``path_map``) and translations, compiled; ConfigError naming the file
    and line of a bad table."""
    where = str(config.file) if config.file else "vimesync.toml"
    pm = load_map(path_map if path_map is not None else config.path_map, where=where)
    translations = tuple(
        _compile(spec, f"{where}:{spec.line}" if spec.line else where) for spec in config.translate
    )
    return Transform(path_map=pm, translations=translations)
