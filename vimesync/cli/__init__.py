"""The typer CLI: thin commands that parse options, call core, and render."""
