"""The files a ``tapetrace grade`` run leaves, declared once (:data:`GRADE_OUTPUTS`) and written at its end.

Each :class:`Output` says what ``grade`` writes: its option (``--json``, or the path of another output it sits
beside: the receipt, ``OUT.receipt.json``), its writer, and whether student workers must not read it (the
default: a new output is classmates' data until declared otherwise). The CLI reads this one list for its
options and their checks (:func:`add_flags`, :func:`paths`, :func:`check_outputs`), for what every student
worker must not see (:func:`hidden`: plain paths, handed to the engine's session) and for its final write
(:func:`write_outputs`). Every command that writes grading results writes them here: ``grade``
(:func:`write_outputs`), ``regrade`` and ``merge`` (:func:`write_results`), each with the options it has.

``--json`` is written through the run's :class:`autograder.reports.report.Checkpoint` (whose writer is a
shard's part writer under ``--shard``; only a whole run's JSON gets its receipt). While the run goes, the
checkpoint rewrites the JSON; this is the final write, also after Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.core.records import ResultRow
from autograder.reports import feedback as _feedback
from autograder.reports import receipt as _receipt
from autograder.reports import report as _report

JsonWriter = Callable[[list[ResultRow], str], None]


@dataclass(frozen=True)
class Written:
    """What every output's writer is given at the run's end.

    Attributes:
        results: every row, in order (earlier ``--resume`` rows, then this run's).
        json_writer: writes the rows as ``--json`` (a shard's part writer under ``--shard``: no receipt then).
        write_empty: whether the JSON is written without rows (a shard's empty part).
        lang: the feedback's language.
        feedback_format: ``md``, ``html`` or ``both``.
        overrides: the manual overrides' audit the receipt lists (``regrade --overrides``), or None.
    """

    results: list[ResultRow]
    json_writer: JsonWriter = _report.write_json
    write_empty: bool = False
    lang: str = "en"
    feedback_format: str = "md"
    overrides: dict[str, Any] | None = None


Writer = Callable[[Written, str], None]


@dataclass(frozen=True)
class Output:
    """One file (or folder) ``tapetrace grade`` writes.

    Attributes:
        name: its key, and its option's ``dest`` (``json`` for ``--json``).
        writer: writes it at the run's end: ``writer(written, path)``; it may write nothing (an empty run).
        flag: its option (``--json``); None for an output derived from another's path.
        metavar: the option's placeholder (``OUT.json``).
        help: the option's help.
        folder: a folder of files (``--feedback``), not one file.
        derived: ``(name of another output, its path -> this path)``: the receipt beside ``--json``.
        hidden_from_students: kept from every student worker (classmates' scores, feedback, the resume file).
    """

    name: str
    writer: Writer
    flag: str | None = None
    metavar: str | None = None
    help: str | None = None
    folder: bool = False
    derived: tuple[str, Callable[[str], str]] | None = None
    hidden_from_students: bool = True


def _write_json(w: Written, path: str) -> None:
    if w.results or w.write_empty:
        w.json_writer(w.results, path)


def _write_receipt(w: Written, path: str) -> None:
    # a whole run's (a shard's part: merge writes the receipt of the whole)
    if (w.results or w.write_empty) and w.json_writer is _report.write_json:
        _receipt.write(_receipt.receipt(w.results, overrides=w.overrides), path)


def _write_csv(w: Written, path: str) -> None:
    _report.write_csv(w.results, path)


def _write_feedback(w: Written, path: str) -> None:
    _feedback.write_feedback(w.results, path, lang=w.lang, fmt=w.feedback_format)


GRADE_OUTPUTS: tuple[Output, ...] = (
    Output("json", _write_json, flag="--json", metavar="OUT.json",
           help="the results, one object per submission (rewritten while grading: --resume continues from it)"),
    Output("receipt", _write_receipt, derived=("json", _receipt.sidecar)),
    Output("csv", _write_csv, flag="--csv", metavar="OUT.csv", help="the results, one row per submission"),
    Output("feedback", _write_feedback, flag="--feedback", metavar="DIR", folder=True,
           help="write one feedback file per submission into DIR"),
)


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Adds an option for every declared output that has one (``--json OUT.json``...)."""
    for o in GRADE_OUTPUTS:
        if o.flag:
            parser.add_argument(o.flag, dest=o.name, metavar=o.metavar, help=o.help)


def paths(args: argparse.Namespace) -> dict[str, str | None]:
    """Per declared output, its path from the options (None: not asked for), derived ones included."""
    out: dict[str, str | None] = {}
    for o in GRADE_OUTPUTS:
        if o.derived is not None:
            source, derive = o.derived
            base = out.get(source) if source in out else getattr(args, source, None)
            out[o.name] = derive(base) if base else None
        else:
            out[o.name] = getattr(args, o.name, None)
    return out


def hidden(args: argparse.Namespace) -> tuple[str | None, ...]:
    """What no student worker may read: every declared output's path but those declared readable."""
    where = paths(args)
    return tuple(where[o.name] for o in GRADE_OUTPUTS if o.hidden_from_students)


def check_output(path: str | None, flag: str) -> str | None:
    """Why one output file cannot be written, or None; its folder is created when missing.

    Every output option creates its folder as ``--feedback`` (and ``tapetrace report --out``) create theirs:
    before grading starts, so a folder that cannot be made is refused at once.

    Args:
        path: the file (None or empty: not asked for).
        flag: its option, named in the reason (``--json``).

    Returns:
        The one-line reason (``--json out/r.json: is a directory``), or None.
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


def check_outputs(args: argparse.Namespace) -> str | None:
    """Why a declared output's option (``--json``, ``--csv``, ``--feedback``...) cannot be written, or None.

    Args:
        args: the command's options (an output it has no option for is not asked for).

    Returns:
        The first one-line reason, or None.
    """
    for o in GRADE_OUTPUTS:
        path = getattr(args, o.name, None) if o.flag is not None else None
        if o.flag is None or not path:
            continue
        if o.folder and Path(path).exists() and not Path(path).is_dir():
            return f"{o.flag} {path}: exists and is not a directory"
        reason = None if o.folder else check_output(path, o.flag)
        if reason:
            return reason
    return None


def write_results(written: Written, where: dict[str, str | None]) -> None:
    """Writes the declared outputs of some rows, in their declared order (``regrade``, ``merge``).

    Args:
        written: the rows and what the writers need (:class:`Written`).
        where: per output's name, its path (:func:`paths`; None or absent: not written).

    Raises:
        OSError: an output cannot be written.
    """
    for o in GRADE_OUTPUTS:
        path = where.get(o.name)
        if path:
            o.writer(written, path)


def write_outputs(checkpoint: _report.Checkpoint, where: dict[str, str | None], *, lang: str = "en",
                  feedback_format: str = "md") -> list[ResultRow]:
    """Writes a run's declared outputs from its checkpoint, in their declared order.

    Args:
        checkpoint: the run's checkpoint (its rows, its JSON writer, whether an empty part is written).
        where: per output's name, its path (:func:`paths`; None or absent: not written).
        lang: the feedback's language.
        feedback_format: ``md``, ``html`` or ``both``.

    Returns:
        Every row, in order.

    Raises:
        OSError: an output cannot be written.
    """
    checkpoint.close()
    written = Written(checkpoint.results(), checkpoint.writer, checkpoint.write_empty, lang, feedback_format)
    write_results(written, where)
    return written.results
