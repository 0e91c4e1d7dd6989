"""The grading-speed machinery keeps its promises (speed itself is measured in benchmarks/).

- exercises are scheduled JAX-only first (their zygote is ready first), then longest first;
- probes turn numpy data into JAX arrays without compiling (``jnp.asarray`` compiles per shape);
- CPU runs compile at XLA level 0, GPU/TPU runs keep XLA's defaults;
- the JAX compilation cache persists across runs and re-runs load from it (what students' workers may
  borrow from it: tests/test_compile_cache.py).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SEED

from autograder.core import registry as _registry
from autograder.core.paths import EXERCISES, SOLUTIONS
from autograder.engine import jaxcache as _jaxcache
from autograder.engine.jaxcache import CACHE_ENV, jax_cache_dir
from autograder.engine.run import GradingRun, schedule
from autograder.workers import environment as _environment
from autograder.workers import handle as _handle
from autograder.workers import launch as _launch


def test_schedule_puts_jax_only_first_then_longest_first():
    order = schedule(list(EXERCISES))
    assert sorted(order) == sorted(EXERCISES)
    n = len(_registry.JAX_ONLY)
    assert n and set(order[:n]) == set(_registry.JAX_ONLY)
    for group in (order[:n], order[n:]):
        costs = [_registry.cost(ex) for ex in group]
        assert costs == sorted(costs, reverse=True)
    assert order[0] == "ex07_flax_cnn"  # the longest JAX exercise starts first


def test_worker_needs_route_each_exercise_to_a_zygote_that_has_its_frameworks():
    for ex in EXERCISES:
        needs = _registry.worker_needs(ex)
        frameworks = _registry.REGISTRY[ex].frameworks
        assert needs == {("torch",): "torch", ("jax",): "jax"}.get(frameworks, "all"), ex


class _CountCompiles(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Finished XLA compilation" in record.getMessage():
            self.n += 1


def test_probe_conversion_compiles_nothing_and_equals_jnp_asarray():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from autograder.probing.tools import jax_converter

    to_jax = jax_converter()
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((3 + i, 7 - i)) for i in range(4)]  # float64: canonicalised to float32
    data += [rng.integers(0, 5, size=(11,)), rng.random(13) > 0.5, np.float32(2.5)]
    handler = _CountCompiles()
    loggers = [logging.getLogger(n) for n in ("jax._src.dispatch", "jax._src.interpreters.pxla")]
    jax.config.update("jax_log_compiles", True)
    try:
        for lg in loggers:
            lg.addHandler(handler)
        got = [to_jax(a) for a in data]
    finally:
        jax.config.update("jax_log_compiles", False)
        for lg in loggers:
            lg.removeHandler(handler)
    assert handler.n == 0, f"{handler.n} XLA compilations for {len(data)} conversions"
    for a, g in zip(data, got, strict=True):
        want = jnp.asarray(a)
        assert isinstance(g, jax.Array)
        assert g.dtype == want.dtype and g.shape == want.shape and g.weak_type == want.weak_type
        np.testing.assert_array_equal(np.asarray(g), np.asarray(want))
    # a private copy: changing the numpy input later does not change the JAX array (CPU aliases)
    a = np.ones((4, 4), np.float32)
    g = to_jax(a)
    a[:] = 7.0
    assert float(np.asarray(g).max()) == 1.0
    assert to_jax([1.0, 2.0]).dtype == jnp.asarray([1.0, 2.0]).dtype


def test_cpu_runs_compile_at_level_zero_accelerators_keep_defaults(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert set(_environment.CPU_COMPILE_FLAGS) <= set(_environment.worker_env(cpu_jax=True)["XLA_FLAGS"].split())
    gpu = _environment.worker_env(cpu_jax=False)["XLA_FLAGS"]
    assert "xla_backend_optimization_level" not in gpu and "xla_cpu_use_fusion_emitters" not in gpu
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=3")  # the user's choice wins
    assert _environment.worker_env(cpu_jax=True)["XLA_FLAGS"].count("xla_backend_optimization_level") == 1


def test_xla_reads_every_flag_we_add(monkeypatch):
    """XLA's flag parser stops at the first token that is not a ``--flag`` and ignores the rest silently:
    ours must all be flags and come before anything of the user's (a stray bare token there once
    switched level 0 off, ~25% more compile time per submission)."""
    monkeypatch.setenv("XLA_FLAGS", "stray_token=1 --xla_dump_to=/nowhere")
    tokens = _environment.worker_env(cpu_jax=True)["XLA_FLAGS"].split()
    first_bare = next(i for i, t in enumerate(tokens) if not t.startswith("--"))
    assert set(_environment.CPU_COMPILE_FLAGS) <= set(tokens[:first_bare])
    assert "--xla_cpu_multi_thread_eigen=false" in tokens[:first_bare]
    assert tokens[first_bare:] == ["stray_token=1", "--xla_dump_to=/nowhere"]  # the user's, unchanged
    monkeypatch.delenv("XLA_FLAGS")
    assert all(t.startswith("--") for t in _environment.worker_env(cpu_jax=True)["XLA_FLAGS"].split())


def test_flags_this_xla_does_not_know_are_left_out(monkeypatch):
    """XLA aborts on an unknown flag: one an older jaxlib lacks must not reach its workers."""
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setattr(_environment, "CPU_COMPILE_FLAGS", (*_environment.CPU_COMPILE_FLAGS, "--xla_cpu_tapetrace_no_such_flag=1"))
    _environment._xla_knows.cache_clear()
    try:
        tokens = _environment.worker_env(cpu_jax=True)["XLA_FLAGS"].split()
    finally:
        _environment._xla_knows.cache_clear()
    assert "--xla_cpu_tapetrace_no_such_flag=1" not in tokens
    assert "--xla_backend_optimization_level=0" in tokens


def test_xla_accepts_the_worker_flags():
    """A JAX CPU backend starts under the workers' XLA_FLAGS (an unknown flag would abort it)."""
    env = _environment.worker_env(cpu_jax=True)
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-c", "import jax.numpy as jnp; print(float(jnp.ones(3).sum()))"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "3.0", proc.stderr[-2000:]


def test_cache_dir_choices_and_pruning(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "run")
    path, own = jax_cache_dir(str(tmp_path))
    assert own and os.path.isdir(path)
    os.rmdir(path)
    persistent = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(persistent))
    path, own = jax_cache_dir(str(tmp_path))
    assert not own and path == str(persistent)
    for i in range(10):  # 10 entries of 100 bytes, oldest first
        f = persistent / f"e{i}-cache"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1000 + i, 1000 + i))
    monkeypatch.setattr(_jaxcache, "CACHE_MAX_BYTES", 500)  # looked up there
    jax_cache_dir(str(tmp_path))
    left = sorted(p.name for p in persistent.iterdir())
    assert left == ["e8-cache", "e9-cache"]  # oldest removed until <= half the cap


def test_cache_persists_and_a_rerun_loads_instead_of_compiling(tmp_path, monkeypatch):
    cache = tmp_path / "jax-cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    sub = tmp_path / "sub"
    sub.mkdir()
    ex = "ex08_jax_transforms"
    (sub / f"{ex}.py").write_text((SOLUTIONS / f"{ex}.py").read_text())

    def grade() -> tuple[float, set[str]]:
        run = GradingRun(device="cpu", seed=SEED, timeout=60.0, exercises=[ex])
        try:
            res = run.grade([str(sub)], only=[ex])[0]
        finally:
            run.close()
        return res["total"], {p.name for p in Path(cache).iterdir()}

    total, first = grade()
    assert total == 10.0
    assert len(first) > 5, "the reference wrote no compile cache entries"
    total, second = grade()
    assert total == 10.0
    # same seed, same programs: every compile of the second run was a cache hit
    assert second == first, f"{len(second - first)} new entries on a re-run"


def test_jax_only_workers_come_from_the_jax_zygote_the_others_from_the_full_one(run):
    """ZygotePair routes by ``needs``: a JAX-only exercise's worker is a child of the JAX-only zygote (which
    never imports torch), a PyTorch-only or mixed one a child of the full zygote; both grade alike.
    (The session's run: a default run, its launcher chosen as any run's is.)"""
    pair = run.launcher.inner
    assert isinstance(pair, _launch.ZygotePair)
    parents = {}
    for ex in (sorted(_registry.JAX_ONLY)[0], sorted(_registry.TORCH_ONLY)[0]):
        worker = run.start_worker(ex, str(SOLUTIONS / f"{ex}.py"), "reference")
        assert worker.status.get("status") == "loaded", worker.status
        with open(f"/proc/{worker.proc.pid}/stat", "rb") as fh:
            parents[ex] = int(fh.read().rsplit(b")", 1)[1].split()[1])
        worker.close()
    jax_ex, torch_ex = parents
    assert parents[jax_ex] == pair.jax.pid
    assert parents[torch_ex] == pair.full.pid


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[1])


def test_the_full_zygote_is_forked_from_the_jax_one_and_both_are_gone_after_close():
    """The JAX stack is imported once: the full zygote is a fork of the JAX-only one (taken once that one is
    ready), not a second interpreter; closing the pair stops both, and their workers."""
    ex = sorted(_registry.TORCH_ONLY)[0]
    spec = {"exercise": ex, "role": "reference", "source_path": str(SOLUTIONS / f"{ex}.py"), "module_name": ex,
            "device": {"torch": "cpu", "jax": "cpu"}, "jax_cache": None, "needs": "torch"}
    pair = _launch.ZygotePair()
    pids = [pair.jax.pid]
    try:
        pair.full.wait_ready()
        pids.append(pair.full.pid)
        assert pair.full.pid and pair.full.pid != pair.jax.pid
        assert _ppid(pair.full.pid) == pair.jax.pid
        worker = _handle.Worker(pair, spec, 60)
        pids.append(worker.proc.pid)
        assert worker.status.get("status") == "loaded", worker.status
        assert _ppid(worker.proc.pid) == pair.full.pid
    finally:
        pair.close()
    time.sleep(0.2)
    assert not [p for p in pids if _launch._running(p)]


def test_a_full_zygote_that_died_leaves_its_exercises_to_spawned_workers():
    """The full zygote is not waited for at start: if it is gone when its first worker is asked for, that
    worker (and every later one) is spawned as a fresh interpreter instead, and still loads."""
    run = GradingRun(device="cpu", seed=SEED)
    try:
        pair = run.launcher.inner
        assert pair.full.wait_ready() is None and pair.full.pid
        os.kill(pair.full.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while pair.full.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        ex = sorted(_registry.TORCH_ONLY)[0]
        worker = run.start_worker(ex, str(SOLUTIONS / f"{ex}.py"), "reference")
        assert worker.status.get("status") == "loaded", worker.status
        with open(f"/proc/{worker.proc.pid}/stat", "rb") as fh:
            assert int(fh.read().rsplit(b")", 1)[1].split()[1]) == os.getpid()  # spawned by us
        worker.close()
    finally:
        run.close()


def test_zygote_warm_ups_leave_one_thread_and_no_dynamo_state():
    """The zygote forks workers, so its warm-ups (an Adam step, a torch.compile) must leave it single-threaded
    (tqdm's monitor thread, which AOTAutograd's progress bar would start, included) and Dynamo empty. Dynamo's
    guard-latency profiler (a CPU-cache flush per compiled frame, for a metric nothing reads) is off, and
    Dynamo still guards: a new dtype compiles a second graph, and both give the right values."""
    script = Path(__file__).parent / "scripts" / "zygote_warmups.py"
    proc = subprocess.run([sys.executable, str(script)], env=_environment.worker_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"threads": 1, "counters": 0, "guard_profiler_off": True, "results_right": True, "graphs": 2}


def test_the_zygote_reports_a_worker_exit_at_once_not_at_its_poll_timeout():
    """A worker's exit wakes the zygote (SIGCHLD on a wake-up pipe): the grader, which waits for that report
    whenever it closes a worker, is not held up until the zygote's next poll timeout."""
    from autograder.workers import zygote as _zygote

    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a zygote of our own: _Server installs its SIGCHLD handling in this process only
        code = 1
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            server = _zygote._Server(ours)
            child = os.fork()
            if child == 0:
                os._exit(0)
            server.children.add(child)
            t0 = time.monotonic()
            server.poll(20.0)
            waited = time.monotonic() - t0
            event = json.loads(theirs.recv(4096))
            os.write(report_w, json.dumps({"waited": waited, "event": event, "child": child}).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(report_w)
    try:
        got = json.loads(os.read(report_r, 4096))
    finally:
        os.close(report_r)
        os.waitpid(pid, 0)
    assert got["event"] == {"event": "exit", "pid": got["child"], "status": 0}
    assert got["waited"] < 10.0, f"the exit was reported after {got['waited']:.1f} s (poll timeout 20 s)"


def test_close_all_lets_every_worker_exit_at_once_then_kills_what_is_left():
    """close_all closes every worker's pipes before it waits for any (they exit together: the reference's
    workers at the end of a run), shares one grace period, and kills each process group after."""
    events: list[tuple[str, int]] = []

    class _Proc:
        def __init__(self, i: int) -> None:
            self.i = i

        def wait(self, timeout: float) -> None:
            assert 0.0 <= timeout <= 0.5
            events.append(("wait", self.i))

        def kill(self) -> None:
            events.append(("kill", self.i))

    class _Worker:
        def __init__(self, i: int, alive: bool = True) -> None:
            self.i, self.alive, self.proc = i, alive, _Proc(i)

        def _release(self) -> bool:
            was, self.alive = self.alive, False
            events.append(("release", self.i))
            return was

    _handle.close_all([_Worker(0), _Worker(1), _Worker(2, alive=False), _Worker(3)])
    assert events[:4] == [("release", 0), ("release", 1), ("release", 2), ("release", 3)]
    assert sorted(events[4:]) == sorted([(k, i) for i in (0, 1, 3) for k in ("wait", "kill")])


def test_the_c_library_is_loaded_once_per_process_and_shared_by_the_sandbox_layers(monkeypatch):
    """ctypes.util.find_library forks the whole process to run ldconfig: the sandbox's layers share one C
    library handle (loaded in the zygote before it forks), so a student's worker never looks it up again."""
    import ctypes
    import ctypes.util

    from autograder.sandbox import isolate as _sandbox
    from autograder.sandbox import landlock as _landlock

    _sandbox.preload()
    lib = _sandbox.c_library()

    def no_lookup(_name: str) -> str:
        raise AssertionError("the C library was looked up again")

    monkeypatch.setattr(ctypes.util, "find_library", no_lookup)
    assert _sandbox.c_library() is lib and _landlock._libc() is lib
    assert lib.syscall.restype is ctypes.c_long  # Landlock's syscalls return a long
    assert _landlock.abi_version() >= 0


def _mlir_reuse(mode: str) -> dict:
    script = Path(__file__).parent / "scripts" / "mlir_reuse.py"
    proc = subprocess.run([sys.executable, str(script), mode], env=_environment.worker_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_reused_mlir_contexts_lower_the_same_modules_and_compute_the_same_values():
    """_jaxtune: each thread reuses its MLIR context a few lowerings at a time (eager ops, jits, grads; the main
    thread and two threads at once): the lowered text and every result are the same as with JAX's fresh
    context per lowering, with about a quarter of the contexts at 4 uses each."""
    fresh, reused = _mlir_reuse("fresh"), _mlir_reuse("reuse")
    assert (reused["texts"], reused["values"]) == (fresh["texts"], fresh["values"])
    assert fresh["programs"] == reused["programs"] > 20
    assert reused["contexts"] <= fresh["contexts"] // 4 + 3, (fresh, reused)


@pytest.mark.parametrize("launcher", ["zygote", "spawn"])
def test_jax_workers_reuse_mlir_contexts_forked_or_spawned(request, launcher):
    from autograder.workers.jaxtune import LOWERINGS_PER_CONTEXT

    if launcher == "zygote":  # the session's run forks its workers from its zygotes (asserted above)
        run = request.getfixturevalue("run")
        assert isinstance(run.launcher.inner, _launch.ZygotePair)
    else:
        run = GradingRun(device="cpu", seed=SEED, launcher=launcher)
    try:
        for role in ("student", "reference"):
            worker = run.start_worker("ex06_per_example_grads", str(SOLUTIONS / "ex06_per_example_grads.py"), role)
            try:
                env = worker.call("__env__", {}, 60)["value"]
            finally:
                worker.close()
            assert env["jax_mlir_context_reuse"] == LOWERINGS_PER_CONTEXT, (launcher, role, env)
    finally:
        if launcher != "zygote":
            run.close()


def test_workers_collect_garbage_and_skip_what_the_zygote_froze(run):
    """The zygotes import with the collector off and freeze what they hold once done (_warmup.settle): a
    worker collects as usual (a cycle it makes is freed) and never scans the zygote's objects again."""
    for ex in ("ex04_jax_mlp", "ex06_per_example_grads", "ex01_torch_mlp"):  # JAX zygote, full zygote
        worker = run.start_worker(ex, str(SOLUTIONS / f"{ex}.py"), "student")
        try:
            env = worker.call("__env__", {}, 60)["value"]
        finally:
            worker.close()
        assert env["gc_enabled"] is True, (ex, env)
        assert env["gc_frozen"] > 100_000, (ex, env)
