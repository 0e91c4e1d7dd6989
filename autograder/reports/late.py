"""Late work for the gradebook: a deadline, a grace period, a penalty per day or hour, a cut-off in late
days, per-student extensions, from submission times the instructor can trust.

Times come from Gradescope (each submission folder's ``submission_metadata.json``, ``created_at``, or the
export's ``submission_metadata.yml``), from a CSV the instructor gives (an LMS export's timestamps with
the columns ``file`` or ``student_id`` and ``submitted_at``), or, only when asked, from the files'
modification times (recorded as such: an mtime is whatever the last copy or unzip left).

Every time is timezone-aware: a time without a UTC offset takes ``--timezone`` or is refused. A late
submission's scores are multiplied by ``1 - penalty x started units late`` (never below 0); later than
the late days scores 0; a student whose time is unknown is flagged ``time unknown`` and left blank,
never taken as on time or late.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}
STATES = ("on time", "late", "too late", "time unknown")
_TIME = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|[+-]\d{2}:?\d{2})?\s*$",
                   re.IGNORECASE)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|day|days|hour|hours)?\s*$", re.IGNORECASE)
_PENALTY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*/\s*(day|hour|d|h)\s*$", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400,
            "days": 86400}


class LateError(ValueError):
    """A late policy, a time or a times file that cannot be read as given."""


def parse_time(text: Any, tz: tzinfo | None = None, where: str = "") -> datetime:
    """An aware datetime from ISO 8601 (``2026-12-01T23:59:00+01:00``, ``...Z``, a space for ``T``).

    Args:
        text: the time as written (Gradescope's ``2026-12-01 23:59:00.123456789 -08:00`` too).
        tz: the zone of a time written without an offset; None refuses such a time.
        where: what to name in an error (a file and row).

    Raises:
        LateError: not a time, or no offset and no ``tz``.
    """
    m = _TIME.match(str(text))
    if not m:
        raise LateError(f"{where}{text!r} is not a time (write 2026-12-01T23:59:00+01:00)")
    day, clock, frac, off = m.groups()
    clock = clock if clock.count(":") == 2 else clock + ":00"
    iso = f"{day}T{clock}" + (f".{(frac + '000000')[:6]}" if frac else "")
    if off:
        iso += "+00:00" if off.upper() == "Z" else (off if ":" in off else f"{off[:3]}:{off[3:]}")
    try:
        t = datetime.fromisoformat(iso)
    except ValueError as err:
        raise LateError(f"{where}{text!r} is not a time ({err})") from err
    if t.tzinfo is None:
        if tz is None:
            raise LateError(f"{where}{text!r} has no UTC offset: write one (+01:00, Z) or give --timezone")
        t = t.replace(tzinfo=tz)
    return t


def parse_duration(text: str) -> timedelta:
    """``90s``, ``15m``, ``2h``, ``1d`` (a bare number is days).

    Raises:
        LateError: not a duration.
    """
    m = _DURATION.match(str(text))
    if not m:
        raise LateError(f"{text!r} is not a duration (write 15m, 2h or 1d)")
    return timedelta(seconds=float(m.group(1)) * _SECONDS[(m.group(2) or "d").lower()])


def parse_penalty(text: str) -> tuple[float, str]:
    """``10%/day`` -> ``(0.10, "day")``; ``2%/hour`` -> ``(0.02, "hour")``.

    Raises:
        LateError: not a penalty.
    """
    m = _PENALTY.match(str(text))
    if not m:
        raise LateError(f"{text!r} is not a penalty (write 10%/day or 2%/hour)")
    unit = {"d": "day", "h": "hour"}.get(m.group(2).lower(), m.group(2).lower())
    return float(m.group(1)) / 100.0, unit


def duration_words(d: timedelta) -> str:
    """``timedelta(hours=26, minutes=5)`` -> ``1d 2h 05m``."""
    minutes = math.ceil(d.total_seconds() / 60)
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    return (f"{days}d " if days else "") + (f"{hours}h {mins:02d}m" if hours else f"{mins}m")


@dataclass(frozen=True)
class Policy:
    """A late policy: the deadline, the grace, the penalty per started unit, the late days accepted."""

    deadline: datetime
    penalty: float = 0.0
    unit: str = "day"
    grace: timedelta = timedelta(0)
    late_days: float | None = None

    def words(self) -> str:
        """The policy in one line, as the receipt and the CSV's notes say it."""
        parts = [f"deadline {self.deadline.isoformat()}"]
        if self.grace:
            parts.append(f"grace {duration_words(self.grace)}")
        parts.append(f"penalty {self.penalty * 100:g}% of the score per started {self.unit} late" if self.penalty
                     else "no penalty (late work flagged)")
        if self.late_days is not None:
            parts.append(f"not accepted (0) after {self.late_days:g} late day(s)")
        return "; ".join(parts)


@dataclass
class Times:
    """Submission times by submission key (file name) and by student id, and where they come from."""

    source: str
    trusted: bool = True
    by_key: dict[str, datetime] = field(default_factory=dict)
    by_id: dict[str, datetime] = field(default_factory=dict)

    def lookup(self, student_id: str, *keys: str) -> datetime | None:
        """The time of the student's submission: by id first, then by the first of ``keys`` (its file's key,
        then its folders' names, innermost first: Gradescope's ``submission_N/``) that has one."""
        return self.by_id.get(student_id) or next((self.by_key[k] for k in keys if k in self.by_key), None)


def _csv_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh)]


def _keyed(path: str, row: dict[str, str], n: int) -> tuple[str, str]:
    """(``file`` key, ``student_id``) of a times or extensions row: one of them must be given."""
    from autograder.reports.gradebook import student_key

    key, sid = student_key(row.get("file", "")) if row.get("file") else "", row.get("student_id", "")
    if not key and not sid:
        raise LateError(f"{path} row {n}: name the student by file or student_id")
    return key, sid


def read_times_csv(path: str, tz: tzinfo | None = None) -> Times:
    """An instructor's or LMS export's times: columns ``file`` or ``student_id``, and ``submitted_at``.

    Raises:
        LateError: a missing column, a row without a student or a time that is not one.
    """
    rows = _csv_rows(path)
    if rows and "submitted_at" not in rows[0]:
        raise LateError(f"{path}: a times CSV needs the column submitted_at (and file or student_id)")
    times = Times(source=f"times CSV {Path(path).name}")
    for n, r in enumerate(rows, 2):
        key, sid = _keyed(path, r, n)
        if not r.get("submitted_at"):
            continue  # a student the LMS has no time for: time unknown
        t = parse_time(r["submitted_at"], tz, f"{path} row {n}: ")
        if key:
            times.by_key[key] = t
        if sid:
            times.by_id[sid] = t
    return times


def _gradescope_yml(path: Path, tz: tzinfo | None, times: Times) -> None:
    """The export's ``submission_metadata.yml``: ``submission_N:`` blocks with ``:created_at:`` and ``:sid:``."""
    key = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        top = re.match(r"^([^\s#:-][^:]*):\s*$", line)
        if top:
            key = top.group(1).strip().strip("'\"")
            continue
        created = re.match(r"^\s+:created_at:\s*(.+?)\s*$", line)
        if created and key:
            times.by_key[key] = parse_time(created.group(1).strip("'\""), tz, f"{path} {key}: ")
        sid = re.match(r"^\s+(?:-\s+)?:sid:\s*(.+?)\s*$", line)
        if sid and key in times.by_key:
            times.by_id[sid.group(1).strip("'\"")] = times.by_key[key]


def read_gradescope(path: str, tz: tzinfo | None = None) -> Times:
    """Gradescope's submission times: a folder of submission folders with ``submission_metadata.json``
    (the autograder's, ``created_at``), and/or the export's ``submission_metadata.yml``, or that file.

    Raises:
        LateError: nothing to read there, or a time that is not one.
    """
    p = Path(path)
    times = Times(source=f"Gradescope metadata {p.name}")
    ymls = [p] if p.is_file() else sorted(p.glob("submission_metadata.y*ml"))
    for y in ymls:
        _gradescope_yml(y, tz, times)
    for meta in ([] if p.is_file() else sorted(p.glob("*/submission_metadata.json"))):
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise LateError(f"{meta}: not JSON ({err})") from err
        if isinstance(data, dict) and data.get("created_at"):
            t = parse_time(data["created_at"], tz, f"{meta}: ")
            times.by_key[meta.parent.name] = t
            for u in data.get("users") or []:
                if isinstance(u, dict) and u.get("sid"):
                    times.by_id[str(u["sid"])] = t
    if not times.by_key:
        raise LateError(f"{path}: no submission_metadata.json in its folders nor a submission_metadata.yml")
    return times


def mtimes(submissions: list[str]) -> Times:
    """The submissions' file modification times: only on the instructor's explicit word, and recorded."""
    from autograder.reports.gradebook import student_key

    times = Times(source="file modification times (--times-from-mtime: not a trustworthy submission time)",
                  trusted=False)
    for s in submissions:
        try:
            times.by_key[student_key(s)] = datetime.fromtimestamp(os.stat(s).st_mtime, UTC)
        except OSError:
            continue  # time unknown
    return times


def read_extensions(path: str, policy: Policy, tz: tzinfo | None = None) -> dict[str, datetime]:
    """Per-student deadlines: columns ``file`` or ``student_id`` and ``deadline`` (a time) or ``days``/``hours``
    (added to the policy's deadline). Keys are ``file:KEY`` and ``id:STUDENT_ID``.

    Raises:
        LateError: a row without a student or an extension, or a value that is not one.
    """
    out: dict[str, datetime] = {}
    for n, r in enumerate(_csv_rows(path), 2):
        key, sid = _keyed(path, r, n)
        try:
            if r.get("deadline"):
                d = parse_time(r["deadline"], tz, f"{path} row {n}: ")
            elif r.get("days") or r.get("hours"):
                d = policy.deadline + timedelta(days=float(r.get("days") or 0), hours=float(r.get("hours") or 0))
            else:
                raise LateError(f"{path} row {n}: give deadline, days or hours")
        except ValueError as err:
            raise LateError(str(err) if isinstance(err, LateError) else f"{path} row {n}: {err}") from err
        if key:
            out[f"file:{key}"] = d
        if sid:
            out[f"id:{sid}"] = d
    return out


def assess(policy: Policy, submitted: datetime | None, deadline: datetime | None = None) -> dict[str, Any]:
    """One submission under the policy.

    Args:
        policy: the late policy.
        submitted: when it was submitted (None: unknown).
        deadline: the student's own deadline (an extension), else the policy's.

    Returns:
        ``{"state", "factor", "late", "deadline", "submitted", "words"}``: ``state`` one of :data:`STATES`,
        ``factor`` the multiplier of the scores (None when the time is unknown), ``late`` the seconds after
        the deadline (0 when on time).
    """
    due = deadline or policy.deadline
    base = {"deadline": due.isoformat(), "submitted": submitted.isoformat() if submitted else None}
    ext = " (extended)" if deadline and deadline != policy.deadline else ""
    if submitted is None:
        return {**base, "state": "time unknown", "factor": None, "late": None,
                "words": "time unknown: no trustworthy submission time; left blank"}
    late = submitted - due
    if late <= policy.grace:
        return {**base, "state": "on time", "factor": 1.0, "late": 0.0, "words": f"on time{ext}"}
    seconds = late.total_seconds()
    if policy.late_days is not None and late > timedelta(days=policy.late_days) + policy.grace:
        return {**base, "state": "too late", "factor": 0.0, "late": seconds,
                "words": f"late {duration_words(late)}{ext}: after {policy.late_days:g} late day(s), scores 0"}
    units = math.ceil(seconds / UNITS[policy.unit].total_seconds())
    cut = min(1.0, policy.penalty * units)
    words = f"late {duration_words(late)}{ext}" + (f": -{cut * 100:g}% ({units} {policy.unit}(s))" if cut else "")
    return {**base, "state": "late", "factor": round(1.0 - cut, 9), "late": seconds, "words": words}
