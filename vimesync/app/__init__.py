"""The application layer: one use case per command.

Each use case is a plain function that takes the command's workspace (every fact of the sync
resolved once: :mod:`vimesync.app.workspace`) and a typed request built from the flag groups
(:mod:`vimesync.app.flags`), and returns a typed result (a frozen dataclass carrying ``kind``,
``ok`` and ``exit_code``). No printing, no exit: the CLI parses options into the flag groups,
resolves the workspace, calls the use case and renders the result; ``vimesync sync`` calls the
same steps (:mod:`vimesync.app.steps`) in sequence.
"""
