"""The changed-path audit of a sync and its review ledger."""
