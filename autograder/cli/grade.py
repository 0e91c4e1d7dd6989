"""``tapetrace grade``: its options and its body (validate everything first, then grade).

``add_parser(sub)`` adds the subcommand to the CLI's subparsers (autograder/cli/app.py); ``run(args)``
grades with :class:`autograder.engine.run.GradingRun` (or a Dask cluster) and writes the outputs,
also after Ctrl-C. Exit status: GRADING.md (0 when every row was graded; 2 with a one-line reason when
it could not run; 3 when some exercise is the grader's ``grader_error``/``ungraded``; 130 when interrupted).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES
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


def available_exercises() -> list[str]:
    """Exercises whose hidden suite is installed (all ten in a complete installation)."""
    import importlib.util

    return [ex for ex in EXERCISES if importlib.util.find_spec(f"autograder.hidden.{ex}") is not None]


def _check_output(path: str | None, flag: str) -> str | None:
    """A reason why ``path`` cannot be written, or None; its folder is created when missing.

    ``--json`` and ``--csv`` create their folder as ``--feedback`` (and ``tapetrace report --out``)
    create theirs: before grading starts, so a folder that cannot be made is refused at once.
    """
    if not path:
        return None
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        return f"{flag} {path}: is a directory"
    if not parent.is_dir():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            return f"{flag} {path}: cannot create folder {parent}: {err.strerror or err}"
    if not os.access(parent, os.W_OK):
        return f"{flag} {path}: folder {parent} is not writable"
    return None


def _load_previous(path: str) -> list[dict[str, Any]]:
    from autograder.reports import report as _report

    return _report.read_json(path)


def run(args: argparse.Namespace) -> int:
    """``tapetrace grade``: validate everything first, then grade; outputs survive Ctrl-C."""
    from autograder.core import device as _device
    from autograder.engine.run import GradingRun
    from autograder.reports import progress as _progress
    from autograder.reports import report as _report

    started = time.monotonic()  # --deadline counts from here
    args.submissions = [*getattr(args, "shard_spill", []), *args.submissions]  # `--shard PATH ...`
    try:
        only = _parse_only(args.only)
    except ValueError as err:
        return _exit_error(str(err))
    if args.timeout <= 0:
        return _exit_error("--timeout must be positive")
    if args.jobs is not None and args.jobs < 1:
        return _exit_error("--jobs must be >= 1")
    if getattr(args, "deadline", None) is not None and args.deadline <= 0:
        return _exit_error("--deadline must be positive")
    if args.resume and not args.json:
        return _exit_error("--resume needs --json OUT.json (the results to resume from)")
    for p in args.submissions:
        if not Path(p).exists():
            return _exit_error(f"no such file or directory: {p}")
        if not os.access(p, os.R_OK) or (Path(p).is_dir() and not os.access(p, os.X_OK)):
            return _exit_error(f"cannot read {p}: permission denied")
    for path, flag in ((args.json, "--json"), (args.csv, "--csv")):
        reason = _check_output(path, flag)
        if reason:
            return _exit_error(reason)
    if args.feedback and Path(args.feedback).exists() and not Path(args.feedback).is_dir():
        return _exit_error(f"--feedback {args.feedback}: exists and is not a directory")
    make_run: Any = GradingRun
    if args.cluster is not None or args.scheduler is not None:  # a Dask cluster (autograder/scaleout/cluster.py)
        from autograder.scaleout import cluster as _cluster

        reason = _cluster.check_args(args.cluster, args.scheduler)
        if reason:
            return _exit_error(reason)
        # each worker is admitted at --require-isolation (autograder/scaleout/cluster.py), also one that joins late
        make_run = _cluster.factory(args.cluster, args.scheduler, require_isolation=args.require_isolation,
                                    quiet=args.quiet)
        if getattr(args, "deadline", None) is not None:
            return _exit_error("--deadline applies to a local run, not to --cluster/--scheduler")
        if args.jobs is None:
            args.jobs = max(1, min(os.cpu_count() or 1, 4))
    else:
        refused = _plan_jobs(args)  # the box's memory and CPUs (autograder/workers/envelope.py)
        if refused:
            return _exit_error(refused)
    installed = available_exercises()
    if only is None:
        only = installed
        absent = [ex for ex in EXERCISES if ex not in installed]
        if absent and not args.quiet:
            print(f"tapetrace: note: no hidden suite installed for {', '.join(absent)}; not graded",
                  file=sys.stderr)
    else:
        absent = [ex for ex in only if ex not in installed]
        if absent:
            return _exit_error(f"--only: no hidden suite installed for {', '.join(absent)}")

    shard = None
    if args.shard is not None or args.shards is not None:  # one slice of the run (autograder/scaleout/shard.py)
        from autograder.scaleout import shard as _shard

        try:
            shard = _shard.select(args, only)
        except _shard.ShardError as err:
            return _exit_error(str(err))
        if not args.quiet:
            print(_shard.note(shard, args.seed is not None), file=sys.stderr)

    # --resume: keep every earlier result the student's code earned; grade what is not in it yet and,
    # alone, the exercises the grader could not grade before (autograder/engine/resume.py)
    paths = shard.paths if shard else list(dict.fromkeys(args.submissions))
    before: list[dict[str, Any]] = []
    seed = shard.seed if shard else args.seed
    resumed = None
    if args.resume and Path(args.json).exists():
        from autograder.engine import resume as _resume

        try:
            before = _load_previous(args.json)
        except (ValueError, OSError) as err:
            return _exit_error(f"--resume: cannot read {args.json}: {str(err).splitlines()[0]}")
        try:
            resumed = _resume.plan(before, paths, only, shard.seed if shard else args.seed)
        except _resume.ResumeRefused as err:
            return _exit_error(f"--resume {args.json}: {err}")
        before, paths = resumed.before, resumed.paths
        if resumed.seed is not None:
            seed = resumed.seed  # same inputs as the first part of the run
        if not args.quiet:
            again = sum(len(v) for v in resumed.exercises_for.values())
            print(f"tapetrace: --resume: {resumed.kept} already graded in {args.json}, "
                  f"{len(paths) - len(resumed.exercises_for)} to go"
                  + (f", {again} exercise(s) of {len(resumed.exercises_for)} submission(s) to grade again "
                     f"(the grader's trouble last time)" if again else ""), file=sys.stderr)

    interrupted = False
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}

    def on_term(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    if main_thread:
        signal.signal(signal.SIGTERM, on_term)  # `timeout`, batch schedulers: same as Ctrl-C
    run = None
    device_error = ""
    checkpoint = _report.Checkpoint(args.json, before, paths, writer=shard.write_json if shard else None,
                                    write_empty=shard is not None)
    t0 = time.monotonic()
    try:
        if paths:
            progress = _progress.Progress(len(paths), tasks_per_item=len(only),
                                          enabled=not args.quiet and (len(paths) > 1 or sys.stderr.isatty()))
            try:
                extra = {"sandbox_skip": [x for x in args.sandbox_skip.split(",") if x]} if args.sandbox_skip else {}
                run = make_run(device=args.device, timeout=args.timeout, seed=seed, lang=args.lang,
                               public_only=args.public_only, launcher=args.launcher, **extra)
                _check_isolation(run, args)
                progress.begin()
                add = checkpoint.add
                if resumed is not None and resumed.partial:
                    add = _merging(checkpoint.add, resumed.partial, only)
                deadline = {"deadline": started + args.deadline} if getattr(args, "deadline", None) else {}
                run.grade(paths, only=only, jobs=args.jobs,
                          on_result=_progress.merge_callbacks(add, progress.update),
                          on_task=progress.task_done,
                          exercises_for=resumed.exercises_for if resumed is not None else None, **deadline)
            except (_device.DeviceError, IsolationRefused, *_cluster_errors(args)) as err:
                device_error = str(err)
            finally:
                progress.close()
    except KeyboardInterrupt:
        interrupted = True
        if main_thread:  # a second Ctrl-C must not cut the clean-up and the writing of what was graded
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    finally:
        if run is not None:
            if interrupted:
                run.cancel()
            run.close()
    try:
        if device_error:
            return _exit_error(device_error)
        code = _finish_grade(args, checkpoint, before, interrupted, time.monotonic() - t0)
        if interrupted and main_thread and _grading_threads_left():
            # What was graded is written and every worker killed; a grading thread still unwinding (a
            # call on a killed worker, a fork in flight) must not hold the exit: Ctrl-C exits now.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _plan_jobs(args: argparse.Namespace) -> str | None:
    """Sets ``--jobs`` from the box (its memory limit and CPU quota: ``_envelope.plan``) and says what it
    plans when in a container; the reason to refuse (nothing graded) when one exercise at a time does not fit."""
    from autograder.workers import envelope as _envelope

    env = _envelope.current()
    plan = _envelope.plan(env, fork=hasattr(os, "fork"))
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


def _merging(add: Any, partial: dict[str, dict[str, Any]], only: list[str]) -> Any:
    """``add`` for a resumed run: a submission graded again in part is merged into its earlier row first."""
    from autograder.engine import resume as _resume

    def call(res: dict[str, Any]) -> None:
        old = partial.get(res["submission"])
        add(_resume.merge(old, res, only) if old is not None else res)

    return call


def _grading_threads_left(wait: float = 2.0) -> bool:
    """Whether grading threads are still alive ``wait`` seconds after an interrupt."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not any(t.name.startswith("tapetrace-grade") and t.is_alive() for t in threading.enumerate()):
            return False
        time.sleep(0.05)
    return True


def _finish_grade(args: argparse.Namespace, checkpoint: Any, before: list[dict[str, Any]], interrupted: bool,
                  elapsed: float) -> int:
    """Writes the outputs of ``grade`` (also after Ctrl-C) and prints the table and summary."""
    from autograder.reports import feedback as _feedback
    from autograder.reports import report as _report

    all_results = checkpoint.results()
    new_results = all_results[len(before):]
    try:
        if args.json and (all_results or checkpoint.write_empty):
            checkpoint.writer(all_results, args.json)
            if checkpoint.writer is _report.write_json:  # a whole run (a shard's part: merge writes it)
                from autograder.reports import (
                    receipt as _receipt,  # the run's receipt beside the results (OUT.receipt.json)
                )

                _receipt.write(_receipt.receipt(all_results), _receipt.sidecar(args.json))
        if args.csv:
            _report.write_csv(all_results, args.csv)
        if args.feedback:
            _feedback.write_feedback(all_results, args.feedback, lang=args.lang, fmt=args.feedback_format)
    except OSError as err:
        return _exit_error(f"cannot write the results: {err}")
    if not args.quiet:
        if new_results and (len(new_results) <= 20 or args.table):
            print(_report.table(new_results))
        elif new_results:
            print(_report.compact_table(new_results))
        if len(new_results) > 1 or interrupted:
            print(_report.summary_line(new_results, elapsed), file=sys.stderr)
    if interrupted:
        where = f" in {args.json}; finish with --resume" if args.json else ""
        print(f"tapetrace: interrupted: kept the {len(new_results)} submission(s) graded so far{where}",
              file=sys.stderr)
        return 130
    _warn_unreadable(new_results)
    _warn_nothing_found(new_results)
    return _not_all_graded(args, all_results)


def _warn_unreadable(results: list[dict[str, Any]]) -> None:
    """One warning line per submission that could not be read at all (corrupt, not JSON, too big)."""
    from autograder.reports import report as _report

    for res in results:
        rows = list(res.get("exercises", {}).values())
        if rows and all(e.get("status") == "unreadable" for e in rows):
            print(f"tapetrace: warning: {_report.terminal_text(res['submission'])}: "
                  f"{_report.terminal_text(rows[0].get('message', ''))} (status unreadable)", file=sys.stderr)


def _holding(path: str) -> str:
    """What a submission that yielded no exercise holds, in a few words (for the instructor's warning)."""
    p = Path(path)
    if not p.is_dir():
        return "no exercise file or notebook section in it"
    try:
        names = sorted(f.relative_to(p).as_posix() for f in p.rglob("*") if f.is_file())
    except OSError:
        return "a folder that cannot be listed"
    if not names:
        return "an empty folder"
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"a folder holding no exercise file ({shown}; expected names like ex01_torch_mlp.py or a notebook)"


def _warn_nothing_found(results: list[dict[str, Any]]) -> None:
    """One warning line per submission in which no exercise was found at all (an empty folder, files
    named otherwise): its rows are ``missing`` (GRADING.md: no file), as for a student who did not try,
    and the instructor is told which submissions look like a hand-in gone wrong."""
    from autograder.reports import report as _report

    for res in results:
        rows = list(res.get("exercises", {}).values())
        if rows and all(e.get("status") == "missing" for e in rows):
            print(f"tapetrace: warning: {_report.terminal_text(res['submission'])}: "
                  f"{_report.terminal_text(_holding(str(res['submission'])))}: every exercise is missing "
                  "(status missing)", file=sys.stderr)


def _not_all_graded(args: argparse.Namespace, results: list[dict[str, Any]]) -> int:
    """Exit status 3, with what to do, when some exercise is the grader's (``grader_error``, ``ungraded``)."""
    from autograder.core import status as _status
    from autograder.reports import report as _report

    counts = _status.count_graders(results)
    if not counts:
        return 0
    for res in results:
        for ex in _status.graders_exercises(res):
            e = res["exercises"][ex]
            print(f"tapetrace: {e['status']}: {_report.terminal_text(res['submission'])} {ex}: "
                  f"{_report.terminal_text(e.get('grader_reason', ''))[:300]}", file=sys.stderr)
    what = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    again = (f"tapetrace grade ... --json {args.json} --resume" if args.json
             else "tapetrace grade ... with --json OUT.json, then --resume")
    print(f"tapetrace: {sum(counts.values())} exercise(s) were not graded ({what}): the grader's trouble, not the "
          f"students'; each row's grader_reason says why. Fix the cause, then grade them again: {again}",
          file=sys.stderr)
    return _status.EXIT_NOT_ALL_GRADED


class IsolationRefused(Exception):
    """The machine cannot isolate student code at the level ``--require-isolation`` asks for."""


def _check_isolation(run: Any, args: argparse.Namespace) -> None:
    """Measures what a student's worker obtains here; one line when below full; refuses below the required level.

    Raises:
        IsolationRefused: below ``--require-isolation`` (nothing is graded; exit status 2).
    """
    from autograder.sandbox import isolate as _sandbox

    measure = getattr(run, "measure_isolation", None)
    if measure is None:  # a cluster: its workers record the level they obtained in each result
        return
    iso = measure()
    wanted = getattr(args, "require_isolation", None)
    if wanted and not _sandbox.level_at_least(iso, wanted):
        raise IsolationRefused(f"--require-isolation {wanted}: student code would run with {_sandbox.describe(iso)}"
                               + (f" ({iso['error']})" if iso.get("error") else ""))
    if iso.get("level") != "full" and not args.quiet:
        print(f"tapetrace: note: {_sandbox.describe(iso)}; see README, \"Sandbox\"", file=sys.stderr)


def _cluster_errors(args: argparse.Namespace) -> tuple[type[Exception], ...]:
    if args.cluster is None and args.scheduler is None:
        return ()
    from autograder.scaleout.cluster import ClusterError

    return (ClusterError,)



def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``grade`` and its options to the CLI's subparsers."""
    g = sub.add_parser("grade", help="grade submissions against the hidden suites")
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    g.add_argument("--json", metavar="OUT.json")
    g.add_argument("--csv", metavar="OUT.csv")
    g.add_argument("--feedback", metavar="DIR", help="write one feedback file per submission into DIR")
    g.add_argument("--feedback-format", default="md", choices=["md", "html", "both"],
                   help="feedback as Markdown (default), HTML or both")
    g.add_argument("--only", metavar="ex04_jax_mlp,...")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="limit for loading an exercise and for each test's call (default 30)")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="(submission, exercise) pairs graded at once, one CPU thread each (default: the CPUs this "
                        "process gets, a container's CPU quota included, at most 4, and no more than its memory "
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
