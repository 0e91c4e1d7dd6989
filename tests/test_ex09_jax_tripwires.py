"""ex09's manual_grads probe watches JAX's autodiff only where JAX is in the worker: a student who never loaded it
costs no import of it inside their 2-point check (~1.2 CPU-s, once a CALL_TIMEOUT beside CPU hogs), and one who
imports it inside ``manual_grads`` is watched on a second pass, once the call brought it in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from autograder.core.paths import ROOT

SCRIPT = textwrap.dedent("""
    import json, sys, types
    import torch
    from autograder.exercises.ex09_autograd_tape import probes
    mod = types.ModuleType("student")
    exec(sys.argv[1], mod.__dict__)
    got = probes.probe_manual_tape(mod, [[0.5, -1.0, 0.25], [1.5, 2.0, -0.5]], _tally=lambda name: None)
    print(json.dumps({"used": got["used"], "jax_loaded": "jax" in sys.modules}))
""")

CLOSED_FORM = "def manual_grads(w, x, b):\n    r = 2 * (w * x + b)\n    return r * x, r * w, r\n"
JAX_INSIDE = ("def manual_grads(w, x, b):\n    import jax\n\n"
              "    g = jax.grad(lambda w_, x_, b_: (w_ * x_ + b_) ** 2, argnums=(0, 1, 2))(w, x, b)\n"
              "    return tuple(float(v) for v in g)\n")


def _probe(source: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, source], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_closed_form_costs_no_jax_import():
    assert _probe(CLOSED_FORM) == {"used": [], "jax_loaded": False}


def test_jax_imported_inside_the_function_is_watched_on_a_second_pass():
    got = _probe(JAX_INSIDE)
    assert got["jax_loaded"] and "jax.grad" in got["used"], got
