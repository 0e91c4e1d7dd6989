"""A run's zygotes import and warm only what the exercises it is made for need (``GradingRun(exercises=...)``).

- what each exercise needs comes from its own ``META`` (``frameworks``, ``dynamo``, ``compiles``);
- a run planned for a PyTorch-only exercise holds no JAX and no ``torch._dynamo`` in its one zygote, a run
  planned for a JAX-only one no torch; a run planned for both frameworks keeps the pair, Dynamo left out
  unless planned;
- fail safe: a worker of an exercise outside the plan is still forked from the zygote and imports the rest
  itself (sandboxed: JAX, torch, torch._dynamo and a torch.compile after the fork), and grades as always;
  a student's module importing JAX in a PyTorch exercise still loads and gets its marks;
- ``tapetrace grade --only`` makes its run for those exercises.
"""

from __future__ import annotations

import pytest
from conftest import SEED

from autograder.core import device as _device
from autograder.core import registry as _registry
from autograder.core.exercise import Exercise
from autograder.core.paths import SOLUTIONS
from autograder.engine.run import GradingRun
from autograder.workers import launch as _launch
from autograder.workers import warmup as _warmup

TORCH_EX, JAX_EX, COMPILE_EX = "ex01_torch_mlp", "ex04_jax_mlp", "ex11_torch_compile"
JAX_OUTSIDE = "ex08_jax_transforms"  # a JAX-only exercise outside a PyTorch plan (a short one)


def _zygotes(run: GradingRun) -> list[_launch.ZygoteLauncher]:
    inner = run.launcher.inner
    zygotes = [inner.jax, inner.full] if isinstance(inner, _launch.ZygotePair) else [inner]
    for z in zygotes:
        assert isinstance(z, _launch.ZygoteLauncher)
        assert z.settled.wait(120), "the zygote never finished its imports"
    return zygotes


def _mapped(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as fh:
        return fh.read()


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[1])


def _full_marks(row: dict, ex: str) -> None:
    got = row["exercises"][ex]
    assert got["status"] == "graded" and got["score"] == got["max_score"] > 0, got.get("message")
    assert all(t["passed"] for t in got["tests"]), [t["name"] for t in got["tests"] if not t["passed"]]


def test_what_each_exercise_needs_comes_from_its_meta():
    assert _registry.zygote_needs(None) == _registry.ZYGOTE_NEEDS
    assert _registry.zygote_needs([TORCH_EX]) == {"torch"}
    assert _registry.zygote_needs([JAX_EX]) == {"jax"}
    assert _registry.zygote_needs([COMPILE_EX]) == {"torch", "dynamo", "compile"}
    assert _registry.zygote_needs([TORCH_EX, "ex02_torch_training"]) == {"torch", "dynamo"}
    assert _registry.zygote_needs([TORCH_EX, JAX_EX]) == {"torch", "jax"}
    assert _registry.zygote_needs(["ex99_unknown"]) == _registry.ZYGOTE_NEEDS  # unknown: everything
    assert _registry.zygote_needs([]) == frozenset()
    assert _registry.zygote_needs(_registry.EXERCISES) == _registry.ZYGOTE_NEEDS
    assert [ex for ex, meta in _registry.REGISTRY.items() if meta.compiles] == [COMPILE_EX]
    assert _warmup.planned(_warmup.ALL_NEEDS) == _warmup.PRELOAD
    assert _warmup.planned({"torch"}) == ("numpy", "torch")
    assert _warmup.planned({"jax"}) == _warmup.JAX_ONLY
    with pytest.raises(ValueError, match="torch"):
        Exercise(title="t", frameworks=("jax",), cost=1.0, names=("f",), compiles=True)


def test_a_pytorch_plan_imports_no_jax_and_no_dynamo_and_still_grades_jax_work(tmp_path):
    """Planned for ex01: one zygote, holding torch but neither JAX nor torch._dynamo (its report and its
    mapped libraries say so). A JAX exercise's worker is still forked from it and grades with full marks; a
    student's ex01 that imports JAX at the top (as a notebook does) loads in its sandbox and gets full marks."""
    run = GradingRun(device="cpu", seed=SEED, timeout=60.0, exercises=[TORCH_EX])
    try:
        (zygote,) = _zygotes(run)
        assert zygote.imported == ["numpy", "torch"]
        maps = _mapped(zygote.pid)
        assert "libtorch_cpu" in maps and "jaxlib" not in maps
        worker = run.start_worker(JAX_OUTSIDE, str(SOLUTIONS / f"{JAX_OUTSIDE}.py"), "reference")
        try:
            assert worker.status.get("status") == "loaded", worker.status
            assert _ppid(worker.proc.pid) == zygote.pid  # forked, not spawned: it imported JAX itself
            assert "jaxlib" in _mapped(worker.proc.pid)
        finally:
            worker.close()
        sub = tmp_path / "sub"
        sub.mkdir()
        future = "from __future__ import annotations\n"
        solution = (SOLUTIONS / f"{TORCH_EX}.py").read_text()
        assert future in solution
        (sub / f"{TORCH_EX}.py").write_text(solution.replace(future, future + "import jax\nimport jax.numpy as jnp\n", 1))
        (sub / f"{JAX_OUTSIDE}.py").write_text((SOLUTIONS / f"{JAX_OUTSIDE}.py").read_text())
        (row,) = run.grade([str(sub)], only=[TORCH_EX, JAX_OUTSIDE], jobs=2)
    finally:
        run.close()
    _full_marks(row, TORCH_EX)
    _full_marks(row, JAX_OUTSIDE)


def test_a_jax_plan_imports_no_torch_and_still_grades_a_compile_exercise():
    """Planned for ex04: one zygote without torch. ex11, outside the plan, gets full marks: its sandboxed
    student worker imports torch and torch._dynamo after the fork and compiles in its own scratch."""
    run = GradingRun(device="cpu", seed=SEED, timeout=60.0, exercises=[JAX_EX])
    try:
        (zygote,) = _zygotes(run)
        assert zygote.imported == list(_warmup.JAX_ONLY)
        assert "libtorch" not in _mapped(zygote.pid)
        (row,) = run.grade([str(SOLUTIONS)], only=[COMPILE_EX], jobs=1)
    finally:
        run.close()
    _full_marks(row, COMPILE_EX)


def test_a_plan_of_both_frameworks_keeps_the_pair_and_dynamo_only_when_planned():
    run = GradingRun(device="cpu", seed=SEED, exercises=[TORCH_EX, JAX_EX])
    try:
        if run.plan.launcher != "pair":
            pytest.skip(f"this box plans the {run.plan.launcher} launcher")
        jax, full = _zygotes(run)
        assert jax.imported == list(_warmup.JAX_ONLY)
        assert full.imported == ["numpy", "torch", *_warmup.JAX_ONLY[1:]]  # no torch._dynamo
    finally:
        run.close()


def test_tapetrace_grade_only_makes_its_run_for_those_exercises(monkeypatch):
    """``--only`` reaches the run (what its zygotes import); the run is refused at once here (a device error)."""
    made: list[dict] = []

    def refuse(**kwargs):
        made.append(kwargs)
        raise _device.DeviceError("stop here")

    monkeypatch.setattr("autograder.engine.run.GradingRun", refuse)
    from autograder.cli.app import main

    code = main(["grade", str(SOLUTIONS), "--only", "ex01,ex04", "--quiet"])
    assert code != 0 and len(made) == 1
    assert made[0]["exercises"] == [TORCH_EX, JAX_EX]


def test_a_default_run_still_imports_everything(run):
    """exercises=None (the session's run, as every run before plans): both zygotes, Dynamo warmed."""
    if run.plan.launcher != "pair":
        pytest.skip(f"this box plans the {run.plan.launcher} launcher")
    jax, full = _zygotes(run)
    assert jax.imported == list(_warmup.JAX_ONLY)
    assert full.imported == list(_warmup.PRELOAD)


def test_the_pytest_entry_makes_its_run_for_the_selected_exercises(monkeypatch, tmp_path):
    """``pytest --tapetrace-submission`` makes its run on the first check, for the exercises whose checks
    were selected (``-k``)."""
    from autograder import pytest_plugin as _plugin

    made: list[dict] = []

    def refuse(**kwargs):
        made.append(kwargs)
        raise _device.DeviceError("stop here")

    class Config:
        def getoption(self, name: str):
            return {"tapetrace_device": "cpu", "tapetrace_timeout": 30.0, "tapetrace_lang": "en",
                    "tapetrace_public_only": False, "tapetrace_sandbox_skip": ""}[name]

    monkeypatch.setattr("autograder.engine.run.GradingRun", refuse)
    session = _plugin.TapetraceSession(Config(), str(tmp_path), SEED)
    session._last = {TORCH_EX: f"{TORCH_EX}::a", COMPILE_EX: f"{COMPILE_EX}::b"}
    with pytest.raises(pytest.exit.Exception):
        session.grading_run()
    assert made[0]["exercises"] == [TORCH_EX, COMPILE_EX]
