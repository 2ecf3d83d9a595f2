"""`python -m kbls` is the `kbls` command."""

import sys

from kbls.cli import main

sys.exit(main())
