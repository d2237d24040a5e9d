from vimesync.cli.app import main

main()
