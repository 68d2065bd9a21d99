"""`python -m kwire` runs the command-line interface."""

from kwire.cli.main import main

main()
