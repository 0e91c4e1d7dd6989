"""The TA's review page (``tapetrace review``): a local web application over the class's results.

One Flask application (:func:`create_app`) over a :class:`Review`: the results JSON, the instructor's overrides
file and roster as the command line names them. It lists the class (one line per student and exercise: the
score, the autograder's beside an overridden one, the status, the failing checks, the catalogued mistake the
failures match) filtered and sorted by exercise, failing check, mistake and status; opens one student's
exercise (the graded module, lines numbered, highlighted where a message points, the failing checks' messages
beside it, earlier overrides); and takes a TA's override, appended to the overrides file after the same
validation :mod:`autograder.reports.overrides` gives ``report``, ``gradebook``, ``regrade`` and ``feedback``
(:func:`record`), so that every one of them sees it.

Authority (docs/security.md#authority-map): the page is the instructor's (a random token, required on every
request: the ``?token=`` of the URL the command printed, then a cookie set from it); everything a student
controls (their code, the submission's path and name, check messages) is data, escaped for its context
(:mod:`autograder.core.text`), never markup; no URL names a file: a student's code is found by the result row's
index, its path read from the results; a write is a POST from this page only (the token, the page's form key,
and an ``Origin`` that is this server's).
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import html
import io
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, redirect, request

if TYPE_CHECKING:
    from werkzeug.wrappers import Response as BaseResponse  # what flask.redirect returns (flask's Response is one)

from autograder.core.records import ExerciseRow, ReportRow
from autograder.core.text import clean, html_code, html_name, html_text
from autograder.reports import overrides as _overrides
from autograder.reports.roster import roster_key
from autograder.submissions import loader as _loader

# messages: what was refused and what to do, one line each
NO_TOKEN = ("refused: this page needs the token of the URL `tapetrace review` printed when it started "
            "(http://127.0.0.1:PORT/?token=...); open that URL")
BAD_HOST = "refused: this server answers only at 127.0.0.1 and localhost; open the URL `tapetrace review` printed"
OTHER_ORIGIN = ("refused: a change is taken only from this page's own form (the request came from another origin "
                "or named none)")
BAD_FORM = "refused: the form is not this page's (its key is missing or stale); reload the page and enter it again"
NOT_FOUND = "nothing here: open the list at / (no address names a file)"
READ_ONLY = ("read-only: start `tapetrace review GRADES.json --overrides FILE` to record overrides "
             "(FILE is created with its header when absent)")
NOT_TAPETRACE = "otter's results hold no code and no tests to override"
NO_CODE = "no code of {exercise} in this submission"
REFUSED_FILE = "the grader refused {name} ({kind}): no code was graded"
NO_NAME = ("this submission cannot be named in the overrides file: {why}; give --roster (with a student_id for it) "
           "or grade it under a path without leading or trailing spaces")
NOT_IN_ROSTER = "the roster names no student_id for it"
NO_TEST_COLUMN = "{path}: has no test column; add one (student,exercise,test,...) to override a single test"
SAVED = "recorded as row {row} of {path}"
BAD_OVERRIDES = "the overrides file cannot be used as it is, so nothing can be recorded until it is fixed: {why}"
NOT_APPLIED = "{path}: row {row}: {why}"

TOKEN_PARAM = "token"
FILTERS = ("ex", "check", "status", "mistake", "overridden", "q", "sort")
SORTS = {"student": "student", "score": "lowest score first", "-score": "highest score first", "status": "status"}
LINE_REF = re.compile(r"\blines? (\d{1,6})\b")
CODE_CACHE = 32

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
           "X-Frame-Options": "DENY", "Cache-Control": "no-store", "Cross-Origin-Opener-Policy": "same-origin",
           "Cross-Origin-Resource-Policy": "same-origin"}

CodeReader = Callable[[str], "_loader.Submission"]


class ReviewError(Exception):
    """The review cannot start as asked (the message is one line)."""


@dataclass
class Review:
    """What the page serves: the results (the autograder's, never changed), the overrides file and roster.

    Args:
        results: the rows, as :func:`autograder.reports.summary.read_inputs` read them.
        results_path: the results file (relative submission paths are also looked for beside it).
        overrides_path: the overrides CSV a TA's override is appended to (None: the page is read-only).
        roster: a gradebook roster (:func:`autograder.reports.roster.read_roster`) or None.
        notes: what reading the results left out, shown above the list.
        read_code: reads a submission as the loader does (default: a child process under the reading budget).
    """

    results: list[ReportRow]
    results_path: str
    overrides_path: str | None = None
    roster: dict[str, dict[str, str]] | None = None
    notes: list[str] = field(default_factory=list)
    read_code: CodeReader | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # the overrides file: one write at a time
    read_lock: threading.Lock = field(default_factory=threading.Lock)  # the reading child: one read at a time
    _reader: Any = None
    _codes: OrderedDict[str, _loader.Submission | str] = field(default_factory=OrderedDict)

    def close(self) -> None:
        """Stops the reading child, if one was started."""
        with self.read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None


@dataclass
class Item:
    """One line of the list: a student's exercise, with the overrides applied (``autograder``: the score before)."""

    row: int
    ex: int
    exercise: str
    who: str
    submission: str
    status: str
    score: float
    max_score: float
    autograder: float
    overridden: bool
    failing: list[str]
    mistake: str
    total: float
    max_total: float


@dataclass
class State:
    """The results with the overrides file as it is now applied: the rows, the audit, the file's problem."""

    rows: list[ReportRow]
    audit: list[_overrides.AuditRow]
    problem: str = ""


# ---------------------------------------------------------------------------------------------- the data
def current(review: Review) -> State:
    """The results with the overrides file read now (a TA's row, or the instructor's edit, shows at once).

    A file that cannot be used leaves the autograder's scores, and says why (nothing is recorded until fixed).
    """
    path = review.overrides_path
    if not path or not Path(path).exists():
        return State(list(review.results), [])
    try:
        ovs = _overrides.read(path)
        rows, audit = _overrides.apply(review.results, ovs, review.roster)
    except (OSError, _overrides.OverrideError) as err:
        return State(list(review.results), [], clean(str(err).splitlines()[0] if str(err) else err, 600))
    return State(rows, audit)


def who(row: ReportRow, roster: dict[str, dict[str, str]] | None) -> str:
    """A student as the page names them: the roster's name and student_id, else the submission's path."""
    sub = str(row["submission"])
    if roster is None:
        return sub
    rk = roster_key(roster, sub)
    if rk is None:
        return f"{sub} (not in the roster)"
    rec = roster[rk]
    sid, name = (rec.get("student_id") or "").strip(), (rec.get("name") or "").strip()
    return f"{name} ({sid})" if name and sid else sid or name or sub


def _failed(e: ExerciseRow) -> dict[str, str]:
    """check name -> catalogue key of an exercise's failed tests."""
    return {str(t.get("name")): str(t.get("code") or "") for t in e.get("tests") or [] if not t.get("passed")}


def mistakes_catalogue() -> dict[str, list[dict[str, Any]]]:
    """The shipped catalogue of mutants' headers (:func:`autograder.reports.mutants.shipped`), read once."""
    global _CATALOGUE
    if _CATALOGUE is None:
        from autograder.reports.mutants import shipped

        _CATALOGUE = shipped()
    return _CATALOGUE


_CATALOGUE: dict[str, list[dict[str, Any]]] | None = None


def mistake(exercise: str, e: ExerciseRow) -> str:
    """The catalogued mistake(s) an exercise's failures match exactly (``""``: none; several joined by `` | ``)."""
    from autograder.reports.mistakes import SKIP_CODES, match_mutants

    if e.get("status", "graded") != "graded":
        return ""
    failed = {k: v for k, v in _failed(e).items() if v not in SKIP_CODES}
    if not failed:
        return ""
    return " | ".join(str(m.get("name")) for m in match_mutants(failed, mistakes_catalogue().get(exercise, [])))


def _overridden(e: Mapping[str, Any]) -> bool:
    return bool(e.get("override")) or any(t.get("override") for t in e.get("tests") or [])


def items(review: Review, state: State) -> list[Item]:
    """Every student's every exercise, in the results' order, with the overrides applied."""
    out = []
    for i, r in enumerate(state.rows):
        name = who(r, review.roster)
        for k, (ex, e) in enumerate((r.get("exercises") or {}).items()):
            if not isinstance(e, dict):
                continue
            auto = review.results[i]["exercises"][ex]
            out.append(Item(i, k, str(ex), name, str(r["submission"]), str(e.get("status", "graded")),
                            float(e.get("score") or 0), float(e.get("max_score") or 0), float(auto.get("score") or 0),
                            _overridden(e), sorted(_failed(e)), mistake(str(ex), e), float(r.get("total") or 0),
                            float(r.get("max_total") or 0)))
    return out


def query(args: Mapping[str, str]) -> dict[str, str]:
    """The list's filters and order from a request's arguments (only :data:`FILTERS`, each one line)."""
    out = {k: clean(args.get(k, ""), 200) for k in FILTERS if args.get(k)}
    if out.get("sort") not in SORTS:
        out.pop("sort", None)
    return out


def select(all_items: Sequence[Item], q: Mapping[str, str]) -> list[Item]:
    """The items the filters keep, in the order asked (ties: the student, then the results' order)."""
    kept = [it for it in all_items
            if (not q.get("ex") or it.exercise == q["ex"]) and (not q.get("status") or it.status == q["status"])
            and (not q.get("check") or q["check"] in it.failing)
            and (not q.get("mistake") or q["mistake"] in it.mistake.split(" | "))
            and (not q.get("overridden") or it.overridden == (q["overridden"] == "yes"))
            and (not q.get("q") or q["q"].casefold() in clean(it.who, 0).casefold())]
    sort = q.get("sort", "student")
    key: Callable[[Item], Any] = {
        "student": lambda it: (it.who, it.row, it.ex),
        "score": lambda it: (it.score / it.max_score if it.max_score else 0.0, it.who, it.ex),
        "-score": lambda it: (-(it.score / it.max_score if it.max_score else 0.0), it.who, it.ex),
        "status": lambda it: (it.status != "graded", it.status, it.who, it.ex),
    }[sort]
    return sorted(kept, key=key)


def _path_of(review: Review, submission: str) -> str:
    """Where the submission the results name is: as given (the folder graded from), else beside the results."""
    if os.path.lexists(submission) or os.path.isabs(submission):
        return submission
    beside = Path(review.results_path).resolve().parent / submission
    return str(beside) if os.path.lexists(beside) else submission


def _read(review: Review, submission: str) -> _loader.Submission | str:
    """The submission as the grader read it, or why it cannot be read (cached; one read at a time)."""
    with review.read_lock:
        if submission in review._codes:
            review._codes.move_to_end(submission)
            return review._codes[submission]
        try:
            if review.read_code is not None:
                got: _loader.Submission | str = review.read_code(_path_of(review, submission))
            else:
                from autograder.submissions import loadguard as _loadguard

                if review._reader is None:
                    review._reader = _loadguard.Reader(_loadguard.read_seconds(10.0))
                got = review._reader.load(_path_of(review, submission))
        except Exception as err:  # noqa: BLE001 - any trouble reading is shown, never the page's end
            got = f"the submission cannot be read: {str(err) or type(err).__name__}"
        review._codes[submission] = got
        while len(review._codes) > CODE_CACHE:
            review._codes.popitem(last=False)
        return got


def graded_code(review: Review, index: int, exercise: str) -> tuple[list[str] | None, str]:
    """The graded module's section of a row's exercise, as lines (the lines messages count), or why there is none.

    Read through the loader (:mod:`autograder.submissions.loader`, read-only), from the path the results hold for
    the row ``index``: never a path a request names.
    """
    row = review.results[index]
    if row.get("source", "tapetrace") != "tapetrace":
        return None, NOT_TAPETRACE
    sub = _read(review, str(row["submission"]))
    if isinstance(sub, str):
        return None, sub
    if exercise in sub.refused:
        name, kind = sub.refused[exercise]
        return None, REFUSED_FILE.format(name=name, kind=kind)
    text = sub.sources.get(exercise)
    if text is None:
        return None, NO_CODE.format(exercise=exercise)
    from autograder.submissions.cells import split_graded

    lines = split_graded(text)[0].splitlines()
    while len(lines) > 1 and not lines[-1].strip():  # the blank lines that end it (the numbers stay the same)
        lines.pop()
    return lines or [""], ""


def line_refs(texts: Sequence[str]) -> set[int]:
    """The line numbers messages point to (``line 12``, ``lines 3``)."""
    return {int(m.group(1)) for t in texts for m in LINE_REF.finditer(str(t))}


# ---------------------------------------------------------------------------------------------- writing
def identity_cell(row: ReportRow, roster: dict[str, dict[str, str]] | None) -> str:
    """What the overrides file's ``student`` cell is for a row (:func:`autograder.reports.overrides.identities`):
    the roster's student_id, else the submission's path (``./name`` for a path without a folder).

    Raises:
        OverrideError: the row cannot be named (the roster has no student_id for it).
    """
    keys = sorted(_overrides.identities(row, roster))
    if not keys:
        raise _overrides.OverrideError(NO_NAME.format(why=NOT_IN_ROSTER))
    key = keys[0]
    if roster is None and _overrides.path_key(key) is None:
        key = "./" + key
    return key


def check_named(review: Review, index: int, exercise: str, value: str) -> str:
    """The test a form's ``test`` field names: ``t<k>``, the exercise's k-th test in the results (the page never
    puts a name in a form, so a name with any character round-trips); ``""``, the whole exercise; anything else is
    taken as a name as written (the overrides' validation then says whether it is one)."""
    m = re.fullmatch(r"t(\d{1,4})", value)
    tests = review.results[index]["exercises"][exercise].get("tests") or []
    return str(tests[int(m.group(1))].get("name")) if m and int(m.group(1)) < len(tests) else value


def _header(text: str) -> list[str]:
    first = next(csv.reader(io.StringIO(text, newline="")), [])
    return [h.strip().lower() for h in first]


def record(review: Review, index: int, exercise: str, form: Mapping[str, str],
           now: datetime | None = None) -> int:
    """Appends a TA's override of row ``index``'s ``exercise`` to the overrides file, after the same validation
    as every command that reads it (:func:`autograder.reports.overrides.read`, ``resolve`` and ``apply`` on the
    file as it would be).

    Args:
        review: the review (its ``overrides_path`` is written).
        index: the result row (the student: its identity per :func:`identity_cell`).
        exercise: the exercise of that row.
        form: ``test`` (``""``: the exercise), ``action``, ``points``, ``comment``, ``by`` as the TA typed them.
        now: the ``at`` time (default: now, with this machine's offset).

    Returns:
        The row number the override has in the file.

    Raises:
        OverrideError: refused (the message names the file and the row, as the commands' do).
    """
    path = review.overrides_path
    if not path:
        raise _overrides.OverrideError(READ_ONLY)
    row = review.results[index]
    if row.get("source", "tapetrace") != "tapetrace":
        raise _overrides.OverrideError(NOT_TAPETRACE)
    e0 = row["exercises"][exercise]
    test = str(form.get("test") or "")
    t0 = next((t for t in e0.get("tests") or [] if t.get("name") == test), None) if test else None
    at = (now or datetime.now().astimezone()).isoformat(timespec="seconds")
    cells = {"student": identity_cell(row, review.roster), "exercise": exercise, "test": test,
             "action": str(form.get("action") or "").strip(), "points": str(form.get("points") or "").strip(),
             "comment": clean(form.get("comment") or "", 2000), "by": clean(form.get("by") or "", 120), "at": at,
             "basis": _overrides.basis(e0, t0) if (t0 is not None or not test) else ""}
    with review.lock:
        target = Path(path)
        if target.exists():
            _overrides.read(path)  # the file as it is: refused as the commands refuse it (naming the row)
        existing = target.read_text(encoding="utf-8-sig") if target.exists() else ""
        header = _header(existing) if existing.strip() else list(_overrides.COLUMNS)
        if test and "test" not in header:
            raise _overrides.OverrideError(NO_TEST_COLUMN.format(path=path))
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        if not existing.strip():
            writer.writerow(header)
        writer.writerow([cells.get(h, "") for h in header])
        line = buf.getvalue()
        lead = "\n" if existing.strip() and not existing.endswith(("\n", "\r")) else ""
        candidate = (existing if existing.strip() else "") + lead + line
        number = _check(review, path, candidate, index, exercise, test)
        with open(target, "a" if existing.strip() else "w", encoding="utf-8", newline="") as fh:
            fh.write(lead + line)
    return number


def _check(review: Review, path: str, candidate: str, index: int, exercise: str, test: str) -> int:
    """The overrides file as it would be, checked as every command checks it; the new row's number.

    Raises:
        OverrideError: it would be refused, or the new row would not land on row ``index`` (its identity cell
            names nobody or another row), or it would not be applied (the grader's exercise).
    """
    fd, tmp = tempfile.mkstemp(prefix="tapetrace-review-", suffix=".csv")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(candidate)
        try:
            ovs = _overrides.read(tmp)
            targets = _overrides.resolve(ovs, review.results, review.roster)
            _rows, audit = _overrides.apply(review.results, ovs, review.roster)
        except _overrides.OverrideError as err:
            raise _overrides.OverrideError(str(err).replace(tmp, path, 1)) from None
    finally:
        os.unlink(tmp)
    new, landed, last = ovs.rows[-1], targets[-1], audit[-1]
    if landed.index != index or new.exercise != exercise or new.test != test:
        why = landed.problem or "its student cell names another submission"
        raise _overrides.OverrideError(NOT_APPLIED.format(path=path, row=new.row, why=NO_NAME.format(why=why)))
    if not last["applied"]:
        raise _overrides.OverrideError(NOT_APPLIED.format(path=path, row=new.row, why="; ".join(last["flags"])))
    return new.row


# ---------------------------------------------------------------------------------------------- the pages
CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:84rem;padding:.75rem 1rem;
color:#1d2330;line-height:1.4}
h1{font-size:1.35rem;margin:.2rem 0 .4rem;overflow-wrap:anywhere} h2{font-size:1.1rem;margin:1rem 0 .4rem}
a{color:#1c5fb0} .meta{color:#5b6270;font-size:.9rem;overflow-wrap:anywhere}
.note{background:#fff4e6;border-left:4px solid #f08c00;padding:.4rem .7rem;overflow-wrap:anywhere}
.bad{background:#fff0f0;border-left:4px solid #c92a2a;padding:.4rem .7rem;overflow-wrap:anywhere}
.ok{background:#ebfbee;border-left:4px solid #2b8a3e;padding:.4rem .7rem;overflow-wrap:anywhere}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end;margin:.5rem 0}
form.filters label{display:flex;flex-direction:column;font-size:.85rem;min-width:9rem;max-width:100%}
select,input,textarea,button{font:inherit;max-width:100%}
table.list{border-collapse:collapse;width:100%;font-size:.9rem}
table.list th,table.list td{padding:.3rem .45rem;border-bottom:1px solid #e6e8eb;text-align:left;vertical-align:top}
table.list td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.list td.checks,table.list td.who{overflow-wrap:anywhere} table.list td.ex{white-space:nowrap}
table.list tr:focus-within{background:#eef4ff}
.tag{display:inline-block;border-radius:4px;padding:0 .35rem;background:#e9ecef;font-size:.8rem;white-space:nowrap}
.tag.low{background:#ffe3e3;color:#a61e1e} .tag.ov{background:#fff3bf;color:#7a5b00}
.nav{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;margin:.3rem 0}
.item{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}
.code{border:1px solid #dde1e6;border-radius:6px;background:#fbfcfd;font-size:.85rem;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.line{display:grid;grid-template-columns:3.2em minmax(0,1fr)}
.line .ln{color:#8a919c;text-align:right;padding-right:.6em;user-select:none;border-right:1px solid #e6e8eb}
.line code{white-space:pre-wrap;overflow-wrap:anywhere;padding-left:.5em;font-family:inherit}
.line.hit{background:#fff3bf} .line.hit .ln{color:#7a5b00;font-weight:700}
.checks ul{padding-left:1.1rem;margin:.3rem 0} .checks li{margin:.45rem 0;overflow-wrap:anywhere}
.msg{overflow-wrap:anywhere} .name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
form.override{display:grid;gap:.5rem;border:1px solid #dde1e6;border-radius:6px;padding:.7rem;max-width:100%}
form.override label{display:flex;flex-direction:column;font-size:.9rem}
form.override .row{display:flex;flex-wrap:wrap;gap:.5rem 1rem}
ul.audit{padding-left:1.1rem;margin:.3rem 0;font-size:.9rem} ul.audit li{margin:.4rem 0;overflow-wrap:anywhere}
kbd{border:1px solid #ccc;border-radius:3px;padding:0 .25rem;font-size:.8rem}
@media (min-width:960px){.item{grid-template-columns:minmax(0,3fr) minmax(0,2fr)}
.item>section:first-child{position:sticky;top:0;align-self:start;max-height:100vh;overflow-y:auto}}
@media (max-width:700px){
table.list thead{display:none} table.list tr{display:block;border-bottom:1px solid #dde1e6;padding:.35rem 0}
table.list td{display:block;border:0;padding:.1rem .2rem} table.list td.n{text-align:left}
table.list td.ex,table.list td.n,table.list td.st{display:inline-block;margin-right:.5rem;white-space:normal;
overflow-wrap:anywhere} table.list td.none{display:none}
}
"""

JS = """(() => {
  'use strict';
  const typing = t => t && t.closest && t.closest('input,textarea,select,button,[contenteditable]');
  const rows = () => [...document.querySelectorAll('a.open')];
  document.addEventListener('keydown', e => {
    if (e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) return;
    const next = e.key === 'j' || e.key === 'ArrowRight', prev = e.key === 'k' || e.key === 'ArrowLeft';
    if (!next && !prev) return;
    const link = document.querySelector(next ? 'a[rel=next]' : 'a[rel=prev]');
    if (link) { e.preventDefault(); location.assign(link.href); return; }
    const all = rows();
    if (!all.length) return;
    const at = all.indexOf(document.activeElement);
    const to = at < 0 ? (next ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + (next ? 1 : -1)));
    e.preventDefault();
    all[to].focus();
  });
})();
"""


def esc(value: Any) -> str:
    """Any text for an element's text or a quoted attribute's value (:func:`autograder.core.text.html_text`)."""
    return html_text(value)


def _pts(x: float) -> str:
    return f"{x:g}"


def href(path: str, q: Mapping[str, str], **more: str) -> str:
    """A URL of this page: a fixed path and our own parameters (the filters, percent-encoded)."""
    params = {**{k: v for k, v in q.items() if k in FILTERS and v}, **more}
    return path + ("?" + urlencode(params) if params else "")


def _url(path: str, q: Mapping[str, str], **more: str) -> str:
    """:func:`href` escaped for an attribute's value."""
    return html.escape(href(path, q, **more), quote=True)


def page(title: str, body: str, kind: str) -> str:
    """The page around ``body``: our stylesheet and script only (the Content-Security-Policy allows nothing else)."""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><link rel=\"stylesheet\" href=\"/static/review.css\">"
            "<script src=\"/static/review.js\" defer></script></head>"
            f"<body data-page=\"{esc(kind)}\">{body}</body></html>")


def _options(name: str, label: str, values: Sequence[tuple[str, str]], chosen: str, ident: str = "") -> str:
    opts = "".join(f"<option value=\"{esc(v)}\"{' selected' if v == chosen else ''}>{esc(t)}</option>"
                   for v, t in values)
    idattr = f" id=\"{ident}\"" if ident else ""
    return f"<label>{esc(label)}<select name=\"{name}\"{idattr}>{opts}</select></label>"


def list_page(review: Review, state: State, q: Mapping[str, str]) -> str:
    """The class: filters, then one line per student's exercise (links open it; j/k move between them)."""
    every = items(review, state)
    shown = select(every, q)
    exs = list(dict.fromkeys(it.exercise for it in every))
    statuses = sorted({it.status for it in every})
    checks = sorted({c for it in every if not q.get("ex") or it.exercise == q["ex"] for c in it.failing})
    mistakes = sorted({m for it in every if not q.get("ex") or it.exercise == q["ex"]
                       for m in it.mistake.split(" | ") if m})
    filters = "".join([
        _options("ex", "exercise", [("", "every exercise"), *((x, x) for x in exs)], q.get("ex", "")),
        _options("status", "status", [("", "any status"), *((s, s) for s in statuses)], q.get("status", "")),
        _options("check", "failing check", [("", "any"), *((c, c) for c in checks)], q.get("check", "")),
        _options("mistake", "catalogued mistake", [("", "any"), *((m, m) for m in mistakes)], q.get("mistake", "")),
        _options("overridden", "overridden", [("", "either"), ("yes", "yes"), ("no", "no")], q.get("overridden", "")),
        f"<label>student<input name=\"q\" value=\"{esc(q.get('q', ''))}\" autocomplete=\"off\"></label>",
        _options("sort", "order", list(SORTS.items()), q.get("sort", "student")),
        "<button type=\"submit\">Show</button>"])
    out = [f"<h1>Review: {esc(review.results_path)}</h1>",
           f"<p class=\"meta\">{len(review.results)} submission(s); overrides: "
           + (esc(review.overrides_path) if review.overrides_path else "none (read-only)")
           + ". Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>→</kbd>/<kbd>←</kbd> move, <kbd>Enter</kbd> opens.</p>"]
    out += [f"<p class=\"note\">{esc(n)}</p>" for n in review.notes]
    if state.problem:
        out.append(f"<p class=\"bad\">{esc(BAD_OVERRIDES.format(why=state.problem))}</p>")
    out.append(f"<form class=\"filters\" method=\"get\" action=\"/\">{filters}</form>")
    out.append(f"<p class=\"meta\">{len(shown)} of {len(every)} line(s)</p>")
    out.append("<table class=\"list\"><thead><tr><th>student</th><th>exercise</th><th>score</th><th>status</th>"
               "<th>failing checks</th><th>catalogued mistake</th></tr></thead><tbody>")
    for it in shown:
        score = f"{_pts(it.score)}/{_pts(it.max_score)}"
        if it.overridden:
            score += f" <span class=\"tag ov\" title=\"autograder {_pts(it.autograder)}\">overridden</span>"
        status = f"<span class=\"tag{' low' if it.status != 'graded' else ''}\">{esc(it.status)}</span>"
        failing = ", ".join(html_name(c) for c in it.failing)
        found = html_name(it.mistake)
        out.append(f"<tr><td class=\"who\"><a class=\"open\" href=\"{_url(f'/item/{it.row}/{it.ex}', q)}\">"
                   f"{html_name(it.who)}</a><div class=\"meta\">total {_pts(it.total)}/{_pts(it.max_total)}</div></td>"
                   f"<td class=\"ex\">{esc(it.exercise)}</td><td class=\"n\">{score}</td><td class=\"st\">{status}</td>"
                   f"<td class=\"checks{'' if failing else ' none'}\">{failing or '–'}</td>"
                   f"<td class=\"checks{'' if found else ' none'}\">{found or '–'}</td></tr>")
    out.append("</tbody></table>")
    return page("tapetrace review", "\n".join(out), "list")


def _linked(message: str) -> str:
    """A message escaped, its ``line N`` linked to that line of the code."""
    return LINE_REF.sub(lambda m: f"<a href=\"#L{int(m.group(1))}\">{m.group(0)}</a>", esc(message))


def _code_html(lines: list[str] | None, why: str, hits: set[int]) -> str:
    if lines is None:
        return f"<p class=\"note\">{esc(why)}</p>"
    rows = [f"<div class=\"line{' hit' if n in hits else ''}\" id=\"L{n}\"><span class=\"ln\">{n}</span>"
            f"<code>{html_code(text) or ' '}</code></div>" for n, text in enumerate(lines, start=1)]
    return "<div class=\"code\" role=\"region\" aria-label=\"the graded code\">" + "".join(rows) + "</div>"


def form_key(token: str) -> str:
    """The key every write form carries: derived from the token, so only a page that was served can hold it."""
    return hmac.new(token.encode(), b"tapetrace-review-form", hashlib.sha256).hexdigest()


def item_page(review: Review, state: State, index: int, ex: int, q: Mapping[str, str], token: str,
              error: str = "", entered: Mapping[str, str] | None = None, saved: str = "") -> str:
    """One student's exercise: the code, the failing checks beside it, the scores, earlier overrides, the form."""
    row = state.rows[index]
    exercise = list(row["exercises"])[ex]
    e = row["exercises"][exercise]
    auto = review.results[index]["exercises"][exercise]
    shown = select(items(review, state), q)
    at = next((k for k, it in enumerate(shown) if (it.row, it.ex) == (index, ex)), None)
    prev = shown[at - 1] if at is not None and at > 0 else None
    nxt = shown[at + 1] if at is not None and at + 1 < len(shown) else (shown[0] if at is None and shown else None)
    nav = [f"<a href=\"{_url('/', q)}\" rel=\"up\">← the list</a>"]
    if prev:
        nav.append(f"<a href=\"{_url(f'/item/{prev.row}/{prev.ex}', q)}\" rel=\"prev\">previous (k)</a>")
    if nxt:
        nav.append(f"<a href=\"{_url(f'/item/{nxt.row}/{nxt.ex}', q)}\" rel=\"next\">next (j)</a>")
    if at is not None:
        nav.append(f"<span class=\"meta\">{at + 1} of {len(shown)}</span>")
    tests = [t for t in e.get("tests") or [] if isinstance(t, dict)]
    failing = [t for t in tests if not t.get("passed")]
    messages = [str(e.get("message") or ""), *(str(t.get("message") or "") for t in failing)]
    lines, why = graded_code(review, index, exercise)
    status = str(e.get("status", "graded"))
    out = [f"<nav class=\"nav\">{''.join(nav)}</nav>",
           f"<h1>{html_name(who(row, review.roster))}: {html_name(exercise)}</h1>",
           f"<p class=\"meta\">submission {html_name(row['submission'])} · status <span class=\"tag"
           f"{' low' if status != 'graded' else ''}\">{esc(status)}</span> · score <b>{_pts(float(e.get('score') or 0))}"
           f"/{_pts(float(e.get('max_score') or 0))}</b> (autograder {_pts(float(auto.get('score') or 0))}) · total "
           f"{_pts(float(row.get('total') or 0))}/{_pts(float(row.get('max_total') or 0))}</p>"]
    if saved:
        out.append(f"<p class=\"ok\" role=\"status\">{esc(saved)}</p>")
    if error:
        out.append(f"<p class=\"bad\" role=\"alert\">{esc(error)}</p>")
    if state.problem:
        out.append(f"<p class=\"bad\">{esc(BAD_OVERRIDES.format(why=state.problem))}</p>")
    side = ["<section class=\"checks\"><h2>Failing checks</h2>"]
    if e.get("message"):
        side.append(f"<p class=\"msg\">{_linked(str(e['message']))}</p>")
    if e.get("grader_reason"):
        side.append(f"<p class=\"note\">{esc(e['grader_reason'])}</p>")
    side.append("<ul>" + "".join(
        f"<li><span class=\"name\">{html_name(t.get('name'))}</span> "
        f"<span class=\"tag\">{_pts(float(t.get('score') or 0))}/{_pts(float(t.get('max_score') or 0))}</span>"
        + (f" <span class=\"tag\">{esc(t.get('code'))}</span>" if t.get("code") else "")
        + f"<div class=\"msg\">{_linked(str(t.get('message') or ''))}</div>"
        + "".join(f"<div class=\"meta\">{esc(w)}</div>" for w in _overrides.words(t)) + "</li>"
        for t in failing) + "</ul>" if failing else "<p>None failed.</p>")
    passed = [t for t in tests if t.get("passed")]
    if passed:
        side.append(f"<details><summary>{len(passed)} passed</summary><ul>" + "".join(
            f"<li><span class=\"name\">{html_name(t.get('name'))}</span> "
            f"<span class=\"tag\">{_pts(float(t.get('score') or 0))}/{_pts(float(t.get('max_score') or 0))}</span>"
            + "".join(f"<div class=\"meta\">{esc(w)}</div>" for w in _overrides.words(t)) + "</li>"
            for t in passed) + "</ul></details>")
    side.append("</section>")
    side.append(_earlier(state, row, exercise))
    side.append(_form(review, index, ex, exercise, tests, q, token, entered or {}))
    out.append(f"<div class=\"item\"><section><h2>The graded code</h2>{_code_html(lines, why, line_refs(messages))}"
               f"</section><div>{''.join(side)}</div></div>")
    return page(f"{clean(who(row, review.roster), 80)}: {exercise}", "\n".join(out), "item")


def _earlier(state: State, row: ReportRow, exercise: str) -> str:
    mine = [a for a in state.audit if a["submission"] == str(row["submission"]) and a["exercise"] == exercise]
    if not mine:
        return "<section><h2>Earlier overrides</h2><p class=\"meta\">None.</p></section>"
    out = ["<section><h2>Earlier overrides</h2><ul class=\"audit\">"]
    for a in mine:
        target = a["test"] or "the whole exercise"
        flags = f"<div class=\"meta\">{esc('; '.join(a['flags']))}</div>" if a["flags"] else ""
        comment = f"<div class=\"msg\">{esc(a['comment'])}</div>" if a["comment"] else ""
        out.append(f"<li><span class=\"tag\">row {int(a['row'])}</span> <span class=\"name\">{html_name(target)}"
                   f"</span>: {esc(a['action'])} {_pts(a['points'])}, {_pts(a['autograder'])} → {_pts(a['after'])}"
                   f"/{_pts(a['max_score'])} <span class=\"meta\">by {esc(a['by'])} ({esc(str(a['at'])[:16])})</span>"
                   f"{comment}{flags}</li>")
    out.append("</ul></section>")
    return "".join(out)


def _form(review: Review, index: int, ex: int, exercise: str, tests: list[Any], q: Mapping[str, str], token: str,
          entered: Mapping[str, str]) -> str:
    if not review.overrides_path:
        return f"<section><h2>Override</h2><p class=\"meta\">{esc(READ_ONLY)}</p></section>"
    if review.results[index].get("source", "tapetrace") != "tapetrace":
        return f"<section><h2>Override</h2><p class=\"meta\">{esc(NOT_TAPETRACE)}</p></section>"
    chosen = entered.get("test", "")
    targets = [("", f"the whole exercise ({exercise})"),
               *((f"t{k}", f"{t.get('name')} ({_pts(float(t.get('score') or 0))}/"
                  f"{_pts(float(t.get('max_score') or 0))})") for k, t in enumerate(tests))]
    action = entered.get("action", "set")
    return (f"<section><h2>Override</h2><form class=\"override\" method=\"post\" "
            f"action=\"{_url(f'/item/{index}/{ex}', q)}\">"
            f"<input type=\"hidden\" name=\"form_key\" value=\"{esc(form_key(token))}\">"
            + _options("test", "what", targets, chosen, "ov-test")
            + "<div class=\"row\">"
            + _options("action", "action", [("set", "set to"), ("adjust", "adjust by")], action, "ov-action")
            + f"<label>points<input id=\"ov-points\" name=\"points\" inputmode=\"decimal\" required "
              f"value=\"{esc(entered.get('points', ''))}\"></label></div>"
            f"<label>comment (the student sees it)<textarea id=\"ov-comment\" name=\"comment\" rows=\"3\">"
            f"{esc(entered.get('comment', ''))}</textarea></label>"
            f"<label>by<input id=\"ov-by\" name=\"by\" required autocomplete=\"username\" "
            f"value=\"{esc(entered.get('by', ''))}\"></label>"
            f"<button type=\"submit\" id=\"ov-save\">Record the override</button>"
            f"<p class=\"meta\">appended to {esc(review.overrides_path)}, checked as "
            f"<code>tapetrace report --overrides</code> checks it</p></form></section>")


# ---------------------------------------------------------------------------------------------- the application
def _text(message: str, status: int) -> Response:
    return Response(message + "\n", status=status, mimetype="text/plain")


def create_app(review: Review, token: str, port: int | None = None) -> Flask:
    """The review application (Flask): every request needs the token; writes need this page's form and origin.

    Args:
        review: what it serves.
        token: the secret of the URL (``secrets.token_urlsafe``): ``?token=`` once, then a cookie set from it.
        port: the port it is served on (the hosts and origins it accepts; the cookie's name); None: any port
            of 127.0.0.1 and localhost (the framework's test client).

    Returns:
        The WSGI application (no static folder: no URL names a file).
    """
    app = Flask(__name__, static_folder=None)
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024)
    cookie = f"tapetrace_review_{port}" if port else "tapetrace_review"
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"} if port else {"127.0.0.1", "localhost"}

    def authorised() -> bool:
        given = request.args.get(TOKEN_PARAM) or request.cookies.get(cookie) or ""
        return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode())

    @app.before_request
    def guard() -> BaseResponse | None:
        if request.host not in hosts:
            return _text(BAD_HOST, 403)
        if not authorised():
            return _text(NO_TOKEN, 403)
        if request.method == "POST":
            origin = request.headers.get("Origin") or ""
            referer = request.headers.get("Referer") or ""
            mine = f"http://{request.host}"
            came = origin if origin else (f"{urlsplit(referer).scheme}://{urlsplit(referer).netloc}" if referer else "")
            if not came or not hmac.compare_digest(came.encode("utf-8", "surrogatepass"), mine.encode()):
                return _text(OTHER_ORIGIN, 403)
            if not hmac.compare_digest(str(request.form.get("form_key", "")).encode("utf-8", "surrogatepass"),
                                       form_key(token).encode()):
                return _text(BAD_FORM, 403)
        elif TOKEN_PARAM in request.args:  # the printed URL: set the cookie, then the same page without the token
            rest = {k: v for k, v in request.args.items(multi=False) if k != TOKEN_PARAM}
            resp = redirect(request.path + ("?" + urlencode(rest) if rest else ""), code=303)
            resp.set_cookie(cookie, token, httponly=True, samesite="Strict", path="/")
            return resp
        return None

    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers.update(HEADERS)
        return resp

    @app.errorhandler(404)
    def missing(_err: Exception) -> Response:
        return _text(NOT_FOUND, 404)

    @app.errorhandler(405)
    def method(_err: Exception) -> Response:
        return _text(NOT_FOUND, 405)

    @app.errorhandler(413)
    def too_large(_err: Exception) -> Response:
        return _text("refused: the form is too large", 413)

    @app.get("/")
    def index() -> Response:
        return Response(list_page(review, current(review), query(request.args)), mimetype="text/html")

    def _found(index: int, ex: int) -> str | None:
        if index >= len(review.results):
            return None
        names = list(review.results[index].get("exercises") or {})
        return names[ex] if ex < len(names) else None

    @app.get("/item/<int:index>/<int:ex>")
    def item(index: int, ex: int) -> Response:
        if _found(index, ex) is None:
            return _text(NOT_FOUND, 404)
        saved = ""
        if request.args.get("saved", "").isdigit() and review.overrides_path:
            saved = SAVED.format(row=int(request.args["saved"]), path=review.overrides_path)
        return Response(item_page(review, current(review), index, ex, query(request.args), token, saved=saved),
                        mimetype="text/html")

    @app.post("/item/<int:index>/<int:ex>")
    def override(index: int, ex: int) -> BaseResponse:
        exercise = _found(index, ex)
        if exercise is None:
            return _text(NOT_FOUND, 404)
        form = {k: str(request.form.get(k, "")) for k in ("test", "action", "points", "comment", "by")}
        q = query(request.args)
        try:
            number = record(review, index, exercise, {**form, "test": check_named(review, index, exercise,
                                                                                   form["test"])})
        except _overrides.OverrideError as err:
            body = item_page(review, current(review), index, ex, q, token, error=str(err).splitlines()[0],
                             entered=form)
            return Response(body, status=422, mimetype="text/html")
        except OSError as err:
            body = item_page(review, current(review), index, ex, q, token,
                             error=f"{review.overrides_path}: cannot be written: {err.strerror or err}", entered=form)
            return Response(body, status=500, mimetype="text/html")
        return redirect(href(f"/item/{index}/{ex}", q, saved=str(number)), code=303)

    @app.get("/static/review.css")
    def css() -> Response:
        return Response(CSS, mimetype="text/css")

    @app.get("/static/review.js")
    def js() -> Response:
        return Response(JS, mimetype="text/javascript")

    return app
