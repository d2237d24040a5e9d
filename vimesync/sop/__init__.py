"""The sync procedure (sop/SYNC.md) as checkable gates: which apply (sop/gates.toml), the
evidence recorded by hand (sop/records/<sync>.toml), and their evaluation in order."""
