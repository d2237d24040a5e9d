"""The embedded example: built from shipped data, run end to end by ``vimesync demo``."""
