"""Config load time on a hostile 1 MiB vimesync.toml of [[upstream.translate]]-looking lines.

Issue 18 finding 15: counting each header's line from the start of the file was quadratic
(~11 s for 40,000 header-looking lines in a string); one pass is ~0.2 s.

    python bench/bench_config.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from vimesync.config import load_config


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    os.mkdir(folder / ".git")
    body = '[[upstream.translate]]\npattern = "a"\nreplace = "b"\n'
    text = '[upstream]\nname = """\n' + "[[upstream.translate]]\n" * 40_000 + '"""\n' + body
    (folder / "vimesync.toml").write_text(text)
    start = time.perf_counter()
    load_config(folder / "vimesync.toml")
    print(f"load_config of {len(text):,} bytes: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
