"""``tapetrace grade``: its options, their checks, and what it prints (the grading itself is the engine's).

``add_parser(sub)`` adds the subcommand to the CLI's subparsers (autograder/cli/app.py); ``run(args)``
checks every option first, then grades in one interruptible session (``grade_batch`` of
:mod:`autograder.engine.session`: the ``--resume`` merge, the checkpoint and the progress wired to
:class:`autograder.engine.run.GradingRun` or a Dask cluster), has the outputs written
(the outputs declared once in :data:`autograder.reports.outputs.GRADE_OUTPUTS`: their options, what student
workers must not read, the final write), also after Ctrl-C, and prints the table and what the instructor must
know (:mod:`autograder.reports.notices`). Exit status: docs/grading-contract.md, "Exit codes" (0 when every row was graded; 2 with a
one-line reason when it could not run; 3 when some exercise is the grader's ``grader_error``/``ungraded``;
130 when interrupted).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES
from autograder.core.records import ResultRow
from autograder.core.registry import UnknownExercise, resolve


def _exit_error(msg: str) -> int:
    print(f"tapetrace: {msg}", file=sys.stderr)
    return 2


def _parse_only(text: str | None) -> list[str] | None:
    if not text:
        return None
    try:
        return [resolve(part.strip()) for part in text.split(",")]
    except UnknownExercise as err:
        raise ValueError(f"--only: {err}") from None


def _run_extra(args: argparse.Namespace, only: list[str]) -> dict[str, Any]:
    """The run's optional keyword arguments: layers not to try, and (a local run) the exercises its zygotes import."""
    extra: dict[str, Any] = {"sandbox_skip": [x for x in args.sandbox_skip.split(",") if x]} \
        if args.sandbox_skip else {}
    if args.cluster is None and args.scheduler is None:  # a local run: its zygotes import what these need
        extra["exercises"] = list(only)
    return extra


def _warn_worker_libraries(args: argparse.Namespace) -> None:
    """The run's first lines: libraries a local run's workers would not import (``environment.start_notes``)."""
    if args.cluster is None and args.scheduler is None:  # a cluster's workers say so in their own refusal
        from autograder.workers.environment import start_notes

        for line in start_notes():
            print(f"tapetrace: warning: {line}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """``tapetrace grade``: validate everything first, then grade; outputs survive Ctrl-C."""
    from autograder.engine import session as _session
    from autograder.reports import outputs as _outputs
    from autograder.reports import progress as _progress
    from autograder.reports import report as _report

    started = time.monotonic()  # --deadline counts from here
    args.submissions = [*getattr(args, "shard_spill", []), *args.submissions]  # `--shard PATH ...`
    try:
        only = _parse_only(args.only)
    except ValueError as err:
        return _exit_error(str(err))
    reason = _check_options(args)
    make_run, reason = (None, reason) if reason else _make_run(args)
    only, reason = (only, reason) if reason else _installed(args, only)
    if reason:
        return _exit_error(reason)
    assert only is not None
    _warn_worker_libraries(args)
    shard = None
    if args.shard is not None or args.shards is not None:  # one slice of the run (autograder/scaleout/shard.py)
        from autograder.scaleout import shard as _shard

        try:
            shard = _shard.select(args, only)
        except _shard.ShardError as err:
            return _exit_error(str(err))
        if not args.quiet:
            print(_shard.note(shard, args.seed is not None), file=sys.stderr)
    paths = shard.paths if shard else list(dict.fromkeys(args.submissions))
    seed = shard.seed if shard else args.seed
    before: list[ResultRow] = []
    resumed = None
    if args.resume and Path(args.json).exists():
        resumed, reason = _resume(args, paths, only, seed)
        if resumed is None:
            return _exit_error(reason)
        before, paths, seed = resumed.before, resumed.paths, resumed.seed if resumed.seed is not None else seed

    with _session.Interrupts() as interrupts:
        checkpoint = _report.Checkpoint(args.json, before, paths, writer=shard.write_json if shard else None,
                                        write_empty=shard is not None)
        t0 = time.monotonic()
        outcome = _session.Outcome()
        if paths:
            progress = _progress.Progress(len(paths), tasks_per_item=len(only),
                                          enabled=not args.quiet and (len(paths) > 1 or sys.stderr.isatty()))
            outcome = _session.grade_batch(
                make_run, paths, only, interrupts=interrupts, add=checkpoint.add, progress=progress,
                resumed=resumed, jobs=args.jobs, require_isolation=getattr(args, "require_isolation", None),
                deadline=started + args.deadline if getattr(args, "deadline", None) else None,
                errors=_cluster_errors(args), on_note=None if args.quiet else _note,
                outputs=_outputs.hidden(args),  # every declared output but those declared readable
                checkpoint=args.json, device=args.device,
                timeout=args.timeout, seed=seed, lang=args.lang, public_only=args.public_only,
                launcher=args.launcher, **_run_extra(args, only))
        if outcome.error:
            return _exit_error(outcome.error)
        code = _finish_grade(args, checkpoint, before, outcome.interrupted, time.monotonic() - t0)
        if outcome.interrupted and interrupts.main_thread and _session.threads_left():
            # What was graded is written and every worker killed; a grading thread still unwinding (a
            # call on a killed worker, a fork in flight) must not hold the exit: Ctrl-C exits now.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code


def _note(note: str) -> None:
    print(f"tapetrace: note: {note}", file=sys.stderr)


def _check_options(args: argparse.Namespace) -> str | None:
    """Why the options (but ``--only``) cannot be graded with, or None: checked before anything starts."""
    if args.timeout <= 0:
        return "--timeout must be positive"
    if args.jobs is not None and args.jobs < 1:
        return "--jobs must be >= 1"
    if getattr(args, "deadline", None) is not None and args.deadline <= 0:
        return "--deadline must be positive"
    if args.resume and not args.json:
        return "--resume needs --json OUT.json (the results to resume from)"
    for p in args.submissions:
        if not Path(p).exists():
            return f"no such file or directory: {p}"
        if not os.access(p, os.R_OK) or (Path(p).is_dir() and not os.access(p, os.X_OK)):
            return f"cannot read {p}: permission denied"
    from autograder.core import build_record as _build_record

    try:  # where builds wrote reference material: unknown, no worker could be kept from it (fail closed)
        _build_record.places()
    except _build_record.BuildRecordError as err:
        return str(err)
    from autograder.reports import outputs as _outputs

    return _outputs.check_outputs(args)  # each declared output's option (autograder/reports/outputs.py)


def _make_run(args: argparse.Namespace) -> tuple[Any, str | None]:
    """What makes the run (a local :class:`GradingRun`, or a Dask cluster's), or why not; sets ``--jobs``."""
    from autograder.engine.run import GradingRun

    if args.cluster is None and args.scheduler is None:
        return GradingRun, _plan_jobs(args)  # the box's memory and CPUs (autograder/workers/envelope.py, sizing.py)
    from autograder.scaleout import cluster as _cluster  # a Dask cluster (autograder/scaleout/cluster.py)
    from autograder.scaleout import cluster_options as _cluster_options

    reason = _cluster_options.check_args(args.cluster, args.scheduler)
    if reason:
        return None, reason
    # each worker is admitted at --require-isolation (autograder/scaleout/cluster_link.py), also one that joins late
    make_run = _cluster.factory(args.cluster, args.scheduler, require_isolation=args.require_isolation,
                                quiet=args.quiet)
    if getattr(args, "deadline", None) is not None:
        return None, "--deadline applies to a local run, not to --cluster/--scheduler"
    if args.jobs is None:
        args.jobs = max(1, min(os.cpu_count() or 1, 4))
    return make_run, None


def _installed(args: argparse.Namespace, only: list[str] | None) -> tuple[list[str] | None, str | None]:
    """The exercises to grade (``--only``, else every one whose hidden suite is installed), or why not."""
    from autograder.hidden import available_exercises

    installed = available_exercises()
    if only is None:
        absent = [ex for ex in EXERCISES if ex not in installed]
        if absent and not args.quiet:
            print(f"tapetrace: note: no hidden suite installed for {', '.join(absent)}; not graded",
                  file=sys.stderr)
        return installed, None
    absent = [ex for ex in only if ex not in installed]
    if absent:
        return None, f"--only: no hidden suite installed for {', '.join(absent)}"
    return only, None


def _resume(args: argparse.Namespace, paths: list[str], only: list[str], seed: int | None) -> tuple[Any, str]:
    """``--resume``: the plan (:func:`autograder.engine.resume.plan`) of what the ``--json`` file keeps and what is
    graded (again), said on stderr; or ``(None, why)``."""
    from autograder.engine import resume as _resume_plan
    from autograder.reports import report as _report

    try:
        before = _report.read_json(args.json)
    except (ValueError, OSError) as err:
        return None, f"--resume: cannot read {args.json}: {str(err).splitlines()[0]}"
    try:
        resumed = _resume_plan.plan(before, paths, only, seed)
    except _resume_plan.ResumeRefused as err:
        return None, f"--resume {args.json}: {err}"
    if not args.quiet:
        again = sum(len(v) for v in resumed.exercises_for.values())
        print(f"tapetrace: --resume: {resumed.kept} already graded in {args.json}, "
              f"{len(resumed.paths) - len(resumed.exercises_for)} to go"
              + (f", {again} exercise(s) of {len(resumed.exercises_for)} submission(s) to grade again "
                 f"(the grader's trouble last time)" if again else ""), file=sys.stderr)
    return resumed, ""


def _plan_jobs(args: argparse.Namespace) -> str | None:
    """Sets ``--jobs`` from the box (its memory limit and CPU quota: ``_sizing.plan``) and says what it
    plans when in a container; the reason to refuse (nothing graded) when one exercise at a time does not fit."""
    from autograder.workers import envelope as _envelope
    from autograder.workers import sizing as _sizing

    env = _envelope.current()
    plan = _sizing.plan(env, fork=hasattr(os, "fork"))
    if plan.refuse:
        return plan.refuse
    asked = args.jobs
    args.jobs = plan.jobs_for(asked)
    if not args.quiet and asked is not None and args.jobs < asked:
        print(f"tapetrace: note: --jobs {asked} lowered to {args.jobs}: {env.describe()} allows no more "
              "exercises at once", file=sys.stderr)
    if not args.quiet and (env.memory_bytes is not None or env.cpu_quota):
        from autograder.core.protocol import memory_words

        print(f"tapetrace: note: grading in {env.describe()}: {args.jobs} exercise(s) at once, student workers "
              f"capped at {memory_words(plan.worker_memory_at(args.jobs))}", file=sys.stderr)
    return None


def _finish_grade(args: argparse.Namespace, checkpoint: Any, before: list[ResultRow], interrupted: bool,
                  elapsed: float) -> int:
    """Has the outputs of ``grade`` written (also after Ctrl-C), prints the table, the summary and the notices."""
    from autograder.core import status as _status
    from autograder.reports import notices as _notices
    from autograder.reports import outputs as _outputs
    from autograder.reports import report as _report

    try:
        all_results = _outputs.write_outputs(checkpoint, _outputs.paths(args), lang=args.lang,
                                             feedback_format=args.feedback_format)
    except OSError as err:
        return _exit_error(f"cannot write the results: {err}")
    new_results = all_results[len(before):]
    if not args.quiet:
        if new_results and (len(new_results) <= 20 or args.table):
            kept = [f"{args.json}" if args.json else "", f"the feedback files in {args.feedback}" if args.feedback else ""]
            print(_report.table(new_results, full_text_in=" and ".join(k for k in kept if k)))
        elif new_results:
            print(_report.compact_table(new_results))
        if len(new_results) > 1 or interrupted:
            print(_report.summary_line(new_results, elapsed), file=sys.stderr)
    if interrupted:
        where = f" in {args.json}; finish with --resume" if args.json else ""
        print(f"tapetrace: interrupted: kept the {len(new_results)} submission(s) graded so far{where}",
              file=sys.stderr)
        return 130
    lines = [*_notices.unreadable(new_results), *_notices.nothing_found(new_results),
             *_notices.not_graded(all_results, args.json)]
    for line in lines:
        print(f"tapetrace: {line}", file=sys.stderr)
    return _status.EXIT_NOT_ALL_GRADED if _status.count_graders(all_results) else 0


def _cluster_errors(args: argparse.Namespace) -> tuple[type[Exception], ...]:
    if args.cluster is None and args.scheduler is None:
        return ()
    from autograder.scaleout.cluster_options import ClusterError

    return (ClusterError,)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``grade`` and its options to the CLI's subparsers."""
    from autograder.reports import outputs as _outputs

    g = sub.add_parser("grade", help="grade submissions against the hidden suites")
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    _outputs.add_flags(g)  # --json, --csv, --feedback...: the declared outputs (autograder/reports/outputs.py)
    g.add_argument("--feedback-format", default="md", choices=["md", "html", "both"],
                   help="feedback as Markdown (default), HTML or both")
    g.add_argument("--only", metavar="ex04_jax_mlp,...")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="limit for loading an exercise and for each test's call (default 30)")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="(submission, exercise) pairs graded at once, one CPU thread each (default: the CPUs this "
                        "process gets, a container's CPU quota included, and no more than its memory "
                        "limit allows)")
    g.add_argument("--deadline", type=float, default=None, metavar="SECONDS",
                   help="finish within SECONDS of starting: what is not graded by then is marked ungraded "
                        "(exit status 3; --resume grades it), and the outputs are written in time")
    g.add_argument("--seed", type=int, default=None, help="reproduce a run (recorded in the JSON)")
    g.add_argument("--lang", default="en", choices=["en", "es"])
    g.add_argument("--resume", action="store_true", help="skip submissions already in --json")
    g.add_argument("--launcher", default="auto", choices=["auto", "zygote", "spawn"],
                   help=argparse.SUPPRESS)
    g.add_argument("--sandbox-skip", default="", metavar="LAYER,...",
                   help="sandbox layers not to try (namespaces, landlock, uid): to see what a machine refusing "
                        "them gets, or to work around a layer that breaks a driver; the JSON records it")
    g.add_argument("--quiet", action="store_true", help="no progress, no table")
    g.add_argument("--table", action="store_true", help="print the per-exercise table even for large batches")
    g.add_argument("--require-isolation", choices=["full", "container"], default=None,
                   help="refuse to grade (exit 2) unless student code gets at least this isolation: full "
                        "(namespaces) or container (Docker's default privileges: Landlock/unprivileged uid, "
                        "seccomp, no capabilities)")
    from autograder.scaleout import shard as _shard

    _shard.add_grade_options(g)
    where = g.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="local:N", default=None,
                       help="grade on a local Dask cluster of N worker processes (pip install 'tapetrace[cluster]')")
    where.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="grade on a running Dask scheduler (tcp://host:8786, or its scheduler file)")
    g.set_defaults(func=run)
    return g
