"""The environment workers and zygotes start with: one thread each, XLA's compile flags, the planned CPUs.

:func:`worker_env` is the environment a launcher (``launch``) or a library check (``fingerprint``) gives
the processes it starts; :func:`keep_to_planned_cpus` is the first thing a zygote or a spawned worker
runs, so that it stays on the CPUs the run's plan (``sizing``) chose.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import mmap
import os

from autograder.core.paths import ROOT
from autograder.workers import envelope as _envelope
from autograder.workers import sizing as _sizing

# XLA's compile options for a CPU run. Grading compiles hundreds of small programs per exercise
# (eager ops at new shapes, jitted student functions) that then run a few times, so compile time
# is most of a submission's cost. LLVM at level 0 and XLA's classic elemental emitters instead of
# its MLIR fusion emitters cut it ~45% (a lone submission's XLA compile 22.3 -> ~12 CPU-s; see
# benchmarks/profile_lone.py); the few compute-heavy loops the probes jit themselves ask for level 2
# back (``compiler_options``, see _probing.FAST_RUN). Reference and student run under the same
# flags, so verdicts compare like with like; neither flag relaxes floating-point semantics.
CPU_COMPILE_FLAGS: tuple[str, ...] = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


@functools.lru_cache(maxsize=1)
def _xla_knows() -> frozenset[str]:
    """The flags of :data:`CPU_COMPILE_FLAGS` this jaxlib's XLA defines (their names are in its binaries).

    XLA aborts the process on a flag it does not know, and pyproject.toml admits older jaxlibs than
    the one these were measured with: an unknown one is left out rather than crash every JAX worker.
    Reads jaxlib's shared libraries without importing jaxlib (~20 ms).
    """
    names = {f.split("=")[0].lstrip("-").encode(): f for f in CPU_COMPILE_FLAGS}
    found: set[str] = set()
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.origin:
        return frozenset()
    for lib in glob.glob(os.path.join(os.path.dirname(spec.origin), "**", "*.so"), recursive=True):
        try:
            with open(lib, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mem:
                for name, flag in names.items():
                    if flag not in found and mem.find(name) != -1:
                        found.add(flag)
        except (OSError, ValueError):  # unreadable, or empty (mmap of 0 bytes)
            continue
    return frozenset(found)


CPUS_ENV = "TAPETRACE_WORKER_CPUS"


def keep_to_planned_cpus() -> None:
    """Run on the CPUs :func:`worker_env` names (a zygote or a spawned worker calls it first thing)."""
    text = os.environ.get(CPUS_ENV, "")
    if text and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {int(c) for c in text.split(",")})
        except (OSError, ValueError):
            pass


def worker_env(cpu_jax: bool = True) -> dict[str, str]:
    """Environment for workers and the zygote: one thread each, quiet XLA.

    Args:
        cpu_jax: the run's JAX device is the CPU (adds :data:`CPU_COMPILE_FLAGS`; a GPU/TPU run
            keeps XLA's defaults, whose kernels matter there).
    """
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    # Ours go first and every one is a ``--flag``: XLA's parser stops at the first token that is not,
    # silently ignoring all after it (a bare ``intra_op_parallelism_threads=1`` once sat before
    # CPU_COMPILE_FLAGS here and switched level 0 off). The user's own flags follow, unchanged.
    user = env.get("XLA_FLAGS", "").split()
    ours = []
    if not any(f.startswith("--xla_cpu_multi_thread_eigen") for f in user):
        ours.append("--xla_cpu_multi_thread_eigen=false")
    if cpu_jax:
        known = _xla_knows()
        ours += [f for f in CPU_COMPILE_FLAGS
                 if f in known and not any(u.startswith(f.split("=")[0] + "=") for u in user)]
    env["XLA_FLAGS"] = " ".join([*ours, *user])
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    # On a GPU box a student's and the reference's JAX workers (and torch in the same worker) share
    # one GPU: JAX's default preallocation of 75% of its memory per process would starve the others.
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    # glibc gives each thread that mallocs its own 64 MiB arena: XLA's ~15 threads reserve ~1 GiB of
    # address space a worker never touches, which a memory cap on address space (_sandbox) would have
    # to allow. Two arenas keep the reservation near what is used (measured: see _sizing.plan).
    env.setdefault("MALLOC_ARENA_MAX", "2")
    # under a CPU quota, a few of the visible CPUs (_sizing.plan): XLA sizes its thread pools from them
    cpus = _sizing.plan(_envelope.current()).worker_cpus
    if cpus:
        env[CPUS_ENV] = ",".join(map(str, cpus))
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env
