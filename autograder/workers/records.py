"""Both sides: the worker's records, typed: the spec a worker is started with and its sandbox's settings.

Grader side: :class:`WorkerSpec` is what ``autograder.engine.run_workers`` builds for each worker and hands its
launcher (``launch``: as JSON in the spawned worker's argument, or over the zygote's socket; ``handle`` adds
``load_timeout``). Worker side: ``worker.worker_main`` reads it, and ``sandbox.isolate.apply`` takes
:class:`SandboxSpec` as its keywords. Plain JSON objects (``TypedDict``): the worker imports this module for its
types only (``TYPE_CHECKING``), never at run time (``worker`` ships in the notebook's runtime without it).
Checked by mypy with the grading contract's records (``[tool.mypy]``, tests/test_types.py).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

Role = Literal["student", "reference", "isolation"]
"""Whose code a worker loads: a student's, the reference's, or none (``isolation``: the run's pre-flight)."""


class SandboxSpec(TypedDict):
    """A student's (or the pre-flight's) worker's sandbox: ``autograder.sandbox.isolate.apply``'s keywords."""

    scratch: str
    mem_bytes: int
    fsize_bytes: int
    hide: list[str]
    read: list[str]
    network: bool
    skip: list[str]
    rewritten: list[str]


class WorkerSpec(TypedDict):
    """What a worker is started with (``sandbox`` and ``calibrate``: a student's or the pre-flight's worker
    where the run sandboxes; ``load_timeout``: added by ``handle.Worker`` as it starts one)."""

    exercise: str
    role: Role
    source_path: str
    module_name: str
    device: dict[str, str]
    chip: bool
    jax_cache: str | None
    borrow_compiles: bool
    debug: bool
    needs: str
    sandbox: NotRequired[SandboxSpec]
    calibrate: NotRequired[bool]
    load_timeout: NotRequired[float]
