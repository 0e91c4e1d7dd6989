"""What grading one exercise may use of its run (:class:`ExerciseHost`): :class:`~autograder.engine.exercise.
ExerciseGrading` sees only it, never the run (``GradingRun.host`` makes it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.engine import whose as _whose
from autograder.workers import handle as _handle
from autograder.workers.envelope import Envelope


@dataclass(frozen=True)
class ExerciseHost:
    """What grading one exercise needs of its run, and nothing more (:meth:`GradingRun.host` makes it).

    Attributes:
        lang: the messages' language.
        public_only: whether the run grades the public checks only.
        seed: the run's seed (each check's rng).
        device: the run's resolved device.
        timeout: seconds for a load and for each call (a check scales it).
        mem_bytes: a student worker's memory cap (its MemoryError's words).
        tmp: the run's folder: the student's source is written to a private folder in it.
        envelope: the box the run grades in (an OOM kill's words).
        start_worker: ``(exercise, source_path, role, hide_extra)``: a worker that loaded ``source_path``.
        scratch_id: a number no other scratch folder of the run has.
        note_isolation: keeps the isolation a student's worker obtained (the run keeps the weakest).
        reference_call: ``(exercise, probe, kwargs)``: the reference's answer (cached per run).
        fresh_reference: ``(exercise)``: the reference run again, fresh (:class:`~autograder.engine.whose.StandIn`).
        library_trouble: ``(exercise)``: a library the reference needs that cannot be imported here, or None.
        on_chip: the exercise's workers open the run's TPU chip (``--device tpu``, :mod:`autograder.engine.chip`):
            one of them at a time, so the student's worker is closed before the reference runs again.
    """

    lang: str
    public_only: bool
    seed: int
    device: dict[str, str]
    timeout: float
    mem_bytes: int
    tmp: str
    envelope: Envelope
    start_worker: Callable[..., _handle.Worker]
    scratch_id: Callable[[], int]
    note_isolation: Callable[[dict[str, Any]], None]
    reference_call: Callable[[str, str, dict[str, Any]], Any]
    fresh_reference: Callable[[str], _whose.StandIn]
    library_trouble: Callable[[str], str | None]
    on_chip: bool = False
