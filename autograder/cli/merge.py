"""``tapetrace merge PART.json... --json OUT.json``: joins the parts of a sharded run (autograder/scaleout/shard.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autograder.scaleout import shard as _shard


def run(args: argparse.Namespace) -> int:
    """``tapetrace merge PART.json... --json OUT.json [--csv OUT.csv]``: the whole run's outputs, receipt included
    (the parts write none), written as ``grade`` writes its own (:data:`autograder.reports.outputs.GRADE_OUTPUTS`)."""
    from autograder.reports import outputs as _outputs

    reason = _outputs.check_outputs(args)
    if reason:
        print(f"tapetrace: {reason}", file=sys.stderr)
        return 2
    try:
        results = _shard.merge(args.parts)
    except _shard.ShardError as err:
        print(f"tapetrace: {err}", file=sys.stderr)
        return 2
    try:
        _outputs.write_results(_outputs.Written(results), _outputs.paths(args))
    except OSError as err:
        print(f"tapetrace: cannot write the results: {err}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"tapetrace: merged {len(args.parts)} part(s): {len(results)} submissions -> {args.json}",
              file=sys.stderr)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``merge`` and its options to the CLI's subparsers."""
    m = sub.add_parser("merge", help="join the parts of a sharded run (grade --shard) into one result")
    m.add_argument("parts", nargs="+", metavar="PART.json")
    m.add_argument("--json", metavar="OUT.json", required=True)
    m.add_argument("--csv", metavar="OUT.csv")
    m.add_argument("--quiet", action="store_true", help="no summary line")
    m.set_defaults(func=run)
    return m
