"""``tapetrace regrade``: grade again only the pairs whose fingerprint moved, with the earlier seed.

    tapetrace regrade OLD.json [SUBMISSION...] --json NEW.json [--csv NEW.csv] [--all] [--device ...]

Writes the new results (the earlier rows with the pairs graded again merged in), their receipt, and the
diff beside NEW.json: ``NEW.diff.json`` (for ``tapetrace report --regrade``), ``NEW.diff.csv`` and
``NEW.diff.md``. With ``--overrides FILE`` (the instructor's manual overrides, autograder/reports/overrides.py)
the new results stay the autograder's; the overrides are checked against them and those whose check changed
are flagged (and still applied) in ``NEW.diff.json``'s ``overrides`` and the receipt. Their ``student`` is a
roster ``student_id`` with ``--roster ROSTER.csv``, else the submission's path as OLD.json holds it (never a
file or folder name alone). Exit status as ``grade``'s: 0, 2 (could not run, one line), 3 (some row the
grader's, or an override not applied: a student without a submission, or with two; listed), 130 (interrupted:
nothing written).

It grades as ``grade`` does, in one session (:func:`autograder.engine.session.grade_batch`): the same progress
on stderr, Ctrl-C and SIGTERM stopping it cleanly, the isolation checked first (``--require-isolation``), the
earlier rows merged by the run's :class:`autograder.engine.assembly.RowAssembly` (``resumed``); it writes
NEW.json, its receipt and ``--csv`` through :data:`autograder.reports.outputs.GRADE_OUTPUTS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.core.records import ResultRow

if TYPE_CHECKING:
    from autograder.engine.regrade import Plan
    from autograder.engine.session import Interrupts, Outcome

ROSTER_ALONE = "--roster names the students of --overrides; give --overrides FILE with it, or leave --roster out"


def _exit_error(msg: str) -> int:
    print(f"tapetrace regrade: {msg}", file=sys.stderr)
    return 2


def diff_paths(json_path: str) -> dict[str, str]:
    """Where the diff goes: ``NEW.diff.json``, ``NEW.diff.csv``, ``NEW.diff.md`` beside ``NEW.json``."""
    p = Path(json_path)
    stem = p.with_suffix("") if p.suffix == ".json" else p
    return {k: f"{stem}.diff.{k}" for k in ("json", "csv", "md")}


def run(args: argparse.Namespace) -> int:
    """``tapetrace regrade``: plan, grade the pairs that moved, merge, write results and diff."""
    import json

    from autograder.core import device as _device
    from autograder.core import status as _status
    from autograder.engine import regrade as _regrade
    from autograder.engine import resume as _resume
    from autograder.engine import session as _session
    from autograder.reports import outputs as _outputs
    from autograder.reports import regrade_render as _render
    from autograder.reports import report as _report

    try:
        old_rows = _report.read_json(args.old)
    except (OSError, ValueError) as err:
        return _exit_error(f"cannot read {args.old}: {str(err).splitlines()[0]}")
    reason = _outputs.check_outputs(args)  # --json, --csv: the declared outputs regrade has options for
    if reason:
        return _exit_error(reason)
    ovs, roster = None, None
    if getattr(args, "overrides", None):  # the instructor's files, checked before anything is graded
        from autograder.reports import gradebook as _gradebook
        from autograder.reports import overrides as _overrides

        try:
            roster = _gradebook.read_roster(args.roster) if getattr(args, "roster", None) else None
            _overrides.refuse_inside_submissions(args.overrides, old_rows)
            ovs = _overrides.read(args.overrides)
            _overrides.resolve(ovs, old_rows, roster)
        except (OSError, UnicodeDecodeError, _gradebook.GradebookError, _overrides.OverrideError) as err:
            return _exit_error(str(err).splitlines()[0])
    elif getattr(args, "roster", None):
        return _exit_error(ROSTER_ALONE)
    try:
        device = _device.resolve(args.device)
        the_plan = _regrade.plan(old_rows, args.submissions or None, device, public_only=args.public_only,
                                 everything=args.all)
    except (_device.DeviceError, _regrade.RegradeRefused) as err:
        return _exit_error(str(err))
    for p in the_plan.paths:
        if not Path(p).exists():
            return _exit_error(f"{p}: the submission is no longer there (give its new path, or regrade without it)")
    if not args.quiet:
        print(f"tapetrace regrade: {the_plan.pairs} (submission, exercise) pair(s) of {len(the_plan.paths)} "
              f"submission(s) to grade again, seed {the_plan.seed}", file=sys.stderr)
    new_rows: dict[str, ResultRow] = {}
    if the_plan.paths:
        with _session.Interrupts() as interrupts:
            outcome = grade_again(args, the_plan, interrupts, new_rows)
            if outcome.interrupted:
                print(f"tapetrace regrade: interrupted: nothing written ({args.old} is as it was); run the same "
                      "command again to regrade", file=sys.stderr)
                if interrupts.main_thread and _session.threads_left():
                    # every worker is killed; a grading thread still unwinding must not hold the exit (as grade)
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(130)
                return 130
        if outcome.error:
            return _exit_error(outcome.error)
    by_place = {_resume.same_place(p): row for p, row in new_rows.items()}
    results = [by_place.get(_resume.same_place(str(r["submission"])), r) for r in old_rows]
    d = _regrade.diff(the_plan, new_rows)
    audit = None
    if ovs is not None:  # kept across the regrade: applied to the new rows, flagged where their check changed
        try:
            _adjusted, rows = _overrides.apply(results, ovs, roster, regrade=d)
        except _overrides.OverrideError as err:
            return _exit_error(str(err))
        audit = _overrides.audit(rows, args.overrides)
        d["overrides"] = audit
    out = diff_paths(args.json)
    try:  # NEW.json, its receipt (with the overrides' audit) and --csv: as grade writes them
        _outputs.write_results(_outputs.Written(results, lang=args.lang, overrides=audit), _outputs.paths(args))
        _report.atomic_write(out["json"], json.dumps(d, indent=1) + "\n")
        _report.atomic_write(out["csv"], _render.diff_csv(d))
        _report.atomic_write(out["md"], _render.diff_markdown(d))
    except OSError as err:
        return _exit_error(f"cannot write the results: {err}")
    if not args.quiet:
        print(f"tapetrace regrade: {_render.summary_words(d)}; diff in {out['md']}",
              file=sys.stderr)
        for line in _render.changed_words(d):
            print(f"  changed: {line}")
        for line in _overrides.flagged_lines(audit["rows"]) if audit else []:
            print(f"  {line}")
        for m in d["moved"][:50]:
            old_max = m.get("old_max_score", m["max_score"])
            print(f"  {_report.terminal_text(m['submission'])} {m['exercise']}: {m['old_score']:g}/{old_max:g} -> "
                  f"{m['new_score']:g}/{m['max_score']:g} ({'; '.join(m['reasons'])})")
    unapplied = _overrides.not_applied(audit["rows"]) if audit else 0
    return _status.EXIT_NOT_ALL_GRADED if _status.count_graders(results) or unapplied else 0


def grade_again(args: argparse.Namespace, the_plan: Plan, interrupts: Interrupts,
                new_rows: dict[str, ResultRow]) -> Outcome:
    """Grades the plan's pairs again in one session, as ``grade`` grades (its progress, Ctrl-C, isolation check).

    The run is made for the exercises graded again (its zygotes import what those need, as ``grade --only``); each
    submission's earlier row is the ``resumed`` row its new exercises are merged into, so the progress and
    ``new_rows`` see the merged row; the class's earlier results and what this command writes are kept from the
    students' workers.

    Args:
        args: ``regrade``'s options.
        the_plan: what to grade again (:func:`autograder.engine.regrade.plan`).
        interrupts: the entered :class:`autograder.engine.session.Interrupts`.
        new_rows: filled with each graded submission's merged row, by its path in the plan.

    Returns:
        The session's :class:`autograder.engine.session.Outcome`.
    """
    from autograder.engine import resume as _resume
    from autograder.engine import session as _session
    from autograder.engine.run import GradingRun
    from autograder.reports import outputs as _outputs
    from autograder.reports import progress as _progress

    paths = list(the_plan.paths)
    wanted = sorted({ex for v in the_plan.exercises_for.values() for ex in v})
    earlier = _resume.Plan(before=[], paths=paths, exercises_for=dict(the_plan.exercises_for),
                           partial={p: the_plan.old[p] for p in paths}, seed=the_plan.seed)
    path_of = {str(the_plan.old[p]["submission"]): p for p in paths}  # a merged row keeps the earlier spelling

    def add(row: ResultRow) -> None:
        new_rows[path_of.get(str(row["submission"]), str(row["submission"]))] = row

    progress = _progress.Progress(len(paths), tasks_per_item=len(wanted),
                                  enabled=not args.quiet and (len(paths) > 1 or sys.stderr.isatty()))
    kept = (args.old, *_outputs.hidden(args), *diff_paths(args.json).values())
    return _session.grade_batch(
        GradingRun, paths, the_plan.exercises, interrupts=interrupts, add=add, progress=progress, resumed=earlier,
        jobs=args.jobs, require_isolation=args.require_isolation, on_note=None if args.quiet else _note,
        outputs=kept, checkpoint=None, device=args.device, timeout=args.timeout, seed=the_plan.seed,
        lang=args.lang, public_only=args.public_only, exercises=wanted)


def _note(note: str) -> None:
    print(f"tapetrace: note: {note}", file=sys.stderr)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``regrade`` and its options to the CLI's subparsers."""
    g = sub.add_parser("regrade", help="grade again only what changed since an earlier run, with a diff")
    g.add_argument("old", metavar="OLD.json", help="the earlier run's results (tapetrace grade --json)")
    g.add_argument("submissions", nargs="*", metavar="SUBMISSION",
                   help="regrade only these (default: every submission in OLD.json)")
    g.add_argument("--json", required=True, metavar="NEW.json")
    g.add_argument("--csv", metavar="NEW.csv")
    g.add_argument("--overrides", metavar="OVERRIDES.csv",
                   help="manual overrides kept across the regrade: checked first, then those whose check changed "
                        "are flagged (still applied) in NEW.diff.json and the receipt; student is a roster "
                        "student_id (with --roster), else the submission's path as OLD.json holds it")
    g.add_argument("--roster", metavar="ROSTER.csv",
                   help="as gradebook's: --overrides then names students by their roster student_id")
    g.add_argument("--all", action="store_true", help="grade every pair again, whatever its fingerprint")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS")
    g.add_argument("--jobs", type=int, default=None, metavar="N", help="exercises graded at once (default: as grade)")
    g.add_argument("--public-only", action="store_true")
    g.add_argument("--lang", default="en", choices=["en", "es"])
    g.add_argument("--require-isolation", choices=["full", "container"], default=None,
                   help="as grade's: refuse to regrade (exit 2) unless student code gets at least this isolation")
    g.add_argument("--quiet", action="store_true", help="no progress, no summary")
    g.set_defaults(func=run)
    return g
