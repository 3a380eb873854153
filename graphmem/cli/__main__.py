"""`python -m graphmem.cli`: the `graphmem` command."""

from graphmem.cli import main

main()
