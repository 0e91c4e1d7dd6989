"""``tapetrace build``: its options and its run (the work is :mod:`autograder.builders`').
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from autograder.builders import private as _private
from autograder.builders.build import (
    DIST,
    TEMPLATES,
    build_template,
    present,
    solution_notebook_path,
    stale,
    template_folder,
    write_solution_notebook,
    zip_name,
)
from autograder.builders.runtime import BuildError
from autograder.builders.snapshot import PUBLIC_SEED
from autograder.core.i18n import LANGS
from autograder.core.paths import ROOT
from autograder.core.registry import UnknownExercise, resolve

# --------------------------------------------------------------------------- command line
DESCRIPTION = ("Build the student template (notebook with public self-checks, hints and figures, .py stubs, "
               "check.py) and the otter-grader autograder zip in dist/, in English (default) or Spanish.")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``build`` and its options to the CLI's subparsers."""
    p = sub.add_parser("build", help="build student_template/ and the otter autograder zip", description=DESCRIPTION)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _parser() -> argparse.ArgumentParser:
    from autograder.cli.app import _Parser

    return _add_arguments(_Parser(prog="tapetrace build", description=DESCRIPTION))


def _add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--check", action="store_true", help="only verify that the committed student templates are "
                   "up to date (both languages unless --lang is given; exit status 1 and a list of differences "
                   "when one is stale)")
    p.add_argument("--lang", default=None, choices=list(LANGS),
                   help="language of the build (default en): the notebook, stubs, check messages, hints and "
                   "figures, and the autograder's feedback. en writes student_template/ and "
                   "dist/tapetrace-autograder.zip; es writes student_template/es/ and dist/tapetrace-autograder-es.zip")
    p.add_argument("--self-study", action="store_true",
                   help="a self-study edition for learners without an instructor: the notebook also defines "
                   "solution(\"exNN\") (reference solutions inside); written to dist/self-study/ (dist/self-study/es/); "
                   "no autograder zip. Never hand it out for a graded course")
    p.add_argument("--only", choices=["template", "otter"], help="build only one of the two")
    p.add_argument("--no-verify", action="store_true",
                   help="skip the checks after writing (minutes): the solution notebook (OUT/solutions/) scores "
                   "the maximum and the untouched template 0 through the zip as built (`otter run`), and every "
                   "public self-check passes on the solution notebook in a fresh kernel")
    p.add_argument("--template", default=None, metavar="DIR",
                   help="student template folder (default: see --lang and --self-study)")
    p.add_argument("--out", default=str(DIST), metavar="DIR",
                   help="where the autograder zip and OUT/solutions/ go (default dist/); written owner-only and "
                   "recorded, so that grading keeps them from student workers wherever they are; a folder workers "
                   "read (/usr, /etc, Python's, the engine's package) is refused")
    p.add_argument("--public-seed", type=int, default=PUBLIC_SEED, help="seed of the public checks' inputs")
    p.add_argument("--refresh-snapshot", action="store_true", help="recompute the reference snapshot anyway")
    g = p.add_argument_group("autograder zip (grading settings, as for `tapetrace grade`)")
    g.add_argument("--gpu-torch", action="store_true",
                   help="install PyPI's torch with its CUDA libraries (~3 GB of wheels) in the grading image; "
                   "default: a CPU-only torch from PyTorch's CPU wheel index (otter grade and Gradescope "
                   "give containers no GPU)")
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="limit for loading an exercise and for each test's call (default 30)")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--jobs", type=int, default=1, metavar="N", help="exercises graded in parallel")
    g.add_argument("--seed", type=int, default=None,
                   help="fixed grading seed (default: derived from each submission's bytes and a build salt)")
    g.add_argument("--python-version", default=f"{sys.version_info[0]}.{sys.version_info[1]}",
                   help="Python of the grading image (default: this interpreter's)")
    g.add_argument("--require-isolation", default="container", choices=["full", "container", "minimal"],
                   help="the weakest isolation of student code the zip grades under (default container: what "
                        "Docker's default privileges allow, as on Gradescope and in otter grade; full: Linux "
                        "namespaces; minimal: grade anyway). Below it every case fails with 'not graded'")
    g.add_argument("--hide-results", action="store_true",
                   help="Gradescope: keep per-exercise results hidden from students even after publishing")
    g.add_argument("--exercises", default=None, help=argparse.SUPPRESS)
    return p


# the build's closing lines (the build's CLI is English, as its other lines)
HAND_OUT = ("hand out: {notebook} (the student notebook; students who work locally also get the .py stubs and "
            "check.py beside it in {folder})")
KEEP_PRIVATE_ZIP = ("keep private: {zip} and {solutions}: the zip holds the hidden tests and the reference solutions, "
                    "as secret as the solution notebook; give it only to Gradescope or `otter grade`, never to students")
KEEP_PRIVATE = "keep private: {solutions} (the reference solutions)"


def _shown(path: Path) -> str:
    """``path`` as the instructor types it: relative to the working folder when inside it, else absolute."""
    path = Path(os.path.abspath(path))
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def closing_lines(template: Path, solutions: Path, zip_path: Path | None) -> list[str]:
    """What a build that succeeded ends with: the one file to hand out, and what to keep private.

    Args:
        template: the student template folder written (or checked) by this build.
        solutions: the solution notebook written.
        zip_path: the autograder zip written, or None (``--only template``).
    """
    from autograder.builders.notebook import NOTEBOOK

    keep = (KEEP_PRIVATE_ZIP.format(zip=_shown(zip_path), solutions=_shown(solutions)) if zip_path is not None
            else KEEP_PRIVATE.format(solutions=_shown(solutions)))
    return [HAND_OUT.format(notebook=_shown(template / NOTEBOOK), folder=_shown(template)), keep]


def _check(args: argparse.Namespace) -> int:
    """``tapetrace build --check``: 0 when the committed template(s) are current, else 1 with the differences."""
    langs = [args.lang] if args.lang else list(LANGS)
    bad = 0
    for lang in langs:
        template = Path(args.template) if args.template else TEMPLATES[lang]
        where = f"{template.relative_to(ROOT)}/" if template.is_relative_to(ROOT) else str(template)
        problems = stale(template, args.public_seed, lang)
        for line in problems:
            print(f"stale: {where}{line}")
        if problems:
            bad = 1
            fix = "tapetrace build" + ("" if lang == "en" else f" --lang {lang} --only template")
            print(f"{where} is out of date: run `{fix}`", file=sys.stderr)
        else:
            print(f"{where} is up to date")
    return bad


def _verify(args: argparse.Namespace, lang: str, exercises: list[str], zip_path: Path | None) -> int:
    """Writes the solution notebook, then (unless ``--no-verify``) checks it, the template and the zip against
    each other: 0 when they agree, else 1 with one line per problem (the exercise and the check)."""
    import tempfile
    import time

    from autograder.builders import verify as _verify_mod

    template = Path(args.template) if args.template else TEMPLATES[lang]
    with _private.owner_only(_private.places(Path(args.out), lang, notebook=True, zipped=False)):
        path, nb, filled = write_solution_notebook(template, Path(args.out), lang)
    print(f"wrote {path} (the reference solutions: never hand it out)")
    if args.no_verify:
        return 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tapetrace-verify-") as tmp:
        failures = _verify_mod.verify(nb, filled, exercises, Path(tmp), zip_path=zip_path)
    took = time.monotonic() - start
    for failure in failures:
        print(f"FAILED {failure.line()}", file=sys.stderr)
    if failures:
        print(f"tapetrace build: verification failed ({len(failures)} problem(s), {took:.0f} s): do not hand "
              "out this build; fix the exercise(s) named and build again", file=sys.stderr)
        return 1
    through = f"the solution notebook scores the maximum and the untouched template 0 through {zip_path.name}; " \
        if zip_path is not None else ""
    print(f"verified in {took:.0f} s: {through}every public self-check passes on the solution notebook "
          f"({len(exercises)} exercise(s))")
    return 0


def main(argv: list[str]) -> int:
    """``tapetrace build`` from its own arguments (tests, scripts)."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """``tapetrace build``: the template(s) and/or the otter zip; 2 with a one-line reason on a bad request."""
    lang = args.lang or "en"
    from autograder.cli.app import missing_libraries_line

    zips = not (args.check or args.self_study or args.only == "template")
    verifies = not (args.check or args.self_study or args.no_verify)
    needs = (["otter"] if zips else []) + (["nbformat", "nbclient", "ipykernel"] if verifies else [])
    missing = missing_libraries_line("build", needs)
    if missing is not None:  # said before anything is written (the template alone takes a minute)
        print(f"tapetrace build: {missing}", file=sys.stderr)
        return 2
    try:
        if args.check:
            return _check(args)
        if args.jobs < 1 or args.timeout <= 0:
            raise BuildError("--jobs must be >= 1 and --timeout positive")
        if args.self_study and args.only == "otter":
            raise BuildError("--self-study builds a notebook only (no autograder zip): drop --only otter")
        # the reference material it writes: refused where workers read, recorded elsewhere, owner-only
        study = template_folder(args.template, lang, True) if args.self_study else None
        zipped = args.only != "template" and not args.self_study
        private = _private.places(Path(args.out), lang, notebook=not args.self_study, zipped=zipped, self_study=study)
        _private.check_places(private)
        if args.only != "otter":
            template = Path(args.template) if args.template else None
            with _private.owner_only([study] if study else []):
                for path in build_template(template, args.public_seed, args.refresh_snapshot, lang=lang,
                                           self_study=args.self_study):
                    print(f"wrote {path}")
        exercises = present()
        out = None
        if args.only != "template" and not args.self_study:
            from autograder.builders import otter_zip as _otter_zip

            if args.exercises:
                try:
                    wanted = {resolve(x, exercises) for x in args.exercises.split(",")}
                    exercises = [e for e in exercises if e in wanted]
                except UnknownExercise as err:
                    raise BuildError(f"--exercises: {err}") from None
            with _private.owner_only(_private.places(Path(args.out), lang, notebook=False, zipped=True)):
                out = _otter_zip.build_zip(Path(args.out) / zip_name(lang), exercises, timeout=args.timeout,
                                           device=args.device, jobs=args.jobs, lang=lang, seed=args.seed,
                                           gpu_torch=args.gpu_torch, python_version=args.python_version,
                                           show_hidden=not args.hide_results,
                                           require_isolation=args.require_isolation)
            print(f"wrote {out} ({len(exercises)} exercise(s); grade with: otter run -a {out} NOTEBOOK.ipynb)")
        if not args.self_study:
            status = _verify(args, lang, exercises, out)
            if status == 0:
                template = Path(args.template) if args.template else TEMPLATES[lang]
                for line in closing_lines(template, solution_notebook_path(Path(args.out), lang), out):
                    print(line)
            return status
    except BuildError as err:
        print(f"tapetrace build: {err}", file=sys.stderr)
        return 2
    return 0
