"""Manual overrides: a regrade request or a TA's judgement, recorded in the instructor's CSV and applied on read.

The overrides file is the instructor's input, given on the command line (``--overrides FILE`` of ``tapetrace
report``, ``gradebook``, ``regrade`` and ``feedback``); nothing inside a submission is ever read as one. One
row per decision, columns (:data:`COLUMNS`):

``student``  an identity key (:func:`identities`): with a roster, the student's roster ``student_id`` and
             nothing else; without one, the submission's path as the results hold it (``subs/alice.ipynb``;
             a path without a folder written ``./alice.ipynb``). A file or folder name alone is never a key:
             the student chose it, and it may be a classmate's id;
``exercise`` an exercise of that student's results; ``test`` (optional) one of its tests;
``action``   ``set`` (the points become ``points``) or ``adjust`` (``points`` are added; negative takes away);
``points``   a number: ``set`` within 0..max, ``adjust`` within -max..max (the result is kept within 0..max);
``comment``  shown to the student beside the score; ``by`` who decided; ``at`` when (ISO 8601);
``basis``    (optional) the autograder's score the decision was made
             against (``7/10``, and ``@digest`` of the check's definition for a test): when the current
             results differ, the override is flagged ``check changed since override`` and still applied.

:func:`read` parses and validates the file's shape, :func:`resolve` checks every row against the results
(an unknown student, exercise or test, points beyond the maximum: :class:`OverrideError` naming the file and
the row; the CLI exits 2), :func:`apply` returns adjusted copies of the result rows (the originals are not
touched) with each change recorded beside the score it changed, and :func:`audit` the JSON-able audit that
the receipt, ``overrides.csv`` and the report show (:func:`audit_html`, :func:`audit_csv`). A row the
grader could not grade (``grader_error``, ``ungraded``) is not overridden: grade it again first (flagged).
A key that names a student the results hold no single submission of (a roster student without a
submission, or with two) is that student's problem: the override is not applied, its audit row says why and
the CLI exits 3, the class still written; never another student's row, never the class's run.
"""

from __future__ import annotations

import copy
import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict, cast

from autograder.core.records import ExerciseRow, OverrideEntry, OverrideRecord, ReportRow, ResultRow, TestRow
from autograder.core.status import is_graders
from autograder.core.text import clean, csv_cell, html_text, terminal
from autograder.engine.regrade import Diff
from autograder.reports.roster import roster_key

COLUMNS = ("student", "exercise", "test", "action", "points", "comment", "by", "at", "basis")
REQUIRED = ("student", "exercise", "action", "points", "by", "at")
ACTIONS = ("set", "adjust")

# messages: the bug and the fix, never an expected value
NOT_CSV = "cannot be read as a UTF-8 CSV ({why}); save it from the spreadsheet as CSV UTF-8"
UNTERMINATED = ("is not a well-formed CSV: an unterminated quote (a quoted cell of the row starting on line {line} "
                "never closes); close the quote, double a quote inside a cell (\"\"), or save it again as CSV UTF-8")
STRAY_QUOTE = ("is not a well-formed CSV from line {line} ({why}): a quote inside a cell must be doubled (\"\") or "
               "a quoted cell was never closed; fix the quotes or save it again as CSV UTF-8")
MISSING_COLUMNS = "has no column(s) {cols}; the header is student,exercise,test,action,points,comment,by,at"
UNKNOWN_COLUMNS = "has unknown column(s) {cols}; the columns are " + ",".join(COLUMNS)
EMPTY_CELL = "{col} is empty; every row needs student, exercise, action, points, by and at"
BAD_ACTION = "action {value!r} is neither set nor adjust"
BAD_POINTS = "points {value!r} is not a number"
BAD_TIME = "at {value!r} is not an ISO 8601 time (2026-12-03T10:00:00+01:00)"
UNKNOWN_ID = ("student {value!r} is no student_id of the roster: with --roster a student is named by their roster "
              "student_id only (a file or folder name is never one: the student chose it)")
UNKNOWN_PATH = ("student {value!r} is no submission's path in the results: without --roster a student is named by "
                "the path the results hold (subs/alice.ipynb, ./alice.ipynb); give --roster to name them by "
                "student_id (a file or folder name alone is never one: the student chose it)")
NO_SUBMISSION = "not applied: student {value} has no submission in the results; grade it, then apply the override"
TWO_SUBMISSIONS = ("not applied: student {value} has {n} submissions in the results ({subs}); keep one (or fix "
                   "the roster's file column), then apply the override")
UNKNOWN_EXERCISE = "exercise {value!r} is not in {student}'s results"
UNKNOWN_TEST = "test {value!r} is not a test of {exercise} in {student}'s results"
BEYOND_MAX = "points {points:g} with action {action} is beyond the maximum {maximum:g} of {target}"
INSIDE_SUBMISSION = ("is inside the submission {submission}: what a student submits is never an override; keep the "
                     "overrides file outside the submissions")
GRADERS = "not applied: the grader could not grade {exercise} ({status}); grade it again (--resume), then override"
CLAMPED = "adjusted within 0..{maximum:g}"
CHANGED = "check changed since override"


class OverrideError(Exception):
    """The overrides file cannot be used as written (the message names the file and the row)."""


@dataclass(frozen=True)
class Override:
    """One row of the overrides file (``row``: its line number in the file, the header being line 1)."""

    row: int
    student: str
    exercise: str
    test: str
    action: str
    points: float
    comment: str
    by: str
    at: str
    basis: str = ""

    @property
    def target(self) -> str:
        """``ex01_torch_mlp`` or ``ex01_torch_mlp/forward_matches_reference``."""
        return f"{self.exercise}/{self.test}" if self.test else self.exercise


@dataclass
class Overrides:
    """An overrides file: where it is and its rows in the file's order."""

    path: str
    rows: list[Override] = field(default_factory=list)


class AuditRow(TypedDict):
    """One override in the audit: who, what, the autograder's score and the score after it, flags."""

    row: int
    student: str
    submission: str
    exercise: str
    test: str
    action: str
    points: float
    autograder: float
    before: float
    after: float
    max_score: float
    comment: str
    by: str
    at: str
    applied: bool
    flags: list[str]


def _err(path: str, row: int | None, why: str) -> OverrideError:
    return OverrideError(f"{path}: {'row ' + str(row) + ': ' if row else ''}{why}")


def read(path: str) -> Overrides:
    """Reads and checks the shape of an overrides CSV (:data:`COLUMNS`); blank rows are skipped.

    Raises:
        OverrideError: the file cannot be read, a column is missing or unknown, or a row is malformed.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise _err(path, None, NOT_CSV.format(why=clean(str(err).splitlines()[0] if str(err) else err, 120))) from None
    lines = _records(path, text)
    if not lines:
        raise _err(path, None, MISSING_COLUMNS.format(cols=", ".join(REQUIRED)))
    header = [h.strip().lower() for h in lines[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise _err(path, 1, MISSING_COLUMNS.format(cols=", ".join(missing)))
    unknown = [h for h in header if h and h not in COLUMNS]
    if unknown:
        raise _err(path, 1, UNKNOWN_COLUMNS.format(cols=", ".join(clean(u, 40) for u in unknown)))
    out = Overrides(path)
    for n, cells in enumerate(lines[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        rec = {h: (cells[i].strip() if i < len(cells) else "") for i, h in enumerate(header) if h}
        out.rows.append(_row(path, n, rec))
    return out


def _records(path: str, text: str) -> list[list[str]]:
    """The CSV's records, read strictly: a quote left open or a stray quote is the file's error, named by its
    row and the line the row starts on (never a later check's words about a row the quote swallowed).

    Raises:
        OverrideError: the text is not a well-formed CSV.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out: list[list[str]] = []
    while True:
        start = reader.line_num + 1
        try:
            out.append(next(reader))
        except StopIteration:
            return out
        except csv.Error as err:
            why = str(err)
            words = (UNTERMINATED.format(line=start) if "unexpected end of data" in why else
                     STRAY_QUOTE.format(line=start, why=clean(why, 80)))
            raise _err(path, len(out) + 1, words) from None


def _row(path: str, n: int, rec: dict[str, str]) -> Override:
    for col in REQUIRED:
        if not rec.get(col):
            raise _err(path, n, EMPTY_CELL.format(col=col))
    action = rec["action"].lower()
    if action not in ACTIONS:
        raise _err(path, n, BAD_ACTION.format(value=clean(rec["action"], 40)))
    try:
        points = float(rec["points"])
    except ValueError:
        points = math.nan
    if not math.isfinite(points):
        raise _err(path, n, BAD_POINTS.format(value=clean(rec["points"], 40)))
    try:
        datetime.fromisoformat(rec["at"].replace("Z", "+00:00"))
    except ValueError:
        raise _err(path, n, BAD_TIME.format(value=clean(rec["at"], 40))) from None
    return Override(row=n, student=rec["student"], exercise=rec["exercise"], test=rec.get("test", ""), action=action,
                    points=points, comment=clean(rec.get("comment", ""), 0), by=rec["by"], at=rec["at"],
                    basis=rec.get("basis", ""))


_SEPARATORS = "".join(dict.fromkeys(["/", os.sep, os.altsep or "/"]))  # this system's: a POSIX name may hold "\\"


def path_key(text: str, bare: bool = False) -> str | None:
    """A submission path as an identity key without a roster: trailing separators and leading ``./`` dropped
    (this system's separators only: on POSIX a ``\\`` is part of a name a student chose, never a separator).

    Args:
        text: an override's ``student`` cell, or (``bare=True``) a results row's ``submission``.
        bare: accept a path without a folder part (the results' own ``alice.ipynb``); a key needs one, since a
            bare name may be a roster id or a name a student chose (``./alice.ipynb`` names that path).

    Returns:
        The key, or None for a bare name when ``bare`` is false.
    """
    if not bare and not any(sep in text for sep in _SEPARATORS):
        return None
    key = text.rstrip(_SEPARATORS)
    while len(key) > 2 and key[0] == "." and key[1] in _SEPARATORS:
        key = key[2:]
    return key


def identities(row: ResultRow, roster: dict[str, dict[str, str]] | None = None) -> set[str]:
    """The identity keys an override may name a result row's student by (docs/security.md#authority-map).

    With a roster, the ``student_id`` of the roster row whose ``file`` the submission's path ends with (none
    when the roster does not name it or gives no id); without one, the submission's path as the results hold it
    (:func:`path_key`). A file or folder name alone is never a key: the student chose it.
    """
    sub = str(row["submission"])
    if roster is None:
        return {path_key(sub, bare=True) or sub}
    rk = roster_key(roster, sub)
    sid = (roster[rk].get("student_id") or "").strip() if rk is not None else ""
    return {sid} if sid else set()


def _key(student: str, roster: dict[str, dict[str, str]] | None) -> str | None:
    """The identity key an override's ``student`` cell is (None: it can name nobody)."""
    return student if roster is not None else path_key(student)


def refuse_inside_submissions(path: str, results: Sequence[ResultRow]) -> None:
    """Refuses an overrides file that lies inside a submission folder (the student's: data, never authority).

    Raises:
        OverrideError: it does.
    """
    where = Path(path).resolve()
    for r in results:
        sub = Path(str(r["submission"]))
        if sub.is_dir() and where.is_relative_to(sub.resolve()):
            raise _err(path, None, INSIDE_SUBMISSION.format(submission=clean(r["submission"], 120)))


@dataclass(frozen=True)
class Target:
    """Where an override lands: the result row's index, its exercise record and test record (None for the
    exercise); or ``problem``, why it lands nowhere (the student's: not applied, listed)."""

    index: int | None
    exercise: ExerciseRow | None = None
    test: TestRow | None = None
    problem: str = ""


def resolve(ovs: Overrides, results: Sequence[ResultRow],
            roster: dict[str, dict[str, str]] | None = None) -> list[Target]:
    """Finds each override's result row, exercise and test, and checks its points against the maximum.

    Args:
        ovs: :func:`read`'s overrides.
        results: docs/grading-contract.md's result rows (only tapetrace's: an otter row has no tests to name).
        roster: a gradebook roster (:func:`autograder.reports.roster.read_roster`) or None: the keys are
            its ``student_id`` values, or without it the submissions' paths (:func:`identities`).

    Returns:
        Per override, in order, its :class:`Target`; a roster student with no submission or with two in the
        results gets a target with a ``problem`` (not applied, listed), never another student's row.

    Raises:
        OverrideError: a key that names nobody (no roster id, no submission's path), an unknown exercise or
            test, points beyond the maximum (naming the file and the row).
    """
    by_key: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        if r.get("source", "tapetrace") != "tapetrace":
            continue
        for key in identities(r, roster):
            by_key.setdefault(key, []).append(i)
    ids = {(row.get("student_id") or "").strip() for row in (roster or {}).values()} - {""}
    out: list[Target] = []
    for o in ovs.rows:
        wanted = _key(o.student, roster)
        hits = sorted(set(by_key.get(wanted, []))) if wanted is not None else []
        who = clean(o.student, 80)
        if not hits and wanted in ids:
            out.append(Target(None, problem=NO_SUBMISSION.format(value=who)))
            continue
        if not hits:
            raise _err(ovs.path, o.row, (UNKNOWN_ID if roster is not None else UNKNOWN_PATH).format(value=who))
        if len(hits) > 1:
            subs = ", ".join(clean(results[i]["submission"], 80) for i in hits[:3])
            out.append(Target(None, problem=TWO_SUBMISSIONS.format(value=who, n=len(hits), subs=subs)))
            continue
        i = hits[0]
        e = (results[i].get("exercises") or {}).get(o.exercise)
        if not isinstance(e, dict):
            raise _err(ovs.path, o.row, UNKNOWN_EXERCISE.format(value=clean(o.exercise, 80), student=who))
        t = None
        if o.test:
            t = next((t for t in e.get("tests") or [] if t.get("name") == o.test), None)
            if t is None:
                raise _err(ovs.path, o.row, UNKNOWN_TEST.format(value=clean(o.test, 80), exercise=o.exercise,
                                                                student=who))
        maximum = float((t or e).get("max_score") or 0.0)
        low = 0.0 if o.action == "set" else -maximum
        if not low - 1e-9 <= o.points <= maximum + 1e-9:
            raise _err(ovs.path, o.row, BEYOND_MAX.format(points=o.points, action=o.action, maximum=maximum,
                                                          target=clean(o.target, 120)))
        out.append(Target(i, e, t))
    return out


def basis(e: ExerciseRow, t: TestRow | None = None) -> str:
    """The autograder's score of an exercise or test as an override records it: ``7/10`` or ``0/2@3fa9c1d2``
    (a test's check definition digest, where the row recorded one)."""
    rec = t if t is not None else e
    words = f"{float(rec.get('score') or 0):g}/{float(rec.get('max_score') or 0):g}"
    fp = e.get("fingerprint")
    fp = fp if isinstance(fp, dict) else {}
    checks = fp.get("checks")
    checks = checks if isinstance(checks, dict) else {}
    if t is not None and isinstance(checks.get(t.get("name")), dict) and checks[t["name"]].get("definition"):
        words += "@" + str(checks[t["name"]]["definition"])[:8]
    return words


def _regrade_changed(regrade: Diff | None, submission: str, exercise: str, test: str) -> str:
    """Why a regrade diff says this override's check changed ("" when it does not)."""
    if not regrade:
        return ""
    for c in (regrade.get("checks_changed") or {}).get(exercise) or []:
        if not test or c.get("name") == test:
            return f"{c.get('name')}: {c.get('what')}"
    for m in regrade.get("moved") or []:
        if m.get("submission") == submission and m.get("exercise") == exercise:
            names_ = [c.get("name") for c in m.get("checks") or []]
            if not test or test in names_:
                return f"regraded {float(m.get('old_score') or 0):g} → {float(m.get('new_score') or 0):g}"
    return ""


def apply(results: Sequence[ResultRow], ovs: Overrides | None, roster: dict[str, dict[str, str]] | None = None,
          regrade: Diff | None = None) -> tuple[list[ReportRow], list[AuditRow]]:
    """Applies the overrides to copies of the result rows.

    Test overrides first, then exercise overrides, each in the file's order. An overridden test or exercise
    keeps the autograder's verdict (``passed``) and gets ``"override": {"autograder": score, "entries":
    [OverrideEntry...]}`` (``core.records.OverrideRecord``); the exercise's score and the row's total follow (``"override_total"`` on the row records the
    autograder's total). An override whose check changed (its ``basis`` differs from the results, or the
    ``regrade`` diff names it) is flagged :data:`CHANGED` and still applied.

    Args:
        results: the rows (not modified).
        ovs: the overrides, or None (the rows are returned as they are).
        roster: as :func:`resolve`'s.
        regrade: a regrade diff (``tapetrace regrade``'s ``NEW.diff.json``) whose changed checks flag overrides.

    Returns:
        (the adjusted rows, the audit rows in the file's order).

    Raises:
        OverrideError: as :func:`resolve`.
    """
    if ovs is None or not ovs.rows:
        return cast("list[ReportRow]", results), []
    targets = resolve(ovs, results, roster)
    rows = cast("list[ReportRow]", copy.deepcopy(results))
    audit: dict[int, AuditRow] = {}
    order = sorted(range(len(ovs.rows)), key=lambda k: (not ovs.rows[k].test, k))
    for k in order:
        o, target = ovs.rows[k], targets[k]
        i, e0, t0 = target.index, target.exercise, target.test
        if i is None or e0 is None:  # the student's problem (no submission, two): listed, nobody's row touched
            audit[k] = {"row": o.row, "student": o.student, "submission": "", "exercise": o.exercise, "test": o.test,
                        "action": o.action, "points": o.points, "autograder": 0.0, "before": 0.0, "after": 0.0,
                        "max_score": 0.0, "comment": o.comment, "by": o.by, "at": o.at, "applied": False,
                        "flags": [target.problem]}
            continue
        r = rows[i]
        e = r["exercises"][o.exercise]
        t = next(x for x in e["tests"] if x.get("name") == o.test) if o.test else None
        rec = t if t is not None else e
        maximum = float(rec.get("max_score") or 0.0)
        prior = rec.get("override")
        before = float(rec.get("score") or 0.0)
        own = (t0 if t0 is not None else e0).get("score") or 0.0  # the autograder's, before any override
        autograder = float(prior.get("autograder", own) if prior else own)
        flags: list[str] = []
        now = basis(e0, t0)
        if o.basis and o.basis != (now if "@" in o.basis else now.split("@")[0]):
            flags.append(f"{CHANGED} (was {o.basis}, now {now})")
        why = _regrade_changed(regrade, str(r["submission"]), o.exercise, o.test)
        if why:
            flags.append(f"{CHANGED} ({why})")
        applied = not is_graders(str(e.get("status")))
        after = before
        if not applied:
            flags.append(GRADERS.format(exercise=o.exercise, status=e.get("status")))
        else:
            after = o.points if o.action == "set" else before + o.points
            if not 0.0 <= after <= maximum:
                after = min(max(after, 0.0), maximum)
                flags.append(CLAMPED.format(maximum=maximum))
            delta = after - before
            rec["score"] = round(after, 6)
            if t is not None:
                e["score"] = round(float(e["score"]) + delta, 6)
            r.setdefault("override_total", float(results[i]["total"]))
            r["total"] = round(float(r["total"]) + delta, 6)
            entry: OverrideEntry = {"row": o.row, "action": o.action, "points": o.points, "comment": o.comment, "by": o.by,
                            "at": o.at, "flags": flags}
            record: OverrideRecord = {"autograder": autograder,
                                      "entries": [*(prior.get("entries", []) if prior else []), entry]}
            rec["override"] = record
        audit[k] = {"row": o.row, "student": o.student, "submission": str(r["submission"]), "exercise": o.exercise,
                    "test": o.test, "action": o.action, "points": o.points, "autograder": autograder,
                    "before": before, "after": after, "max_score": maximum, "comment": o.comment, "by": o.by,
                    "at": o.at, "applied": applied, "flags": flags}
    return rows, [audit[k] for k in range(len(ovs.rows))]


# ------------------------------------------------------------------ the words
def words(rec: Mapping[str, Any], by_word: str = "by", autograder_word: str = "autograder") -> list[str]:
    """What an overridden exercise or test record says (plain text, not escaped): one line for one override,
    ``autograder 7/10 → 9/10 by ana (2026-12-03): partial credit``; for several, that score line and then one
    line per override (``adjust +1 by ana (2026-12-03): ...``)."""
    ov = rec.get("override")
    if not isinstance(ov, dict) or not ov.get("entries"):
        return []
    maximum = float(rec.get("max_score") or 0.0)
    head = f"{autograder_word} {float(ov['autograder']):g}/{maximum:g} → {float(rec['score']):g}/{maximum:g}"

    def who(ent: dict[str, Any]) -> str:
        text = f"{by_word} {ent['by']} ({str(ent['at'])[:10]})"
        return f"{text}: {ent['comment']}" if ent.get("comment") else text

    entries = ov["entries"]
    if len(entries) == 1:
        return [f"{head} {who(entries[0])}"]
    return [head, *(f"{ent['action']} {float(ent['points']):{'+g' if ent['action'] == 'adjust' else 'g'}} {who(ent)}"
                    for ent in entries)]


def audit(rows: list[AuditRow], path: str) -> dict[str, Any]:
    """The audit as the receipt records it: ``{"file", "applied", "flagged", "rows"}``."""
    return {"file": str(path), "applied": sum(r["applied"] for r in rows), "flagged": sum(bool(r["flags"]) for r in rows),
            "rows": list(rows)}


AUDIT_HEADER = ("row", "student", "submission", "exercise", "test", "action", "points", "autograder", "before",
                "after", "max_score", "applied", "by", "at", "comment", "flags")


def audit_csv(aud: dict[str, Any]) -> str:
    """The audit as CSV: numbers as numbers, every text cell through :func:`autograder.core.text.csv_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(AUDIT_HEADER)
    for r in aud.get("rows") or []:
        w.writerow([csv_cell("; ".join(r["flags"]) if k == "flags" else r[k]) for k in AUDIT_HEADER])
    return buf.getvalue()


def audit_html(aud: dict[str, Any]) -> str:
    """The audit as an HTML section (inside the receipt): one line per override, the autograder's score kept."""
    rows = aud.get("rows") or []
    out = ["<h3 id=\"overrides\">Overrides (audit)</h3>",
           f"<p class=\"meta\">{len(rows)} override(s) from {html_text(aud.get('file', ''))}: "
           f"{int(aud.get('applied') or 0)} applied, {int(aud.get('flagged') or 0)} flagged.</p>"]
    if rows:
        out.append("<table class=\"receipt\"><tr><th>row</th><th>student</th><th>target</th><th>autograder</th>"
                   "<th>after</th><th>by</th><th>at</th><th>comment</th><th>flags</th></tr>")
        for r in rows:
            target = f"{r['exercise']}/{r['test']}" if r["test"] else r["exercise"]
            cls = " class=\"low\"" if r["flags"] else ""
            nowhere = not r["applied"] and not r["submission"]  # a student's problem: no row to show scores of
            scores = ("—", "—") if nowhere else (f"{float(r['autograder']):g}/{float(r['max_score']):g}",
                                                 f"{float(r['after']):g}/{float(r['max_score']):g}")
            out.append(f"<tr><td class=n>{int(r['row'])}</td><td>{html_text(r['student'])}</td>"
                       f"<td><code>{html_text(target)}</code></td>"
                       f"<td class=n>{scores[0]}</td><td class=n>{scores[1]}</td>"
                       f"<td>{html_text(r['by'])}</td><td>{html_text(r['at'])}</td><td>{html_text(r['comment'])}</td>"
                       f"<td{cls}>{html_text('; '.join(r['flags']))}</td></tr>")
        out.append("</table>")
    return "\n".join(out)


def not_applied(rows: Sequence[AuditRow]) -> int:
    """How many overrides were not applied (a student's problem, or a row the grader could not grade): the CLIs
    exit 3 when any was, the class still written."""
    return sum(not r["applied"] for r in rows)


def flagged_lines(rows: list[AuditRow]) -> list[str]:
    """One terminal-safe line per flagged override: ``override row 3 (alice ex01_torch_mlp): check changed ...``."""
    return [terminal(f"override row {r['row']} ({r['student']} {r['exercise']}{'/' + r['test'] if r['test'] else ''})"
                     f": {'; '.join(r['flags'])}", 400) for r in rows if r["flags"]]


def notes_for(row: ResultRow) -> list[str]:
    """The gradebook's notes for an adjusted row: ``ex01_torch_mlp: autograder 7/10 → 9/10 by ana ...``."""
    out = []
    for ex, e in (row.get("exercises") or {}).items():
        if not isinstance(e, dict):
            continue
        out += [f"{ex}: {w}" for w in words(e)]
        out += [f"{ex}/{t.get('name')}: {w}" for t in e.get("tests") or [] for w in words(t)]
    return out
