"""The instructor's record of where ``tapetrace build`` wrote reference material outside the checkout.

The build may write the solution notebook, the otter zip (hidden suites, reference solutions) and a self-study
edition wherever ``--out``/``--template`` say (``/opt/course``, a home folder). Only the checkout's own private
folders are known to every grading path by name (:func:`autograder.core.paths.checkout_private`); this record names the
rest, so that each path keeps them from student workers too (covered by an empty mount, carved out of Landlock's
allow-list, counted among the files a worker's own uid must not read), wherever they landed.

Whose: the instructor's. Only ``tapetrace build`` writes it (owner-only, in a folder of its own beside the
checkout's private folders); no submission, option or name a student chose reaches it, and a student's worker
neither reads nor writes it (the folder is itself private; workers write only their scratch). Read fail closed:
a record that exists but cannot be read, is not of its shape, or may be written by other users is
:class:`BuildRecordError`, never an empty list.

Its shape: ``{"version": 1, "places": ["/absolute/real/path", ...]}``, at most :data:`MAX_PLACES` places.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from autograder.core.paths import ROOT, checkout_private

RECORD = ROOT / ".tapetrace-builds" / "places.json"
"""The record (its folder, mode 0700, holds it and the writers' lock)."""

VERSION = 1
MAX_PLACES = 256
"""The most places the record holds: each is a mount in every student worker (its start time)."""

MSG_DAMAGED = ("{record}: the record of where `tapetrace build` wrote reference material cannot be read ({why}); "
               "student workers would not be kept from those places: restore it (a JSON object "
               '{{"version": 1, "places": [absolute paths]}}, writable by its owner only) or remove it once every '
               "build it names is deleted")
MSG_FULL = ("{record}: more than {limit} places where builds wrote reference material: delete old builds (the "
            "record forgets places that no longer exist) or build into dist/")
MSG_UNWRITABLE = ("{record}: cannot record where this build writes reference material ({why}), so grading could not "
                  "keep it from student workers: make that folder writable or build into dist/")


class BuildRecordError(Exception):
    """The record cannot be read or written: no grading or build goes on without it (one line saying why)."""


def _lock() -> Path:
    return RECORD.parent / "lock"


def _damaged(why: str) -> BuildRecordError:
    return BuildRecordError(MSG_DAMAGED.format(record=RECORD, why=why))


def _read() -> list[str]:
    """The places as recorded (none where there is no record)."""
    try:
        st = os.lstat(RECORD)
        folder = os.stat(RECORD.parent)
    except FileNotFoundError:
        return []
    except OSError as err:
        raise _damaged(err.strerror or str(err)) from None
    if not stat.S_ISREG(st.st_mode):
        raise _damaged("not a regular file")
    for where, mode in ((RECORD, st.st_mode), (RECORD.parent, folder.st_mode)):
        if mode & 0o022:
            raise _damaged(f"{where} may be written by other users")
    try:
        data = json.loads(RECORD.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise _damaged(f"{type(err).__name__}: {err}") from None
    places = data.get("places") if isinstance(data, dict) and data.get("version") == VERSION else None
    if not isinstance(places, list) or len(places) > MAX_PLACES:
        raise _damaged(f"not a version {VERSION} record of at most {MAX_PLACES} places")
    for place in places:
        if not isinstance(place, str) or not os.path.isabs(place) or "\0" in place:
            raise _damaged(f"a place that is not an absolute path: {place!r}")
    return list(places)


def private_dirs() -> list[str]:
    """Paths a student's worker must not read: the checkout's own private places
    (:func:`autograder.core.paths.checkout_private`), this record's folder and every place it names (the solution
    notebook, the otter zip, a self-study edition wherever ``tapetrace build`` wrote them).
    Covered by an empty tmpfs (files: /dev/null) or carved out of Landlock's allow-list.

    Raises:
        BuildRecordError: the record cannot be read (fail closed: no worker starts).
    """
    out = [str(p) for p in [*checkout_private(), RECORD.parent] if p.exists()]
    return list(dict.fromkeys([*out, *(p for p in places() if os.path.lexists(p))]))


def places() -> list[str]:
    """Every place the record names (existing or not: :func:`record` forgets those gone).

    Raises:
        BuildRecordError: the record exists but cannot be trusted (fail closed).
    """
    return _read()


def record(new: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Adds ``new`` (real paths are kept) to the record, before the build writes there.

    Writers take turns (a lock beside the record); the record is replaced whole, so a grading that reads it
    meanwhile sees the old one or the new one. Places that no longer exist are forgotten.

    Args:
        new: the places the build is about to write reference material to.

    Returns:
        The record's places, as written.

    Raises:
        BuildRecordError: the record is damaged, cannot be written, or would exceed :data:`MAX_PLACES`.
    """
    import fcntl
    import tempfile

    try:
        RECORD.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(RECORD.parent, 0o700)
        fd = os.open(_lock(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as err:
        raise BuildRecordError(MSG_UNWRITABLE.format(record=RECORD, why=err.strerror or err)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        kept = [p for p in _read() if os.path.lexists(p)]
        out = sorted(dict.fromkeys([*kept, *(os.path.realpath(p) for p in new)]))
        if len(out) > MAX_PLACES:
            raise BuildRecordError(MSG_FULL.format(record=RECORD, limit=MAX_PLACES))
        text = json.dumps({"version": VERSION, "places": out}, indent=1) + "\n"
        try:
            tmp_fd, tmp = tempfile.mkstemp(dir=RECORD.parent, prefix=".places-")  # mode 0600
            with os.fdopen(tmp_fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, RECORD)
        except OSError as err:
            raise BuildRecordError(MSG_UNWRITABLE.format(record=RECORD, why=err.strerror or err)) from None
        return out
    finally:
        os.close(fd)
