"""The one way in: a submission path -> the source text of each exercise.

Supported forms (docs/grading-contract.md, "Submissions"):
- a directory holding ``exNN_*.py`` files (or one sub-folder that does);
- a single ``.py``: named like an exercise it is that exercise; any other
  name is taken as the whole submission (every exercise reads the same file);
- a single ``.py`` in jupytext's "percent" format (``# %%`` cells) with exercise
  sections: split like the notebook it was made from;
- a notebook: each exercise's *graded module* is its section (the code cells
  under its template heading, and cells carrying its metadata) plus, as
  context, what "Run all" gives it from the cells above (see
  :mod:`autograder.submissions.cells`, which does the splitting). Only code cells'
  sources are read (outputs are ignored), so notebooks get a larger size cap
  than ``.py`` files;
- a ``.zip`` of any of these (at the top or inside one folder), extracted
  with limits on size and entry count.

Every text a submission yields is decoded and made safe once, here and in :mod:`autograder.submissions.cells`
(:func:`autograder.core.text_intake.normalise_source`): a ``.py`` file's bytes in its encoding (a byte order
mark, a ``coding:`` line, else UTF-8; Windows-1252 for a file that is not UTF-8 at all), each notebook cell's
source; a lone surrogate or a NUL becomes U+FFFD and is recorded in the graded module's trailer, where the
worker fails that exercise's load with it (the student's error, as "Run all" fails that cell).

Student code is never executed here: this only reads text.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.paths import EXERCISES
from autograder.core.registry import contracts
from autograder.core.text_intake import decode_source, normalise_source
from autograder.submissions import cells as _cells
from autograder.submissions.cells import hoist_future_imports  # noqa: F401 - re-exported

MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_ZIP_ENTRIES = 500
MAX_SOURCE_BYTES = 2 * 1024 * 1024  # a .py file
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024  # a notebook: mostly outputs (images), which are not read


class SubmissionError(Exception):
    """The submission cannot be read at all (bad path, corrupt zip, bad JSON)."""


@dataclass
class Submission:
    """Source text per exercise; None where the submission has none.

    ``refused`` maps the exercises whose file the loader would not read (a link, a special file) to
    ``(file name, kind key)``, or could not read (``FILE_TOO_LARGE``, ``FILE_UNREADABLE``: a message key of
    its own); those score 0 with a message saying so, the other exercises are graded.
    """

    path: str
    sources: dict[str, str | None] = field(default_factory=dict)
    form: str = "directory"
    refused: dict[str, tuple[str, str]] = field(default_factory=dict)


class Refused(Exception):
    """A file of the submission that the loader does not read; ``kind`` is a message key (``KIND_LINK``...)."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(f"{name}: {kind}")
        self.name = name
        self.kind = kind


_KINDS = ((stat.S_ISLNK, "KIND_LINK"), (stat.S_ISFIFO, "KIND_FIFO"), (stat.S_ISSOCK, "KIND_SOCKET"),
          (stat.S_ISCHR, "KIND_DEVICE"), (stat.S_ISBLK, "KIND_DEVICE"), (stat.S_ISDIR, "KIND_FOLDER"))


def _kind(st: os.stat_result) -> str | None:
    """The message key of what a non-regular file is (None for a regular file)."""
    for test, key in _KINDS:
        if test(st.st_mode):
            return key
    return None if stat.S_ISREG(st.st_mode) else "KIND_OTHER"


def read_regular_text(path: Path, limit: int = MAX_SOURCE_BYTES, follow: bool = False) -> str:
    """The text of a regular file, never through a link (unless ``follow``: a path the instructor gave).

    Opened without following a final symbolic link and without blocking (a FIFO would wait forever),
    then checked to be a regular file: the grader itself must not read what a link points to.

    Args:
        path: The file.
        limit: The most bytes it may hold.
        follow: Follow a final symbolic link (only for a path the instructor gave).

    Returns:
        Its text, decoded (:func:`autograder.core.text_intake.decode_source`: a byte order mark, a ``coding:``
        line, else UTF-8); it may still hold NUL (:func:`module_text` makes a module's text safe).

    Raises:
        Refused: it is a link, a FIFO, a device, a socket or a folder.
        SubmissionError: it is too large.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ELOOP or (not follow and os.path.islink(path)):
            raise Refused(path.name, "KIND_LINK") from None
        raise
    kind = _kind(os.fstat(fd))
    if kind:
        os.close(fd)
        raise Refused(path.name, kind)
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fd).st_size > limit:
            raise SubmissionError(f"{path.name} is larger than {limit // (1024 * 1024)} MB")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise SubmissionError(f"{path.name} is larger than {limit // (1024 * 1024)} MB")
    return decode_source(data)[0]


def module_text(text: str) -> str:
    """A whole file's text as its exercise's graded module: made safe (:func:`autograder.core.text_intake.normalise_source`),
    with a trailer recording where Python could not read it (the exercise's load fails there)."""
    safe = normalise_source(text)
    return _cells.with_faults(safe.text, safe.faults)


def _entries(path: Path) -> list[os.DirEntry]:
    """A folder's entries (never following links)."""
    with os.scandir(path) as it:
        return sorted(it, key=lambda e: e.name)


def _from_dir(path: Path) -> Submission:
    entries = _entries(path)
    files = {Path(e.name).stem: e for e in entries if e.name.endswith(".py") and Path(e.name).stem in EXERCISES}
    if not files:
        notebooks = [e for e in entries if e.name.endswith(".ipynb")]
        subdirs = [e for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith((".", "__"))]
        if len(notebooks) == 1:
            return _from_notebook(Path(notebooks[0].path))
        if len(subdirs) == 1 and not notebooks:
            return _from_dir(Path(subdirs[0].path))
        linked = [e for e in entries if e.is_symlink() and not e.name.startswith((".", "__"))]
        if not notebooks and not subdirs and linked:
            return _refused_all(str(path), Refused(linked[0].name, "KIND_LINK"))
    sub = Submission(str(path), dict.fromkeys(EXERCISES))
    for ex, entry in files.items():  # a file that cannot be read costs its own exercise only
        try:
            sub.sources[ex] = module_text(read_regular_text(Path(entry.path)))
        except Refused as err:
            sub.refused[ex] = (err.name, err.kind)
        except SubmissionError:
            sub.refused[ex] = (entry.name, "FILE_TOO_LARGE")
        except OSError:
            sub.refused[ex] = (entry.name, "FILE_UNREADABLE")
    return sub


def _refused_all(path: str, err: Refused, form: str = "directory") -> Submission:
    """A submission whose one file (a notebook, a folder) was refused: every exercise says so."""
    return Submission(path, dict.fromkeys(EXERCISES), form, dict.fromkeys(EXERCISES, (err.name, err.kind)))


def notebook_sources(nb: dict) -> dict[str, str | None]:
    """Each exercise's section of a notebook, without context (see :mod:`autograder.submissions.cells`)."""
    try:
        return _cells.sections(_cells.notebook_cells(nb, EXERCISES), EXERCISES)
    except ValueError as err:
        raise SubmissionError(str(err)) from None


def _graded(cells: list[_cells.Cell]) -> dict[str, str | None]:
    """Each exercise's graded module: its section, with the context and later redefinitions "Run all" gives it."""
    return _cells.graded_sources(cells, EXERCISES, contracts=contracts(EXERCISES))


def _from_notebook(path: Path, follow: bool = False) -> Submission:
    try:
        text = read_regular_text(path, MAX_NOTEBOOK_BYTES, follow=follow)
    except Refused as err:
        return _refused_all(str(path), err, "notebook")
    try:
        nb = json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise SubmissionError(f"{path.name} is not a valid notebook: {err}") from None
    if not isinstance(nb, dict):
        raise SubmissionError(f"{path.name} is not a valid notebook")
    try:
        cells = _cells.notebook_cells(nb, EXERCISES)
    except ValueError as err:
        raise SubmissionError(f"{path.name}: {err}") from None
    return Submission(str(path), _graded(cells), "notebook")


def _from_percent(path: str, text: str) -> Submission | None:
    """A jupytext percent script split like its notebook; None when it has no exercise section."""
    sources = _graded(_cells.percent_cells(text, EXERCISES))
    if all(v is None for v in sources.values()):
        return None
    return Submission(path, sources, "percent")


def _from_zip(path: Path) -> Submission:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise SubmissionError(f"{path.name} is not a readable zip: {err}") from None
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX")]
        if len(infos) > MAX_ZIP_ENTRIES or sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
            raise SubmissionError(f"{path.name} is too large to be a submission")
        with tempfile.TemporaryDirectory(prefix="tapetrace-zip-") as tmp:
            root = Path(tmp)
            refused: dict[str, str] = {}  # entry name -> kind key
            for info in infos:
                name = Path(info.filename)
                if name.is_absolute() or ".." in name.parts or len(name.parts) > 3:
                    continue
                if name.suffix not in (".py", ".ipynb"):
                    continue
                mode = info.external_attr >> 16
                kind = _kind(os.stat_result((mode,) + (0,) * 9)) if stat.S_IFMT(mode) else None
                if kind:  # a link (or a FIFO, a device) stored in the zip: recorded, never written out
                    refused[name.name] = kind
                    continue
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
            sub = _from_dir(root)
            for entry, kind in refused.items():
                stem = Path(entry).stem
                if stem in EXERCISES and sub.sources.get(stem) is None:
                    sub.refused[stem] = (entry, kind)
                elif entry.endswith(".ipynb") and all(v is None for v in sub.sources.values()):
                    sub = _refused_all(str(path), Refused(entry, kind))
            sub.path = str(path)
            sub.form = "zip"
            return sub


def load(path_str: str) -> Submission:
    """Reads a submission in any supported form.

    Args:
        path_str: a directory, ``.py``, ``.ipynb`` or ``.zip`` path.

    Returns:
        A :class:`Submission` with one source (or None) per exercise.

    Raises:
        SubmissionError: the path does not exist or cannot be read.
    """
    path = Path(path_str)
    if not path.exists():
        raise SubmissionError(f"{path_str}: no such file or directory")
    try:
        if path.is_dir():
            sub = _from_dir(path)
        elif path.suffix == ".ipynb":
            sub = _from_notebook(path, follow=True)
        elif path.suffix == ".zip":
            sub = _from_zip(path)
        elif path.suffix == ".py":
            text = read_regular_text(path, follow=True)
            module = module_text(text)
            if path.stem in EXERCISES:
                sub = Submission(str(path), {ex: (module if ex == path.stem else None) for ex in EXERCISES}, "file")
            else:  # a percent script's cells are made safe one by one (autograder.submissions.cells)
                sub = (_cells.is_percent_script(text) and _from_percent(str(path), text)) \
                    or Submission(str(path), dict.fromkeys(EXERCISES, module), "script")
        else:
            raise SubmissionError(f"{path.name}: expected a directory, .py, .ipynb or .zip")
    except Refused as err:  # the path the instructor gave is itself a FIFO, a device...
        raise SubmissionError(f"{path_str}: not a regular file ({err.kind})") from None
    except OSError as err:
        raise SubmissionError(f"{path_str}: {err.strerror or err}") from None
    sub.path = path_str
    return sub
