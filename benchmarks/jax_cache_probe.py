"""Does lending the reference's compiled programs help student workers? (benchmarks/run.py --sections cache)

Students' workers never see the run's JAX compilation cache; they borrow programs from it by key
(autograder/workers/compile_cache.py). Measured here:

1. whether a cache entry's key depends on the cache folder: with JAX's default
   ``jax_persistent_cache_enable_xla_caches`` the folder's path goes into the
   compile options, so the reference's workers (which have a folder) and a student's
   (which has none) would build different keys; the reference sets it to ``none``;
2. the solutions of the JAX exercises graded twice in one run (the first submission
   pays the reference, the second is the student side only), with nothing lent
   (``TAPETRACE_JAX_CACHE=off``) and as shipped, with the number of programs asked for
   and lent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _loud import broken, require_rows  # noqa: E402

_KEY_SNIPPET = r"""
import os, sys
from autograder.workers import warmup as _warmup
_warmup.preload([])
import jax
if sys.argv[2] == "none":
    jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
keys = []
for d in (sys.argv[1] + "/a", sys.argv[1] + "/b"):
    pid = os.fork()
    if pid == 0:
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_compilation_cache_dir", d)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        import jax.numpy as jnp
        (jnp.ones((3, 4)) * 2).block_until_ready()
        os._exit(0)
    os.waitpid(pid, 0)
    keys.append(sorted(os.listdir(d)))
print(keys[0] != keys[1])
"""


def uses_jax(exercise: str) -> bool:
    """Whether the exercise's probes import JAX (the exercises that compile)."""
    path = ROOT / "autograder" / "exercises" / exercise / "probes.py"
    return path.exists() and ("import jax" in path.read_text() or "from jax" in path.read_text())


def key_depends_on_path(xla_caches: str = "default") -> bool:
    """Compiles one op in two forked children with two cache folders; True if the keys differ."""
    from autograder.workers.environment import worker_env

    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tapetrace-keyexp-{uuid.uuid4().hex[:8]}"
    try:
        out = subprocess.run([sys.executable, "-c", _KEY_SNIPPET, str(tmp), xla_caches], capture_output=True,
                             text=True, env=worker_env(), cwd=ROOT, timeout=600)
        return out.stdout.strip().splitlines()[-1] == "True"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _two_passes(exercises: list[str], seed: int, mode: str) -> dict:
    """Grades the solutions twice in one run: the first submission pays the reference, the second is the
    student side only (the reference's results are cached per run).

    mode: ``lent`` (as shipped: students' workers borrow the reference's compiled programs by key,
    ``autograder/workers/compile_cache.py``) or ``off`` (``TAPETRACE_JAX_CACHE=off``: every worker compiles all
    it runs).
    """
    from autograder.core.paths import SOLUTIONS
    from autograder.engine.jaxcache import CACHE_ENV
    from autograder.engine.run import GradingRun

    saved = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = "run" if mode == "lent" else "off"
    try:
        run = GradingRun(device="cpu", seed=seed, timeout=120)
    finally:
        if saved is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = saved
    try:
        walls = []
        for _ in range(2):
            t0 = time.monotonic()
            res = run.grade([str(SOLUTIONS)], only=exercises)
            walls.append(time.monotonic() - t0)
            for e in exercises:  # the solutions: full marks, or the benchmark is broken (benchmarks/_loud.py)
                got = res[0]["exercises"][e]
                if got["score"] != got["max_score"]:
                    broken(f"{e}, the solutions ({mode}): {got['score']:g}/{got['max_score']:g} ({got['status']})")
        lender = run.lender
        return {"first": walls[0], "second": walls[1], "asked": lender.asked if lender else 0,
                "lent": lender.lent if lender else 0}
    finally:
        run.close()


def measure(exercises: list[str], seed: int = 1) -> dict:
    """Key experiment, then two submissions in one run with and without lending."""
    require_rows(f"JAX exercises to measure among {exercises}", [e for e in exercises if uses_jax(e)])
    rep = {"key_depends_on_path": key_depends_on_path("default"),
           "key_depends_on_path_with_xla_caches_none": key_depends_on_path("none"), "modes": {}}
    for label, mode in (("nothing lent (TAPETRACE_JAX_CACHE=off)", "off"), ("lent by key (as shipped)", "lent")):
        rep["modes"][label] = _two_passes(exercises, seed, mode)
    return rep


if __name__ == "__main__":
    import json

    print(json.dumps(measure(sys.argv[1:] or ["ex04_jax_mlp"]), indent=1))
