"""What the grader and the notebook self-check share (light: numpy and the wire only).

- :func:`reference_key`: the key of a reference probe result (the engine's
  per-run cache and the notebook's build-time snapshot use the same one);
- :func:`check_rng`: the random generator a check draws its inputs from;
- :func:`probe_error`: a worker's failed probe response -> :class:`StudentProblem` (always: what a
  student's worker says is never the grader's trouble, docs/security.md "Whose trouble").

The engine imports these; the public runtime shipped in the student notebook
imports them too, so both judge a probe's outcome the same way.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

import numpy as np

from autograder.core import wire as _wire
from autograder.core.suite import StudentProblem

# a probe that gave no usable answer: its worker said "internal" (no such probe, a value it could not send) or
# anything else; the student's code can forge that, so it is the student's failure (the grader checks its own
# side by running the check with the reference standing in: autograder/engine/whose.py)
NO_ANSWER = "PROBE_NO_ANSWER"


def reference_key(exercise: str, probe: str, kwargs: dict[str, Any]) -> str:
    """Hex key of one reference probe call: exercise, probe name and the encoded inputs."""
    blob = json.dumps([exercise, probe, _wire.encode(kwargs)], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


def check_rng(seed: int, exercise: str, check: str) -> np.random.Generator:
    """The generator of one check in one run: depends on the run's seed and the check only."""
    return np.random.default_rng([seed, zlib.crc32(exercise.encode()), zlib.crc32(check.encode())])


def memory_words(n: int) -> str:
    """A memory size as a student reads it: ``4 GiB``, ``320 MiB``."""
    if n >= 1024**3 and n % (1024**3 // 4) == 0:
        return f"{n / 1024**3:g} GiB"
    return f"{n / 1024**2:.0f} MiB"


def probe_error(resp: dict[str, Any], call: str | dict[str, Any], mem_bytes: int) -> StudentProblem:
    """Turns a worker's failed probe response into the student-facing problem.

    Args:
        resp: the response of ``_worker.run_probe`` (``ok`` is False).
        call: the human-readable call, for messages: code, or a catalogued label (``core.i18n.label``).
        mem_bytes: the memory cap, for the out-of-memory message.

    Returns:
        The problem; a response the grader cannot place (``internal``, an unknown kind) is
        :data:`NO_ANSWER`, never the grader's trouble: a student's worker can send any response.
    """
    kind = resp.get("kind")
    if kind == "not_attempted":
        return StudentProblem("NOT_ATTEMPTED", where=resp.get("where", call))
    if kind == "fail":
        fields = dict(resp.get("fields") or {})
        fields.setdefault("call", call)
        return StudentProblem(resp.get("code", "CALL_EXCEPTION"), **fields)
    if kind == "memory":
        return StudentProblem("CALL_MEMORY", call=call, cap=memory_words(mem_bytes))
    if kind == "exit":
        return StudentProblem("CALL_EXIT", call=call)
    if kind == "exception":
        if resp.get("type") == "MemoryError":
            return StudentProblem("CALL_MEMORY", call=call, cap=memory_words(mem_bytes))
        err = f"{resp.get('type')}: {resp.get('message')}" if resp.get("message") else str(resp.get("type"))
        return StudentProblem("CALL_EXCEPTION", call=call, error=err, where=resp.get("where", ""))
    return StudentProblem(NO_ANSWER, call=call)
