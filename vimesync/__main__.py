from vimesync.cli.app import run

run()
