"""The sync bot's pure core (``vimesync bot``): what a scheduled run observed, the plan it makes
of it (:mod:`~vimesync.bot.plan`), and the text it writes to GitHub (:mod:`~vimesync.bot.text`).
The use case that observes and performs is :mod:`vimesync.app.bot`."""
