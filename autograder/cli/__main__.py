"""``python -m autograder.cli``: the ``tapetrace`` command."""

import sys

from autograder.cli.app import main

sys.exit(main())
