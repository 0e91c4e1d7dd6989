"""What ``tapetrace build`` writes that students must never read, wherever ``--out``/``--template`` put it.

The solution notebook (``OUT/solutions/``), the otter zip (the hidden suites and the reference solutions) and a
self-study edition (the reference solutions inside) are reference material. The checkout's ``dist/`` is private on
every grading path by name; anywhere else, three layers keep them from a student's worker, each alone enough where
it applies:

- owner-only modes (:func:`owner_only`: folders 0700, files 0600, from the moment they exist, also over an older
  build's world-readable files): a worker that dropped to a uid of its own cannot read them;
- the instructor's record of builds (:mod:`autograder.core.build_record`, written before the first byte): every
  grading path adds the places it names to what workers must not read (a mount over them, carved out of Landlock's
  allow-list), also where a worker keeps the grader's uid (no uid drop: Python in a folder only its owner reads);
- a place a worker reads whole (:func:`autograder.sandbox.isolate.worker_reads`: the system's folders, Python's,
  the engine's package) is refused before anything is written (:func:`check_places`), since an engine that does
  not know the record (the zip's own, unpacked by ``otter run`` on this machine) would let Landlock read it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder.builders.build import solution_notebook_path, zip_name
from autograder.builders.runtime import BuildError
from autograder.core import build_record as _record
from autograder.core.paths import checkout_private

FOLDER_MODE = 0o700
FILE_MODE = 0o600
MSG_NEEDED = ("{place}: holds what student workers need (the engine, Python, the temporary or home folder), so it "
              "could not be kept from them: build into dist/ (the default) or a folder of its own")
MSG_READABLE = ("{place}: student workers may read beneath {root} (their read set: the system's folders, Python's, "
                "the engine's package, the loader's), and a build there holds the reference solutions: build into "
                "dist/ (the default) or a folder of your own outside those (a home folder, /srv/course, /opt/course)")


def places(out: Path, lang: str, *, notebook: bool, zipped: bool, self_study: Path | None = None) -> list[Path]:
    """Where a build writes reference material.

    Args:
        out: ``--out``.
        lang: the build's language (the file names).
        notebook: the solution notebook is written (``OUT/solutions/``, the folder is the build's).
        zipped: the otter zip is written (``OUT/tapetrace-autograder[-LANG].zip``).
        self_study: the self-study edition's folder, where one is built.

    Returns:
        Absolute paths (folders and files), in that order.
    """
    out = Path(os.path.abspath(out))
    found = [solution_notebook_path(out, lang).parent] if notebook else []
    found += [out / zip_name(lang)] if zipped else []
    found += [Path(os.path.abspath(self_study))] if self_study is not None else []
    return found


def _in_checkout_private(place: Path) -> bool:
    """Whether ``place`` lies in the checkout's own private places (``dist/``: kept from workers by name)."""
    real = os.path.realpath(place)
    return any(real == p or real.startswith(p + os.sep) for p in (os.path.realpath(c) for c in checkout_private()))


def check_places(found: list[Path]) -> list[Path]:
    """Refuses a place a student's worker reads whole; records the others outside the checkout's private places.

    Args:
        found: :func:`places`.

    Returns:
        The places recorded (empty when all lie in ``dist/`` or another private place of the checkout).

    Raises:
        BuildError: a place workers read (:data:`MSG_READABLE`) or one holding what they need (:data:`MSG_NEEDED`:
            hiding it would stop them), or the record cannot be read or written (fail closed: nothing is written).
    """
    import tempfile

    from autograder.engine.reading import covers_needed
    from autograder.sandbox.isolate import worker_reads
    from autograder.workers.environment import worker_pythonpath

    extra = worker_pythonpath()[0]
    outside = [p for p in found if not _in_checkout_private(p)]
    for place in outside:
        root = worker_reads(place, extra)
        if root is not None:
            raise BuildError(MSG_READABLE.format(place=place, root=root))
        if covers_needed(str(place), tempfile.gettempdir()):
            raise BuildError(MSG_NEEDED.format(place=place))
    try:
        if outside:
            _record.record(outside)
        else:
            _record.places()  # a damaged record stops every grading: say so now
    except _record.BuildRecordError as err:
        raise BuildError(str(err)) from None
    return outside


def _lock_down(place: Path) -> None:
    """``place`` (where it leads) and everything beneath it owner-only (links beneath are left alone)."""
    place = Path(os.path.realpath(place))
    try:
        st = os.lstat(place)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        os.chmod(place, FOLDER_MODE)
        for root, dirs, files in os.walk(place):
            for name in dirs + files:
                path = os.path.join(root, name)
                mode = os.lstat(path).st_mode
                if stat.S_ISDIR(mode):
                    os.chmod(path, FOLDER_MODE)
                elif stat.S_ISREG(mode):
                    os.chmod(path, FILE_MODE)
    elif stat.S_ISREG(st.st_mode):
        os.chmod(place, FILE_MODE)


@contextmanager
def owner_only(found: list[Path]) -> Iterator[None]:
    """Writes in the block are owner-only: what ``found`` already holds is locked first (an older build's files
    are never written through while others may read them), what is made meanwhile gets no group or other bits
    (umask 077: a folder the build makes on the way to ``--out`` too), and all of ``found`` is locked after.

    Args:
        found: :func:`places`.
    """
    for place in found:
        _lock_down(place)
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)
        for place in found:
            _lock_down(place)
