"""``tapetrace similarity``: pairwise similarity per exercise, template removed (autograder/reports/similarity.py).

    tapetrace similarity SUBMISSION... --out DIR [--threshold 0.5] [--top 20] [--only ex01_torch_mlp,...]

Needs copydetect (``pip install 'tapetrace[similarity]'``). Exit status 0 (a submission that could not be compared is left out with a note saying why), or 2
with a one-line reason.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> int:
    """``tapetrace similarity``: writes the pages, pairs.csv and the MOSS/JPlag export."""
    from autograder.cli.grade import _parse_only
    from autograder.reports import similarity as _similarity

    if args.jobs is not None and args.jobs < 1:
        print("tapetrace similarity: --jobs must be >= 1", file=sys.stderr)
        return 2
    if not 0.0 <= args.threshold <= 1.0:
        print("tapetrace similarity: --threshold must be between 0 and 1", file=sys.stderr)
        return 2
    try:
        only = _parse_only(args.only)
    except ValueError as err:
        print(f"tapetrace similarity: {err}", file=sys.stderr)
        return 2
    for p in args.submissions:
        if not Path(p).exists():
            print(f"tapetrace similarity: no such file or directory: {p}", file=sys.stderr)
            return 2
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"tapetrace similarity: --out {out}: exists and is not a directory", file=sys.stderr)
        return 2
    try:
        done = _similarity.run(args.submissions, out, threshold=args.threshold, top=args.top,
                               max_share=args.max_share, exercises=only, jobs=args.jobs)
    except _similarity.SimilarityError as err:
        print(f"tapetrace similarity: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"tapetrace similarity: cannot write {out}: {err}", file=sys.stderr)
        return 2
    from autograder.core.text import terminal

    for n in done["notes"]:  # a submission left out, and why (the rest were compared)
        print(f"tapetrace similarity: note: {terminal(n)}", file=sys.stderr)
    print(f"wrote {out / 'index.html'} ({len(done['exercises'])} exercise(s), {done['pairs']} pair(s) at or above "
          f"{args.threshold:g})")
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``similarity`` and its options to the CLI's subparsers."""
    g = sub.add_parser("similarity", help="pairwise code similarity per exercise, template removed (copydetect)")
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    g.add_argument("--out", default="similarity", metavar="DIR", help="output folder (default: similarity/)")
    g.add_argument("--threshold", type=float, default=0.5, help="pairs.csv lists pairs at or above it (default 0.5)")
    g.add_argument("--top", type=int, default=20, help="pairs shown side by side per exercise (default 20)")
    g.add_argument("--max-share", type=float, default=0.1,
                   help="code found in more than this share of submissions (and more than 10) is ignored")
    g.add_argument("--only", metavar="ex04_jax_mlp,...")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="processes for fingerprinting (default: the CPUs this process may use, at most 8)")
    g.set_defaults(func=run)
    return g
