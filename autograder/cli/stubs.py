"""``tapetrace stubs``: regenerates exercises/ from solutions/ (autograder/builders/stubs.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``stubs`` to the CLI's subparsers."""
    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/",
                       description="Regenerate exercises/ (the stubs) from solutions/: each `# BEGIN SOLUTION` ... "
                                   "`# END SOLUTION` region becomes `# YOUR CODE HERE` and "
                                   "`raise NotImplementedError(...)`.")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    """Writes the stubs; prints each file written."""
    from autograder.builders import stubs as _stubs

    for path in _stubs.write_stubs():
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0
