"""Engine patch stacks: series files, DEP-3 headers, diff parsing, a byte-exact applier."""
