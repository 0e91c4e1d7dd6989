"""Grader side: how a grading run is sized to its box (``envelope``): the plan it grades by.

From the :class:`~autograder.workers.envelope.Envelope` read at start, :func:`plan` decides how many
exercises at once (``--jobs``' default and its most), which zygotes (two, one, or none), each student
worker's memory and address-space cap, whether reference workers stay warm between uses, and on which CPUs
the workers run under a quota. A box too small for even one exercise at a time is refused before anything
is graded, with the setting to raise (:class:`Plan`'s ``refuse``). :func:`as_json` is the run's JSON record
of both.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import asdict, dataclass
from typing import Any

from autograder.workers.envelope import GIB, MIB, Envelope, as_record

# Measured (README, "Time, memory and whose trouble it is"; benchmarks/envelope.py): what the grader and
# its zygote hold resident (its anonymous memory: ~315 MiB once torch, Dynamo and the JAX stack are
# imported; the grader ~45 MiB; plus the shared libraries' pages in use), and what an exercise in flight
# adds besides its student's worker (its reference worker's own memory).
BASE_BYTES = 416 * MIB
REFERENCE_BYTES = 96 * MIB
# The least memory a student's worker must be allowed to use beyond its start: the solutions touch less
# than 100 MiB more (a cap of 192 MiB of address space, stacks included, broke three of them; 256 MiB
# passed them all).
MIN_WORKER_BYTES = 160 * MIB
DEFAULT_WORKER_BYTES = 4 * GIB
# A JAX worker also reserves, untouched, a stack per XLA thread (8 MiB each; ~4 threads per CPU it may
# run on, ~12 more): address space the cap must allow (RLIMIT_AS counts it) that uses no memory.
STACK_BYTES = 8 * MIB
# Below this the second (JAX-only) zygote's ~20 MiB are not worth its head start; below the other,
# reference workers are closed once their exercise is graded instead of staying warm for the next one.
PAIR_FROM_BYTES = 2 * GIB
WARM_REFERENCES_FROM_BYTES = 6 * GIB
# A bound on exercises at once whatever the box: beyond it a run's own bookkeeping (a thread per job, a pipe pair
# per worker) is the limit, not the CPUs. Until issue 66 this was 4, which lowered `--jobs 12` on a 13-core host
# to 4 without a word: 4.5x for "12 workers".
MAX_JOBS = 64


@dataclass(frozen=True)
class Plan:
    """How a run grades in an :class:`Envelope`.

    Attributes:
        jobs: exercises graded at once by default (``--jobs``' default).
        max_jobs: the most exercises at once the memory allows (a larger ``--jobs`` is lowered to it).
        launcher: ``pair`` (two zygotes, ``_launch.ZygotePair``), ``zygote`` (the full one only) or ``spawn``.
        worker_memory: the memory a student's worker may use beyond its start at ``jobs``
            (:meth:`worker_memory_at`; its address-space cap adds :meth:`stacks` for a JAX worker).
        keep_references: reference workers stay warm between exercises (else closed after each).
        refuse: why nothing can be graded here, with the setting to raise (None: it fits).
        usable_memory: what the envelope gives (bytes).
        worker_cpus: the CPUs the zygotes and workers run on: a few of the visible ones when a CPU quota
            makes many visible CPUs worth little (XLA sizes its thread pools from them), else None (all).
    """

    jobs: int
    max_jobs: int
    launcher: str
    worker_memory: int
    keep_references: bool
    refuse: str | None
    usable_memory: int
    worker_cpus: tuple[int, ...] | None = None
    cpus: int = 1

    def jobs_for(self, asked: int | None) -> int:
        """The exercises at once a run grades for ``--jobs asked`` (None: the default)."""
        return max(1, min(asked or self.jobs, self.max_jobs or 1))

    def worker_memory_at(self, jobs: int) -> int:
        """A student worker's memory with ``jobs`` exercises at once: its share of what the grader, the
        zygote and the reference workers leave, at most :data:`DEFAULT_WORKER_BYTES`."""
        share = (self.usable_memory - BASE_BYTES) // max(1, jobs) - REFERENCE_BYTES
        return int(min(DEFAULT_WORKER_BYTES, max(MIN_WORKER_BYTES, share)))

    def stacks(self) -> int:
        """Address space a JAX worker reserves for its threads' stacks (untouched: not memory)."""
        cpus = len(self.worker_cpus) if self.worker_cpus else self.cpus
        return STACK_BYTES * (4 * cpus + 12)

    def record(self) -> dict[str, Any]:
        """For the JSON's ``envelope``."""
        return {"jobs": self.jobs, "max_jobs": self.max_jobs, "launcher": self.launcher,
                "worker_memory": self.worker_memory, "keep_references": self.keep_references,
                "worker_cpus": len(self.worker_cpus) if self.worker_cpus else self.cpus}


def plan(env: Envelope, fork: bool = True) -> Plan:
    """Plans a run from its envelope.

    Args:
        env: what this process may use.
        fork: whether workers can be forked from a zygote (False: each is spawned).

    Returns:
        The :class:`Plan`; ``refuse`` says why and what to raise when one exercise at a time does not fit.
    """
    usable = env.usable_memory
    slot = REFERENCE_BYTES + MIN_WORKER_BYTES
    max_jobs = max(0, min(MAX_JOBS, (usable - BASE_BYTES) // slot)) if usable else MAX_JOBS
    jobs_cpu = max(1, min(MAX_JOBS, int(env.usable_cpus)))
    refuse = None
    if usable and max_jobs < 1:
        need = BASE_BYTES + slot
        refuse = (f"this machine gives the grader {usable / MIB:.0f} MiB of memory"
                  f"{' (its container limit)' if env.memory_bytes is not None else ''}; grading needs at least "
                  f"{need / MIB:.0f} MiB (one exercise at a time): raise the memory limit (docker run --memory "
                  f"{-(-need // MIB)}m, Kubernetes resources.limits.memory, Gradescope's autograder memory setting)")
    if env.foreign_proc:  # every measure of a worker reads /proc/PID: there another process's
        refuse = ("/proc here is another PID namespace's (its /proc/self is not the grader): a worker's time, "
                  "processes and threads cannot be read; give the container its own /proc (docker run without "
                  "binding the host's /proc, or mount -t proc proc /proc in the grader's namespace)")
    jobs = max(1, min(jobs_cpu, max_jobs))
    launcher = "spawn" if not fork else ("pair" if usable >= PAIR_FROM_BYTES else "zygote")
    # a worker computes on one thread: a student's and a reference's per exercise at once need no more CPUs
    # than these; fewer visible CPUs mean fewer XLA threads (memory, and address space under the cap)
    want = max(2, 2 * max(1, max_jobs), math.ceil(2 * env.usable_cpus) if env.cpu_quota else 0)
    cpus = None
    if env.cpu_quota and len(env.affinity) > want:
        cpus = tuple(sorted(random.Random(os.getpid()).sample(sorted(env.affinity), want)))
    out = Plan(jobs=jobs, max_jobs=max(1, max_jobs), launcher=launcher, worker_memory=0,
               keep_references=usable >= WARM_REFERENCES_FROM_BYTES, refuse=refuse, usable_memory=usable,
               worker_cpus=cpus, cpus=env.cpus)
    return Plan(**{**asdict(out), "worker_memory": out.worker_memory_at(jobs)})


def as_json(env: Envelope, the_plan: Plan, jobs: int) -> dict[str, Any]:
    """The ``envelope`` record of a run's JSON: the limits read, and the plan at the ``jobs`` it used."""
    rec = as_record(env)
    rec["plan"] = {**the_plan.record(), "jobs": jobs, "worker_memory": the_plan.worker_memory_at(jobs)}
    return rec
