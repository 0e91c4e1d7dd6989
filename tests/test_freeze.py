"""The probes' global names, and the attributes they load through modules and classes, frozen into their code
(autograder/workers/freeze.py): the same results, and a name or library attribute rebound afterwards (for good, or by
a replacement that puts itself back) changes nothing the code calls; on every Python the grader supports (the others
found by pyenv here are tried too, or skipped saying so)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core.paths import ROOT

FREEZE = ROOT / "autograder" / "workers" / "freeze.py"

# A module as the probes are written: helpers by name, builtins, classes, an exception tuple, closures, a
# comprehension, a lambda, a method, a decorator, a name the module reassigns, and data that is not frozen.
SAMPLE = '''
import collections.abc
import fractions
import functools
import math
import os.path

_TOLERANCE = 1e-6
_ERRORS = (ZeroDivisionError, ValueError)
_COUNT = 0
_TABLE = {"k": 1}


def _helper(x):
    return x * 2


def _check(values):
    return [_helper(v) for v in values if isinstance(v, int)]


def _tick():
    global _COUNT
    _COUNT += 1
    return _COUNT


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return ("logged", fn(*args))
    return wrapper


class Probe:
    def run(self, x):
        inner = lambda y: _helper(y) + len([y])  # noqa: E731
        try:
            return inner(x) / (x - 3)
        except _ERRORS:
            return "error"

    @staticmethod
    def root(x):
        return math.sqrt(abs(x))

    @property
    def table(self):
        return _TABLE["k"]


@_logged
def decorated(x):
    def deep():
        return _check([x, "a", x + 1])
    return deep()


def _library(x):
    # attribute chains: a module's function (a call: a method's load), a submodule's, a class's method, a class
    return (math.floor(x + 0.5), os.path.basename("/a/b"), fractions.Fraction.from_float(x / 2),
            isinstance(x, collections.abc.Hashable), [math.floor(v) for v in (x, x)])


def _mark():
    math.marker = _helper  # an attribute the module assigns: read where it stands


def _marked(x):
    return math.marker(x)


def probe(x):
    return (_check([x, x]), Probe().run(x), Probe.root(x), Probe().table, decorated(x), _tick(), sorted({x, 1}),
            _library(x), _marked(x))
'''

SCRIPT = f'''
import importlib.util, sys, types
spec = importlib.util.spec_from_file_location("freeze_under_test", {str(FREEZE)!r})
freeze = importlib.util.module_from_spec(spec)
spec.loader.exec_module(freeze)
if not freeze.SUPPORTED:
    print("UNSUPPORTED", sys.version_info[:2])
    raise SystemExit(0)
mod = types.ModuleType("sample")
exec(compile({SAMPLE!r}, "sample.py", "exec"), mod.__dict__)
mod._mark()
before = [mod.probe(x) for x in (2, 3, 5)]
mod._COUNT = 0
frozen = freeze.freeze_module(mod)
assert frozen > 20, frozen
after = [mod.probe(x) for x in (2, 3, 5)]
assert before == after, (before, after)
# rebinding for good: the frozen code still calls the originals; the module's own counter still counts
real = mod._helper
mod._helper = lambda x: 999
mod.isinstance = lambda *a: False
mod._ERRORS = ()
import builtins, math, os.path, collections.abc, fractions
real_len, real_sorted = builtins.len, builtins.sorted
builtins.len = lambda x: 999
builtins.sorted = lambda x: ["forged"]
real_floor, real_basename, real_from = math.floor, os.path.basename, fractions.Fraction.__dict__["from_float"]
math.floor = lambda x: -1
os.path.basename = lambda p: "forged"
fractions.Fraction.from_float = classmethod(lambda cls, f: "forged")
collections.abc.Hashable = int
try:
    again = [mod.probe(x) for x in (2, 3, 5)]
finally:
    builtins.len, builtins.sorted = real_len, real_sorted
    math.floor, os.path.basename, fractions.Fraction.from_float = real_floor, real_basename, real_from
mod._helper = real
assert [a[:5] + a[6:8] for a in again] == [b[:5] + b[6:8] for b in before], again
assert [a[5] for a in again] == [4, 5, 6], again  # _COUNT: assigned by the module, read where it stands
# an attribute the module assigns stays a lookup
math.marker = lambda x: "marked"
assert mod.probe(2)[8] == "marked"
# data stays a lookup: the table the module holds now is read
mod._TABLE = {{"k": 7}}
assert mod.probe(2)[3] == 7
# a replacement that puts itself back when called: never called
calls = []
def forged(x):
    calls.append(x)
    mod._helper = real
    return 0
mod._helper = forged
assert mod.probe(4)[0] == [8, 8] and not calls and mod._helper is forged
# a library's function swapped for one that puts itself back when called: never called either
def forged_floor(x):
    calls.append(x)
    math.floor = real_floor
    return -1
math.floor = forged_floor
assert mod.probe(4)[7][0] == 4 and not calls and math.floor is forged_floor
print("OK", frozen, sys.version_info[:2])
'''


def _run(python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, "-c", SCRIPT], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})


def test_frozen_code_computes_the_same_and_ignores_rebound_names():
    done = _run(sys.executable)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stdout + done.stderr[-3000:]


def _other_pythons() -> list:
    found = []
    for version in ("3.12", "3.13"):
        candidates = [*sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python3")),
                      Path(f"/usr/bin/python{version}"), Path(f"/usr/local/bin/python{version}")]
        path = next((str(c) for c in candidates if c.exists()), None)
        found.append(pytest.param(path, id=version, marks=[] if path else [
            pytest.mark.skip(reason=f"no Python {version} here (pyenv install {version}, or apt's python{version})")]))
    return found


@pytest.mark.parametrize("python", _other_pythons())
def test_the_same_on_the_other_pythons_the_grader_supports(python):
    """3.12 pushes a call's NULL before the function as 3.11 does, 3.13 after it: both rewrites run here."""
    done = _run(python)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stdout + done.stderr[-3000:]


def test_a_student_worker_freezes_the_probes_and_what_dynamo_traces_is_left_alone():
    """In a worker the exercise's probes and the probing tools are frozen before the snapshot. Where the exercise
    compiles with Dynamo (ex11), its probes only, less their ``UNFROZEN`` (the functions Dynamo traces: its bytecode
    reader takes no module or function as a constant); the tools stay as written. In a process of its own: the test
    session's modules stay as they are."""
    script = """
from autograder.exercises.ex04_jax_mlp import probes as p04
from autograder.exercises.ex11_torch_compile import probes as p11
from autograder.probing import tools
from autograder.workers import worker
fns = (p04.probe_forward_purity, p11.probe_train_open, p11._one_step, p11._flagged_mse, p11._g_branch,
       p11._CompileCounter.__call__, tools.jax_to_np)
codes = {f: f.__code__ for f in fns}
assert p11._flagged_mse in p11.UNFROZEN and p11._g_branch in p11.UNFROZEN
worker._freeze_probes(p11, "ex11_torch_compile")
assert p11.probe_train_open.__code__ is not codes[p11.probe_train_open]
assert p11._one_step.__code__ is not codes[p11._one_step]
unchanged = (p11._flagged_mse, p11._g_branch, p11._CompileCounter.__call__, tools.jax_to_np, p04.probe_forward_purity)
assert all(f.__code__ is codes[f] for f in unchanged)
worker._freeze_probes(p04, "ex04_jax_mlp")
assert p04.probe_forward_purity.__code__ is not codes[p04.probe_forward_purity]
assert tools.jax_to_np.__code__ is not codes[tools.jax_to_np]
print("OK")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done.stdout + done.stderr[-3000:]
