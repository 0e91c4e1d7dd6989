"""Outputs of ``tapetrace grade``: the tables, the summary line, the JSON and CSV files, the checkpoint.

Everything here reads the result rows of docs/grading-contract.md (one per submission)
and never grades. The records' text was cleaned where it entered them
(``autograder/core/text.py``); a submission's path is the instructor's identifier
and stays as given in the JSON. Each output escapes for its medium: the table
and the progress line for a terminal (:func:`autograder.core.text.terminal`), CSV
cells never start a formula (:func:`autograder.core.text.csv_cell`). The per-student
feedback files are :mod:`autograder.reports.feedback`'s, the progress bar
:mod:`autograder.reports.progress`'s.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES
from autograder.core.records import ResultRow
from autograder.core.text import csv_cell, hidden, shorten, terminal


def _fmt(x: Any) -> str:
    try:
        return f"{float(x):g}"
    except (TypeError, ValueError):
        return str(x)


def terminal_text(text: Any) -> str:
    """``text`` safe to print on a terminal: every control or other character not drawn as itself
    (:func:`autograder.core.text.hidden`) becomes ``?``."""
    return "".join("?" if hidden(ch) else ch for ch in str(text))


def atomic_write(path: str | os.PathLike[str], text: str, private: bool = False) -> None:
    """Writes ``text`` via a temporary file and a rename: readers never see half a file.

    Args:
        path: The file to write (replaced whole).
        text: Its new text (UTF-8, newlines as given).
        private: readable by its owner only (mode 0600) from the moment it exists: a results file written
            while a class is graded, which a student's worker running as another uid must not read.
    """
    path = str(path)
    tmp = f"{path}.tmp{os.getpid()}"
    if private:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # a leftover keeps its mode: the file is made anew, owner-only
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        fh = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by the with below
    else:
        fh = open(tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115
    with fh:
        fh.write(text)
    os.replace(tmp, path)


# ----------------------------------------------------------------------- table
MESSAGE_WIDTH = 110  # the table's message column; a longer message is cut at a word and marked


def table(results: list[ResultRow], full_text_in: str = "") -> str:
    """A readable table: per submission, exercise, score, max, first failure message.

    A message longer than :data:`MESSAGE_WIDTH` is cut at a word and ends with `` …``; a last line then
    says where the whole text is: ``full_text_in`` (the outputs written, e.g. ``"grades.json"``), or
    which options would keep it.
    """
    lines = []
    cut = False
    for res in results:
        dev = res.get("device") or {}
        lines.append(f"== {terminal(res['submission'])}  total {_fmt(res['total'])} / {_fmt(res['max_total'])}"
                     f"  (device: torch {dev.get('torch')}, jax {dev.get('jax')};"
                     f" seed {res.get('seed')})")
        lines.append(f"   {'exercise':<24} {'score':>6} {'max':>5}  {'status':<8} message")
        for ex, e in res["exercises"].items():
            whole = terminal(e.get("message", ""))
            msg = shorten(whole, MESSAGE_WIDTH - 1)
            cut = cut or msg != whole
            lines.append(f"   {terminal(ex):<24} {_fmt(e['score']):>6} {_fmt(e['max_score']):>5}  "
                         f"{terminal(e['status']):<8} {msg}")
    if cut:
        where = f"in {full_text_in}" if full_text_in else "kept with --json FILE or --feedback DIR"
        lines.append(f"(messages ending in … are shortened: the whole text is {where})")
    return "\n".join(lines)


def compact_table(results: list[ResultRow]) -> str:
    """One line per submission (for large batches): total, then each exercise's score."""
    exercises = [ex for ex in EXERCISES if any(ex in r["exercises"] for r in results)]
    width = max([10, *(len(terminal(r["submission"])) for r in results)])
    width = min(width, 60)
    head = f"{'submission':<{width}} {'total':>7}  " + " ".join(f"{ex[:4]:>5}" for ex in exercises)
    lines = [head]
    for r in results:
        name = terminal(r["submission"])
        if len(name) > width:
            name = "..." + name[-(width - 3):]
        cells = []
        for ex in exercises:
            e = r["exercises"].get(ex)
            cells.append(f"{'-' if e is None else _fmt(e['score']):>5}" if e is None or e["status"] == "graded"
                         else f"{terminal(e['status'])[:5]:>5}")
        lines.append(f"{name:<{width}} {_fmt(r['total']):>7}  " + " ".join(cells))
    return "\n".join(lines)


def summary_line(results: list[ResultRow], seconds: float | None = None) -> str:
    """One line for the end of a batch: count, mean total, statuses, time."""
    n = len(results)
    if not n:
        return "graded 0 submissions"
    mean = sum(float(r["total"]) for r in results) / n
    top = max(float(r["max_total"]) for r in results)
    statuses: dict[str, int] = {}
    for r in results:
        for e in r["exercises"].values():
            statuses[e["status"]] = statuses.get(e["status"], 0) + 1
    st = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    rate = f"; {seconds:.0f} s, {3600 * n / seconds:.0f} submissions/hour" if seconds else ""
    return f"graded {n} submission{'s' if n != 1 else ''}: mean {mean:.1f} / {top:g} (exercises: {st}){rate}"


# ------------------------------------------------------------------ JSON, CSV
def write_json(results: list[ResultRow], path: str) -> None:
    """One object for one submission, a list for several (docs/grading-contract.md)."""
    data: Any = results[0] if len(results) == 1 else results
    atomic_write(path, json.dumps(data, indent=2), private=True)  # a class's scores: its owner's only


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def malformed(row: Any) -> str | None:
    """Why one result object is not docs/grading-contract.md's submission row (``ResultRow``), in a few words; None when it is.

    What the after-grading tools read of it is checked (a hand-edited or damaged file, or one written by
    something else): ``submission`` a string, ``total`` and ``max_total`` finite numbers, ``exercises`` an
    object whose every exercise has finite ``score`` and ``max_score``, a known ``status`` and, where
    present, ``tests`` a list of objects with a string ``name``, finite ``score`` and ``max_score`` and a
    boolean ``passed``.
    """
    from autograder.core.status import STATUSES

    if not isinstance(row, dict) or not isinstance(row.get("submission"), str):
        return "not a result object with a submission name"
    if not (_number(row.get("total")) and _number(row.get("max_total"))):
        return "its total or max_total is not a number"
    exercises = row.get("exercises")
    if not isinstance(exercises, dict):
        return "its exercises are not an object"
    for ex, e in exercises.items():
        if not (isinstance(e, dict) and _number(e.get("score")) and _number(e.get("max_score"))
                and e.get("status") in STATUSES):
            return f"exercise {terminal(ex, 80)} has no score, max_score or known status"
        tests = e.get("tests", [])
        if not isinstance(tests, list) or not all(
                isinstance(t, dict) and isinstance(t.get("name"), str) and _number(t.get("score"))
                and _number(t.get("max_score")) and isinstance(t.get("passed"), bool) for t in tests):
            return f"exercise {terminal(ex, 80)} has a test that is not a name, scores and passed"
    return None


def read_json(path: str, notes: list[str] | None = None) -> list[ResultRow]:
    """Reads what :func:`write_json` wrote (an object or a list) as a list.

    Args:
        path: the file.
        notes: where given, a result object that is not well formed (:func:`malformed`) is left out and a
            note says which and why (an after-grading tool finishes the rest); else it is an error.

    Raises:
        ValueError: the file is not valid JSON or holds no result objects (or, without ``notes``, one
            that is not well formed).
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and isinstance(data.get("tapetrace_part"), dict):
        data = data.get("results")  # one shard's part (autograder/scaleout/shard.py): its results
    items = data if isinstance(data, list) else [data]
    if not all(isinstance(r, dict) and "submission" in r and "exercises" in r for r in items):
        raise ValueError(f"{path} does not hold tapetrace results")
    kept: list[ResultRow] = []
    for k, r in enumerate(items):
        why = malformed(r)
        if why is None:
            kept.append(r)
            continue
        where = f"{path}: result {k + 1} ({terminal(r.get('submission'), 120)})"
        if notes is None:
            raise ValueError(f"{where} is not well formed: {why}")
        notes.append(f"{where} left out: {why}")
    return kept


def write_csv(results: list[ResultRow], path: str) -> None:
    """One row per submission: path, each exercise's score, total (and max_total)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", *EXERCISES, "total", "max_total"])
    for res in results:
        w.writerow([csv_cell(res["submission"]),
                    *[csv_cell(e["score"] if (e := res["exercises"].get(ex)) is not None else "") for ex in EXERCISES],
                    csv_cell(res["total"]), csv_cell(res["max_total"])])
    atomic_write(path, buf.getvalue())


class Checkpoint:
    """Rewrites the JSON output while a batch runs, so an interrupted run loses nothing.

    Writes at most every ``every`` seconds (and on :meth:`flush`): a row that arrives sooner is written when the
    interval is over (a timer), not only with the next row, which a batch of slow submissions may hold back for
    minutes; so a run killed outright loses at most the last ``every`` seconds. ``--resume`` then skips what
    the file already holds.
    """

    def __init__(self, path: str | None, before: list[ResultRow], order: list[str],
                 every: float = 2.0, writer: Callable[[list[ResultRow], str], None] | None = None,
                 write_empty: bool = False) -> None:
        self.path = path
        self.writer = writer or write_json  # a shard writes its part (autograder/scaleout/shard.py)
        self.write_empty = write_empty
        self.before = list(before)
        self.rank = {p: i for i, p in enumerate(order)}
        self.every = every
        self.new: list[ResultRow] = []
        self._last = 0.0
        self.warned = False
        self._lock = threading.Lock()
        self._dirty = False
        self._timer: threading.Timer | None = None

    def add(self, res: ResultRow) -> None:
        with self._lock:
            self.new.append(res)
            if not self.path:
                return
            self._dirty = True
            wait = self.every - (time.monotonic() - self._last)
            if wait <= 0:
                self._write()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self._deferred)
                self._timer.daemon = True
                self._timer.start()

    def _deferred(self) -> None:
        with self._lock:
            self._timer = None
            if self._dirty:
                self._write()

    def close(self) -> None:
        """No more deferred writes (the final outputs are written next, from :meth:`results`)."""
        with self._lock:
            self._dirty = False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def results(self) -> list[ResultRow]:
        """Earlier results, then the new ones in the order the submissions were given."""
        with self._lock:
            return self.before + sorted(self.new, key=lambda r: self.rank.get(r["submission"], 1 << 30))

    def flush(self) -> None:
        with self._lock:
            if self.path:
                self._write()

    def _write(self) -> None:
        data = self.before + sorted(self.new, key=lambda r: self.rank.get(r["submission"], 1 << 30))
        self._last = time.monotonic()
        self._dirty = False
        if not self.path or (not data and not self.write_empty):
            return
        try:
            self.writer(data, self.path)
        except OSError as err:  # a full disk must not stop the grading; the final write retries
            if not self.warned:
                self.warned = True
                print(f"tapetrace: warning: cannot update {self.path}: {err}", file=sys.stderr)
