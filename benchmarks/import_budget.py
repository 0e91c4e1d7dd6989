"""What honest multi-threaded work needs of the load (import) budget: working seconds of a notebook that trains.

A student's ex07 module trains 200 full-batch Flax steps at its top level on the digits' shapes (1,437 images, as the
seed notebooks do; XLA's threads do the work while the main thread waits). The module runs in a process that first
imported jax, flax and optax (as the zygote has them), under the workers' environment (their XLA flags: LLVM at
level 0, ``autograder.workers.environment``; ``--flags default`` for XLA's own), in a cgroup of its own where one
can be made, and is measured the grader's way
(``autograder.workers.watch.Budget``: the cgroup's CPU, else the process tree's), alone and beside CPU hogs:
``N`` hogs on every CPU, and all pinned to one CPU beside ``N`` hogs pinned there too. Each row: working
seconds, CPU seconds of the cgroup, wall seconds, the accounting used, the load average.

    .venv/bin/python benchmarks/import_budget.py [--steps 200] [--batch 1437] [--hogs 3] [--repeat 1]
                                                 [--flags worker|default]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core.paths import SOLUTIONS  # noqa: E402
from autograder.workers import environment as _environment  # noqa: E402
from autograder.workers import watch as _watch  # noqa: E402

TRAINS = """
import numpy as _np
_model = FlaxCNN(num_classes=10)
_opt = optax.adam(1e-3)
_vars = _model.init(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))
_state = _opt.init(_vars)
_step = make_flax_train_step(_model, _opt)
_rng = _np.random.default_rng(0)
_x = jnp.asarray(_rng.normal(size=({batch}, 8, 8, 1)).astype(_np.float32))
_y = jnp.asarray(_rng.integers(0, 10, {batch}).astype(_np.int32))
for _i in range({steps}):
    _vars, _state, _loss = _step(_vars, _state, _x, _y)
    if _i % 20 == 0:
        print("step", _i, float(_loss))
"""
# waits for the go (the grader's budget starts once the zygote's imports are done), then runs the module
RUNNER = """
import sys, types, jax, jax.numpy, flax.linen, optax
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
module = sys.modules["ex07_flax_cnn"] = types.ModuleType("ex07_flax_cnn")
exec(compile(open(sys.argv[1]).read(), "ex07_flax_cnn.py", "exec"), module.__dict__)
"""
HOG = "while True: pass"


def _cgroup() -> str | None:
    """A cpuacct (v1) or unified (v2) cgroup made for the measured process, or None."""
    for parent in ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        folder = os.path.join(parent, f"tapetrace-{os.getpid()}")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if _watch.cgroup_cpu(folder) is not None:
            return folder
        with contextlib.suppress(OSError):
            os.rmdir(folder)
    return None


@contextlib.contextmanager
def _hogs(n: int, cpu: int | None) -> Iterator[None]:
    cpus = [cpu] if cpu is not None else sorted(os.sched_getaffinity(0))
    procs = [subprocess.Popen([sys.executable, "-c", HOG],
                              preexec_fn=(lambda c=c: os.sched_setaffinity(0, {c})))
             for c in cpus for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def measure(module: Path, cpu: int | None, folder: str | None, env: dict[str, str] | None = None) -> dict[str, object]:
    """One run: working seconds and what else was seen."""

    def enter() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        if folder:
            Path(folder, "cgroup.procs").write_text("0")

    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(module)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, preexec_fn=enter, cwd=ROOT, env=env)
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()
    cg0 = _watch.cgroup_cpu(folder)
    budget = _watch.Budget(proc.pid, 1e9, proc.kill, cgroup=lambda: folder)
    t0 = time.monotonic()
    with _watch.watching(budget):
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.stdout.read()
        proc.wait()
    budget.step()  # what was left of the last interval (the cgroup keeps an ended process's time)
    cg1 = _watch.cgroup_cpu(folder)
    return {"working": budget.used, "cpu": (cg1 - cg0) if cg0 is not None and cg1 is not None else None,
            "wall": time.monotonic() - t0, "accounting": budget.accounting, "load": os.getloadavg()[0],
            "rc": proc.returncode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--hogs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1437)
    ap.add_argument("--flags", choices=("worker", "default"), default="worker")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the hogs and the cgroup go on a kill too
    module = Path(f"/var/tmp/tapetrace-import-budget-{os.getpid()}.py")
    module.write_text((SOLUTIONS / "ex07_flax_cnn.py").read_text() + TRAINS.format(steps=args.steps, batch=args.batch))
    env = _environment.worker_env(cpu_jax=True) if args.flags == "worker" else None
    print(f"XLA_FLAGS: {(env or os.environ).get('XLA_FLAGS', '')!r}")
    folder = _cgroup()
    one = max(os.sched_getaffinity(0))
    print("| Where | Working s | CPU s (cgroup) | Wall s | Accounting | Load |")
    print("|---|---|---|---|---|---|")
    try:
        for label, hogs, cpu in (("alone", 0, None), (f"{args.hogs} hogs per CPU", args.hogs, None),
                                 ("one CPU, alone", 0, one), (f"one CPU, {args.hogs} hogs on it", args.hogs, one)):
            for _ in range(args.repeat):
                with _hogs(hogs, cpu):
                    r = measure(module, cpu, folder, env)
                cpu_s = f"{r['cpu']:.1f}" if r["cpu"] is not None else "—"
                print(f"| {label} | {r['working']:.1f} | {cpu_s} | {r['wall']:.1f} | {r['accounting']} | "
                      f"{r['load']:.1f} |", flush=True)
    finally:
        module.unlink(missing_ok=True)
        if folder:
            with contextlib.suppress(OSError):
                os.rmdir(folder)


if __name__ == "__main__":
    main()
