"""Parse every Python file of a tree with the target Python's grammar, in parallel, cached.

Entry points: ``run.parse_patched(source, changed, ...)`` for ``patches check``; underneath,
``target.resolve_target`` -> ``interp.find_interpreter`` -> ``tree.parse_tree`` (``pool`` runs the
standalone ``_worker.py`` processes, ``cache`` remembers outcomes by git blob id).
"""
