"""Structural checks cannot be forged from inside the student's worker by the usual means (issue 28).

The attacks graded beside the others (``attacks/forge_*.py``) cover code that patches the probes or
resets their counters; here: a notebook whose *context* (an earlier section replayed into the graded
one's worker) patches the probes, the audit hook and the snapshot of a student's worker on their own
(in a subprocess: an audit hook is never removed), and the grader's reading of program texts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.probing.artefact import ProgramTooLarge, read_stablehlo

EX04, EX05 = "ex04_jax_mlp", "ex05_jit_train_step"
MUTANTS = ROOT / "tests" / "mutants"

# The end of a notebook's ex04 section: a class statement binding ex05's contract name, so the context
# replays it into ex05's worker, where its body patches ex05's probes (old and new names) and helpers.
CONTEXT_PATCH = '''

class make_train_step:  # replaced by ex05's own definition; its body runs first, in ex05's worker
    import sys as _s
    _P = _s.modules.get("autograder.exercises.ex05_jit_train_step.probes")
    if _P is not None:
        _P.probe_trace_call = lambda mod, batch: {"loss": 1, "loss_traced": 1, "update": 1, "update_traced": 1}
        _P.probe_traces = lambda mod, new_shape, **kw: {"loss": [1] * 7, "update": [1] * 7, "loss_traced": 1,
                                                      "update_traced": 1}
        _P._make_loss = lambda counter, max_calls=None: (lambda p, x, y: 0.0)
'''


def _notebook(path: Path, sections: dict[str, str]) -> Path:
    cells = []
    for ex, src in sections.items():
        cells += [{"cell_type": "markdown", "metadata": {}, "source": [f"## {ex}"]},
                  {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": src.splitlines(keepends=True)}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _body(path: Path) -> str:
    """A mutant's code without its header comment lines."""
    return "\n".join(line for line in path.read_text().splitlines() if not line.startswith("# "))


def test_context_cannot_patch_the_graded_sections_probes(run, tmp_path):
    """ex05 is an un-jitted step; ex04's section ends with a class whose body patches ex05's probes. The
    patch is undone before ex05's section runs: ex05 fails exactly what its own code fails."""
    nb = _notebook(tmp_path / "nb.ipynb", {
        EX04: (SOLUTIONS / f"{EX04}.py").read_text() + CONTEXT_PATCH,
        EX05: _body(MUTANTS / EX05 / "not_jitted.py"),
    })
    ex = run.grade([str(nb)], only=[EX05])[0]["exercises"][EX05]
    failed = {t["name"]: t["code"] for t in ex["tests"] if not t["passed"]}
    assert failed == {"compiles_once": "EX05_NOT_JITTED", "one_trace_per_new_shape": "EX05_NOT_JITTED",
                      "fit_trains_moons": "EX05_FIT_RETRACES"}, failed


# The same class trick patching a library: every later `jax.jit` a no-op, so the graded section's honest step
# would run eagerly. Library callables are kept (and put back after the context) only in a worker that has a
# context to run (autograder.workers.guard.Snapshot.keep_libraries): a plain file's worker walks none of them.
LIBRARY_PATCH = '''

class make_train_step:  # replaced by ex05's own definition; its body runs first, in ex05's worker
    import jax as _jax
    _jax.jit = lambda fun=None, *args, **kwargs: fun
'''


def test_a_context_that_patches_a_library_is_undone_before_the_graded_section(run, tmp_path):
    """ex05's section is the solution; the context made `jax.jit` a no-op: put back, full marks."""
    nb = _notebook(tmp_path / "nb.ipynb", {
        EX04: (SOLUTIONS / f"{EX04}.py").read_text() + LIBRARY_PATCH,
        EX05: (SOLUTIONS / f"{EX05}.py").read_text(),
    })
    ex = run.grade([str(nb)], only=[EX05])[0]["exercises"][EX05]
    assert ex["score"] == ex["max_score"], [(t["name"], t["code"]) for t in ex["tests"] if not t["passed"]]


def _in_subprocess(code: str) -> dict:
    """Runs ``code`` in a fresh interpreter (an audit hook stays for the process's life); its last line
    of output is JSON."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_audit_hook_refuses_the_ways_into_a_probe():
    got = _in_subprocess("""
        import ctypes, gc, json, os, sys, json.decoder
        from autograder.workers import guard as _guard
        _guard.install_audit_hook()
        out = {}

        def tried(name, fn):
            try:
                fn()
                out[name] = "allowed"
            except _guard.Refused:
                out[name] = "refused"

        def mine(x=1):
            return x

        tried("gc.get_objects", gc.get_objects)
        tried("gc.get_referrers", lambda: gc.get_referrers(out))
        tried("gc.get_referents", lambda: gc.get_referents(out))
        tried("sys._current_frames", sys._current_frames)
        tried("sys.settrace", lambda: sys.settrace(lambda *a: None))
        tried("sys.setprofile", lambda: sys.setprofile(lambda *a: None))
        tried("ctypes.pythonapi", lambda: ctypes.pythonapi.PyFrame_LocalsToFast)
        tried("ctypes.PyObj_FromPtr", lambda: __import__("_ctypes").PyObj_FromPtr(id(out)))
        tried("ctypes libc", lambda: ctypes.CDLL(None).getpid())
        tried("proc_mem", lambda: open("/proc/self/mem", "rb"))
        tried("library __code__", lambda: setattr(json.decoder.py_scanstring, "__code__", mine.__code__))
        tried("library __defaults__", lambda: setattr(json.dumps, "__defaults__", ()))
        import unittest.mock
        tried("library __defaults__ through mock", lambda: unittest.mock.patch.object(json.dumps, "__defaults__", ()).start())
        # a library's own import may (matplotlib's decorators set __kwdefaults__ of its functions)
        tried("import matplotlib.pyplot", lambda: __import__("matplotlib.pyplot"))
        heard = []
        sys.addaudithook(lambda event, args: heard.append(event))  # refused: never added (CPython is silent)
        open(os.devnull, "rb").close()  # an audited event: a hook added would hear it
        out["sys.addaudithook"] = "allowed" if heard else "refused"
        tried("own __defaults__", lambda: setattr(mine, "__defaults__", (2,)))
        tried("sys._getframe", lambda: sys._getframe(0))
        tried("open a file", lambda: open(os.devnull, "rb").close())
        print(json.dumps(out))
    """)
    allowed = {"own __defaults__", "sys._getframe", "open a file", "ctypes libc", "import matplotlib.pyplot"}
    assert {k for k, v in got.items() if v == "allowed"} == allowed, got


def test_only_the_context_deadline_may_set_a_tracer():
    """The context's time limit traces a statement that swallowed its first interruption; a subclass of
    it (or any other code) may not set a tracer."""
    got = _in_subprocess("""
        import json, time
        from autograder.submissions import execute as _exec; from autograder.workers import guard as _guard
        _guard.install_audit_hook(_guard.context_tracers())
        out = {}
        ns = {}
        cells = [{"file": "<cell>", "source": "while True:\\n    try:\\n        time.sleep(0.01)\\n    except BaseException:\\n        pass\\n",
                  "future": [], "stmts": [[0, "other", ["x"], []]]}]
        ns["time"] = time
        report = _exec.run_context(ns, cells, None, budget=0.3, grace=0.1)
        out["interrupted"] = report.interrupted

        class Evil(_exec.Deadline):
            def _tracer(self, frame, event, arg):
                return self._tracer

        d = Evil.__new__(Evil)  # not armed: its _alarm is called by hand, as a signal would
        d.fired, d.usable = 1, False
        try:
            d._alarm(0, __import__("sys")._getframe())
            out["subclass"] = "allowed"
        except _guard.Refused:
            out["subclass"] = "refused"
        except BaseException as err:
            out["subclass"] = type(err).__name__
        print(json.dumps(out))
    """)
    assert got == {"interrupted": 1, "subclass": "refused"}, got


def test_snapshot_sees_and_undoes_changes_to_the_grader_and_libraries():
    got = _in_subprocess("""
        import builtins, json
        import numpy as np
        import autograder.exercises.ex05_jit_train_step.probes as P
        from autograder.workers import guard as _guard

        snap = _guard.Snapshot(_guard.grader_folder())
        out = {"clean": snap.changes()}
        real = P.probe_steps, builtins.len, np.asarray
        P.probe_steps = lambda *a, **k: {}
        builtins.len = lambda x: 0
        np.asarray = lambda *a, **k: None
        out["changed"] = sorted(snap.changes(limit=10))  # not numpy's: libraries rebind their own names
        snap.restore()
        out["restored"] = [P.probe_steps is real[0], builtins.len is real[1], np.asarray is real[2]]
        out["after"] = snap.changes()
        print(json.dumps(out))
    """)
    assert got["clean"] == [] and got["after"] == []
    assert got["changed"] == ["autograder.exercises.ex05_jit_train_step.probes.probe_steps", "builtins.len"], got
    assert got["restored"] == [True, True, True]


def test_snapshot_sees_a_probe_functions_closure_and_defaults():
    got = _in_subprocess("""
        import json
        from autograder.workers import guard as _guard; from autograder.probing import tools as _probing

        snap = _guard.Snapshot(_guard.grader_folder())
        conv = _probing.jax_converter  # a grader function: its defaults are watched
        before = conv.__defaults__
        conv.__defaults__ = (1,)
        out = {"defaults": snap.changes()}
        snap.restore()
        out["restored"] = conv.__defaults__ is before
        print(json.dumps(out))
    """)
    assert got == {"defaults": ["autograder.probing.tools.jax_converter"], "restored": True}, got


def test_audit_hook_keeps_its_refusals_when_its_names_are_rebound():
    """The hook holds what it uses in its defaults: rebinding the module's names, a builtin or a method of
    its class (and putting it back before the probe returns) opens nothing."""
    got = _in_subprocess("""
        import builtins, gc, json, sys
        from autograder.workers import guard as _guard
        _guard.install_audit_hook()
        _guard.REFUSED_EVENTS = frozenset()
        _guard.Guard._refuse = lambda self, what: None
        _guard.Guard._tracer_allowed = lambda self: True
        real = builtins.isinstance
        builtins.isinstance = lambda obj, kind: False
        out = {}
        for name, fn in (("gc.get_objects", gc.get_objects), ("sys.settrace", lambda: sys.settrace(None)),
                         ("__defaults__", lambda: setattr(json.dumps, "__defaults__", ()))):
            try:
                fn()
                out[name] = "allowed"
            except PermissionError:
                out[name] = "refused"
        builtins.isinstance = real
        print(json.dumps(out))
    """)
    assert got == {"gc.get_objects": "refused", "sys.settrace": "refused", "__defaults__": "refused"}, got


def test_the_tamper_check_calls_nothing_the_student_put_in_place():
    """A ``sys.modules`` replaced by a dict subclass, a replaced builtin: reported, never called (code the
    check called could rewrite the answer about to be sent)."""
    got = _in_subprocess("""
        import builtins, json, sys
        from autograder.workers import guard as _guard

        snap = _guard.Snapshot(_guard.grader_folder())
        check = snap.checker()
        called = []

        class Modules(dict):
            def get(self, *a):
                called.append("sys.modules.get")
                return super().get(*a)

        out = {"clean": check()}
        real_modules, real_all = sys.modules, builtins.all
        sys.modules = Modules(real_modules)
        out["modules"] = check()
        sys.modules = real_modules
        builtins.all = lambda it: called.append("all") or True
        out["all"] = check()
        builtins.all = real_all
        out["called"] = called
        print(json.dumps(out))
    """)
    assert got == {"clean": [], "modules": ["sys.modules"], "all": ["builtins.all"], "called": []}, got


def test_the_result_window_holds_off_signal_handlers_and_gc_callbacks():
    """Between a probe's return and its frame: a signal's Python handler and a gc callback wait until the
    window closes (then they run), and the GIL is not handed over on the usual schedule."""
    got = _in_subprocess("""
        import gc, json, os, signal, sys
        from autograder.workers import seal

        ran = []
        signal.signal(signal.SIGUSR1, lambda signum, frame: ran.append("signal"))
        gc.callbacks.append(lambda phase, info: ran.append("gc"))
        interval = sys.getswitchinterval()
        held = seal.hold()
        os.kill(os.getpid(), signal.SIGUSR1)
        junk = [[i] for i in range(10000)]
        gc.collect()
        out = {"inside": list(ran), "held": [sys.getswitchinterval() > 100, gc.isenabled(), len(gc.callbacks)]}
        seal.release(held)
        junk = [[i] for i in range(100)]
        gc.collect()
        out["after"] = sorted(set(ran))
        out["restored"] = [sys.getswitchinterval() == interval, gc.isenabled(), len(gc.callbacks)]
        print(json.dumps(out))
    """)
    assert got == {"inside": [], "held": [True, False, 0], "after": ["gc", "signal"],
                   "restored": [True, True, 1]}, got


def test_a_sealed_answer_thaws_to_plain_data_only():
    import pickle

    import numpy as np

    from autograder.workers import seal

    value = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (1, 2.5, None), "c": np.int64(3), "d": [True]}
    back = seal.thaw(pickle.dumps(value, 4))
    assert back["a"].dtype == np.float32 and back["a"].tolist() == value["a"].tolist()
    assert back["b"] == (1, 2.5, None) and back["c"] == 3 and back["d"] == [True]
    with pytest.raises(seal.Unsendable):
        seal.thaw(pickle.dumps(subprocess.CompletedProcess, 4))
    with pytest.raises(seal.Unsendable):
        seal.thaw(b"\x80\x04not a pickle")


# --------------------------------------------------------------------------- programs read in the grader
def _lowered(kind: str) -> str:
    import jax
    import jax.numpy as jnp
    import numpy as np

    def loop(x):
        return jax.lax.fori_loop(0, x.shape[0], lambda i, a: a * 0.5 + 1.0, x)

    def branch(x):
        return jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)

    def callback(x):
        return jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def debug(x):
        jax.debug.print("{}", x)
        return x * 2

    def plain(x):
        return jnp.tanh(x) * x + 1.0

    fn = {"loop": loop, "branch": branch, "callback": callback, "debug": debug, "plain": plain}[kind]
    return jax.jit(fn).lower(jnp.ones((3,), jnp.float32)).as_text()


@pytest.mark.parametrize("kind, loops, branches, callbacks", [
    ("plain", 0, 0, False), ("loop", 1, 0, False), ("branch", 0, 1, False), ("callback", 0, 0, True),
    ("debug", 0, 0, True)])
def test_programs_are_read_from_their_text(kind, loops, branches, callbacks):
    prog = read_stablehlo(_lowered(kind))
    assert (prog.loops, prog.branches, bool(prog.callbacks)) == (loops, branches, callbacks), prog
    assert prog.ops >= 1


def test_program_size_grows_with_an_unrolled_loop():
    import jax
    import jax.numpy as jnp

    def unrolled(x):
        return sum(jnp.tanh(x[i]) for i in range(x.shape[0]))

    small = read_stablehlo(jax.jit(unrolled).lower(jnp.ones((2, 3))).as_text()).ops
    large = read_stablehlo(jax.jit(unrolled).lower(jnp.ones((9, 3))).as_text()).ops
    assert large > small


def test_program_text_is_bounded_and_typed():
    with pytest.raises(ProgramTooLarge):
        read_stablehlo("%0 = stablehlo.add %a, %b\n" * 200_000)
    with pytest.raises(TypeError):
        read_stablehlo(["not", "text"])  # type: ignore[arg-type]
    # one long line of dotted names reads in linear time (no backtracking)
    assert read_stablehlo("a." * 1_000_000 + "X").ops == 0


# --------------------------------------------------------------------------- programs counted by the grader
@pytest.mark.parametrize("counts, shapes, key", [
    ([1, 0, 0, 0], "aaaa", None),  # jitted once
    ([1, 0, 0, 0, 1, 0, 0], "aaaabba", None),  # once per new shape
    ([None, None], "ab", None),  # not observed (the notebook's self-check): no verdict
    ([75, 0, 0, 0], "aaaa", "COMPILED_MANY"),  # eager: one program per operation
    ([0, 0, 0, 0], "aaaa", "COMPILED_NOTHING"),  # eager with warm caches, or compiles hidden from the grader
    ([1, 1, 1, 1], "aaaa", "COMPILED_AGAIN"),  # re-jitted per call
    ([1, 0, 0, 0, 0, 0, 0], "aaaabba", "COMPILED_NOTHING"),  # a new shape that compiles nothing
])
def test_programs_per_call_verdict(counts, shapes, key):
    from autograder.core.suite import Fail
    from autograder.probing.observe import compiled_once_per_shape

    if key is None:
        compiled_once_per_shape(counts, shapes, what="step", where="make_train_step")
        return
    with pytest.raises(Fail) as err:
        compiled_once_per_shape(counts, shapes, what="step", where="make_train_step")
    assert err.value.key == key


def _tally_in_subprocess(code: str, fd_open: bool) -> tuple[int, list]:
    """Runs ``code`` in a fresh interpreter whose environment names :data:`tools.RESULT_FD` (as a worker's
    does) and, when ``fd_open``, holds a pipe there; returns its exit status and the frames read back."""
    from autograder.core import wire
    from autograder.probing import tools

    r, w = os.pipe()
    env = dict(os.environ, **{tools.TALLY_ENV: str(tools.RESULT_FD)})
    pre = f"import os; os.dup2({w}, {tools.RESULT_FD}); os.close({w})\n" if fd_open else f"import os; os.close({w})\n"
    try:
        done = subprocess.run([sys.executable, "-c", pre + textwrap.dedent(code)], cwd=ROOT, env=env,
                              pass_fds=(w,), timeout=300, capture_output=True)
        os.close(w)
        w = -1
        frames = []
        while True:
            try:
                frames.append(wire.recv(r))
            except EOFError:
                break
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    return done.returncode, frames


def test_a_tally_reaches_the_grader_at_once_and_a_rewind_leaves_it():
    """Each tally is a frame on the result pipe as it happens: a raw memory write rewinding the worker's own
    counter afterwards (as forge_ex06_raw_memory_forward_counter does) leaves what the grader read."""
    from autograder.probing import tools

    status, frames = _tally_in_subprocess("""
        import ctypes, itertools
        from autograder.probing.tools import tally
        counter = itertools.count()
        for _ in range(3):
            next(counter)
            tally("forward")
        ctypes.c_ssize_t.from_address(id(counter) + 16).value = 0
        assert next(counter) == 0
    """, fd_open=True)
    assert status == 0
    assert [tools.is_tally(f) for f in frames] == [True] * 3 and {f[tools.TALLY] for f in frames} == {"forward"}


def test_a_tally_that_cannot_be_written_ends_the_worker():
    """A worker whose result pipe was closed (or never there) cannot drop a tally silently: it exits, and the
    call it was in crashes (the student's 0, never a count the grader did not see)."""
    from autograder.probing import tools

    status, frames = _tally_in_subprocess("""
        from autograder.probing.tools import tally
        tally("forward")
        print("survived")
    """, fd_open=False)
    assert status == tools.TALLY_EXIT and frames == []


def test_a_tally_outside_a_worker_sends_nothing():
    """The notebook's own checks run the probes in the student's process: no result pipe, nothing sent."""
    got = _in_subprocess("""
        import json, os
        os.environ.pop("TAPETRACE_RESULT_FD", None)
        from autograder.probing.tools import tally
        tally("forward")
        print(json.dumps({"ok": True}))
    """)
    assert got == {"ok": True}


def test_the_grader_counts_tallies_apart_from_the_answer():
    """``Worker._recv`` counts tallies in ``tallied`` and returns the first message that is neither a tally
    nor a compile request."""
    from autograder.core import wire
    from autograder.probing import tools
    from autograder.workers import handle

    worker = handle.Worker.__new__(handle.Worker)
    r, w = os.pipe()
    worker._res_r, worker.tallied, worker._budget = r, {}, None
    try:
        for name in ("forward", "forward", "autodiff"):
            wire.send(w, {tools.TALLY: name})
        wire.send(w, {"ok": True, "value": 1})
        assert worker._recv(time.monotonic() + 30) == {"ok": True, "value": 1}
        assert worker.tallied == {"forward": 2, "autodiff": 1}
    finally:
        os.close(r)
        os.close(w)


# --------------------------------------------------------------------------- ex11, ex12, ex13: tallied at the event
def _tallies(frames: list) -> dict[str, int]:
    from autograder.probing import tools

    out: dict[str, int] = {}
    for f in frames:
        assert tools.is_tally(f), f
        out[f[tools.TALLY]] = out.get(f[tools.TALLY], 0) + 1
    return out


def test_ex11_graphs_and_compile_calls_are_tallied_as_dynamo_counts_them():
    """Each graph Dynamo hands a backend and each torch.compile call during a probe is one tally: writing
    Dynamo's own count back afterwards (as forge_ex11_dynamo_graph_counter does) leaves the grader's."""
    status, frames = _tally_in_subprocess("""
        import torch
        from autograder.exercises.ex11_torch_compile import probes
        probes._fresh()
        with probes._CompileCounter() as counter:
            f = torch.compile(lambda x: torch.sin(x) * 2.0, backend="eager", dynamic=False)
        for n in (2, 3, 4):
            f(torch.ones(n))
        assert probes._graphs() == 3 and counter.calls == 1
        probes._counters["stats"]["unique_graphs"] = 1  # rewound: no tally, and none taken back
        dict.__setitem__(probes._counters["stats"], "unique_graphs", 0)
    """, fd_open=True)
    assert status == 0
    assert _tallies(frames) == {"graph": 3, "compile": 1}


def test_ex12_block_runs_and_saved_tensors_are_tallied():
    """Every block's run (``block_forward`` during the call, ``block_recompute`` inside the backward pass) and
    every tensor the probe's hooks see saved is one tally, as the worker's own logs and count have them."""
    status, frames = _tally_in_subprocess("""
        import json, sys, types
        import numpy as np
        import torch.utils.checkpoint as cp
        from autograder.exercises.ex12_checkpointing import probes
        mod = types.SimpleNamespace(torch_checkpointed=lambda blocks, x: [
            x := cp.checkpoint(b, x, use_reentrant=False) for b in blocks][-1])
        rng = np.random.default_rng(0)
        weights = [rng.standard_normal(s).astype(np.float32) for s in [(3, 3), (3,)] * 3]
        got = probes.probe_torch(mod, weights, rng.standard_normal((2, 3)).astype(np.float32), True,
                                 np.ones((2, 3), np.float32))
        print(json.dumps({"forward": got["forward_log"], "backward": got["backward_log"], "saved": got["saved"]}),
              file=sys.stderr)
        assert got["forward_log"] == [0, 1, 2] and got["backward_log"] == [2, 1, 0]
        assert got["saved"] > 0
        saved = got["saved"]
        sys.exit(100 + saved)
    """, fd_open=True)
    assert status > 100
    assert _tallies(frames) == {"block_forward": 3, "block_recompute": 3, "saved": status - 100}


def test_ex13_each_trace_of_the_loss_is_tallied_with_its_rows():
    """The probe's loss tallies ``trace`` and ``rows.<rows per device>`` each time it is traced, none when it
    runs eagerly."""
    status, frames = _tally_in_subprocess("""
        import jax
        import numpy as np
        from autograder.exercises.ex13_spmd import probes
        record = probes._record()
        loss = probes._make_loss(record)
        params = {"w": np.ones((2, 1), np.float32), "b": np.zeros(1, np.float32)}
        x, y = np.ones((6, 2), np.float32), np.zeros((6, 1), np.float32)
        loss(params, x, y)  # eager: not a trace
        jitted = jax.jit(loss)
        jitted(params, x, y)
        jitted(params, x, y)  # cached: no trace
        jax.jit(loss)(params, x[:4], y[:4])
        assert record["traces"] == 2 and record["rows"] == [6, 4]
    """, fd_open=True)
    assert status == 0
    assert _tallies(frames) == {"trace": 2, "rows.6": 1, "rows.4": 1}


def _judging_ctx(calls: list, reference: dict | None = None):
    """A Ctx whose student answers ``calls`` in order, ``(probe, answer, tallies)`` each (tallies None: nothing
    counted outside the worker, as in a notebook); the reference answers from ``reference`` by probe."""
    import numpy as np

    from autograder.core.suite import Ctx

    state: dict = {"i": 0, "tallied": None}

    def student(probe, call, scale, kwargs):
        want, answer, tallied = calls[state["i"]]
        assert probe == want, (probe, want)
        state["i"] += 1
        state["tallied"] = tallied
        return answer

    return Ctx(rng=np.random.default_rng(0), seed=0, device={"torch": "cpu", "jax": "cpu"}, student=student,
               reference=lambda probe, kwargs: (reference or {})[probe],
               counted=lambda name: None if state["tallied"] is None else state["tallied"].get(name, 0))


def _fails(check, ctx) -> str | None:
    from autograder.core.suite import Fail

    try:
        check(ctx)
    except Fail as err:
        return err.key
    return None


@pytest.mark.parametrize("graphs, tallied, key", [
    (1, {"graph": 1}, None),
    (1, None, None),  # the notebook's own check: the worker's count
    (1, {"graph": 6}, "EX11_ANY_BATCH_RECOMPILES"),  # the worker's count written back (forged)
    (1, {"graph": 0}, "EX11_ANY_BATCH_NOT_COMPILED"),  # a count written up: the smaller one is judged
    (6, {"graph": 6}, "EX11_ANY_BATCH_RECOMPILES"),
])
def test_ex11_any_batch_judges_the_stricter_count(graphs, tallied, key):
    from autograder.hidden.ex11_torch_compile import any_batch_compiles_once

    ctx = _judging_ctx([("any_batch", {"graphs": [min(graphs, 1)] * 6 + [graphs]}, tallied)])
    assert _fails(any_batch_compiles_once, ctx) == key


@pytest.mark.parametrize("later, key", [
    ({}, None),
    ({"compile": 1}, "EX11_STEP_REWRAPS"),  # the worker says 0 torch.compile calls in the step (rewound)
    ({"graph": 1}, "EX11_STEP_RECOMPILES"),  # the worker says no new graph (Dynamo's count written back)
])
def test_ex11_step_judges_the_grader_counts_call_by_call(later, key):
    """The step is built in one call and run in one call per step: a tally in a later step's call fails the
    check whatever the worker's answers say (all of them honest-looking here)."""
    import numpy as np

    from autograder.hidden.ex11_torch_compile import CAPTURE_STEPS, compiled_step_captures_once

    state = {"w": np.ones(2, np.float32)}
    step = {"loss": 1.0, "loss_compiled": 1.0, "graphs": 1, "compiles": 0, "state": state}
    calls = [("train_open", {"compiles": 1, "graphs": 0}, {"compile": 1}), ("train_call", step, {"graph": 1})]
    calls += [("train_call", step, later)] * (CAPTURE_STEPS - 1)
    ctx = _judging_ctx(calls, {"train_compiles": {"losses": [1.0] * CAPTURE_STEPS, "state": state}})
    assert _fails(compiled_step_captures_once, ctx) == key


@pytest.mark.parametrize("answer, tallied, key", [
    ({"saved": 3}, {"saved": 3}, None),
    ({"saved": 3}, None, None),
    ({"saved": 0}, {"saved": 408}, "EX12_TORCH_NOT_FEWER"),  # the worker's count zeroed (forged)
])
def test_ex12_saved_tensors_judge_the_larger_count(answer, tallied, key):
    from autograder.hidden.ex12_checkpointing import torch_ckpt_saves_fewer

    ctx = _judging_ctx([("torch", answer, tallied)], {"torch_plain_saved": 8})
    assert _fails(torch_ckpt_saves_fewer, ctx) == key


@pytest.mark.parametrize("tallied, key", [
    ({"block_forward": 4, "block_recompute": 4}, None),
    (None, None),
    ({"block_forward": 4, "block_recompute": 0}, "EX12_TORCH_NO_RECOMPUTE"),  # the logs written (forged)
    ({"block_forward": 8, "block_recompute": 4}, "EX12_TORCH_FORWARD_ORDER"),
    ({"block_forward": 4, "block_recompute": 8}, "EX12_TORCH_RECOMPUTE_ORDER"),
])
def test_ex12_recomputation_judges_the_grader_counts(tallied, key):
    import numpy as np

    from autograder.hidden.ex12_checkpointing import torch_ckpt_recomputes_each_block

    grads = [np.ones(2, np.float32)]
    got = {"forward_log": [0, 1, 2, 3], "backward_log": [3, 2, 1, 0], "out": grads[0], "grads": grads,
           "x_grad": grads[0]}
    ctx = _judging_ctx([("torch", got, tallied)], {"torch": dict(got)})
    assert _fails(torch_ckpt_recomputes_each_block, ctx) == key


_DEVICES = ("devices", {"count": 2, "platform": "cpu"}, None)


@pytest.mark.parametrize("tallied, key", [
    ({"trace": 1, "rows.8": 1}, None),
    (None, None),
    ({"trace": 1, "rows.16": 1}, "EX13_NOT_SPLIT"),  # the worker's rows written (forged)
    ({}, "EX13_LOSS_NOT_TRACED"),
])
def test_ex13_rows_per_device_judge_the_grader_counts(tallied, key):
    from autograder.hidden.ex13_spmd import dp_step_splits_batch

    ctx = _judging_ctx([_DEVICES, ("dp_step_with", {"rows": [8], "batch": 16}, tallied)],
                       {"devices": {"count": 2}, "dp_step": {"batch": 16}})
    assert _fails(dp_step_splits_batch, ctx) == key


@pytest.mark.parametrize("per_call, key", [
    ([{"trace": 1}, {}, {}], None),
    ([{"trace": 1}, {"trace": 1}, {"trace": 1}], "EX13_RETRACES"),  # the worker's traces rewound (forged)
    ([{}, {}, {}], "EX13_NOT_JITTED"),
])
def test_ex13_traces_judge_the_grader_counts_call_by_call(per_call, key):
    from autograder.hidden.ex13_spmd import dp_step_compiles_once

    calls = [_DEVICES]
    for _ in (1, 2):  # mesh sizes 1 and 2
        calls.append(("dp_open", {}, {}))
        calls += [("dp_call", {"traces": 1, "calls": 1}, t) for t in per_call]
    ctx = _judging_ctx(calls, {"devices": {"count": 2}})
    assert _fails(dp_step_compiles_once, ctx) == key


@pytest.mark.parametrize("worker, grader, want", [
    (3, None, (3, 3)),  # nothing counted outside the worker (the notebook's own check): the worker's count
    (3, 3, (3, 3)),
    (0, 5, (0, 5)),  # the worker's count rewound: a check that forbids the events judges the grader's 5
    (5, 0, (0, 5)),  # written up: a check that needs them judges the grader's 0
])
def test_counts_are_combined_one_way(worker, grader, want):
    from autograder.core.suite import Ctx, stricter

    assert stricter(worker, grader) == want
    ctx = Ctx(rng=None, seed=0, device={}, student=None, reference=None,
              counted=None if grader is None else (lambda name: grader))
    assert ctx.counts("any", worker) == want


def test_no_hidden_suite_combines_counts_its_own_way():
    """The worker's count and the grader's meet only in ``Ctx.counts``/``stricter`` (one mechanism): a helper
    of a hidden suite that reads ``ctx.counted`` (as ex12's ``_tallied`` and ex13's ``_counted`` once did, each
    with its own rule) fails this; the checks themselves may read it, to sum counts over several calls."""
    import ast

    from autograder.core.paths import ROOT

    helpers = []
    for path in sorted((ROOT / "autograder" / "hidden").glob("ex*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            checks = any("check" in ast.unparse(d) for d in node.decorator_list)
            reads = any(isinstance(n, ast.Attribute) and n.attr == "counted" for n in ast.walk(node))
            if reads and not checks:
                helpers.append(f"{path.name}:{node.name}")
    assert helpers == []
