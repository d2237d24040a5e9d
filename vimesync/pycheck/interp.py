"""Find a Python interpreter whose grammar is the target's.

``ast.parse(feature_version=...)`` can reject some *newer* syntax but never accept syntax newer
than the running parser (PEP 701 f-strings need 3.12's tokenizer). So for a target X.Y we look for a
real pythonX.Y, verified by running it (PATH entries may be pyenv shims that fail unless selected):

1. ``$VIMESYNC_PYTHON_X_Y`` (a path; an explicit setting that does not work is an error);
2. the running interpreter;
3. pyenv (``$PYENV_ROOT/versions``) and uv (``~/.local/share/uv/python``) installs;
4. ``pythonX.Y`` in each PATH directory (pyenv shim folders last), then a few usual prefixes.
   Only absolute PATH entries outside the checkout are searched: a relative entry, one inside
   the repository around the cwd or any folder holding ``vimesync.toml``, or one inside our
   scratch folders is skipped, since a pull request could commit a ``python3.14`` there.

Failing that, a target *older* than the running interpreter is parsed by the running one with
``feature_version``; a newer one is an error naming the interpreter needed.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from vimesync.errors import BadInput
from vimesync.procrun import Bounds, Command, capture
from vimesync.safefs import Size, Text, find_root, lexical, marks_checkout
from vimesync.settings import installed

MIN_WORKER = (3, 8)  # _worker.py runs on 3.8+
_PROBE = "import sys;print(sys.implementation.name,*sys.version_info[:3])"
_PROBE_BOUNDS = Bounds(timeout=15.0, max_output=4096)


@dataclass(frozen=True)
class Interpreter:
    executable: str
    version: tuple[int, int, int]
    implementation: str = "cpython"
    feature_version: tuple[int, int] | None = None  # set when parsing an older grammar via feature_version

    @property
    def grammar(self) -> tuple[int, int]:
        return self.feature_version or (self.version[0], self.version[1])

    @property
    def cache_id(self) -> str:
        """What a parse result depends on besides the content: implementation, exact version, grammar."""
        v = ".".join(map(str, self.version))
        g = "{}.{}".format(*self.grammar)
        return f"{self.implementation}-{v}/{g}"

    def describe(self) -> str:
        """``/usr/bin/python3.12 (3.12.1)`` for ParseReport.interpreter."""
        v = ".".join(map(str, self.version))
        extra = "" if self.implementation == "cpython" else f" {self.implementation}"
        if self.feature_version:
            extra += ", feature_version={}.{}".format(*self.feature_version)
        return f"{self.executable} ({v}{extra})"


# What an interpreter needs to start (pyenv shims need their PYENV_* selection); nothing else of
# the job's environment (GITHUB_TOKEN, cloud credentials) reaches a process that parses PR code.
_CHILD_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "SYSTEMROOT",
    "PYENV_ROOT",
    "PYENV_VERSION",
)


def child_env() -> dict[str, str]:
    """A minimal environment for probes and parse workers, from the job's settings snapshot."""
    env = installed().child_env(allow=_CHILD_ENV, prefixes=("VIMESYNC_WORKER_",))
    env.setdefault("PATH", os.defpath)
    return env


# What the search for an interpreter reads (the module docstring): where the job keeps them.
_SEARCH_ENV = ("PATH", "HOME", "PYENV_ROOT", "UV_PYTHON_INSTALL_DIR")


def search_env() -> dict[str, str]:
    """The job's variables the search reads (``_SEARCH_ENV``, ``VIMESYNC_PYTHON_X_Y``), from its
    settings snapshot: the interpreter found is started with the same snapshot's environment."""
    return installed().child_env(allow=_SEARCH_ENV, prefixes=("VIMESYNC_PYTHON_",))


def running() -> Interpreter:
    return Interpreter(sys.executable, tuple(sys.version_info[:3]), sys.implementation.name)  # type: ignore[arg-type]


_probed: dict[str, Interpreter | None] = {}

PROBE_CACHE = "interpreters.json"  # in the cache folder: executable -> its stat and what it said
_MAX_PROBE_CACHE = 256 << 10
_MAX_PROBE_ENTRIES = 64


def _stat_key(exe: str) -> tuple[int, int, int, int, int] | None:
    """What must not change for a remembered probe to stand: the file that runs (symlinks
    followed), as (device, inode, size, mtime_ns, ctime_ns); a replaced binary changes its ctime."""
    try:
        st = os.stat(exe)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class _Probe:
    """What an interpreter said, against the stat it had (an entry of :data:`PROBE_CACHE`)."""

    stat: tuple[int, int, int, int, int]
    implementation: Annotated[str, Text(pattern=r"\w{1,40}", what="an implementation name")]
    version: tuple[int, int, int]


_Probes = Annotated[dict[Annotated[str, Text(max=4096)], _Probe], Size(_MAX_PROBE_ENTRIES)]


def _load_probes(directory: Path) -> dict[str, _Probe]:
    """The remembered probes; empty when the file is missing, unreadable or not ours."""
    from vimesync.safefs import decode, loads_json, read_input

    try:
        data = loads_json(
            read_input(directory / PROBE_CACHE, max_bytes=_MAX_PROBE_CACHE).decode("utf-8"),
            where=PROBE_CACHE,
        )
        probes: dict[str, _Probe] = decode(_Probes, data, where=PROBE_CACHE)
    except (BadInput, OSError, UnicodeDecodeError):
        return {}
    return probes


def _remembered(directory: Path, exe: str, key: tuple[int, ...]) -> Interpreter | None:
    entry = _load_probes(directory).get(exe)
    if entry is None or entry.stat != key:
        return None
    return Interpreter(exe, entry.version, entry.implementation)


def _remember(directory: Path, exe: str, key: tuple[int, int, int, int, int], found: Interpreter) -> None:
    """Best effort: a cache folder that cannot be written only costs the probe next time."""
    import json

    from vimesync.safefs import encode, write_atomic

    probes = _load_probes(directory)
    probes.pop(exe, None)
    while len(probes) >= _MAX_PROBE_ENTRIES:
        probes.pop(next(iter(probes)))
    probes[exe] = _Probe(key, found.implementation, found.version)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)  # as the parse cache makes it
        write_atomic(directory / PROBE_CACHE, json.dumps(encode(probes)).encode(), what="cache")
    except (BadInput, OSError):
        pass


def probe(executable: str | os.PathLike[str], *, cache_dir: Path | None = None) -> Interpreter | None:
    """Run ``executable`` to learn its version; None when it does not run (a shim, a broken install).

    With ``cache_dir``, what a working interpreter said is remembered there against its stat
    (see :func:`_stat_key`), and not asked again while that is unchanged: a run of
    ``patches check`` on a tree targeting another Python version saves one interpreter start."""
    join_prefetch()
    exe = os.fspath(executable)
    if exe in _probed:
        return _probed[exe]
    key = _stat_key(exe) if cache_dir is not None else None
    if cache_dir is not None and key is not None and (known := _remembered(cache_dir, exe, key)):
        _probed[exe] = known
        return known
    result = None
    try:
        # through the process runner: its group ended at the deadline or on Ctrl-C, what it
        # prints capped (a PATH entry's "python3.14" is not ours to trust)
        done = capture(Command([exe, "-I", "-S", "-c", _PROBE], Path(os.sep), child_env()), _PROBE_BOUNDS)
        m = re.fullmatch(rb"(\w+) (\d+) (\d+) (\d+)\s*", done.output)
        if done.code == 0 and m:
            version = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
            result = Interpreter(exe, version, m.group(1).decode())
    except OSError:
        result = None
    _probed[exe] = result
    if result is not None and cache_dir is not None and key is not None and _stat_key(exe) == key:
        _remember(cache_dir, exe, key, result)
    return result


def _numeric_desc(paths: list[Path]) -> list[Path]:
    def key(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.name))

    return sorted(paths, key=key, reverse=True)


def candidates(version: tuple[int, int], env: Mapping[str, str]) -> Iterator[str]:
    """Plausible paths of pythonX.Y, best first, not yet verified (``env``: see :func:`search_env`)."""
    x, y = version
    name = f"python{x}.{y}"
    home = Path(env.get("HOME") or Path.home())
    pyenv = Path(env.get("PYENV_ROOT") or home / ".pyenv") / "versions"
    if pyenv.is_dir():
        for d in _numeric_desc(list(pyenv.glob(f"{x}.{y}.*")) + list(pyenv.glob(f"{x}.{y}"))):
            yield str(d / "bin" / name)
    uv = Path(env.get("UV_PYTHON_INSTALL_DIR") or home / ".local/share/uv/python")
    if uv.is_dir():
        for d in _numeric_desc(list(uv.glob(f"cpython-{x}.{y}.*"))):
            yield str(d / "bin" / name)
    shims: list[str] = []  # pyenv shims fail unless a version is selected: try them last
    untrusted = _untrusted_roots(env.get("HOME"))
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder or not _trusted_path_entry(folder, untrusted, env):
            continue
        path = str(Path(folder) / name)
        if Path(folder).name == "shims":
            shims.append(path)
        else:
            yield path
    yield from shims
    for prefix in ("/usr/local/bin", "/usr/bin", "/opt/homebrew/bin", f"/opt/python/cp{x}{y}-cp{x}{y}/bin"):
        yield f"{prefix}/{name}"


def _untrusted_roots(home: str | None) -> list[Path]:
    """Folders whose content a pull request may have written: the checkout around the cwd and
    the system temp folder's ``vimesync-*`` scratch folders (matched by name, see below)."""
    cwd = lexical(os.getcwd())
    root = find_root(cwd / "x")
    if root == Path(root.anchor) or (home and root == lexical(home)):
        return []  # the cwd is not a checkout: excluding all of $HOME or / would exclude everything
    return [root]


def _trusted_path_entry(folder: str, untrusted: list[Path], env: Mapping[str, str]) -> bool:
    """True for an absolute PATH folder that lies outside every place a pull request writes."""
    if not os.path.isabs(folder):
        return False  # relative to the cwd, i.e. to the checkout
    tmp = lexical(tempfile.gettempdir())
    for path in {lexical(folder), lexical(os.path.realpath(folder))}:
        if any(path.is_relative_to(r) for r in untrusted):
            return False
        if (
            path.is_relative_to(tmp)
            and path != tmp
            and path.relative_to(tmp).parts[0].startswith("vimesync-")
        ):
            return False
        home = env.get("HOME")
        pyenv = lexical(env.get("PYENV_ROOT") or Path(home or "/nonexistent") / ".pyenv")
        for anc in (path, *path.parents):
            if anc == pyenv:
                break  # pyenv's own folders are a git clone of pyenv, not a checkout
            if marks_checkout(anc):
                return False  # inside a checkout (a --config elsewhere, the cwd outside it, $HOME)
            if home and anc == lexical(home):
                break
    return True


_prefetching: list[threading.Thread] = []  # prefetch() threads not yet joined


def prefetch(
    version: tuple[int, int],
    *,
    cache_dir: Path | None = None,
    then: Callable[[Interpreter], None] | None = None,
) -> None:
    """Begin :func:`find_interpreter` for ``version`` on a helper thread: its probes (an
    interpreter start each, ~10 ms) overlap what the caller does meanwhile, such as listing a
    source. Each probe's answer is kept for the process (``_probed``), so the caller's own
    :func:`find_interpreter` later, which first waits for the thread, answers at once; an error
    is left for that call to raise. ``then`` is called on the thread with the interpreter found
    (not when none is; what it raises is dropped: the caller does the same work itself then).
    Nothing starts when the running interpreter is the one and nothing is to follow."""
    if version == sys.version_info[:2] and then is None:
        return

    def run() -> None:
        try:
            found = find_interpreter(version, cache_dir=cache_dir)
            if then is not None:
                then(found)
        except Exception:  # noqa: BLE001 - the caller's own search raises it where it belongs
            pass

    thread = threading.Thread(target=run, name="vimesync-probe", daemon=True)
    _prefetching.append(thread)
    thread.start()


def join_prefetch() -> None:
    """Wait for the prefetch threads (not from one of them): one search at a time."""
    me = threading.current_thread()
    for thread in [t for t in _prefetching if t is not me]:
        thread.join()
        if thread in _prefetching:
            _prefetching.remove(thread)


def find_interpreter(
    version: tuple[int, int],
    *,
    env: Mapping[str, str] | None = None,
    prefer_exact: bool = True,
    cache_dir: Path | None = None,
) -> Interpreter:
    """An interpreter that parses with the X.Y grammar (see the module docstring for the search).

    ``prefer_exact=False`` skips the search when the running interpreter is newer and can use
    ``feature_version`` (faster to start, slightly less exact: feature_version is best effort).
    ``cache_dir``: where probes are remembered (see :func:`probe`); None asks every time.
    ``env``: the variables the search reads (None: the job's, :func:`search_env`).
    """
    join_prefetch()
    env = search_env() if env is None else env
    if version[0] != 3:
        raise BadInput(f"Python {version[0]}.{version[1]} is not supported: vimesync parses Python 3")
    x, y = version
    here = running()
    var = f"VIMESYNC_PYTHON_{x}_{y}"
    if env.get(var):
        found = probe(env[var], cache_dir=cache_dir)
        if found is None or found.version[:2] != version:
            got = "does not run" if found is None else "is {}.{}".format(*found.version[:2])
            raise BadInput(f"${var}={env[var]} {got}; it must be a python{x}.{y} interpreter")
        return found
    if here.version[:2] == version:
        return here
    newer_than_running = version > here.version[:2]
    if (prefer_exact or newer_than_running) and version >= MIN_WORKER:
        seen: set[str] = set()
        for path in candidates(version, env):
            if not os.path.isfile(path) or not os.access(path, os.X_OK):
                continue
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            found = probe(path, cache_dir=cache_dir)
            if found is not None and found.version[:2] == version:
                return found
    if not newer_than_running:
        return Interpreter(here.executable, here.version, here.implementation, feature_version=version)
    have = "{}.{}".format(*here.version[:2])
    raise BadInput(
        f"python{x}.{y} is needed to parse with the {x}.{y} grammar; install it, or parse with the"
        f' {have} grammar (python = "{have}" in the engine pin, or --python {have} where a command takes it)',
        hint=f"or point ${var} at a python{x}.{y} interpreter",
    )
