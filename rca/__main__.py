"""``python -m rca`` is the ``rca`` command."""

from rca.cli import main

main()
