"""Is forking workers from the warm zygote safe with torch and JAX? Compare with spawned workers.

Grades the same submissions twice with the same seed, once with workers forked
from the zygote and once with each worker a fresh interpreter (``spawn``), and
records every probe answer of every worker (student and reference) on the
wire. Safe means: every answer is bit-identical (same bytes on the wire) and
the graded results are equal. Run directly for a printed report:

    .venv/bin/python benchmarks/zygote_safety.py [EXERCISE ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import wire as _wire  # noqa: E402
from autograder.engine.run import GradingRun, _key  # noqa: E402
from autograder.workers import handle as _handle  # noqa: E402

_VOLATILE = {"seconds", "launcher"}


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in _VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def record_probes(launcher: str, subs: list[str], exercises: list[str], seed: int,
                  timeout: float = 120.0) -> tuple[list[dict], dict[tuple, str], float]:
    """Grades ``subs``; returns (results, {(role, source, exercise, probe, kwargs-key): wire bytes}, seconds)."""
    calls: dict[tuple, str] = {}
    orig_init, orig_call = _handle.Worker.__init__, _handle.Worker.call

    def init(self, launcher_obj, spec, load_timeout, *rest, **options):
        self._tag = (spec["role"], spec["exercise"])
        orig_init(self, launcher_obj, spec, load_timeout, *rest, **options)

    def call(self, probe, kwargs, t):
        resp = orig_call(self, probe, kwargs, t)
        key = (*self._tag, probe, _key(self._tag[1], probe, kwargs))
        blob = json.dumps(_wire.encode(resp), sort_keys=True)
        # same key twice (a re-run after a worker restart) must give the same bytes too
        calls[key + (len([k for k in calls if k[:4] == key]),)] = blob
        return resp

    _handle.Worker.__init__, _handle.Worker.call = init, call
    try:
        run = GradingRun(device="cpu", timeout=timeout, seed=seed, launcher=launcher)
        assert run.launcher.kind == launcher, run.launcher.kind
        t0 = time.monotonic()
        try:
            results = []
            for s in subs:  # one at a time: the order of calls is the same in both runs
                results += run.grade([s], only=exercises)
        finally:
            run.close()
        return results, calls, time.monotonic() - t0
    finally:
        _handle.Worker.__init__, _handle.Worker.call = orig_init, orig_call


def compare_launchers(subs: list[str], exercises: list[str], seed: int = 1) -> dict[str, Any]:
    """Grades with zygote and spawn workers; lists every difference."""
    rz, cz, tz = record_probes("zygote", subs, exercises, seed)
    rs, cs, ts = record_probes("spawn", subs, exercises, seed)
    probe_mismatches = [k for k in sorted(set(cz) | set(cs)) if cz.get(k) != cs.get(k)]
    result_mismatches = [r["submission"] for r, q in zip(rz, rs) if _strip(r) != _strip(q)]
    return {"probe_calls": len(cz), "probe_mismatches": probe_mismatches, "result_mismatches": result_mismatches,
            "seconds": {"zygote": round(tz, 2), "spawn": round(ts, 2)},
            "scores": {r["submission"]: r["total"] for r in rz}}


if __name__ == "__main__":
    from autograder.core.paths import EXERCISES_DIR, SOLUTIONS
    from autograder.hidden import available_exercises

    exs = sys.argv[1:] or available_exercises()
    rep = compare_launchers([str(SOLUTIONS), str(EXERCISES_DIR)], exs)
    print(json.dumps({k: v for k, v in rep.items()}, indent=1, default=str))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _loud import broken, require_rows, require_score

    require_rows("probe answers recorded", range(rep["probe_calls"]))
    require_score("the solutions", rep["scores"].get(str(SOLUTIONS), 0.0))
    if rep["probe_mismatches"] or rep["result_mismatches"]:
        broken(f"zygote and spawn differ: {len(rep['probe_mismatches'])} probe answers, "
               f"{len(rep['result_mismatches'])} results")
