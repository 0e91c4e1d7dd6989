"""Reading a run's submissions under the reading budget, each in a child process (``submissions.loadguard``),
and what of their places every student worker must not see (:func:`hide_places`: one function for every path).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from typing import Any

from autograder.core.paths import ROOT
from autograder.submissions import loader as _loader
from autograder.submissions import loadguard as _loadguard

ReadOutcome = _loader.Submission | _loader.SubmissionError | _loadguard.ReaderTrouble
"""What reading one submission gave: the submission, why it cannot be read (the student's), or why the reading
child could not start (the grader's). Every driver reads through :func:`read_one` and decides the rows of an
outcome that is not a submission with :func:`autograder.engine.rows.early_row`."""


def read_one(reader: _loadguard.Reader, path: str) -> ReadOutcome:
    """One submission read by ``reader`` (a child process under the reading budget); never raises.

    Args:
        reader: an open :class:`~autograder.submissions.loadguard.Reader`.
        path: the submission, as given.

    Returns:
        The submission; else the loader's :class:`~autograder.submissions.loader.SubmissionError` (any other
        exception of the reading becomes one, naming its type), or the reader's ``ReaderTrouble``.
    """
    try:
        return reader.load(path)
    except (_loader.SubmissionError, _loadguard.ReaderTrouble) as err:
        return err
    except Exception as err:  # noqa: BLE001 - the submission is unreadable, whatever the reader met
        return _loader.SubmissionError(f"{type(err).__name__}: {err}")


def read_all(paths: list[str], timeout: float) -> list[ReadOutcome]:
    """Every submission read in a child process under the reading budget (``_loadguard``), in order; a
    submission that cannot be read is its exception (its rows say why), never the end of the batch."""
    with _loadguard.Reader(_loadguard.read_seconds(timeout)) as reader:
        return [read_one(reader, p) for p in paths]


def read_error(err: Exception) -> str | dict[str, Any]:
    """What an unreadable submission's rows say: a catalogued text over the reading budget (rendered in the
    run's language), else the loader's words."""
    if isinstance(err, _loadguard.ReadBudgetExceeded):
        return {"key": err.key, **err.fields}
    return str(err)


MAX_HIDE = 256
"""The most places :func:`hide_places` may return: each is a mount in every student worker (its start time)."""

MAX_CARVE = 4096
"""The most places :func:`carve` may return on a Dask worker: the entries of a client's place around the worker's
own temporary folder (a test session's or a shared scratch's siblings, one mount each: 300 cost a worker's start
~10 ms here)."""

# Top-level folders of the system: never hidden whole, and within them nothing above the third level
# (/usr/local/cuda may sit beside /usr/local/class): a class there hides folder by folder.
_SYSTEM = frozenset({"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "nix", "opt", "proc", "run",
                     "sbin", "snap", "sys", "usr", "var"})


class HideRefused(Exception):
    """A run's submissions cannot be kept from each other's workers with at most :data:`MAX_HIDE` places."""


def needed_places(tmp: str, extra: Iterable[str] = ()) -> list[str]:
    """What a student's worker reads or writes on this machine: never hidden, nor any folder holding it.

    Args:
        tmp: the run's folder (its workers' scratch and sources).
        extra: more such places (another machine's, a test's).

    Returns:
        Absolute paths, each also as its real path: the engine, ``tmp`` and the machine's temporary folder,
        Python (its prefixes and every ``sys.path`` entry), the library folders workers are given
        (``TAPETRACE_WORKER_PYTHONPATH``), the home folder, the CUDA and ``LD_LIBRARY_PATH`` folders.
    """
    from autograder.workers.environment import worker_pythonpath

    env = [os.environ.get(k, "") for k in ("CUDA_HOME", "CUDA_PATH")]
    env += os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    env += worker_pythonpath()[0]
    places = [str(ROOT), tmp, tempfile.gettempdir(), sys.prefix, sys.base_prefix, sys.exec_prefix,
              os.path.expanduser("~"), *sys.path, *env, *extra]
    out = [os.path.abspath(p) for p in places if p]
    return list(dict.fromkeys([*out, *(os.path.realpath(p) for p in out)]))


def _holds(folder: str, needed: list[str]) -> bool:
    """Whether ``folder`` (as given, or its real path) is or holds one of ``needed``."""
    for f in dict.fromkeys((folder, os.path.realpath(folder))):
        inside = f.rstrip(os.sep) + os.sep
        if any(n == f or n.startswith(inside) for n in needed):
            return True
    return False


def covers_needed(place: str, tmp: str) -> bool:
    """Whether hiding ``place`` would hide what a student's worker on this machine needs (:func:`needed_places`):
    a Dask worker asks it of the places the client chose."""
    return _holds(os.path.abspath(place), needed_places(tmp))


def carve(places: Iterable[str], tmp: str, extra_needed: Iterable[str] = ()) -> list[str]:
    """Places chosen on another machine (a cluster's client), made safe to hide on this one.

    A place holding nothing this machine's student workers need (:func:`needed_places`) is kept; one that
    holds some (a Dask worker's temporary folder under the client's class folder, say) is replaced by
    its entries that hold none, descending into those that do: everything of it is hidden but the way to
    what a worker needs. Links are never followed (a link's target is hidden where it lies).

    Args:
        places: the places to hide, e.g. the client's :func:`hide_places`.
        tmp: this machine's run folder (see :func:`needed_places`).
        extra_needed: further places no hidden folder may hold.

    Returns:
        The places to hide here, sorted.

    Raises:
        HideRefused: more than :data:`MAX_CARVE` places, or a place that is itself what a worker needs.
    """
    needed = needed_places(tmp, extra_needed)
    out: list[str] = []

    def visit(place: str, top: bool = False) -> None:
        if not _holds(place, needed):
            out.append(place)
            return
        if any(place == n or os.path.realpath(place) == n for n in needed):
            if not top:
                return  # the way to what workers need: left as it is
            raise HideRefused(f"the run hides {place!r}, which this machine's student workers need (its Python, "
                              "the engine, its temporary folder): put the submissions elsewhere")
        try:
            entries = sorted(os.scandir(place), key=lambda e: e.name)
        except OSError:
            return  # nothing to read there: nothing to hide
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                visit(entry.path)
            elif entry.is_file(follow_symlinks=False) and not _holds(entry.path, needed):
                out.append(entry.path)
            if len(out) > MAX_CARVE:
                raise HideRefused(f"hiding {place!r} here, around what this machine's student workers need, "
                                  f"takes more than {MAX_CARVE} places: put the submissions elsewhere")

    for place in places:
        visit(os.path.abspath(place), top=True)
    return sorted(dict.fromkeys(out))


def _may_cover(folder: str, needed: list[str]) -> bool:
    """Whether hiding the whole ``folder`` breaks nothing: not ``/``, not a folder of the system (in its trees,
    only from the third level down), holding nothing a worker needs."""
    parts = [p for p in folder.split(os.sep) if p]
    if not parts or len(parts) < (3 if parts[0] in _SYSTEM else 1):
        return False
    return not _holds(folder, needed)


def _climb(path: str, needed: list[str]) -> str:
    """The highest folder above ``path`` that breaks nothing when hidden (:func:`_may_cover`), or ``path``."""
    place = os.path.abspath(path)
    up = os.path.dirname(place)
    while up != place and _may_cover(up, needed):
        place, up = up, os.path.dirname(up)
    return place


def output_places(outputs: Iterable[str | None], tmp: str, extra_needed: Iterable[str] = ()) -> list[str]:
    """What of a run's own outputs (``--json``, its checkpoint and resume file, ``--csv``, ``--feedback``)
    every student worker must not see: the classmates' scores and feedback, written while the class is graded.

    A folder (``--feedback``) is hidden whole; a file, with its own folder where hiding that folder breaks
    nothing (:func:`_may_cover`), else alone (its folder holds what a worker needs: the engine's checkout, the
    home folder, a ``sys.path`` entry). A file alone is kept out by Landlock (a file made there later is under
    no rule), by the worker's own uid (the results are written owner-only), or by a mount over what exists
    when the worker starts, which a file replaced during the worker's life escapes: the sandbox records that
    (``outputs_readable``, :func:`autograder.sandbox.isolate.apply`'s ``rewritten``) and lowers the level.

    Args:
        outputs: the paths (None where an output is not asked for).
        tmp: the run's folder (see :func:`needed_places`).
        extra_needed: further places no hidden folder may hold.

    Returns:
        The places, sorted, without duplicates.
    """
    needed = needed_places(tmp, extra_needed)
    out: set[str] = set()
    for p in outputs:
        if not p:
            continue
        place = os.path.abspath(p)
        folder = os.path.dirname(place)
        out.add(place if os.path.isdir(place) or not _may_cover(folder, needed) else folder)
    return sorted(out)


def hide_places(paths: Iterable[str], tmp: str, extra_needed: Iterable[str] = ()) -> list[str]:
    """The fewest places that keep a run's submissions from every student worker: one folder for a class.

    Each submission's place climbs to the highest folder above it that breaks nothing when hidden (see
    :func:`needed_places`; never ``/`` nor a folder of the system): a class of any size in folders of its
    own (``class/alice/work.ipynb``...) is one folder; a submission whose own folder holds what a worker
    needs (the engine's, the home folder) is that file or folder alone. Places under another are dropped.

    Args:
        paths: the run's submissions (files or folders).
        tmp: the run's folder (see :func:`needed_places`).
        extra_needed: further places no hidden folder may hold.

    Returns:
        The places, sorted; every submission is at or under one of them.

    Raises:
        HideRefused: more than :data:`MAX_HIDE` places (one line saying why): nothing may be graded, since
            a worker without Landlock would see the submissions past the limit.
    """
    needed = needed_places(tmp, extra_needed)
    places = sorted({_climb(p, needed) for p in paths})
    kept = [p for p in places if not any(p.startswith(q.rstrip(os.sep) + os.sep) for q in places)]
    if len(kept) > MAX_HIDE:
        raise HideRefused(f"{len(kept)} submissions' places would have to be hidden from each student's worker, "
                          f"more than {MAX_HIDE}: put the submissions in a folder of their own (e.g. one folder "
                          "per student under it), away from the engine, Python and the home folder")
    return kept
