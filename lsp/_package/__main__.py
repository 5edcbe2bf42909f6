"""``python -m mdseek`` runs the command line."""

from mdseek.lsp.cli import main

raise SystemExit(main())
