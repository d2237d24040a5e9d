"""A cold parse begun early: while the caller still prepares the rest of the tree (applies the
patch stack), the workers start up and compile the largest files it already knows it will parse.

``patches check`` knows, once the source is listed and the stack is read, every source file no
patch names; with nothing of the interpreter's cached, each will be parsed, so there is no reason
to wait for the stack to apply. :func:`begin_parse` starts the pool and hands it the largest of
those files (keyed file jobs, idents ``0..n-1``); :func:`vimesync.pycheck.scan.parse_tree` takes
the pool with them in flight, or leaves it (its workers stopped) when the tree turned out other
than announced. Leaving the :class:`EarlyParse` (``with``) stops whatever no parse took.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vimesync.pycheck.channel import ParseJob
from vimesync.pycheck.interp import Interpreter
from vimesync.pycheck.model import PyFile
from vimesync.pycheck.pool import PRIME_INFLIGHT, ParsePool


@dataclass
class EarlyParse:
    pool: ParsePool
    interpreter: Interpreter
    env: str  # the cache's name for the interpreter and worker
    paths: list[str] = field(default_factory=list)  # the files in flight, ident i = paths[i]

    def __enter__(self) -> EarlyParse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.__exit__(*exc)


def begin_parse(
    files: Iterable[PyFile], interpreter: Interpreter, env: str, pool: ParsePool, *, max_size: int
) -> EarlyParse | None:
    """Start ``pool`` (unless the caller did) and send it the largest ``files`` (on disk, within
    ``max_size``), for a cold parse (the caller asked the cache); None when there are none: then
    nothing is started here, and a pool the caller started is the caller's to stop."""
    on_disk = [f for f in files if f.file is not None and f.path.endswith(".py") and 0 <= f.size <= max_size]
    on_disk.sort(key=lambda f: -f.size)
    first = on_disk[: pool.jobs * PRIME_INFLIGHT]
    if not first:
        return None
    pool.start()
    jobs = [ParseJob(i, file=f.file, size=f.size, keyed=True) for i, f in enumerate(first)]
    sent = pool.prime(jobs)
    return EarlyParse(pool, interpreter, env, [f.path for f in first[:sent]])
