"""Does JAX's persistent compilation cache help student workers? (benchmarks/run.py --sections cache)

As shipped, only reference workers use the run's cache (a student must not plant
entries another submission would load). Measured here:

1. whether a cache entry's key depends on the cache folder: with JAX's default
   ``jax_persistent_cache_enable_xla_caches`` the folder's path goes into the
   compile options, so the same computation gets a different key in another
   folder and a copy of a cache never hits;
2. the student side of grading the solutions of the JAX exercises, with no cache
   (as shipped) and with a private copy of the reference's warm cache given to
   each student worker (keys made path-independent): the change proposed to the
   engine. The copy is private per worker, so nothing a student writes reaches
   anyone else.
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

_KEY_SNIPPET = r"""
import os, sys
from autograder import _zygote
_zygote._preload([])
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
    from autograder._launch import worker_env

    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tapetrace-keyexp-{uuid.uuid4().hex[:8]}"
    try:
        out = subprocess.run([sys.executable, "-c", _KEY_SNIPPET, str(tmp), xla_caches], capture_output=True,
                             text=True, env=worker_env(), cwd=ROOT, timeout=600)
        return out.stdout.strip().splitlines()[-1] == "True"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


POISON = """
import os as _os
try:
    import jax as _jax
    _d = _jax.config.jax_compilation_cache_dir
    if _d:
        with open(_os.path.join(_d, "poison-from-student"), "w") as _fh:
            _fh.write("x")
except Exception:
    pass
"""


def _two_passes(exercises: list[str], seed: int, mode: str) -> dict:
    """Grades the solutions twice in one run: (first submission: cold, pays the reference; second: student only).

    mode: ``shipped`` (students get no cache), ``copy`` (each student worker gets a private copy of the
    reference's cache taken when it starts), ``live`` (the cache folder lives outside /tmp, so the
    sandbox's read-only mounts show it to students live and read-only, and ``ctx.both`` asks the
    reference first, so even the first submission's student side finds the reference's compilations).
    """
    import tempfile

    from autograder import _launch, _suite
    from autograder._engine import GradingRun
    from autograder._paths import SOLUTIONS

    saved = os.environ.get("JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES")
    os.environ["JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"] = "none"  # every mode: path-independent keys
    home = Path.home() / ".cache" / "tapetrace-bench" / uuid.uuid4().hex[:8]  # outside the sandbox's private /tmp
    orig_init, orig_both = _launch.Worker.__init__, _suite.Ctx.both
    run = GradingRun(device="cpu", seed=seed, timeout=120)
    if mode == "live":
        run.jax_cache = str(home / "live")

    def init(self, launcher, spec, load_timeout):
        if spec["role"] == "student" and mode == "copy" and os.path.isdir(run.jax_cache):
            d = home / uuid.uuid4().hex[:8]
            shutil.copytree(run.jax_cache, d)
            spec["jax_cache"] = str(d)
        elif spec["role"] == "student" and mode == "live":
            spec["jax_cache"] = run.jax_cache
        orig_init(self, launcher, spec, load_timeout)

    def both(self, probe, call=None, timeout_scale=1.0, **kwargs):
        want = self.reference(probe, **kwargs)
        return self.student(probe, call, timeout_scale, **kwargs), want

    _launch.Worker.__init__ = init
    if mode == "live":
        _suite.Ctx.both = both
    poisoned = None
    try:
        walls = []
        for _ in range(2):
            t0 = time.monotonic()
            res = run.grade([str(SOLUTIONS)], only=exercises)
            walls.append(time.monotonic() - t0)
            assert all(res[0]["exercises"][e]["score"] == res[0]["exercises"][e]["max_score"] for e in exercises)
        if mode == "live":  # can a student write into the live cache? (it must not)
            with tempfile.TemporaryDirectory() as sub:
                Path(sub, exercises[0] + ".py").write_text(POISON + (SOLUTIONS / f"{exercises[0]}.py").read_text())
                run.grade([sub], only=exercises[:1])
            poisoned = os.path.exists(os.path.join(run.jax_cache, "poison-from-student"))
        return {"first": walls[0], "second": walls[1], "student_wall": walls[1], "student_could_write": poisoned}
    finally:
        _launch.Worker.__init__, _suite.Ctx.both = orig_init, orig_both
        run.close()
        shutil.rmtree(home, ignore_errors=True)
        if saved is None:
            os.environ.pop("JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES", None)
        else:
            os.environ["JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"] = saved


def measure(exercises: list[str], seed: int = 1) -> dict:
    """Key experiment, then two submissions in one run for each way of giving students the cache."""
    rep = {"key_depends_on_path": key_depends_on_path("default"),
           "key_depends_on_path_with_xla_caches_none": key_depends_on_path("none"), "modes": {}}
    for label, mode in (("no cache (as shipped)", "shipped"), ("private copy", "copy"),
                        ("live read-only, reference first", "live")):
        rep["modes"][label] = _two_passes(exercises, seed, mode)
    return rep


if __name__ == "__main__":
    import json

    print(json.dumps(measure(sys.argv[1:] or ["ex04_jax_mlp"]), indent=1))
