"""The same hidden checks and probes as ``tapetrace grade``, in ONE process, without isolation.

The baseline of the isolation-overhead benchmark: no workers, no sandbox, no
wire; the student module and the reference module are both imported here
(under different names) and each probe is a direct function call. Same
seeds, same per-check inputs, same probes, same verdicts, one thread, same
precision pins. Never use this to grade real submissions.

    python benchmarks/inprocess.py SUBMISSION_DIR [--only ex01,...] [--seed N]

prints one JSON line: wall seconds, per-exercise seconds and scores.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
T0 = time.monotonic()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("submission")
    p.add_argument("--only", default="")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--student-threads", type=int, default=1,
                   help="torch threads for the student side (the reference keeps 1): do verdicts survive?")
    p.add_argument("--count-compiles", action="store_true", help="count XLA compilations per exercise")
    args = p.parse_args()

    import logging

    import numpy as np

    from autograder.core.paths import SOLUTIONS
    from autograder.core.suite import Ctx, Fail, GraderBug, StudentProblem
    from autograder.engine.run import _key, _probe_error
    from autograder.hidden import load_suite
    from autograder.probing import tools as _probing
    from autograder.workers import worker as _worker
    from autograder.workers.warmup import PRELOAD

    exercises = [e for e in args.only.split(",") if e]
    from _loud import require_rows, require_score

    require_rows("exercises to grade (--only)", exercises)
    device = {"torch": "cpu", "jax": "cpu"}
    for name in PRELOAD:  # the same imports a worker has
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            pass
    _probing.DEVICE.update(device)
    _worker._setup_threads_and_precision(device, None)

    compiles: list[float] = []
    if args.count_compiles and "jax" in sys.modules:
        import jax

        class _Count(logging.Handler):
            def emit(self, rec: logging.LogRecord) -> None:
                msg = rec.getMessage()
                if "Finished XLA compilation" in msg:
                    try:
                        compiles.append(float(msg.rsplit(" in ", 1)[1].split()[0]))
                    except (IndexError, ValueError):
                        compiles.append(0.0)

        jax.config.update("jax_log_compiles", True)
        for name in ("jax._src.dispatch", "jax._src.interpreters.pxla", "jax._src.compiler"):
            lg = logging.getLogger(name)
            lg.addHandler(_Count())
            lg.setLevel(logging.DEBUG)
            lg.propagate = False

    def threads(n: int) -> None:
        if "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(n)

    def load(path: Path, name: str):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    out = {"exercises": {}}
    diffs: dict[str, float] = {}

    def _max_diff(a, b) -> float:
        if isinstance(a, dict) and isinstance(b, dict):
            return max([0.0, *(_max_diff(a[k], b[k]) for k in a if k in b)])
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return max([0.0, *(_max_diff(x, y) for x, y in zip(a, b))])
        try:
            x, y = np.asarray(a), np.asarray(b)
            if x.shape == y.shape and x.dtype.kind == "f" and x.size:
                return float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
        except (TypeError, ValueError):
            pass
        return 0.0

    for ex in exercises:
        t0 = time.monotonic()
        n_compiles = len(compiles)
        suite = load_suite(ex)
        probes = importlib.import_module(f"autograder.exercises.{ex}.probes")
        src = Path(args.submission) / f"{ex}.py"
        student = load(src, f"student_{ex}")
        ref = load(SOLUTIONS / f"{ex}.py", f"reference_{ex}")
        cache: dict[str, object] = {}

        def student_call(probe, call, scale, kwargs, _s=student, _src=src, _p=probes, _ex=ex):
            threads(args.student_threads)
            try:
                resp = _worker.run_probe(_p, _s, {"probe": probe, "kwargs": kwargs}, os.path.abspath(_src))
            finally:
                threads(1)
            if args.student_threads != 1 and resp.get("ok"):  # how far do the bits move with the thread count?
                again = _worker.run_probe(_p, _s, {"probe": probe, "kwargs": kwargs}, os.path.abspath(_src))
                if again.get("ok"):
                    d = _max_diff(resp["value"], again["value"])
                    key = f"{_ex}.{probe}"
                    diffs[key] = max(diffs.get(key, 0.0), d)
            if resp.get("ok"):
                return resp["value"]
            raise _probe_error(resp, call, 0)

        def reference_call(probe, kwargs, _ex=ex, _r=ref, _p=probes, cache=cache):
            k = _key(_ex, probe, kwargs)
            if k not in cache:
                resp = _worker.run_probe(_p, _r, {"probe": probe, "kwargs": kwargs},
                                          str(SOLUTIONS / f"{_ex}.py"))
                if not resp.get("ok"):
                    raise GraderBug(str(resp))
                cache[k] = resp["value"]
            return cache[k]

        score = 0.0
        failed = {}
        for check in suite.checks:
            rng = np.random.default_rng([args.seed, zlib.crc32(ex.encode()), zlib.crc32(check.name.encode())])
            ctx = Ctx(rng=rng, seed=args.seed, device=device,
                      student=lambda pr, c, s, kw, _sc=check.timeout_scale: student_call(pr, c, s * _sc, kw),
                      reference=reference_call)
            try:
                check.fn(ctx)
                score += check.points
            except (Fail, StudentProblem, GraderBug) as err:
                failed[check.name] = f"{type(err).__name__} {getattr(err, 'key', '')} {getattr(err, 'fields', err)}"[:300]
        out["exercises"][ex] = {"score": score, "max_score": suite.max_score, "failed": failed,
                                "seconds": round(time.monotonic() - t0, 3)}
        if args.count_compiles:
            out["exercises"][ex]["xla_compiles"] = len(compiles) - n_compiles
            out["exercises"][ex]["xla_compile_seconds"] = round(sum(compiles[n_compiles:]), 2)
    if args.student_threads != 1:
        out["thread_diffs"] = {k: v for k, v in sorted(diffs.items(), key=lambda kv: -kv[1])}
    out["wall"] = round(time.monotonic() - T0, 3)
    print(json.dumps(out))
    require_rows("exercises graded in one process", out["exercises"])
    require_score(f"{args.submission} in one process", sum(e["score"] for e in out["exercises"].values()),
                  sum(e["max_score"] for e in out["exercises"].values()))


if __name__ == "__main__":
    main()
