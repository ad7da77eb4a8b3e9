"""``python -m whileai`` runs the command line."""

from whileai.cli import main

raise SystemExit(main())
