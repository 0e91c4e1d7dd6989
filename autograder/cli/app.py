"""The ``tapetrace`` command: assembles one argparse subparser per subcommand and dispatches.

Each subcommand lives in ``autograder/cli/<name>.py``, a thin module over the layer it drives, and exposes
``add_parser(sub) -> ArgumentParser`` (its subparser and options, ``func`` set to its ``run``)
and ``run(args) -> int`` (its body; the exit status). So ``tapetrace build --help`` lists
build's own options. Adding a subcommand (e.g. ``tapetrace new``) is writing ``cli/new.py``
with those two functions and naming it in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Subcommands in the order `tapetrace --help` lists them: autograder/cli/<name>.py each.
COMMANDS: tuple[str, ...] = ("grade", "merge", "stubs", "build", "report", "figures", "new", "regrade",
                             "gradebook", "similarity", "feedback", "review")


def _exit_error(msg: str) -> int:
    print(f"tapetrace: {msg}", file=sys.stderr)
    return 2


INSTALL_FIX = "run `make setup` in the checkout, or `pip install -c constraints.txt -e '.[{extra}]'`"
# the optional libraries a command may need (module -> its distribution, the extra that installs it): a fresh
# `make demo` installs what grading needs only, so `build`, `similarity`, `review`, `--cluster` name theirs in one line
OPTIONAL: dict[str, tuple[str, str]] = {
    "otter": ("otter-grader", "build"), "nbclient": ("nbclient", "build"), "nbformat": ("nbformat", "build"),
    "ipykernel": ("ipykernel", "build"), "jupyter_client": ("jupyter-client", "build"),
    "copydetect": ("copydetect", "similarity"), "dask": ("dask", "cluster"), "distributed": ("distributed", "cluster"),
    "flask": ("flask", "review"), "werkzeug": ("werkzeug", "review"),
}
MISSING_LIBRARY = "{what} not installed (needed by `tapetrace {command}`): " + INSTALL_FIX


def missing_libraries_line(command: str, modules: list[str]) -> str | None:
    """One line naming the optional libraries among ``modules`` that are not installed, and the command that
    installs them; None when all are (or none is optional)."""
    import importlib.util

    gone = [m for m in dict.fromkeys(modules) if m in OPTIONAL and importlib.util.find_spec(m) is None]
    if not gone:
        return None
    names = [OPTIONAL[m][0] for m in gone]
    what = names[0] + " is" if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] + " are"
    return MISSING_LIBRARY.format(what=what, command=command, extra=OPTIONAL[gone[0]][1])


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (docs/grading-contract.md, "Exit codes": non-zero exit with a one-line reason)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used by the docs test)."""
    p = _Parser(prog="tapetrace", description="Autograded PyTorch-vs-JAX exercises.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p.commands = {}  # name -> its subparser (for its own one-line errors)
    for name in COMMANDS:
        module = f"autograder.cli.{name}"
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
            missing = sub.add_parser(name, help="(not available in this installation)", add_help=False)
            missing.set_defaults(unavailable=True, func=lambda _args, _name=name: _exit_error(
                f"`{_name}` is not available in this installation"))
            p.commands[name] = missing
            continue
        p.commands[name] = mod.add_parser(sub)
    return p


def file_named_like_an_option(argv: list[str]) -> str | None:
    """The first argument before ``--`` that starts with ``-`` and names an existing file or folder.

    A shell glob (``tapetrace grade *``) passes every name it finds: a submission named ``--public-only``
    or ``--sandbox-skip=namespaces`` would become that option. Such a run is refused; ``--`` before the
    submissions (or ``./*``) makes them names.
    """
    for token in argv:
        if token == "--":
            return None
        if token.startswith("-") and token != "-" and os.path.lexists(token):
            return token
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tapetrace`` console script."""
    # one BLAS thread in the grader's own process and what it starts (workers get theirs from worker_env): it only
    # compares arrays, and numpy's OpenBLAS otherwise starts a thread per core that spins ~0.1 CPU-s at its import
    # (docs/benchmarks.md, "make test's time"); a value the user set is kept
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else list(argv)
    clash = file_named_like_an_option(argv)
    if clash is not None:
        return _exit_error(f"{clash!r} is a file here as well as an option; put -- before the submissions "
                           "(tapetrace grade -- *) or name them ./*")
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "unavailable", False):  # said by the subcommand: `tapetrace build: ...`
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except ModuleNotFoundError as err:  # an optional library a command's path reached: one line, never a traceback
        line = missing_libraries_line(args.command, [(err.name or "").partition(".")[0]])
        if line is None:
            raise
        return _exit_error(line)


if __name__ == "__main__":
    sys.exit(main())
