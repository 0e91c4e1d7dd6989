"""``--device tpu``: the chip leased by the grader to one worker at a time (autograder/engine/chip.py).

CI has no TPU: the end-to-end test stands a locked file in for libtpu's lock (``TAPETRACE_TEST_CHIP``: a worker that
"opens the chip" takes an exclusive flock, not waiting, and fails as a second process on a real chip fails), with
JAX computing on the CPU. On a TPU host the same path runs on the chip (scripts/device_check.py --device tpu;
docs/devices-and-tolerances.md has the measured table).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from autograder.core import device as _device
from autograder.core.paths import EXERCISES_DIR, SOLUTIONS
from autograder.engine import chip as _chip
from tests.conftest import MUTANTS, make_submission, mutant_meta

JAX_EX, TORCH_EX, MESH_EX = "ex04_jax_mlp", "ex01_torch_mlp", "ex13_spmd"


def test_the_lease_has_one_holder_and_lends_itself_back():
    lease = _chip.ChipLease()
    order: list[str] = []
    with lease.hold():
        with lease.hold():  # re-entrant: a grading's reference turn inside its own hold
            assert lease.held_here()
        def take_a_turn() -> None:
            with lease.hold():
                order.append("other")

        other = threading.Thread(target=take_a_turn)
        other.start()
        other.join(0.2)
        assert other.is_alive() and order == []  # waits for its turn
        with lease.lent():  # the holder's worker closed: the other one's turn
            other.join(5)
            assert order == ["other"] and not lease.held_here()
        assert lease.held_here()
    assert not lease.held_here()
    assert lease.turns == 3  # ours, the other's, ours again


def test_exercises_on_the_chip():
    tpu = {"torch": "cpu", "jax": "tpu"}
    assert _device.for_exercise(tpu, 8) == {"torch": "cpu", "jax": "cpu"}  # ex13's meshes: host CPU devices
    assert _device.for_exercise(tpu, None) is tpu and _device.for_exercise({"jax": "cpu"}, 8) == {"jax": "cpu"}
    assert _device.on_chip(tpu, "jax") and _device.on_chip(tpu, "all") and not _device.on_chip(tpu, "torch")
    assert not _device.on_chip({"torch": "cpu", "jax": "cpu"}, "jax")


def test_a_miss_on_the_chip_is_a_turn_never_a_verdict():
    """A reference answer nobody asked for yet, while this thread's student worker holds the chip, stops the check
    (a BaseException: no check's ``except Exception`` takes it) instead of opening the chip a second time."""
    assert not issubclass(_chip.ReferenceMiss, Exception)


@pytest.fixture(scope="module")
def tpu_rows(tmp_path_factory):
    """The solutions, the stubs and two ex04 mutants graded with ``--device tpu`` on the test chip, two at a time,
    and the chip's log (one line per take or refusal)."""
    from autograder.engine.run import GradingRun

    tmp = tmp_path_factory.mktemp("chip")
    chip = tmp / "chip"
    mp = pytest.MonkeyPatch()
    mp.setenv(_device.TEST_CHIP_ENV, str(chip))
    mp.setattr(_device, "_detect", lambda: {"torch": "cpu", "jax": "tpu"})
    mutants = sorted((MUTANTS / JAX_EX).glob("forward_*.py"))[:2]
    subs = [str(SOLUTIONS), str(EXERCISES_DIR)] + [
        str(make_submission(tmp / m.stem, {JAX_EX: m.read_text()}, only=[JAX_EX])) for m in mutants]
    run = GradingRun(device="tpu", timeout=60.0, seed=2026)
    try:
        assert run.device == {"torch": "cpu", "jax": "tpu"} and run.chip is not None
        rows = run.grade(subs, only=[JAX_EX, TORCH_EX, MESH_EX], jobs=2)
        turns = run.chip.turns
    finally:
        run.close()
        mp.undo()
    log = (Path(str(chip) + ".log").read_text().split() if Path(str(chip) + ".log").exists() else [])
    return rows, mutants, log[1::2], turns


def test_tpu_run_grades_as_the_contract_says(tpu_rows):
    rows, mutants, _log, _turns = tpu_rows
    solution, stub, *graded = rows
    for ex in (JAX_EX, TORCH_EX, MESH_EX):
        assert solution["exercises"][ex]["score"] == solution["exercises"][ex]["max_score"] > 0, ex
        assert stub["exercises"][ex]["score"] == 0 and stub["exercises"][ex]["status"] == "graded", ex
    for path, row in zip(mutants, graded, strict=True):
        failed = {t["name"] for t in row["exercises"][JAX_EX]["tests"] if not t["passed"]}
        assert failed == set(mutant_meta(path)["fails"]), path.name
    assert solution["device"] == {"torch": "cpu", "jax": "tpu"}


def test_tpu_run_takes_turns_on_the_chip(tpu_rows):
    """Every chip worker took the chip at its first try (no two at once), the reference's turn came first, and the
    torch-only and mesh exercises never asked for it."""
    _rows, mutants, log, turns = tpu_rows
    assert "refused" not in log, log
    # the reference's turn, then one per student worker of ex04 (solution, stub, mutants); more only for a check that
    # asked the reference something new (a turn each)
    assert log.count("open") >= 2 + len(mutants) + 1 and turns >= 2 + len(mutants) + 1


def test_the_run_says_what_the_chip_cost():
    """``tapetrace grade --device tpu`` ends with the chip's turns for the run (issue 54: the cost per submission),
    after the progress display closed; a run off a chip says nothing of it."""
    from autograder.engine import session as _session

    notes: list[str] = []

    class Progress:
        def begin(self):
            notes.append("begin")

        def update(self, _res):
            pass

        def task_done(self, *_args):
            pass

        def close(self):
            notes.append("closed")

    def make(turns):
        class Run:
            seed = 1
            chip = None if turns is None else _chip.ChipLease()

            def __init__(self, **_kw):
                if self.chip is not None:
                    self.chip.turns = turns

            def grade(self, paths, only=None, jobs=1, on_result=None, **_kw):
                return []

            def cancel(self):
                pass

            def close(self):
                pass

            def keep_outputs(self, places, rewritten):
                pass

        return Run

    for turns in (9, None, 0):
        notes.clear()
        with _session.Interrupts() as interrupts:
            _session.grade_batch(make(turns), ["a", "b", "c"], ["ex04"], interrupts=interrupts, add=lambda r: None,
                                 progress=Progress(), on_note=notes.append)
        said = [n for n in notes if "TPU chip" in n]
        if turns:
            assert notes[-2:-1] == ["closed"] and said == [notes[-1]]
            assert "changed hands 9 times for 3 submission(s), 3.0 a submission" in said[0]
            assert "--device auto` keeps JAX on the CPU" in said[0]
        else:
            assert not said and notes[-1] == "closed"
