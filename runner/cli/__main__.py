"""``python -m runner.cli``: the ``fbench`` command."""

from runner.cli.app import main

main()
