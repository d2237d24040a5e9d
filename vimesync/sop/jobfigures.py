"""What a job vimesync ran wrote for the record (``sop record run --junit PATH --figures PATH``),
read after it ended: files the job (the repository's code) wrote, so hostile.

- ``--junit``: JUnit XML counted as ``sop record tests`` counts it (:mod:`vimesync.sop.junitread`:
  defused, bounded), summed over the files; each must have been written during the run (a stale
  file from an earlier run is not this run's evidence).
- ``--figures``: a flat JSON object of numbers and short one-line strings, at most
  :data:`MAX_JOB_FIGURES` of them, names of plain characters (spaces allowed: ``observed FD
  count``), the file at most :data:`MAX_FIGURES_BYTES` and UTF-8; nesting is refused.

Every file is opened without following a symlink (at its name or a folder below the checkout
root); an error names the file and the figure's position, never its content."""

from __future__ import annotations

import math
import os
from pathlib import Path

from vimesync.errors import BadInput, ConfigError
from vimesync.sop.resultvalues import FIGURE_NAME, MAX_VALUE, UNPRINTABLE

MAX_FIGURES_BYTES = 1024 * 1024
MAX_JOB_FIGURES = 100
MAX_JUNIT_FILES = 20
SLACK = 2.0  # seconds: file systems that keep whole-second (or 2 s) times


def job_path(path: Path, root: Path) -> Path:
    """``path`` as the job saw it: relative paths from the checkout root, where it ran."""
    return path if path.is_absolute() else root / path


def read_job_junit(paths: tuple[Path, ...], root: Path, since: float) -> tuple[int, int, int, int]:
    """(passed, failed, errors, skipped) over the JUnit files the run wrote."""
    from vimesync.safefs import stat_input
    from vimesync.sop.junitread import read_junit

    if len(paths) > MAX_JUNIT_FILES:
        raise BadInput(f"--junit: at most {MAX_JUNIT_FILES} files")
    totals = [0, 0, 0, 0]
    for given in paths:
        path = job_path(given, root)
        try:
            written = stat_input(path, root=root if _inside(path, root) else None).st_mtime
        except ConfigError as exc:
            raise BadInput(f"--junit {exc.message}; nothing recorded") from None
        if written < since - SLACK:
            raise BadInput(f"--junit {str(given)[:100]!r}: not written by this run; nothing recorded")
        counts = read_junit(path)
        for i, n in enumerate((counts.passed, counts.failed, counts.errors, counts.skipped)):
            totals[i] += n
    return totals[0], totals[1], totals[2], totals[3]


def read_job_figures(given: Path, root: Path) -> tuple[tuple[str, str], ...]:
    """The figures the job wrote, each value as text (numbers as JSON writes them)."""
    from vimesync.safefs import loads_json, read_input

    path = job_path(given, root)
    where = f"--figures {str(given)[:100]!r}"
    try:
        data = read_input(
            path, max_bytes=MAX_FIGURES_BYTES, root=root if _inside(path, root) else None, what="figures file"
        )
        text = data.decode("utf-8")
        doc = loads_json(text, where=where)
    except ConfigError as exc:
        message = exc.message if exc.message.startswith("--figures") else f"--figures {exc.message}"
        raise BadInput(f"{message}; nothing recorded") from None
    except UnicodeDecodeError:
        raise BadInput(f"{where}: not UTF-8; nothing recorded") from None
    if not isinstance(doc, dict):
        raise BadInput(f"{where}: expected a JSON object of figures; nothing recorded")
    if len(doc) > MAX_JOB_FIGURES:
        raise BadInput(f"{where}: {len(doc):,} figures, at most {MAX_JOB_FIGURES}; nothing recorded")
    return tuple(_figure(where, i, k, v) for i, (k, v) in enumerate(doc.items(), 1))


def _figure(where: str, i: int, key: object, value: object) -> tuple[str, str]:
    if not isinstance(key, str) or not FIGURE_NAME.fullmatch(key):
        raise BadInput(
            f"{where}: figure #{i}: expected a name of 1-80 letters, digits, spaces and"
            " . _ ( ) / % # : , + -; nothing recorded"
        )
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadInput(f"{where}: figure #{i}: expected a number or a short string; nothing recorded")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput(f"{where}: figure #{i}: expected a finite number; nothing recorded")
    if isinstance(value, str) and (len(value) > MAX_VALUE or UNPRINTABLE.search(value)):
        raise BadInput(
            f"{where}: figure #{i}: expected one line of at most {MAX_VALUE} characters; nothing recorded"
        )
    text = value if isinstance(value, str) else repr(value)
    return key, text


def _inside(path: Path, root: Path) -> bool:
    here, top = os.path.abspath(path), os.path.abspath(root)
    return here.startswith(top.rstrip(os.sep) + os.sep)
