"""vimesync: keep a downstream fork in sync with its upstream and its pinned engine patch stack."""

__version__ = "0.1.0"
