"""``vimesync init``: the files a downstream needs, planned as data (``plan.py``), their text
(``templates.py``); the CLI writes them."""
