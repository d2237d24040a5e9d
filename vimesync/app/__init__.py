"""The application layer: one use case per command.

Each use case is a plain function that takes a typed request (a frozen dataclass) and returns a
typed result (a frozen dataclass carrying ``kind``, ``ok`` and ``exit_code``). No printing, no
exit: the CLI parses options into the request, calls the use case and renders the result, and
``vimesync sync`` can call the same functions in sequence. The sync's facts (downstream,
upstream, range, baseline, head, sync name, engines) are resolved once, in
:mod:`vimesync.app.context`.
"""
