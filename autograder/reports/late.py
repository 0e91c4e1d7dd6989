"""Late work for the gradebook: a deadline, a grace period, a penalty per day or hour, a cut-off in late
days, per-student extensions, from submission times the instructor can trust.

Times come only from what the platform or the instructor wrote: a Gradescope export's own top-level
``submission_metadata.yml`` (``submission_N:`` blocks, ``:created_at:``, ``:submitters:``' ``:sid:``; read by a
YAML parser, then its shape checked), a CSV
the instructor gives (an LMS export's timestamps with the columns ``file`` or ``student_id`` and
``submitted_at``), or, only when asked, the files' modification times (recorded as such: an mtime is
whatever the last copy or unzip left). Nothing inside a submission folder is read: a
``submission_metadata.json`` (or any file) there is what the student uploaded, never a time or an id.

Every time is timezone-aware: a time without a UTC offset takes ``--timezone`` or is refused. A late
submission's scores are multiplied by ``1 - penalty x started units late`` (never below 0); later than
the late days scores 0; a student whose time is unknown is flagged ``time unknown`` and left blank,
never taken as on time or late. A platform file that is malformed in part or whole leaves the students it
cannot time ``time unknown`` (with the reason) and tells the instructor why; it never stops the class.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, cast

import yaml

from autograder.core.text import MESSAGE_CHARS, NAME_CHARS, clean
from autograder.reports.roster import student_key

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


# ``--time-format NAME``: an LMS whose export's timestamp format is documented (its source named). Only documented
# formats are here: day/month order is never guessed; other exports take an explicit strptime format.
LMS_TIME_FORMATS: dict[str, str] = {
    # gradescope-autograders.readthedocs.io "Submission Metadata": "created_at": "2018-07-01T14:22:32.365935-07:00"
    "gradescope": "iso",
}
NOT_A_TIME = ("{where}{text!r} is not a time: write 2026-12-01T23:59:00+01:00, or name the format the file uses "
              "with --time-format (a strptime format: '%m/%d/%Y %H:%M' for 12/01/2026 22:30, "
              "'%b %d, %Y %I:%M%p' for Dec 1, 2026 10:30pm); the day/month order is never guessed")
NOT_IN_FORMAT = "{where}{text!r} is not a time in --time-format {fmt!r} ({err})"
NO_SUCH_FORMAT = ("--time-format {fmt!r}: not a strptime format (it has no %) nor one of the LMS names with a "
                  "documented export format ({names}); give the format the file uses, '%d/%m/%Y %H:%M' for instance")


def time_format(text: str | None) -> str | None:
    """``--time-format``: an LMS name (:data:`LMS_TIME_FORMATS`) or a strptime format; None: ISO 8601 only.

    Raises:
        LateError: neither a known name nor a format with a ``%`` directive.
    """
    if text is None:
        return None
    named = LMS_TIME_FORMATS.get(text.strip().lower())
    if named is not None:
        return None if named == "iso" else named
    if "%" not in text:
        raise LateError(NO_SUCH_FORMAT.format(fmt=text, names=", ".join(sorted(LMS_TIME_FORMATS))))
    return text


def _strptime(text: Any, fmt: str, tz: tzinfo | None, where: str) -> datetime:
    try:
        t = datetime.strptime(str(text).strip(), fmt)
    except ValueError as err:
        raise LateError(NOT_IN_FORMAT.format(where=where, text=text, fmt=fmt, err=err)) from err
    if t.tzinfo is None:
        if tz is None:
            raise LateError(f"{where}{text!r} has no UTC offset: write one (+01:00, Z) or give --timezone")
        t = t.replace(tzinfo=tz)
    return t


def parse_time(text: Any, tz: tzinfo | None = None, where: str = "", fmt: str | None = None) -> datetime:
    """An aware datetime from ISO 8601 (``2026-12-01T23:59:00+01:00``, ``...Z``, a space for ``T``), or from
    the instructor's explicit strptime format (``--time-format``; never guessed).

    Args:
        text: the time as written (Gradescope's ``2026-12-01 23:59:00.123456789 -08:00`` too).
        tz: the zone of a time written without an offset; None refuses such a time.
        where: what to name in an error (a file and row).
        fmt: a strptime format (:func:`time_format`); None: ISO 8601.

    Raises:
        LateError: not a time (in ``fmt``), or no offset and no ``tz``.
    """
    if fmt is not None:
        return _strptime(text, fmt, tz, where)
    m = _TIME.match(str(text))
    if not m:
        raise LateError(NOT_A_TIME.format(where=where, text=text))
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
    """``timedelta(hours=26, minutes=5)`` -> ``1d 2h 05m``; under a minute in seconds: ``30s`` (not ``1m``)."""
    seconds = math.ceil(d.total_seconds())
    if seconds < 60:
        return f"{max(seconds, 0)}s"
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
    """Submission times by submission key and by student id, where they come from, and what the source
    could not give.

    ``unknown`` maps ``key:K`` / ``id:SID`` to why that submission's or student's time is unknown (a
    malformed entry of a platform file); ``missing`` says why any other has none (a file that could not be
    read at all; empty: it is just not in the source); ``notes`` is what the instructor is told about it.
    """

    source: str
    trusted: bool = True
    by_key: dict[str, datetime] = field(default_factory=dict)
    by_id: dict[str, datetime] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    missing: str = ""

    def find(self, student_id: str, *keys: str) -> tuple[datetime | None, str]:
        """The time of the student's submission and, when there is none, why (empty: not in the source).

        The ``keys`` are tried in the order given (the gradebook passes the submission's path, then its
        components nearest the root first: the platform's ``submission_N/`` before any name the student
        chose beneath it), then the student's id. A key or id the source names but could not read is
        unknown: the search stops there, never falling through to another entry.
        """
        for k in keys:
            if k in self.by_key:
                return self.by_key[k], ""
            if f"key:{k}" in self.unknown:
                return None, self.unknown[f"key:{k}"]
        if student_id in self.by_id:
            return self.by_id[student_id], ""
        return None, self.unknown.get(f"id:{student_id}", self.missing)

    def lookup(self, student_id: str, *keys: str) -> datetime | None:
        """:meth:`find`'s time alone."""
        return self.find(student_id, *keys)[0]


def _csv_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in csv.DictReader(fh)]


def _keyed(path: str, row: dict[str, str], n: int) -> tuple[str, str]:
    """(``file`` key, ``student_id``) of a times or extensions row: one of them must be given."""
    key, sid = student_key(row.get("file", "")) if row.get("file") else "", row.get("student_id", "")
    if not key and not sid:
        raise LateError(f"{path} row {n}: name the student by file or student_id")
    return key, sid


def read_times_csv(path: str, tz: tzinfo | None = None, fmt: str | None = None) -> Times:
    """An instructor's or LMS export's times: columns ``file`` or ``student_id``, and ``submitted_at`` (ISO 8601,
    or in ``fmt``: the strptime format ``--time-format`` names).

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
        t = parse_time(r["submitted_at"], tz, f"{path} row {n}: ", fmt)
        if key:
            times.by_key[key] = t
        if sid:
            times.by_id[sid] = t
    return times


GRADESCOPE_YML = ("submission_metadata.yml", "submission_metadata.yaml")
GS_NO_YML = ("{path}: no submission_metadata.yml at its top: give the Gradescope export's folder (or its "
             "submission_metadata.yml); files inside the submission folders are the students' and are never read")
GS_UNREADABLE = "{path}: cannot be read ({err}); every Gradescope time is unknown"
GS_NO_BLOCKS = ("{path}: no submission_N: block with :created_at: (not the export's submission_metadata.yml?); "
                "every Gradescope time is unknown")
GS_BAD_LINE = "{path} line {n}: not the export's shape ({why}); every Gradescope time is unknown"
GS_BAD_SHAPE = "{path}: not the export's shape ({why}); every Gradescope time is unknown"
GS_BAD_BLOCK = "{path} {key}: {why}; the times of this submission and its submitters are unknown"
GS_TWO_SUBMISSIONS = "{path}: sid {sid} is a submitter of {keys}: looked up by id, the latest of their times counts"
GS_WHY = "Gradescope's metadata for {what} is malformed ({why})"
GS_WHOLE = "Gradescope's {path} is malformed ({why})"
# what makes the whole yml not the export's
GS_TOO_LARGE = ("larger than {mib:g} MiB, more than an export's metadata holds (a class of thousands: a few MiB); "
                "give the times as a --times CSV")
GS_TOO_DEEP = "nested deeper than {depth} levels"
GS_TOO_MANY = "more than {nodes:,} nodes, its aliases expanded"
GS_ALIAS_LOOP = "an alias inside the node it names"
GS_NOT_MAPPING = "not a mapping of submission_N: blocks but {kind}"
GS_NOT_BLOCK = "{key} is not a submission_N: block"
# what makes one block not the export's
GS_BLOCK_NOT_MAPPING = "not a mapping of the submission's keys but {kind}"
GS_TWICE = "{key} twice"
GS_SUBMITTERS_NOT_LIST = ":submitters: is not a list of submitters"
GS_SUBMITTER_NOT_MAPPING = "a submitter that is not a mapping"
GS_SID_NOT_TEXT = "a submitter's :sid: is {kind}, not text"
GS_CREATED_NOT_TIME = ":created_at: is {kind}, not a time"

# A platform file is read by a maintained parser of its format, and bounded: the export is a few MiB for a class of
# thousands (2,000 submissions of 10 tests: 3.2 MiB, 244,000 nodes); its YAML is Ruby's (Psych), which writes an
# object met twice as an anchor and an alias, so aliases are read, but never expanded past a bound (a "billion
# laughs", merge keys included) nor inside themselves
GS_MAX_BYTES = 16 * 2**20
GS_MAX_NODES = 4_000_000  # the document's nodes with every alias expanded
GS_MAX_DEPTH = 64  # Gradescope's blocks nest a few levels
_SUBMISSION_KEY = re.compile(r"submission_\d+")


class _Refused(yaml.YAMLError):
    """A platform yml the bounded loader does not read (too deep, aliases past the bound or in a loop)."""


class _Mapping(dict[Any, Any]):
    """A YAML mapping as loaded, with the keys the file repeats and every value each one had (YAML forbids a key
    twice; PyYAML keeps the last silently)."""

    def __init__(self) -> None:
        super().__init__()
        self.repeated: dict[Any, list[Any]] = {}

    def values_of(self, key: Any) -> list[Any]:
        """Every value ``key`` had in the file, in order (empty: not there)."""
        return self.repeated.get(key, [self[key]]) if key in self else []


class _PlatformLoader(yaml.SafeLoader):
    """PyYAML's safe loader (no tag ever runs code), bounded for a file a student's display name shapes: nesting
    (:data:`GS_MAX_DEPTH`), nodes with aliases expanded (:data:`GS_MAX_NODES`), no alias inside its own node. Times
    are kept as written (:func:`parse_time` reads them); a tag it does not know (Psych's ``!ruby/...``) is read as the
    plain mapping, list or text it tags; a repeated key is recorded (:class:`_Mapping`)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._open: list[str | None] = []  # the anchors of the nodes being composed, outermost first
        self._sizes: dict[int, int] = {}  # id(node) -> its nodes, aliases expanded

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """One node, refused when it nests too deep, names a node it is inside, or expands past the bound."""
        if self.check_event(yaml.AliasEvent):
            if self.peek_event().anchor in self._open:  # type: ignore[no-untyped-call]  # types-PyYAML leaves it unannotated
                raise _Refused(GS_ALIAS_LOOP)
            return super().compose_node(parent, index)  # a node composed whole before: sized
        if len(self._open) >= GS_MAX_DEPTH:
            raise _Refused(GS_TOO_DEEP.format(depth=GS_MAX_DEPTH))
        self._open.append(self.peek_event().anchor)  # type: ignore[no-untyped-call]  # types-PyYAML leaves it unannotated
        try:
            node = super().compose_node(parent, index)
        finally:
            self._open.pop()
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = node.value if isinstance(node, yaml.SequenceNode) else []
        size = 1 + sum(self._sizes[id(n)] for n in children)
        if size > GS_MAX_NODES:
            raise _Refused(GS_TOO_MANY.format(nodes=GS_MAX_NODES))
        self._sizes[id(node)] = size
        return node


def _construct_mapping(loader: _PlatformLoader, node: yaml.MappingNode) -> Iterator[_Mapping]:
    data = _Mapping()
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        try:
            hash(key)
        except TypeError as err:
            raise yaml.constructor.ConstructorError(None, None, "a key that is not a scalar",
                                                    key_node.start_mark) from err
        value = loader.construct_object(value_node)
        if key in data:
            data.repeated.setdefault(key, [data[key]]).append(value)
        data[key] = value


def _construct_plain(loader: _PlatformLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return _construct_mapping(loader, node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_yaml_seq(node)
    return loader.construct_scalar(cast(yaml.ScalarNode, node))  # PyYAML's nodes: a scalar, a sequence or a mapping


def _construct_as_written(loader: _PlatformLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


_PlatformLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_PlatformLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_as_written)
_PlatformLoader.add_constructor(None, _construct_plain)


def _kind(value: Any) -> str:
    return ("nothing" if value is None else "a mapping" if isinstance(value, dict) else "a list"
            if isinstance(value, list) else f"a {type(value).__name__} ({clean(value, 40)!r})")


def _load_yml(text: str) -> Any:
    """The yml's one document, as :class:`_PlatformLoader` reads it.

    Raises:
        yaml.YAMLError: not YAML, more than one document, or past a bound.
        ValueError: a value its constructor refuses (an integer of thousands of digits).
    """
    loader = _PlatformLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@dataclass
class _Block:
    """One ``submission_N:`` block of the export's yml: its ``:created_at:`` values, its submitters' sids, and
    what is wrong with it (empty: nothing)."""

    key: str
    created: list[Any] = field(default_factory=list)
    sids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _block(key: str, value: Any) -> _Block:
    """A block as Gradescope writes it (Ruby's YAML: ``:created_at:`` and ``:submitters:`` one level in, each
    submitter a mapping with ``:sid:``); a nested ``:created_at:`` (a ``:history:`` entry's) is not the submission's."""
    b = _Block(key)
    if value is None:
        return b
    if not isinstance(value, _Mapping):
        b.problems.append(GS_BLOCK_NOT_MAPPING.format(kind=_kind(value)))
        return b
    b.created = value.values_of(":created_at")
    everyone = value.values_of(":submitters")
    if len(everyone) > 1:
        b.problems.append(GS_TWICE.format(key=":submitters:"))
    submitters = everyone[0] if everyone else None
    if submitters is not None and not isinstance(submitters, list):
        b.problems.append(GS_SUBMITTERS_NOT_LIST)
        submitters = None
    for person in submitters or []:
        if not isinstance(person, _Mapping):
            b.problems.append(GS_SUBMITTER_NOT_MAPPING)
            continue
        sids = person.values_of(":sid")
        if len(sids) > 1:
            b.problems.append(GS_TWICE.format(key=":sid:"))
        sid = sids[0] if sids else None
        if sid is None or (isinstance(sid, str) and not sid.strip()):
            continue  # a submitter without an id: not looked up by id
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            b.problems.append(GS_SID_NOT_TEXT.format(kind=_kind(sid)))
            continue
        b.sids.append(str(sid))
    return b


def _yml_blocks(data: Any) -> tuple[list[_Block], str]:
    """The export's blocks from its loaded yml, and what makes the whole of it not the export's (empty: nothing).

    The top level is a mapping of ``submission_N`` to blocks; a key it repeats is a block of its own each time.
    """
    if not isinstance(data, _Mapping):
        return [], GS_NOT_MAPPING.format(kind=_kind(data))
    blocks: list[_Block] = []
    for key in data:
        if not isinstance(key, str) or not _SUBMISSION_KEY.fullmatch(key):
            return blocks, GS_NOT_BLOCK.format(key=repr(clean(key, NAME_CHARS)))
        blocks += [_block(key, value) for value in data.values_of(key)]
    return blocks, ""


def _created_at(value: Any, tz: tzinfo | None) -> datetime:
    """A block's ``:created_at:`` as a time: text as written (:func:`parse_time`), or a YAML timestamp.

    Raises:
        LateError: not a time, or no offset and no ``tz``.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else parse_time(value.isoformat(" "), tz)
    if value is None or isinstance(value, (str, int, float)):
        return parse_time("" if value is None else value, tz)
    raise LateError(GS_CREATED_NOT_TIME.format(kind=_kind(value)))


def _whole(times: Times, note: str, why: str, path: Path) -> None:
    times.notes.append(note)
    times.missing = GS_WHOLE.format(path=path.name, why=why)


def _gradescope_yml(path: Path, tz: tzinfo | None, times: Times) -> None:
    """Fills ``times`` from the export's ``submission_metadata.yml``; what it cannot read goes to
    ``times.unknown`` and ``times.notes``, never an exception."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(GS_MAX_BYTES + 1)
        if len(raw) > GS_MAX_BYTES:
            why = GS_TOO_LARGE.format(mib=GS_MAX_BYTES / 2**20)
            return _whole(times, GS_BAD_SHAPE.format(path=path, why=why), why, path)
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeError) as err:
        return _whole(times, GS_UNREADABLE.format(path=path, err=err), "unreadable", path)
    try:
        data = _load_yml(text)
    except yaml.MarkedYAMLError as err:  # where one block ends is uncertain: none is believed
        why = clean(", ".join(w for w in (err.context, err.problem) if w), MESSAGE_CHARS)
        mark = err.problem_mark or err.context_mark
        if mark is not None:
            n = mark.line + 1
            return _whole(times, GS_BAD_LINE.format(path=path, n=n, why=why), f"line {n}: {why}", path)
        return _whole(times, GS_BAD_SHAPE.format(path=path, why=why), why, path)
    except Exception as err:  # noqa: BLE001 - past a bound (_Refused), a character YAML refuses, a constructor's
        # refusal (ValueError: an integer of thousands of digits): what the yml is, never the gradebook's stop
        why = clean(str(err) if isinstance(err, yaml.YAMLError) else f"{type(err).__name__}: {err}", MESSAGE_CHARS)
        return _whole(times, GS_BAD_SHAPE.format(path=path, why=why), why, path)
    blocks, problem = _yml_blocks(data)
    if problem:
        return _whole(times, GS_BAD_SHAPE.format(path=path, why=problem), problem, path)
    if not any(b.created for b in blocks):
        return _whole(times, GS_NO_BLOCKS.format(path=path), "no submission block", path)
    keys = Counter(b.key for b in blocks)
    good: dict[str, datetime] = {}
    bad: dict[str, str] = {}
    for b in blocks:
        why = (b.problems[0] if b.problems else "named twice" if keys[b.key] > 1 else
               "no :created_at:" if not b.created else "two :created_at:" if len(b.created) > 1 else "")
        if not why:
            try:
                good[b.key] = _created_at(b.created[0], tz)
            except LateError as err:
                why = f":created_at: {err}"
        if why:
            bad[b.key] = why
    for key, why in bad.items():
        times.notes.append(GS_BAD_BLOCK.format(path=path, key=key, why=why))
        times.unknown[f"key:{key}"] = GS_WHY.format(what=key, why=why)
    times.by_key.update(good)
    submitted: dict[str, list[str]] = {}
    for b in blocks:
        for sid in dict.fromkeys(b.sids):
            submitted.setdefault(sid, []).append(b.key)
    for sid, ks in sorted(submitted.items()):
        broken = [k for k in ks if k in bad]
        if broken:
            times.unknown[f"id:{sid}"] = GS_WHY.format(what=", ".join(broken), why=bad[broken[0]])
            continue
        if len(ks) > 1:
            times.notes.append(GS_TWO_SUBMISSIONS.format(path=path, sid=sid, keys=", ".join(ks)))
        times.by_id[sid] = max(good[k] for k in ks)


def read_gradescope(path: str, tz: tzinfo | None = None) -> Times:
    """Gradescope's submission times from an export: its top-level ``submission_metadata.yml`` (give the
    export's folder or that file). Nothing inside a ``submission_N/`` folder is read: the student put it there.

    The yml is read by PyYAML's safe loader, bounded (:class:`_PlatformLoader`: a size cap, nesting, aliases),
    never line by line: a display name as the platform writes it (a U+2028, a quote, ``- :sid:`` inside it) stays
    a name. Its shape is then checked: a yml malformed in part leaves those submissions (and their submitters)
    unknown, in whole every one; ``Times.notes`` says why.

    Raises:
        LateError: no such path, or a folder without the yml at its top (the command line's mistake).
    """
    p = Path(path)
    if p.is_dir():
        yml = next((p / n for n in GRADESCOPE_YML if (p / n).exists()), None)
        if yml is None:
            raise LateError(GS_NO_YML.format(path=path))
    elif p.exists():
        yml = p
    else:
        raise LateError(f"{path}: no such file or folder")
    times = Times(source=f"Gradescope export {yml.name}")
    _gradescope_yml(yml, tz, times)
    return times


def mtimes(submissions: list[str]) -> Times:
    """The submissions' file modification times: only on the instructor's explicit word, and recorded.
    Keyed by each submission's path as given (the gradebook looks that key up first)."""
    times = Times(source="file modification times (--times-from-mtime: not a trustworthy submission time)",
                  trusted=False)
    for s in submissions:
        try:
            times.by_key[str(s)] = datetime.fromtimestamp(os.stat(s).st_mtime, UTC)
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


def assess(policy: Policy, submitted: datetime | None, deadline: datetime | None = None,
           why: str = "") -> dict[str, Any]:
    """One submission under the policy.

    Args:
        policy: the late policy.
        submitted: when it was submitted (None: unknown).
        deadline: the student's own deadline (an extension), else the policy's.
        why: why ``submitted`` is None, when the source said (a malformed platform entry).

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
                "words": f"time unknown: {why or 'no trustworthy submission time'}; left blank"}
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
