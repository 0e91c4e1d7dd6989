"""``tapetrace review``: the TA's review page, a local web application over the class's results.

    tapetrace review results.json [--overrides overrides.csv] [--roster roster.csv] [--port N]

Serves, at ``http://127.0.0.1:PORT/?token=...`` (printed; 127.0.0.1 only, a random port unless ``--port``, a
random token required on every request), the class's list (filter and sort by exercise, failing check,
catalogued mistake, status), each student's exercise (the graded code, lines numbered and highlighted where a
message points, the failing checks' messages beside it, earlier overrides), and a form that appends a TA's
override to ``--overrides`` after the same validation ``report``, ``gradebook``, ``regrade`` and ``feedback``
give that file (autograder/reports/review.py). Without ``--overrides`` the page is read-only. Students are named
in the file as everywhere: the roster ``student_id`` with ``--roster``, else the submission's path as the
results hold it. Exit status: 0 when stopped (Ctrl-C); 2 when it cannot start (one line).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

DESCRIPTION = ("The TA's review page: a local web application (127.0.0.1, a token in the URL) to read each "
               "student's graded code beside the failing checks and record overrides.")
STARTED = "tapetrace review: {n} submission(s) from {results}; overrides {where}"
OPEN = "open {url}\n(Ctrl-C stops it; the token in the URL is the page's key: do not share it)"
CANNOT_START = "tapetrace review: {why}"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``review`` and its options to the CLI's subparsers."""
    p = sub.add_parser("review", help="the TA's review page: code beside failing checks, overrides",
                       description=DESCRIPTION)
    p.add_argument("results", metavar="GRADES.json", help="tapetrace grade's --json file")
    p.add_argument("--overrides", metavar="OVERRIDES.csv",
                   help="the overrides file a TA's override is appended to (created with its header when absent; "
                        "the same file report, gradebook and feedback read); without it the page is read-only")
    p.add_argument("--roster", metavar="ROSTER.csv",
                   help="as gradebook's: names students, and the overrides file then names them by student_id")
    p.add_argument("--port", type=int, default=0, metavar="N", help="the port on 127.0.0.1 (default: a free one)")
    p.set_defaults(func=run)
    return p


def prepare(args: argparse.Namespace) -> Any:
    """The :class:`autograder.reports.review.Review` the options name, checked as the other commands check them.

    Raises:
        ReviewError: the results, roster or overrides file cannot be used (one line naming the file).
    """
    from pathlib import Path

    from autograder.reports import gradebook as _gradebook
    from autograder.reports import overrides as _overrides
    from autograder.reports import review as _review
    from autograder.reports.summary import ReportError, read_inputs

    try:
        results, notes = read_inputs([args.results])
        roster = _gradebook.read_roster(args.roster) if args.roster else None
        if args.overrides:
            _overrides.refuse_inside_submissions(args.overrides, results)
            target = Path(args.overrides)
            if target.exists():
                _overrides.apply(results, _overrides.read(args.overrides), roster)
            elif not target.parent.is_dir():
                raise _review.ReviewError(f"{args.overrides}: its folder does not exist")
    except (OSError, UnicodeDecodeError, ReportError, _gradebook.GradebookError, _overrides.OverrideError) as err:
        raise _review.ReviewError(str(err).splitlines()[0] if str(err) else type(err).__name__) from None
    return _review.Review(results, args.results, args.overrides, roster, notes)


def serve(app: Any, port: int = 0) -> Any:
    """A threaded WSGI server (Werkzeug's, the framework's own) for ``app`` on 127.0.0.1 (never another address).

    Returns:
        The server, bound (``server.port``); ``serve_forever()`` serves it.
    """
    import logging

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no request log: the first URL holds the token
    return make_server("127.0.0.1", port, app, threaded=True)


def run(args: argparse.Namespace) -> int:
    """``tapetrace review``: serves the page until Ctrl-C; returns the exit status."""
    import secrets

    from autograder.core.text import terminal
    from autograder.reports import review as _review

    try:
        review = prepare(args)
    except _review.ReviewError as err:
        print(terminal(CANNOT_START.format(why=err)), file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(32)
    try:
        server = serve(None, args.port)
    except OSError as err:
        print(terminal(CANNOT_START.format(why=f"cannot listen on 127.0.0.1:{args.port}: {err.strerror or err}")),
              file=sys.stderr)
        return 2
    server.app = _review.create_app(review, token, server.port)
    print(terminal(STARTED.format(n=len(review.results), results=args.results,
                                  where=args.overrides or "none: read-only (give --overrides FILE to record them)")))
    print(OPEN.format(url=f"http://127.0.0.1:{server.port}/?token={token}"), flush=True)
    import signal
    import threading

    def stop(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if main else None  # `kill` stops it as Ctrl-C does
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
        server.server_close()
        review.close()
    return 0
