"""The one render home of the CLI: each command's text (rich), JSON, CI outputs from its result."""
