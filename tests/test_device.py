"""Device choice and precision policy (docs/devices-and-tolerances.md), the 'not graded on this device' path."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder import hidden
from autograder.core import device as _device
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.core.suite import Suite


def test_cpu_is_cpu():
    assert _device.resolve("cpu") == {"torch": "cpu", "jax": "cpu"}


def test_auto_without_accelerator_is_cpu(monkeypatch):
    monkeypatch.setattr(_device, "_accelerator_present", lambda: False)
    assert _device.resolve("auto") == {"torch": "cpu", "jax": "cpu"}


@pytest.mark.parametrize("seen,requested,expected", [
    ({"torch": "cuda", "jax": "gpu"}, "auto", {"torch": "cuda", "jax": "gpu"}),
    ({"torch": "cuda", "jax": "cpu"}, "cuda", {"torch": "cuda", "jax": "cpu"}),
])
def test_simulated_accelerators(seen, requested, expected):
    notes: list[str] = []
    assert _device.resolve(requested, detect=lambda: seen, notes=notes) == expected
    assert notes == []


def test_a_tpu_host_grades_jax_on_the_cpu_unless_asked_and_says_why():
    """``auto`` keeps JAX on the CPU of a TPU host, with a note saying what ``--device tpu`` does and why it is not
    the default (docs/devices-and-tolerances.md: a chip open per worker, one worker at a time); ``tpu`` puts JAX on
    the chip and torch, which has no TPU, on the CPU."""
    tpu_host = {"torch": "cpu", "jax": "tpu"}
    notes: list[str] = []
    assert _device.resolve("auto", detect=lambda: tpu_host, notes=notes) == {"torch": "cpu", "jax": "cpu"}
    assert len(notes) == 1 and "--device tpu" in notes[0] and "one worker at a time" in notes[0]
    assert _device.resolve("tpu", detect=lambda: tpu_host) == {"torch": "cpu", "jax": "tpu"}


def test_a_runs_device_note_reaches_the_instructor(monkeypatch):
    """GradingRun keeps the note, and the session hands it on before the isolation's (each a line)."""
    from autograder.engine import session as _session
    from autograder.engine.run import GradingRun
    from autograder.reports.progress import Progress

    monkeypatch.setattr(_device, "_accelerator_present", lambda: True)
    monkeypatch.setattr(_device, "_detect", lambda: {"torch": "cpu", "jax": "tpu"})
    run = GradingRun(device="auto", exercises=["ex01_torch_mlp"])
    try:
        assert run.device == {"torch": "cpu", "jax": "cpu"} and len(run.device_notes) == 1
    finally:
        run.close()
    seen: list[str] = []
    monkeypatch.setattr(_session, "check_isolation", lambda run, wanted: "minimal isolation (a test's)")
    monkeypatch.setattr(GradingRun, "grade", lambda self, *a, **k: [])
    _session.grade_batch(lambda **kw: GradingRun(**kw), [], [], interrupts=_session.Interrupts(), add=lambda r: None,
                         progress=Progress(0, tasks_per_item=1, enabled=False),
                         on_note=seen.append, device="auto", exercises=["ex01_torch_mlp"])
    assert seen == [run.device_notes[0], "minimal isolation (a test's)"]


@pytest.mark.parametrize("requested", ["cuda", "tpu"])
def test_absent_device_is_an_error_not_a_cpu_run(requested):
    with pytest.raises(_device.DeviceError, match=f"--device {requested}"):
        _device.resolve(requested, detect=lambda: {"torch": "cpu", "jax": "cpu"})


def test_cli_refuses_absent_device(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(SOLUTIONS), "--device", "cuda",
                           "--only", "ex01_torch_mlp"], capture_output=True, text=True, cwd=ROOT)
    if "cuda" in _device._detect().get("torch", ""):
        pytest.skip("a CUDA device is present")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no CUDA device" in done.stderr


def test_workers_pin_threads_and_precision(run):
    worker = run.start_worker("ex01_torch_mlp", str(SOLUTIONS / "ex01_torch_mlp.py"), "student")
    try:
        env = worker.call("__env__", {}, 30)["value"]
    finally:
        worker.close()
    assert env["torch_threads"] == 1 and env["omp_threads"] == "1"
    assert env["torch_tf32_matmul"] is False and env["torch_tf32_cudnn"] is False
    assert env["torch_matmul_precision"] == "highest"
    assert env["jax_matmul_precision"] == "highest"


def test_json_records_devices_and_precision(run):
    res = run.grade([str(SOLUTIONS)], only=["ex01_torch_mlp"])[0]
    assert res["device"] == {"torch": "cpu", "jax": "cpu"}
    assert res["precision"] == {"torch_tf32": False, "torch_matmul_precision": "highest",
                                "jax_matmul_precision": "highest"}
    json.dumps(res)


def test_accelerator_only_check_is_reported_not_skipped(run, monkeypatch):
    real = hidden.load_suite

    def with_gpu_check(exercise):
        base = real(exercise)
        suite = Suite(exercise, checks=list(base.checks))

        @suite.check(points=1, needs="cuda")
        def cuda_only_check(ctx):
            raise AssertionError("must not run on CPU")

        return suite

    monkeypatch.setattr(hidden, "load_suite", with_gpu_check)
    res = run.grade([str(SOLUTIONS)], only=["ex01_torch_mlp"])[0]["exercises"]["ex01_torch_mlp"]
    test = next(t for t in res["tests"] if t["name"] == "cuda_only_check")
    assert test["passed"] is False and test["score"] == 0 and test["code"] == "NOT_ON_DEVICE"
    assert "not graded on this device" in test["message"]
    assert res["max_score"] == real("ex01_torch_mlp").max_score + 1
