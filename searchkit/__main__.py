"""Run the command line: ``python -m searchkit``."""

from __future__ import annotations

import sys

from searchkit.cli.main import main

sys.exit(main())
