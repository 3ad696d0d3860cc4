"""`python -m wirebroker`: the same as the `wirebroker` console script."""

import sys

from wirebroker.cli import main

sys.exit(main())
