"""Text rendering of every command: with cli/output.py and cli/progress.py, the only place that knows rich."""
