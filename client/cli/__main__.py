"""`python -m ascrun.cli`: the `ascrun` command."""
import sys

from .main import main

sys.exit(main())
