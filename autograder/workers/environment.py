"""Both sides: the environment workers and zygotes start with: one thread each, XLA's flags, the planned CPUs.

Grader side: :func:`worker_env`, :func:`worker_pythonpath`, :func:`unseen_libraries`, :func:`unseen_note` and
:func:`start_notes`. Worker side: :func:`keep_to_planned_cpus` (a zygote's or a spawned worker's first call).

:func:`worker_env` is the environment a launcher (``launch``) or a library check (``fingerprint``) gives
the processes it starts; :func:`keep_to_planned_cpus` is the first thing a zygote or a spawned worker
runs, so that it stays on the CPUs the run's plan (``sizing``) chose.

A worker's ``PYTHONPATH`` is the engine's folder, not the grader's: libraries the grader finds through its
own ``PYTHONPATH`` (a TPU host's, an HPC module system's) are not there, and every exercise would be graded
``grader_error`` ("cannot import jax"). :func:`unseen_libraries` finds them before a run (one small process set
up as a worker, asked where it finds each library), and :func:`unseen_note` says so on the run's first line;
the instructor installs them in the grader's Python (a venv) or names their folders in
``TAPETRACE_WORKER_PYTHONPATH`` (:func:`worker_pythonpath`: absolute library folders that neither hold nor lie
in the engine's checkout; docs/security.md, "What a worker may read").
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import json
import mmap
import os
import subprocess
import sys
from dataclasses import dataclass

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
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *worker_pythonpath(env)[0]])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    return env


# The instructor's way to give workers library folders outside the grader's Python (its own PYTHONPATH is
# not passed on): folders separated by os.pathsep, appended to the workers' PYTHONPATH after the engine's.
WORKER_PYTHONPATH = "TAPETRACE_WORKER_PYTHONPATH"
# The libraries grading imports: where a worker would not find one the grader finds, the run says so first.
GRADING_LIBRARIES = ("numpy", "torch", "jax", "flax", "optax")


def worker_pythonpath(environ: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """The folders of ``TAPETRACE_WORKER_PYTHONPATH`` workers get, and why any other is left out.

    A worker may read and import from each (as from site-packages), so only an absolute, existing folder that
    neither is, holds nor lies inside the engine's checkout (its solutions, hidden suites, tests) is taken.

    Args:
        environ: the grader's environment (default ``os.environ``).

    Returns:
        ``(folders, refusals)``: the folders kept, in order; one line per folder left out, saying why.
    """
    text = (os.environ if environ is None else environ).get(WORKER_PYTHONPATH, "")
    root = os.path.realpath(ROOT)
    kept: list[str] = []
    refused: list[str] = []
    for entry in (e for e in text.split(os.pathsep) if e.strip()):
        real = os.path.realpath(entry)
        if not os.path.isabs(entry):
            refused.append(f"{entry}: not an absolute path")
        elif not os.path.isdir(real):
            refused.append(f"{entry}: not a folder")
        elif real == root or real.startswith(root + os.sep) or root.startswith(real.rstrip(os.sep) + os.sep):
            refused.append(f"{entry}: holds or lies in the engine's checkout ({ROOT}), whose private files workers "
                           "must not read")
        elif real not in kept:
            kept.append(real)
    return kept, refused


@dataclass(frozen=True)
class Unseen:
    """A library the grader imports from ``here`` (a folder) that a worker finds at ``worker`` (None: nowhere)."""

    library: str
    here: str
    worker: str | None


_WHERE = ("import importlib.util, json, sys\n"
          "out = {}\n"
          "for name in sys.argv[1:]:\n"
          "    try:\n"
          "        out[name] = getattr(importlib.util.find_spec(name), 'origin', None)\n"
          "    except Exception:\n"
          "        out[name] = None\n"
          "print(json.dumps(out))\n")


def _folder(origin: str | None) -> str | None:
    """The folder holding a package (``.../site-packages`` for ``.../site-packages/jax/__init__.py``)."""
    if not origin:
        return None
    path = os.path.dirname(os.path.realpath(origin))
    return os.path.dirname(path) if os.path.basename(origin).startswith("__init__.") else path


def unseen_libraries(libraries: tuple[str, ...] = GRADING_LIBRARIES, timeout: float = 60.0) -> list[Unseen]:
    """The grading libraries a worker would import from elsewhere than the grader, or not at all.

    The grader's places come from ``importlib.util.find_spec`` here (nothing is imported); a worker's from one
    small process started as a launcher starts one (this interpreter, :func:`worker_env`, the engine's folder).
    A library the grader itself lacks is not reported here (the run reports it).

    Returns:
        One :class:`Unseen` per such library (empty when the check cannot run: the run reports what fails).
    """
    here: dict[str, str] = {}
    for name in libraries:
        try:
            folder = _folder(getattr(importlib.util.find_spec(name), "origin", None))
        except (ImportError, ValueError):
            folder = None
        if folder:
            here[name] = folder
    if not here:
        return []
    try:
        proc = subprocess.run([sys.executable, "-c", _WHERE, *here], capture_output=True, text=True,
                              env=worker_env(), cwd=str(ROOT), timeout=timeout, stdin=subprocess.DEVNULL)
        theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return []
    out = []
    for name, folder in here.items():
        worker = _folder(theirs.get(name))
        if worker != folder:
            out.append(Unseen(name, folder, worker))
    return out


def start_notes() -> list[str]:
    """The lines a run starts with about its workers' libraries: :func:`unseen_note`, and each folder of
    ``TAPETRACE_WORKER_PYTHONPATH`` left out (:func:`worker_pythonpath`)."""
    refused = [f"{WORKER_PYTHONPATH}: left out {why}" for why in worker_pythonpath()[1]]
    return [line for line in (unseen_note(), *refused) if line]


def unseen_note(found: list[Unseen] | None = None) -> str:
    """One line for the run's start when workers would not import the grader's libraries ("" when they would).

    Args:
        found: from :func:`unseen_libraries` (default: measured now).
    """
    found = unseen_libraries() if found is None else found
    if not found:
        return ""
    path = [os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    folders = list(dict.fromkeys(u.here for u in found))
    how = " (through PYTHONPATH)" if all(f in path for f in folders) else ""
    theirs = "; ".join(f"{u.library} from {u.worker}" if u.worker else f"{u.library} from nowhere" for u in found)
    return (f"grading workers will not import the grader's {', '.join(u.library for u in found)}: the grader imports "
            f"them from {', '.join(folders)}{how}, while workers, whose PYTHONPATH is the engine's folder"
            f"{' and ' + WORKER_PYTHONPATH + chr(39) + 's' if worker_pythonpath()[0] else ''}, would import {theirs}: "
            "every exercise would be graded grader_error (\"cannot import ...\") or against other versions. "
            "Install the libraries in the Python that runs tapetrace (a virtual environment), or name their "
            f"folders in {WORKER_PYTHONPATH} (docs/troubleshooting.md)")
