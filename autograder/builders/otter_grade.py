"""The engine's run over one submission inside the otter zip: ``python -m autograder.builders.otter_grade``.

The plugin (:func:`autograder.builders.otter.plugin_before_execution`) starts it in a fresh process with
the zip's ``files/`` as ``PYTHONPATH`` and a time limit: it grades the submission file with the zip's
settings (seed, device, timeout, jobs, required isolation) in one session of the engine
(:func:`autograder.engine.session.grade`: the same isolation check, sandboxed workers, row assembly and verdicts
as ``tapetrace grade``; SIGTERM stops it cleanly) and writes the result JSON the zip's test files read: the
submission's row (docs/grading-contract.md), or the refusal's ``error``, ``message`` and ``isolation``. Unlike
the bridge, it is imported as a module of the zip's package.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

from autograder.builders import otter as _bridge
from autograder.core.records import ResultRow


def _without_outputs(submission: str) -> str:
    """A copy of a notebook without cell outputs (plots can outgrow the loader's size cap); else the path.

    The copy is a hidden file beside the submission: the engine then hides that whole folder from
    the student's workers. The notebook is read as the loader reads (never through a link).
    """
    from pathlib import Path

    from autograder.submissions import loader as _loader

    if not submission.endswith(".ipynb"):
        return submission
    try:
        nb = json.loads(_loader.read_regular_text(Path(submission), _loader.MAX_NOTEBOOK_BYTES))
        for cell in nb.get("cells", []):
            if isinstance(cell, dict):
                cell.pop("attachments", None)
                if cell.get("cell_type") == "code":
                    cell["outputs"] = []
    except (OSError, ValueError, AttributeError, _loader.Refused, _loader.SubmissionError):
        return submission  # the engine reports what is wrong with it
    path = os.path.join(os.path.dirname(os.path.abspath(submission)), f".tapetrace-{os.path.basename(submission)}")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh)
    except OSError:
        return submission
    return path


def _lock_private(base: str) -> None:
    """The zip's private parts readable by root only (a student worker with its own uid cannot read them)."""
    for rel, mode in (("solutions", 0o700), (os.path.join("autograder", "hidden"), 0o700),
                      (os.path.join("autograder", _bridge.SETTINGS), 0o600)):
        path = os.path.join(base, rel)
        if os.path.exists(path) and not os.path.islink(path):
            try:
                os.chmod(path, mode)
            except OSError:
                pass


# Seconds the engine gives itself on the otter path unless the zip's settings say ``deadline``: Gradescope's
# default limit is 10 minutes for everything (the image's start, otter, the engine), and a run it stops
# shows the student nothing.
OTTER_DEADLINE = 540.0


def grade_main(submission: str, out: str) -> int:
    """``python -m autograder.builders.otter_grade SUBMISSION --out JSON``: the engine over the submission.

    Returns:
        0 once the result is written (a refusal too); 143 when SIGTERM stopped it (nothing written).
    """
    import time

    from autograder.core.i18n import render
    from autograder.engine import GradingRun
    from autograder.engine import session as _session
    from autograder.sandbox import isolate as _sandbox
    from autograder.workers import envelope as _envelope

    base = _bridge._base()
    settings, _raw = _bridge._read_settings(base)
    if os.geteuid() == 0:
        _lock_private(base)
    seed = settings.get("seed")
    if seed is None:
        with open(submission, "rb") as fh:
            blob = settings["salt"].encode() + fh.read()
        seed = int.from_bytes(hashlib.sha256(blob).digest()[:4], "big") % 2**31

    def _terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _terminate)  # while grading, the session's own handling (Ctrl-C) applies
    started = time.monotonic()
    exercises = list(settings["exercises"])
    run = GradingRun(device=settings["device"], timeout=float(settings["timeout"]), seed=seed,
                     lang=settings["lang"], exercises=exercises)
    print(f"tapetrace: {run.envelope.describe()}", file=sys.stderr)
    if run.plan.refuse:  # the container cannot hold one exercise at a time: say so, grade nothing
        try:
            iso = run.measure_isolation()
        finally:
            run.close()
        print(f"tapetrace: {_sandbox.describe(iso)}", file=sys.stderr)
        print(f"tapetrace: {run.plan.refuse}", file=sys.stderr)
        return _write(out, {"error": run.plan.refuse, "message": render("MACHINE_TOO_SMALL", settings["lang"]),
                            "envelope": _envelope.as_record(run.envelope), "isolation": iso})
    wanted = settings.get("require_isolation", "container")

    def ready(notes: str) -> None:  # the autograder's log (instructors): the isolation obtained, the run's notes
        print(f"tapetrace: {_sandbox.describe(dict(run.isolation))}", file=sys.stderr)
        for note in notes.splitlines():
            print(f"tapetrace: note: {note}", file=sys.stderr)

    path = _without_outputs(submission)
    rows: list[ResultRow] = []
    try:
        with _session.Interrupts() as interrupts:
            # the run ends before Gradescope's limit (otter then needs its share): what is not graded by
            # then is `ungraded` and shows as such, instead of a global timeout that shows nothing
            outcome = _session.grade(
                lambda: run, [path], exercises, interrupts=interrupts, jobs=int(settings["jobs"]),
                on_result=rows.append, deadline=started + float(settings.get("deadline") or OTTER_DEADLINE),
                require_isolation=None if wanted == "minimal" else wanted, on_ready=ready)
    finally:
        if path != submission:
            os.unlink(path)
    if outcome.interrupted:
        return 143
    refused = outcome.refused
    if refused is not None:  # below the zip's require_isolation: the student is told it is not their code
        iso = refused.isolation
        return _write(out, {
            "error": f"student code would run with {iso.get('level')} isolation here, below the {refused.wanted} "
                     "level this autograder requires (`tapetrace build --require-isolation`)",
            "message": render("ISOLATION_TOO_LOW", settings["lang"], level=iso.get("level"), wanted=refused.wanted),
            "isolation": iso})
    if outcome.error or not rows:
        raise RuntimeError(f"the engine did not grade {submission}: {outcome.error or 'no row'}")
    res = rows[0]
    res["submission"] = submission
    return _write(out, res)


def _write(out: str, res: Mapping[str, object]) -> int:
    """Writes the result the zip's test files read (atomically); 0."""
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(res, fh)
    os.replace(tmp, out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder.builders.otter_grade SUBMISSION --out JSON`` (started by the plugin)."""
    parser = argparse.ArgumentParser(prog="python -m autograder.builders.otter_grade")
    parser.add_argument("submission")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    return grade_main(args.submission, args.out)


if __name__ == "__main__":
    sys.exit(main())
