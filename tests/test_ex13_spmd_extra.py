"""ex13: the workers' device counts (its valid variants: tests/mutants/ex13_spmd/valid_*.py).

The grader's ex13 workers (student and reference, zygote or spawned) run JAX on 8 CPU devices,
every other exercise on one: measured here from inside a worker.
"""

from __future__ import annotations

from conftest import make_submission

from autograder.engine.run import GradingRun

EX = "ex13_spmd"

DEVICES_PROBE = '''
import jax


def _report(*args, **kwargs):
    raise RuntimeError(f"DEVICES={jax.device_count()} PLATFORM={jax.default_backend()}")
'''


def _device_count(run: GradingRun, tmp_path, exercise: str, name: str) -> str:
    src = DEVICES_PROBE + f"\n\n{name} = _report\n"
    sub = make_submission(tmp_path / exercise, {exercise: src}, only=[exercise])
    res = run.grade([str(sub)], only=[exercise])[0]["exercises"][exercise]
    return next(t["message"] for t in res["tests"] if "DEVICES=" in t["message"])


def test_ex13_workers_have_eight_cpu_devices_and_the_others_one(run, tmp_path):
    assert "DEVICES=8 PLATFORM=cpu" in _device_count(run, tmp_path, EX, "make_data_mesh")
    assert "DEVICES=1 PLATFORM=cpu" in _device_count(run, tmp_path, "ex12_checkpointing", "checkpointed_mlp_forward")


def test_spawned_ex13_workers_have_eight_cpu_devices(tmp_path):
    spawn = GradingRun(device="cpu", timeout=60, seed=1, launcher="spawn")
    try:
        assert "DEVICES=8 PLATFORM=cpu" in _device_count(spawn, tmp_path, EX, "make_data_mesh")
    finally:
        spawn.close()
