"""The one place vimesync talks to git.

Every call runs ``git`` with an explicit ``cwd`` (or ``--git-dir``), a scrubbed environment
(no inherited GIT_* variables or secrets, no system/global config, no prompts, no optional
locks) and machine-readable (``-z``) output parsed by small pure helpers. Read paths never
touch a repository's work tree, index or refs. Nothing else in vimesync runs git directly.

Repositories are hostile input (a pull request may commit one, or name one in a pin), so no
command may run because of what a repository says. Every call carries ``SAFE_CONFIG`` (command
scope beats the repository's own config) and ``SAFE_ENV``; every diff-producing command gets
``--no-ext-diff --no-textconv``; and before the first command in a repository its config is
listed (includes followed, as git itself reads them) and the repository refused, naming the key
(never its value), when a key is set that these cannot disarm. The table, key by key:

==================================================  ========  ==========================================
key (``<x>`` any name)                              verdict   why
==================================================  ========  ==========================================
extensions.partialClone, remote.<x>.promisor,       refuse    lazy fetch: any missing object starts
remote.<x>.partialCloneFilter                                 ``git fetch`` (``uploadpack``, helpers...)
filter.<x>.clean / .smudge / .process               refuse    commands; -c cannot name unknown drivers
                                                              (git-lfs's own three values are allowed,
                                                              and switched off by -c in every call:
                                                              a carry checks out files whose
                                                              .gitattributes the upstream wrote)
merge.<x>.driver                                    refuse    a command; same
core.worktree (unless it is the folder we use,      refuse    reads files outside what we were given
or one of its parents)
objects/info/alternates outside the git dir         refuse    reads objects from elsewhere on the machine
diff.<x>.textconv, diff.<x>.command, diff.external  disarmed  ``--no-textconv --no-ext-diff`` (+ -c)
core.fsmonitor, core.hooksPath (and hooks/*)        disarmed  -c core.fsmonitor=false, hooksPath=/dev/null
core.pager, pager.<cmd>                             disarmed  --no-pager, -c core.pager=cat, no tty
log.showSignature, gpg.program, gpg.<fmt>.program   disarmed  -c showSignature=false, programs=/dev/null
credential.helper, core.askPass                     disarmed  -c credential.helper= (resets), askPass=
core.sshCommand, core.gitProxy, remote.<x>.vcs,     disarmed  transports only: GIT_ALLOW_PROTOCOL=""
remote.<x>.uploadpack/receivepack, url.<x>.*,                 allows none (``clone``: ``file`` only),
protocol.<x>.allow, core.alternateRefsCommand                 and no lazy fetch (refused above);
                                                              ``push`` (the bot's one write)
                                                              and its ``ls-remote``: ``https``
                                                              and ``file``, the token in the
                                                              child's environment only
core.attributesFile                                 disarmed  -c core.attributesFile=/dev/null
refs/replace/*, core.useReplaceRefs, info/grafts    disarmed  GIT_NO_REPLACE_OBJECTS, GIT_GRAFT_FILE
color.*                                             disarmed  -c color.ui=false (output we parse)
include.path, includeIf.<cond>.path                 checked   listed with the including file's keys
core.editor, sequence.editor, alias.*, difftool.*,  allowed   never run by the commands vimesync runs
mergetool.*, sendemail.*, web.browser,                        (no editing, no aliases: builtins win)
submodule.<x>.update, uploadpack.packObjectsHook
diff.<x>.xfuncname / funcname                       allowed   a regex, not a command
trace2.*                                            allowed   read from system/global config only
==================================================  ========  ==========================================

The verdict is cached per git directory for the process. ``init`` and ``clone`` create
repositories and are not inspected (their target is ours).

The package, by concern: ``disarm`` (the command line and environment), ``repocheck`` (refusing
a repository before its first use), ``process`` (running git), ``objects`` (ids, modes, trees,
blobs), ``repos`` (finding a repository, resolving a revision). Callers use this package's names
(``git.run``, ``git.resolve``, ``git.CatFile``...), never a submodule's; ``push`` is the one
push (a lease, the token through the environment), ``remote_head`` its one question of a remote.
"""

from __future__ import annotations

from vimesync.errors import GitError, GitTimeout
from vimesync.git.disarm import git_env
from vimesync.git.objects import (
    MODE_DIR,
    MODE_EXEC,
    MODE_FILE,
    MODE_GITLINK,
    MODE_LINK,
    NULL_SHA,
    CatFile,
    TreeEntry,
    blob_oid,
    cat_blobs,
    ls_tree,
    parse_ls_tree,
    parse_tree,
)
from vimesync.git.process import popen, run, run_ok, run_status, stream
from vimesync.git.push import Pushed, push, remote_head, unpush
from vimesync.git.repocheck import inspect_repository, parse_config_list, refused_key
from vimesync.git.repos import (
    common_dir,
    git_dir,
    is_ancestor,
    is_repo,
    modified_paths,
    object_store,
    parse_status_z,
    repo_at,
    resolve,
)

__all__ = [
    "MODE_DIR",
    "MODE_EXEC",
    "MODE_FILE",
    "MODE_GITLINK",
    "MODE_LINK",
    "NULL_SHA",
    "CatFile",
    "GitError",
    "GitTimeout",
    "Pushed",
    "TreeEntry",
    "blob_oid",
    "cat_blobs",
    "common_dir",
    "git_dir",
    "git_env",
    "inspect_repository",
    "is_ancestor",
    "is_repo",
    "ls_tree",
    "modified_paths",
    "object_store",
    "parse_ls_tree",
    "parse_tree",
    "parse_config_list",
    "parse_status_z",
    "push",
    "remote_head",
    "unpush",
    "popen",
    "refused_key",
    "repo_at",
    "resolve",
    "run",
    "run_ok",
    "run_status",
    "stream",
]
