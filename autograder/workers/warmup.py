"""Both sides: what a zygote imports and warms before it forks: paid once per run, never in each worker.

Grader side: :func:`needs_arg` (the launcher's ``--needs``), and the lists (:data:`PRELOAD`) and :func:`failure`
read by a library check (``fingerprint``). Worker side: everything else, run in a zygote or a worker
(:func:`parse_needs`, :func:`planned`, :func:`preload`, :func:`warm_torch`, :func:`warm_dynamo_once`,
:func:`settle`...).

The import lists (:data:`PRELOAD`, :data:`JAX_ONLY`, :data:`TORCH_STAGE`, and :func:`planned`: the part of
them a run's exercises need), the warm-ups that pay a
worker's first optimizer step and first ``torch.compile`` once (:func:`warm_torch`, :func:`warm_dynamo`)
and the garbage collector's freeze once all is in (:func:`settle`). The modules every worker runs are imported
by the zygote itself (``zygote.worker_modules``): the worker imports this module (:func:`warm_dynamo_once`), so
this one imports nothing of the worker's. Everything stays fork-safe: CPU only, one thread, no CUDA context. The zygote itself
(``zygote``) decides when each runs.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import tempfile
from typing import Any

# What the full zygote imports (and what a host's import check tries: ``fingerprint.ImportCheck``).
PRELOAD = ("numpy", "torch", "torch._dynamo", "jax", "jax.numpy", "flax.linen", "optax")
# ``--jax-only``: a second zygote, started beside the first, that imports only this (~0.8 s) and
# serves the JAX-only exercises (``needs: "jax"``) while the first one is still importing PyTorch.
JAX_ONLY = ("numpy", "jax", "jax.numpy", "flax.linen", "optax")
# Imported first: the PyTorch-only exercises (``needs: "torch"``) are forked as soon as these are
# in, on the other core, while the zygote goes on importing the JAX stack (~2.5 s on CPU).
# torch._dynamo (torch.compile, ex11: ~1.3 s to import) is paid here once, not in every ex11 worker.
TORCH_STAGE = ("numpy", "torch", "torch._dynamo")
# What each need of a run's plan (``autograder.core.registry.zygote_needs``) adds to numpy.
_BY_NEED = {"torch": ("torch",), "dynamo": ("torch._dynamo",), "compile": ("torch._dynamo",), "jax": JAX_ONLY[1:]}
ALL_NEEDS = frozenset(_BY_NEED)


def planned(needs: frozenset[str] | set[str]) -> tuple[str, ...]:
    """The part of :data:`PRELOAD` a zygote planned for ``needs`` imports (``"torch"``, ``"jax"``, ``"dynamo"``:
    ``torch._dynamo``; ``"compile"``: the same, warmed by :func:`warm_dynamo`), in :data:`PRELOAD`'s order.
    All of them: :data:`PRELOAD` itself."""
    wanted = {"numpy", *(m for need in needs for m in _BY_NEED.get(need, ()))}
    return tuple(m for m in PRELOAD if m in wanted)


def parse_needs(text: str | None) -> frozenset[str]:
    """``--needs`` of a zygote's command line (``"torch,compile"``; ``""``: nothing) -> a set; None: all."""
    if text is None:
        return ALL_NEEDS
    return frozenset(n for n in text.split(",") if n in ALL_NEEDS)


def needs_arg(needs: frozenset[str] | set[str]) -> str:
    """The inverse of :func:`parse_needs`."""
    return ",".join(sorted(set(needs) & ALL_NEEDS))


def imported() -> list[str]:
    """The modules of :data:`PRELOAD` this process holds (what a zygote reports once it is ready)."""
    return [m for m in PRELOAD if m in sys.modules]


def forget_temp_dir(inductor_dir: str | None) -> None:
    """After the imports: tempfile's cached folder dropped, ``TORCHINDUCTOR_CACHE_DIR`` back to unset when it was
    (``inductor_dir``: its value before the imports). ``torch._dynamo``'s import fixes both under /tmp; a
    sandboxed worker may not write there: each worker finds its own from its TMPDIR (a worker that imports
    Dynamo itself, after the fork, does the same: ``ex11``'s probes, the sandbox)."""
    tempfile.tempdir = None
    if inductor_dir is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)


def failure(err: BaseException) -> str:
    """What stopped an import, in one line: ``"ModuleNotFoundError: No module named 'flax'"`` (grader-side facts)."""
    text = str(err)
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"


def preload(names: tuple[str, ...] | list[str], between: Any = None) -> dict[str, str]:
    """Imports ``names`` in order; one that fails (a framework not installed) is skipped, and reported.

    Args:
        names: module names.
        between: called before each import (the full zygote forks waiting requests there), or None.

    Returns:
        ``{module: failure(err)}`` for each one that did not import (the zygote's "ready" events carry it:
        a Dask worker's admission reads it instead of importing everything again, ``fingerprint.ImportCheck``).
    """
    failed = {}
    for name in names:
        if between is not None:
            between()
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 - a missing optional framework is fine
            failed[name] = failure(err)[:2000]
    return failed


def warm_torch(optimizer: bool = True) -> None:
    """Pays once what the first optimizer/backward costs in every worker (~800 modules).

    Stays fork-safe: CPU only, one thread, no CUDA context (checked by a test).

    Args:
        optimizer: an Adam step too. Its first call imports ``torch._dynamo`` (~1.3 CPU-s): only for a
            run whose exercises import it anyway (``"dynamo"`` in its plan: :func:`planned`).
    """
    try:
        import torch
        import torch.func  # noqa: F401

        torch.set_num_threads(1)
        layer = torch.nn.Linear(2, 2)
        opt = torch.optim.Adam(layer.parameters(), lr=0.1) if optimizer else None
        layer(torch.zeros(1, 2)).sum().backward()
        if opt is not None:
            opt.step()
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


def warm_dynamo() -> None:
    """Pays once what a worker's first ``torch.compile`` costs (~0.8 s of one-time set-up in Dynamo and
    AOTAutograd: decomposition tables, lazy imports), then forgets the warm-up itself: every compiled
    frame, guard and counter (ex11's probes reset them again before each probe anyway). Runs in the
    full zygote while the JAX one already serves the JAX-only exercises (``_launch.ZygotePair``)."""
    try:
        import torch
        import torch._dynamo
        import torch._dynamo.utils

        _no_guard_profiling()

        def warm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.linear(x, w).relu().sum()

        w = torch.ones(3, 4, requires_grad=True)
        with _no_tqdm_monitor():  # AOTAutograd makes a tqdm bar: its monitor thread would outlive it
            torch.compile(warm, backend="aot_eager")(torch.ones(2, 4), w).backward()
            torch.compile(warm, backend="eager")(torch.ones(2, 4), w)
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        _warm["dynamo"] = True
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


_warm = {"dynamo": False}  # what this process (or the zygote it was forked from) warmed


def warm_dynamo_once() -> None:
    """:func:`warm_dynamo` in a worker whose exercise compiles (``META.compiles``), unless its zygote did:
    a spawned worker, or one forked from a zygote whose run was not planned for such an exercise. Not only
    speed: AOTAutograd's first compile replaces a function's ``__code__``, which the guard refuses once a
    student's code is loaded (``autograder.workers.guard``), so it is paid before."""
    if not _warm["dynamo"]:
        warm_dynamo()


def _no_guard_profiling() -> None:
    """Dynamo times every new guard set for its compile metrics (``guard_latency_us``) after flushing the
    CPU cache with a fresh buffer: ~30 ms and ~8,000 page faults per compiled frame, ~0.5 s per ex11
    worker. Nothing reads that metric here (not the probes, not the checks) and the guards themselves
    are untouched, so the profiler is replaced by one that reports 0 us, for every worker this forks."""
    import torch._dynamo.guards as guards

    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = _zero_latency


def _zero_latency(*_args: Any) -> float:
    return 0.0


@contextlib.contextmanager
def _no_tqdm_monitor() -> Any:
    """tqdm starts no monitor thread meanwhile: the zygote forks, so it stays single-threaded. Nor does it
    make its process-shared lock (a semaphore in /dev/shm, mapped into every worker forked afterwards: a
    worker that took it and exited blocked every later one that draws a bar, e.g. AOTAutograd's); a
    worker's tqdm locks its own threads only (its output goes nowhere)."""
    try:
        from tqdm import tqdm
        from tqdm.std import TqdmDefaultWriteLock
    except ImportError:
        yield
        return
    if not hasattr(TqdmDefaultWriteLock, "mp_lock"):
        TqdmDefaultWriteLock.mp_lock = None  # what tqdm itself keeps where multiprocessing has no lock
    interval, tqdm.monitor_interval = tqdm.monitor_interval, 0
    try:
        yield
    finally:
        tqdm.monitor_interval = interval


def settle() -> None:
    """Once everything is imported: what the zygote holds stays out of every later garbage collection.

    The zygote imports with the cyclic collector off (its passes over the growing heap cost ~0.5 of
    ~4 CPU-s of imports; the cycles left behind are a few MB, shared with the workers), then freezes
    what it holds: neither it nor a worker scans those objects again, so a worker's collections stay
    small and write nothing into the pages it shares with the zygote. Workers collect as usual (the
    fork turns the collector back on).
    """
    gc.freeze()
    gc.enable()


def jaxtune_now() -> None:
    """The JAX set-up of ``_jaxtune`` once JAX is imported (a full zygote imports it after its workers' modules)."""
    from autograder.workers import jaxtune as _jaxtune

    _jaxtune.reuse_mlir_contexts()
