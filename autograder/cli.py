"""The ``tapetrace`` command: thin subcommands over library functions."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from autograder._paths import EXERCISES


def _exit_error(msg: str) -> int:
    print(f"tapetrace: {msg}", file=sys.stderr)
    return 2


def _parse_only(text: str | None) -> list[str] | None:
    if not text:
        return None
    names = []
    for part in text.split(","):
        part = part.strip()
        match = [e for e in EXERCISES if e == part or e.startswith(part + "_")]
        if len(match) != 1:
            raise ValueError(f"--only: unknown exercise {part!r}")
        names.append(match[0])
    return names


def cmd_grade(args: argparse.Namespace) -> int:
    from autograder import _device, _report
    from autograder._engine import GradingRun

    try:
        only = _parse_only(args.only)
    except ValueError as err:
        return _exit_error(str(err))
    if args.timeout <= 0:
        return _exit_error("--timeout must be positive")
    if args.jobs < 1:
        return _exit_error("--jobs must be >= 1")
    missing = [p for p in args.submissions if not Path(p).exists()]
    if missing:
        return _exit_error(f"no such file or directory: {missing[0]}")
    paths = list(args.submissions)
    done_before: list[dict[str, Any]] = []
    if args.resume and args.json and Path(args.json).exists():
        try:
            prev = json.loads(Path(args.json).read_text())
        except ValueError:
            return _exit_error(f"--resume: {args.json} is not valid JSON")
        prev = prev if isinstance(prev, list) else [prev]
        done_before = [r for r in prev if r.get("submission") in paths]
        seen = {r["submission"] for r in done_before}
        paths = [p for p in paths if p not in seen]
    try:
        run = GradingRun(device=args.device, timeout=args.timeout, seed=args.seed, lang=args.lang,
                         public_only=args.public_only, launcher=args.launcher)
    except _device.DeviceError as err:
        return _exit_error(str(err))
    progress = _report.Progress(len(paths), enabled=not args.quiet)
    results: list[dict[str, Any]] = []
    interrupted = False
    try:
        results = run.grade(paths, only=only, jobs=args.jobs, on_result=progress.update)
    except KeyboardInterrupt:
        interrupted = True
        results = progress.finished
        print("\ninterrupted: keeping the submissions graded so far", file=sys.stderr)
    finally:
        progress.close()
        run.close()
    all_results = done_before + results
    if args.json:
        _report.write_json(all_results, args.json)
    if args.csv:
        _report.write_csv(all_results, args.csv)
    if args.feedback:
        _report.write_feedback(all_results, args.feedback, lang=args.lang)
    if not args.quiet:
        print(_report.table(results))
    return 130 if interrupted else 0


def cmd_stubs(args: argparse.Namespace) -> int:
    from autograder import _stubs

    for path in _stubs.write_stubs():
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs test)."""
    p = argparse.ArgumentParser(prog="tapetrace", description="Autograded PyTorch-vs-JAX exercises.")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade submissions against the hidden suites")
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    g.add_argument("--json", metavar="OUT.json")
    g.add_argument("--csv", metavar="OUT.csv")
    g.add_argument("--feedback", metavar="DIR", help="write one Markdown feedback file per submission")
    g.add_argument("--only", metavar="ex04_jax_mlp,...")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="limit for loading an exercise and for each test's call (default 30)")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--jobs", type=int, default=1, metavar="N")
    g.add_argument("--seed", type=int, default=None, help="reproduce a run (recorded in the JSON)")
    g.add_argument("--lang", default="en", choices=["en", "es"])
    g.add_argument("--resume", action="store_true", help="skip submissions already in --json")
    g.add_argument("--launcher", default="auto", choices=["auto", "zygote", "spawn"],
                   help=argparse.SUPPRESS)
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=cmd_grade)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/")
    s.set_defaults(func=cmd_stubs)

    for name, help_text in (("build", "build student_template/ and the otter autograder zip"),
                            ("report", "summary report with plots from results JSON"),
                            ("figures", "instructor figures (PyTorch vs JAX loss curves)")):
        extra = sub.add_parser(name, help=help_text)
        extra.add_argument("rest", nargs=argparse.REMAINDER)
        extra.set_defaults(func=_dispatch(name))
    return p


def _dispatch(name: str):
    def run(args: argparse.Namespace) -> int:
        import importlib

        try:
            mod = importlib.import_module(f"autograder._cmd_{name}")
        except ModuleNotFoundError:
            return _exit_error(f"`{name}` is not available in this installation")
        return mod.main(args.rest)

    return run


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tapetrace`` console script."""
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
