"""``python -m convection``: the ``convection`` command."""

from convection.cli.main import main

main()
