"""``python -m rankscope`` is the ``rankscope`` command."""

import sys

from rankscope.cli.main import main

sys.exit(main())
