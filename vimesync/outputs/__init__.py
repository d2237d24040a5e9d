"""CI-native outputs of a check: JUnit XML, GitHub Actions annotations, the job's step summary.

Any command that checks something turns its result into :class:`~vimesync.outputs.model.Findings`
(``findings.py`` does so for ``patches check``, ``audit`` and ``report``); the writers here know
nothing of patches or audits."""
