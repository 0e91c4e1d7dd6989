"""``tapetrace new exNN_name``: the skeleton of a new exercise, in the places an exercise lives.

It renders the templates of ``autograder/builders/templates/new/`` (real Python files, linted by ruff) into::

    solutions/exNN_name.py               the reference: instructions (module docstring), one function
    exercises/exNN_name.py               its stub (the stub generator's output)
    autograder/exercises/exNN_name/      __init__.py (META), probes.py, public.py, messages.py,
                                         hints.py, figure.py, es.py
    autograder/hidden/exNN_name.py       the public checks + one hidden check (10 points)
    tests/mutants/exNN_name/             two mutants (# MUTANT / # FAILS) and a # VALID variant

The skeleton is a real, tiny exercise (standardise the rows of an array over its last axis): it builds,
grades (solution 10/10, stub "not attempted", each mutant failing exactly its checks) and passes the
test suite before any real content is written; the author then replaces each part (README: "Writing or
changing an exercise"). ``--frameworks jax`` writes it with JAX code, ``torch`` (the default) and
``torch,jax`` with PyTorch code (``torch,jax`` declares both: its workers import both). Nothing is
overwritten unless ``--force``; a bad or taken name is a one-line error (exit status 2).
"""

from __future__ import annotations

import argparse
import builtins
import keyword
import sys
from pathlib import Path
from typing import Any

from autograder.builders import templates
from autograder.exercises import FRAMEWORKS, PACKAGE_NAME

TEMPLATES = "new"
# What each template becomes: (template, destination), ``{name}`` the exercise; ``{fw}`` the code's framework.
FILES: tuple[tuple[str, str], ...] = (
    ("{fw}/solution.py", "solutions/{name}.py"),
    ("exercise/__init__.py", "autograder/exercises/{name}/__init__.py"),
    ("{fw}/probes.py", "autograder/exercises/{name}/probes.py"),
    ("exercise/public.py", "autograder/exercises/{name}/public.py"),
    ("exercise/messages.py", "autograder/exercises/{name}/messages.py"),
    ("exercise/hints.py", "autograder/exercises/{name}/hints.py"),
    ("{fw}/figure.py", "autograder/exercises/{name}/figure.py"),
    ("{fw}/es.py", "autograder/exercises/{name}/es.py"),
    ("hidden.py", "autograder/hidden/{name}.py"),
    ("{fw}/mutants/wrong_axis.py", "tests/mutants/{name}/wrong_axis.py"),
    ("{fw}/mutants/second_axis.py", "tests/mutants/{name}/second_axis.py"),
    ("{fw}/mutants/sums_by_hand.py", "tests/mutants/{name}/sums_by_hand.py"),
)
STUB = "exercises/{name}.py"


class NewError(Exception):
    """The skeleton cannot be written (the message says why, in one line)."""


def parse_frameworks(text: str) -> tuple[str, ...]:
    """``"torch"``, ``"jax"``, ``"torch,jax"`` (any order) -> the tuple in :data:`FRAMEWORKS` order.

    Raises:
        argparse.ArgumentTypeError: empty, or a name that is not a framework.
    """
    names = {t.strip() for t in text.split(",") if t.strip()}
    if not names or names - set(FRAMEWORKS):
        raise argparse.ArgumentTypeError(f"expected torch, jax or torch,jax, got {text!r}")
    return tuple(f for f in FRAMEWORKS if f in names)


def function_name(name: str, taken: set[str]) -> str:
    """The skeleton's function: the exercise's name without ``exNN_`` when that is a fresh identifier
    (not a keyword, a built-in or another exercise's contract name: the notebook shares one namespace),
    else the whole name."""
    short = name[5:]
    if short.isidentifier() and not keyword.iskeyword(short) and not hasattr(builtins, short) \
            and short not in taken:
        return short
    return name


def plan(root: Path, name: str, *, title: str | None = None, title_es: str | None = None,
         frameworks: tuple[str, ...] = ("torch",), force: bool = False) -> dict[Path, str]:
    """The files of a new exercise (path under ``root`` -> text), nothing written.

    Args:
        root: the repository (``solutions/``, ``autograder/``, ``tests/`` below it).
        name: ``exNN_name`` (lower case letters, digits and ``_`` after ``exNN_``).
        title: its English title (default: the name's words, capitalised).
        title_es: its Spanish title (default: the English one; translate it).
        frameworks: what its workers import.
        force: allow the name of an existing exercise (its files are then overwritten).

    Raises:
        NewError: a bad name, its number taken by another exercise, or (without ``force``) an existing one.
    """
    from autograder.builders import stubs as _stubs
    from autograder.core.registry import REGISTRY
    from autograder.student.instructions_es import english_sha

    if not PACKAGE_NAME.fullmatch(name):
        raise NewError(f"{name!r} is not an exercise name: expected exNN_name (ex, two digits, _, then lower case "
                       "letters, digits or _), e.g. ex14_layer_norm")
    same_number = [ex for ex in REGISTRY if ex[:4] == name[:4] and ex != name]
    if same_number:
        raise NewError(f"{name[:4]} is taken by {same_number[0]}: pick another number")
    if name in REGISTRY and not force:
        raise NewError(f"{name} already exists (autograder/exercises/{name}/): pick another name, or --force to "
                       "overwrite it with the skeleton")
    words = name[5:].replace("_", " ").strip() or name
    title = (title or words[:1].upper() + words[1:]).strip().rstrip(".")
    title_es = (title_es or title).strip().rstrip(".")
    taken = {n for meta in REGISTRY.values() for n in meta.names}
    code = "jax" if frameworks == ("jax",) else "torch"
    values = {"name": name, "nn": name[2:4], "short": name[:4], "key": name[:4].upper(),
              "func": function_name(name, taken), "framework": code,
              "title": templates.string(title), "titlees": templates.string(title_es),
              "frameworks": "(" + ", ".join(f'"{f}"' for f in frameworks) + ("," if len(frameworks) == 1 else "") + ")"}
    out: dict[Path, str] = {}
    for template, dest in FILES:  # the solution first: es.py's SOURCE_SHA is the fingerprint of its docstrings
        source = f"{TEMPLATES}/{template.format(fw=code)}"
        want = {s.lower() for s in templates.slots(templates.parts(source)[templates.MAIN])}
        out[root / dest.format(name=name)] = text = templates.render(source, **{k: values[k] for k in want})
        if "sha" not in values:
            values["sha"] = english_sha(text)
    solution = out[root / FILES[0][1].format(name=name)]
    out[root / STUB.format(name=name)] = _stubs.stub_source(solution, name)
    return out


def write(files: dict[Path, str], force: bool = False) -> list[Path]:
    """Writes the files; without ``force`` none is written when one exists.

    Raises:
        NewError: a file exists and ``force`` is off.
    """
    existing = [p for p in files if p.exists()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more of its files)" if len(existing) > 1 else ""
        raise NewError(f"{existing[0]} exists{more}: nothing written; --force overwrites")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


# --------------------------------------------------------------------------- command line
DESCRIPTION = ("Write the skeleton of a new exercise: its solution and stub, its package in autograder/exercises/ "
               "(metadata, a probe, a public check, EN/ES messages, hints, figure, Spanish instructions), its hidden "
               "suite and its mutants: a tiny real exercise that builds, grades and passes the tests, to be replaced "
               "part by part (README: 'Writing or changing an exercise').")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``new`` and its options to the CLI's subparsers."""
    p = sub.add_parser("new", help="write the skeleton of a new exercise", description=DESCRIPTION)
    p.add_argument("name", metavar="exNN_name", help="the exercise's name, e.g. ex14_layer_norm")
    p.add_argument("--title", default=None, help="its English title (default: from the name)")
    p.add_argument("--title-es", default=None, help="its Spanish title (default: the English one)")
    p.add_argument("--frameworks", type=parse_frameworks, default=("torch",), metavar="torch|jax|torch,jax",
                   help="what its workers import (default torch); jax writes JAX code, the others PyTorch code")
    p.add_argument("--force", action="store_true", help="overwrite the skeleton's files if they exist")
    p.add_argument("--root", default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """``tapetrace new``: writes the skeleton and says what to do next; 2 with a one-line reason."""
    from autograder.core.paths import ROOT

    root = Path(args.root) if args.root else ROOT
    try:
        written = write(plan(root, args.name, title=args.title, title_es=args.title_es,
                             frameworks=args.frameworks, force=args.force), force=args.force)
    except NewError as err:
        print(f"tapetrace new: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    print(f"next: edit solutions/{args.name}.py and its package, then `make stubs` and `make build`; "
          f"`pytest tests/test_outcomes.py -k {args.name[:4]}` proves the three outcomes")
    return 0
