"""The reference snapshot the notebook carries, as the self-check reads it: ``ctx.reference`` backed by it.

The snapshot (``autograder/_snapshot.json`` in the runtime zip; recorded at build time by
:mod:`autograder.builders.snapshot`) holds the reference solution's probe results on the public checks'
inputs, keyed like the grader's reference cache (:func:`autograder.core.protocol.reference_key`). A value
it lacks means the notebook is out of date (:class:`SnapshotMissing`): never a pass. Also: the datasets
read through the package loader inside the zip. Ships in the notebook's runtime.
"""

from __future__ import annotations

import io
import json
import os
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import Any

from autograder.core import i18n as _i18n
from autograder.core import wire as _wire
from autograder.core.i18n import render
from autograder.core.protocol import reference_key
from autograder.core.suite import CheckFailure

SNAPSHOT = "_snapshot.json"


class SnapshotMissing(CheckFailure):
    """The snapshot holds no reference value for a probe call (stale or edited notebook): never a pass."""

    def __init__(self, probe: str) -> None:
        super().__init__("SNAPSHOT_MISMATCH", probe=probe)
        self.probe = probe

    def message(self, lang: str) -> str:
        """The notebook's own words (what to rebuild or download), not a catalogued message."""
        return _text(lang, "snapshot", probe=self.probe)


def _text(lang: str, key: str, **fields: Any) -> str:
    return render(f"public.{key}", lang, **fields)


@cache
def snapshot() -> dict[str, Any]:
    """The build-time snapshot shipped in the runtime (seed, exercises, reference values)."""
    try:
        raw = pkgutil.get_data("autograder", SNAPSHOT)  # autograder/_snapshot.json, beside the package's __init__
    except OSError:
        raw = None
    if not raw:
        raise RuntimeError(_text(_i18n.get_language(), "no_snapshot"))
    return json.loads(raw)


def _use_packaged_data() -> None:
    """Inside a zip ``_data.DATA_FILE`` is no real file: read the .npz through the package loader."""
    from autograder.core import data as _data

    target = _data.DATA_FILE
    if isinstance(target, (str, os.PathLike)) and os.path.isfile(target):
        return
    if isinstance(target, io.BytesIO):
        return
    raw = pkgutil.get_data("autograder", "data/datasets.npz")
    _data.DATA_FILE = io.BytesIO(raw)
    _data.all_arrays.cache_clear()


def snapshot_reference(exercise: str, values: dict[str, Any]) -> Callable[[str, dict[str, Any]], Any]:
    """``ctx.reference`` backed by the snapshot; a missing key raises :class:`SnapshotMissing`."""

    def reference(probe: str, kwargs: dict[str, Any]) -> Any:
        key = reference_key(exercise, probe, kwargs)
        if key not in values:
            raise SnapshotMissing(probe)
        return _wire.decode(values[key])

    return reference

