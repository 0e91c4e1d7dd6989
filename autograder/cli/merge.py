"""``tapetrace merge PART.json... --json OUT.json``: joins the parts of a sharded run (autograder/scaleout/shard.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autograder.scaleout import shard as _shard


def run(args: argparse.Namespace) -> int:
    """``tapetrace merge PART.json... --json OUT.json [--csv OUT.csv]``."""
    from autograder.reports import report as _report

    try:
        results = _shard.merge(args.parts)
    except _shard.ShardError as err:
        print(f"tapetrace: {err}", file=sys.stderr)
        return 2
    try:
        if results:
            _report.write_json(results, args.json)
            from autograder.reports import receipt as _receipt  # the whole run's receipt (the parts write none)

            _receipt.write(_receipt.receipt(results), _receipt.sidecar(args.json))
        if args.csv:
            _report.write_csv(results, args.csv)
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
