"""``python -m dfil``: the ``dfil`` command."""

import sys

from dfil.cli import main

sys.exit(main())
