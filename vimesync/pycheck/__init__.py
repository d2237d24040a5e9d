"""Parse every Python file of a tree with the target Python's grammar, in parallel, cached.

Entry point: ``scan.parse_tree`` (``check.parse.parse_patched`` calls it for ``patches check``),
after ``target.resolve_target`` -> ``interp.find_interpreter``; ``plan`` works out what needs a
parse, ``pool`` runs the standalone ``_worker.py`` processes, ``cache`` remembers outcomes by git
blob id.
"""
