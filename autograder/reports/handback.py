"""Handing results back: one feedback page per student, in a folder named by their roster id, and the zip
Moodle takes for "Upload multiple feedback files in a zip".

:func:`hand_back` writes ``OUT/<student_id>/feedback.html`` (and/or ``.md``) for each roster student with a
submission: only that student's rows (:mod:`autograder.reports.feedback`'s page: each exercise's tests, points
and messages; never a hidden check's code, never a classmate's name), the manual overrides applied
(:mod:`autograder.reports.overrides`). With a Moodle zip, each page goes in as
``<fullname>_<participant id>_assignfeedback_file_/feedback.html``: Moodle's importer
(``mod/assign/feedback/file/importziplib.php``, ``is_valid_filename_for_import``) splits each folder name of
the zip at ``_`` into ``fullname_participantid_plugintype_pluginname``, looks the participant up by the
numeric id (the assignment's participant id, as in its "Download all submissions" folder names and its grading
worksheet's ``Participant 12345``), and files the rest of the path as that participant's feedback file. The id
comes from the roster's ``participant_id`` column (the instructor's), never from a submission; a full name with
``_`` or ``/`` would shift the fields, so those become spaces (Moodle matches by id, not by name).
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.records import ResultRow
from autograder.core.text import clean
from autograder.reports.feedback import feedback_html, feedback_markdown, safe_stem
from autograder.reports.gradebook import GradebookError, roster_key, student_key
from autograder.reports.report import atomic_write

MOODLE_PLUGIN = "assignfeedback_file"  # plugintype_pluginname: the assignment's "Feedback files" plugin
PAGE = "feedback"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # entries dated alike: the same results give the same zip

NOT_IN_ROSTER = "{submission}: not in the roster (its file name {key!r} is no roster file); add it to the roster"
TWO_SUBMISSIONS = "{a} and {b} are both student {sid}: fix the roster or keep one submission"
NO_SUBMISSION = "{sid}: no submission; no page"
NO_PARTICIPANT = ("{sid}: no participant_id in the roster; left out of the Moodle zip (add the number Moodle shows "
                  "as 'Participant N' in its grading worksheet)")


@dataclass
class HandBack:
    """What :func:`hand_back` wrote: the pages, the zip's entries, and what the instructor is told."""

    pages: list[Path] = field(default_factory=list)
    zip_entries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def participant_id(row: dict[str, str]) -> str | None:
    """A roster row's Moodle participant id: ``12345`` or the worksheet's ``Participant 12345``; None if none."""
    m = re.fullmatch(r"(?:participant\s*)?(\d+)", (row.get("participant_id") or "").strip(), re.IGNORECASE)
    return m.group(1) if m else None


def moodle_folder(fullname: str, pid: str) -> str:
    """The zip folder Moodle files as participant ``pid``'s feedback: ``Ana Garcia_12345_assignfeedback_file_``."""
    name = re.sub(r"\s+", " ", re.sub(r"[_/\\]", " ", clean(fullname, 80))).strip(" .") or "Participant"
    return f"{name}_{pid}_{MOODLE_PLUGIN}_"


def _students(results: Sequence[ResultRow], roster: dict[str, dict[str, str]]) -> list[tuple[str, dict[str, str],
                                                                                         ResultRow]]:
    """(roster key, roster row, result row) per submission, in the roster's order of ids.

    Raises:
        GradebookError: a submission the roster does not name, two submissions of one student.
    """
    seen: dict[str, str] = {}
    out = []
    for r in results:
        rk = roster_key(roster, str(r["submission"]))
        if rk is None:
            raise GradebookError(NOT_IN_ROSTER.format(submission=clean(r["submission"], 120),
                                                      key=student_key(str(r["submission"]))))
        sid = roster[rk].get("student_id") or rk
        if sid in seen:
            raise GradebookError(TWO_SUBMISSIONS.format(a=clean(r["submission"], 120), b=clean(seen[sid], 120),
                                                        sid=clean(sid, 80)))
        seen[sid] = str(r["submission"])
        out.append((rk, roster[rk], r))
    return sorted(out, key=lambda x: x[1].get("student_id") or x[0])


def hand_back(results: Sequence[ResultRow], roster: dict[str, dict[str, str]], out: str | Path,
              lang: str = "en", fmt: str = "html", moodle_zip: str | Path | None = None) -> HandBack:
    """Writes one folder per roster student with their feedback page(s), and the Moodle zip when asked.

    Args:
        results: the result rows (tapetrace's; with the overrides already applied where there are any).
        roster: :func:`autograder.reports.gradebook.read_roster`'s mapping.
        out: the folder to write into (``OUT/<student_id>/feedback.html``).
        lang: ``en`` or ``es`` for the pages' words.
        fmt: ``html``, ``md`` or ``both``.
        moodle_zip: where to write the zip for Moodle's "Upload multiple feedback files in a zip", or None.

    Raises:
        GradebookError: a submission the roster does not name, two submissions of one student.
    """
    done = HandBack()
    students = _students([r for r in results if r.get("source", "tapetrace") == "tapetrace"], roster)
    found = {rk for rk, _row, _r in students}
    for rk, row in roster.items():
        if rk not in found:
            done.notes.append(NO_SUBMISSION.format(sid=clean(row.get("student_id") or rk, 80)))
    entries: list[tuple[str, str]] = []  # the Moodle zip's (name, text)
    used: set[str] = set()
    for rk, row, r in students:
        sid = row.get("student_id") or rk
        folder = safe_stem(sid)
        k = 2
        while folder.lower() in used:  # two ids that make one folder name (safe_stem hashes changed names)
            folder, k = f"{safe_stem(sid)}-{k}", k + 1
        used.add(folder.lower())
        title = row.get("name") or sid
        pages = []
        if fmt in ("html", "both"):
            pages.append((f"{PAGE}.html", feedback_html(r, lang, title)))
        if fmt in ("md", "both"):
            pages.append((f"{PAGE}.md", feedback_markdown(r, lang, title)))
        Path(out, folder).mkdir(parents=True, exist_ok=True)
        for name, text in pages:
            p = Path(out, folder, name)
            atomic_write(p, text)
            done.pages.append(p)
        if moodle_zip is not None:
            pid = participant_id(row)
            if pid is None:
                done.left_out.append(NO_PARTICIPANT.format(sid=clean(sid, 80)))
                continue
            entries += [(f"{moodle_folder(title, pid)}/{name}", text) for name, text in pages]
    if moodle_zip is not None:
        _write_zip(Path(moodle_zip), entries)
        done.zip_entries = [name for name, _text in entries]
    return done


def _write_zip(path: Path, entries: list[tuple[str, str]]) -> None:
    """Writes the zip whole (a temporary file, then a rename), its entries dated alike."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in entries:
            zf.writestr(zipfile.ZipInfo(name, _ZIP_TIME), text.encode("utf-8"), zipfile.ZIP_DEFLATED)
    os.replace(tmp, path)
