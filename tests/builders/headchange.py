"""A change to a tracked file of the demo's sync worktree, committed on top of its head and put
back after (tests only): a record binds to HEAD and is refused while tracked files differ from
it, so a test that configures the checkout (``sop/gates.toml``, ``vimesync.toml``) before it
records commits that configuration, as a maintainer does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from tests.builders.gitrepo import commit_env
from vimesync import git
from vimesync.demo.build import Demo


def commit_change(demo: Demo, path: str, text: str, message: str = "configure") -> Demo:
    """``path`` (relative to the sync worktree) written as ``text`` (never through a link) and
    committed: the demo with that commit as its head."""
    file = demo.downstream / path
    file.unlink(missing_ok=True)
    file.write_text(text)
    git.run(demo.downstream, ["add", "--", path])
    git.run(demo.downstream, ["commit", "-qm", message, "--", path], env=commit_env())
    return replace(demo, head=git.resolve(demo.downstream, "HEAD"))


@contextmanager
def committed_change(demo: Demo, path: str, text: str) -> Iterator[Demo]:
    """:func:`commit_change` for the time of a test; after it, the worktree is reset to the
    demo's head again (untracked files, such as the records written, are the caller's)."""
    try:
        yield commit_change(demo, path, text)
    finally:
        git.run(demo.downstream, ["reset", "-q", "--hard", demo.head])
