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

Identity: a page goes to a roster ``student_id`` only (a roster row without one gets no page, listed: its file
name is what the student chose). Folder names are injective on every file system and never another student's
id (:func:`folders`): an id made of harmless characters is its own folder, any other id those characters and
its hash; ids that would share a folder ignoring case (``Ana``/``ana``) each get their exact id's hash
(``ana-<8 hex>``), never a counter that may be a classmate's real id (``ana-2``); a name that would still be
another's id is not used (that student listed, no page). A ``participant_id`` two roster rows share puts
neither page in the zip (listed).
"""

from __future__ import annotations

import hashlib
import os
import re
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.records import ResultRow
from autograder.core.text import clean, to_bytes
from autograder.reports.feedback import feedback_html, feedback_markdown
from autograder.reports.report import atomic_write
from autograder.reports.roster import GradebookError, roster_key, student_key

MOODLE_PLUGIN = "assignfeedback_file"  # plugintype_pluginname: the assignment's "Feedback files" plugin
PAGE = "feedback"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # entries dated alike: the same results give the same zip

NOT_IN_ROSTER = "{submission}: not in the roster (its file name {key!r} is no roster file); add it to the roster"
TWO_SUBMISSIONS = "{a} and {b} are both student {sid}: fix the roster or keep one submission"
NO_SUBMISSION = "{sid}: no submission; no page"
NO_PARTICIPANT = ("{sid}: no participant_id in the roster; left out of the Moodle zip (add the number Moodle shows "
                  "as 'Participant N' in its grading worksheet)")
SHARED_PARTICIPANT = ("{sid}: participant_id {pid} is also another roster student's; left out of the Moodle zip "
                      "(Moodle would file both pages as one participant's): fix the roster's participant_id column")
NO_STUDENT_ID = ("{submission}: its roster row ({key}) has no student_id; no page (a file name is no identity): add "
                 "the student's id to the roster")
HASHED_FOLDER = ("{sid}: its id and {others} would share one folder name (case aside, as many file systems do); "
                 "its page is in {folder}")
TAKEN_FOLDER = ("{sid}: no folder name for this id is free of another student's id ({folder}); no page: give the "
                "students ids that differ by more than case")
FOLDER_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


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


def id_folder(sid: str) -> str:
    """A roster id's own folder name: the id where it is made of ``A-Za-z0-9._-`` (starting with a letter or a
    digit, at most 100 characters); otherwise those characters of it and a hash of the exact id
    (``"s 1001"`` -> ``s_1001-3c1a…``), so two ids never share it by what was replaced."""
    stem = FOLDER_CHARS.sub("_", sid).strip("._-")
    if stem == sid and len(stem) <= 100:
        return stem
    return f"{stem[:100] or 'student'}-{_digest(sid)}"


def _digest(sid: str) -> str:
    return hashlib.sha256(to_bytes(sid)).hexdigest()[:8]


def folders(ids: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each roster id's hand-back folder, injective ignoring case and never another id's name.

    Args:
        ids: every roster ``student_id`` (with a submission or not: a folder name never takes a real id).

    Returns:
        (id -> folder, id -> note): the note of an id whose folder was hashed (:data:`HASHED_FOLDER`), or of one
        left without a folder (:data:`TAKEN_FOLDER`; it has no entry in the mapping).
    """
    ids = list(dict.fromkeys(ids))
    plain = {sid: id_folder(sid) for sid in ids}
    shared = Counter(f.lower() for f in plain.values())
    chosen = {sid: f if shared[f.lower()] == 1 else f"{f}-{_digest(sid)}" for sid, f in plain.items()}
    owners = Counter(f.lower() for f in chosen.values())
    spelled = Counter(sid.lower() for sid in ids)
    out: dict[str, str] = {}
    notes: dict[str, str] = {}
    for sid, f in chosen.items():
        others_named = spelled[f.lower()] - (sid.lower() == f.lower())
        if owners[f.lower()] > 1 or others_named:
            notes[sid] = TAKEN_FOLDER.format(sid=clean(sid, 80), folder=clean(f, 120))
            continue
        out[sid] = f
        if shared[plain[sid].lower()] > 1:
            twins = [o for o in ids if o != sid and plain[o].lower() == plain[sid].lower()]
            notes[sid] = HASHED_FOLDER.format(sid=clean(sid, 80), others=", ".join(clean(o, 80) for o in twins),
                                              folder=f)
    return out, notes


def _students(results: Sequence[ResultRow], roster: dict[str, dict[str, str]],
              listed: list[str]) -> list[tuple[str, dict[str, str], ResultRow]]:
    """(roster key, roster row, result row) per submission with a roster ``student_id``, in the order of ids; a
    roster row without an id is added to ``listed`` (no page).

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
        sid = roster[rk].get("student_id") or ""
        if not sid:
            listed.append(NO_STUDENT_ID.format(submission=clean(r["submission"], 120), key=clean(rk, 80)))
            continue
        if sid in seen:
            raise GradebookError(TWO_SUBMISSIONS.format(a=clean(r["submission"], 120), b=clean(seen[sid], 120),
                                                        sid=clean(sid, 80)))
        seen[sid] = str(r["submission"])
        out.append((rk, roster[rk], r))
    return sorted(out, key=lambda x: x[1]["student_id"])


def hand_back(results: Sequence[ResultRow], roster: dict[str, dict[str, str]], out: str | Path,
              lang: str = "en", fmt: str = "html", moodle_zip: str | Path | None = None) -> HandBack:
    """Writes one folder per roster student with their feedback page(s), and the Moodle zip when asked.

    Args:
        results: the result rows (tapetrace's; with the overrides already applied where there are any).
        roster: :func:`autograder.reports.roster.read_roster`'s mapping.
        out: the folder to write into (``OUT/<student_id>/feedback.html``; :func:`folders`).
        lang: ``en`` or ``es`` for the pages' words.
        fmt: ``html``, ``md`` or ``both``.
        moodle_zip: where to write the zip for Moodle's "Upload multiple feedback files in a zip", or None.

    Raises:
        GradebookError: a submission the roster does not name, two submissions of one student.
    """
    done = HandBack()
    students = _students([r for r in results if r.get("source", "tapetrace") == "tapetrace"], roster, done.left_out)
    found = {rk for rk, _row, _r in students}
    for rk, row in roster.items():
        if rk not in found and row.get("student_id"):
            done.notes.append(NO_SUBMISSION.format(sid=clean(row["student_id"], 80)))
    where, folder_notes = folders([row["student_id"] for row in roster.values() if row.get("student_id")])
    with_page = {row["student_id"] for _rk, row, _r in students}
    for sid, note in folder_notes.items():
        if sid in with_page:
            (done.notes if sid in where else done.left_out).append(note)
    pids = Counter(p for p in (participant_id(row) for row in roster.values()) if p is not None)
    entries: list[tuple[str, str]] = []  # the Moodle zip's (name, text)
    for _rk, row, r in students:
        sid = row["student_id"]
        if sid not in where:
            continue
        folder = where[sid]
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
            if pids[pid] > 1:
                done.left_out.append(SHARED_PARTICIPANT.format(sid=clean(sid, 80), pid=pid))
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
