"""`python -m featcheck` runs the command-line interface."""

from featcheck.cli import main

main()
