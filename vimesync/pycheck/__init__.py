"""Parse every Python file of a tree with the target Python's grammar, in parallel, cached."""
