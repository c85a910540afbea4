"""``python -m tumble``: the same entry point as the ``tumble`` command."""

import sys

from .cli import main

sys.exit(main())
