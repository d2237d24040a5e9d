"""Text rendering of every command: the only place (with cli/output.py) that knows rich."""
