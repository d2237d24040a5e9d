"""The one choke point for files named by untrusted input, and for the files we write.

Everything in a checkout is written by whoever opened the pull request, so a file it names is
opened without following a symlink anywhere inside the repository: the repository root (see
``find_root``) is opened as given, then every folder below it with ``O_NOFOLLOW|O_DIRECTORY``
relative to its parent's descriptor, then the file itself with ``O_NOFOLLOW|O_NONBLOCK`` (a FIFO
cannot hang us). Only regular files are read, never more than ``max_bytes``, and nothing under
``/proc``, ``/dev`` or ``/sys``. Folders above the repository (``/home/runner``) are the job's
and are trusted. Errors name the path and the reason, never a byte of content.

Outputs (``--output``, ``--export``, the review ledger) get the same walk, and files are
written atomically: a temp file created ``O_EXCL|O_NOFOLLOW`` in the target's folder, then
``os.replace``.

The package, by concern: ``reach`` (the walk, the root, the errors), ``reads`` (bounded reads),
``loads`` (bounded TOML/JSON), ``decode`` (a loaded document into a dataclass), ``writes``
(checked and atomic outputs), ``scratchdirs`` (scratch folders), ``escape`` (untrusted text in
messages). Callers use this package's names.
"""

from __future__ import annotations

from vimesync.safefs.decode import (
    CONTROL,
    LIMITS,
    DecodeError,
    DecodeLimits,
    Range,
    Size,
    Text,
    decode,
    decode_json,
    decode_toml,
    encode,
    open_keys,
)
from vimesync.safefs.escape import excerpt
from vimesync.safefs.loads import MAX_KEY_PARTS, MAX_NESTING, loads_json, loads_toml
from vimesync.safefs.reach import Missing, NotARegularFile, find_root, lexical, marks_checkout, pseudo_area
from vimesync.safefs.reads import MAX_CONFIG_BYTES, input_kind, read_input, read_text_input, stat_input
from vimesync.safefs.scratchdirs import remove_tree, scratch_dir
from vimesync.safefs.writes import check_output_path, ensure_output_dir, write_atomic

__all__ = [
    "CONTROL",
    "LIMITS",
    "DecodeError",
    "DecodeLimits",
    "Range",
    "Size",
    "Text",
    "decode",
    "decode_json",
    "decode_toml",
    "encode",
    "open_keys",
    "MAX_CONFIG_BYTES",
    "MAX_KEY_PARTS",
    "MAX_NESTING",
    "Missing",
    "NotARegularFile",
    "check_output_path",
    "ensure_output_dir",
    "excerpt",
    "find_root",
    "input_kind",
    "lexical",
    "loads_json",
    "loads_toml",
    "marks_checkout",
    "pseudo_area",
    "read_input",
    "read_text_input",
    "remove_tree",
    "scratch_dir",
    "stat_input",
    "write_atomic",
]
