"""Reading a run's submissions under the reading budget, each in a child process (``submissions.loadguard``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from autograder.core.paths import ROOT
from autograder.submissions import loader as _loader
from autograder.submissions import loadguard as _loadguard


def read_all(paths: list[str], timeout: float) -> list[_loader.Submission | Exception]:
    """Every submission read in a child process under the reading budget (``_loadguard``), in order; a
    submission that cannot be read is its exception (its rows say why), never the end of the batch."""
    subs: list[_loader.Submission | Exception] = []
    with _loadguard.Reader(_loadguard.read_seconds(timeout)) as reader:
        for p in paths:
            try:
                subs.append(reader.load(p))
            except (_loader.SubmissionError, _loadguard.ReaderTrouble) as err:
                subs.append(err)
            except Exception as err:  # noqa: BLE001
                subs.append(_loader.SubmissionError(f"{type(err).__name__}: {err}"))
    return subs


def read_error(err: Exception) -> str | dict[str, Any]:
    """What an unreadable submission's rows say: a catalogued text over the reading budget (rendered in the
    run's language), else the loader's words."""
    if isinstance(err, _loadguard.ReadBudgetExceeded):
        return {"key": err.key, **err.fields}
    return str(err)


def _hideable(path: str, tmp: str) -> list[str]:
    """What of a submission's place to hide from students: its folder (other students' work) if hiding
    it breaks nothing, else the submission itself."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    needed = [str(ROOT), tmp, sys.prefix, sys.base_prefix, os.path.expanduser("~")]
    if any(n == parent or n.startswith(parent.rstrip(os.sep) + os.sep) for n in needed):
        return [path]
    return [parent]
