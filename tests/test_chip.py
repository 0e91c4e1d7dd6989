"""``--device tpu``: the chip leased by the grader to one worker at a time (autograder/engine/chip.py).

CI has no TPU: the end-to-end test stands a locked file in for libtpu's lock (``TAPETRACE_TEST_CHIP``: a worker that
"opens the chip" takes an exclusive flock, not waiting, and fails as a second process on a real chip fails), with
JAX computing on the CPU. On a TPU host the same path runs on the chip (scripts/device_check.py --device tpu;
docs/devices-and-tolerances.md has the measured table).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
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
        turns, opens = run.chip.turns, run.chip.opens
    finally:
        run.close()
        mp.undo()
    log = (Path(str(chip) + ".log").read_text().split() if Path(str(chip) + ".log").exists() else [])
    return rows, mutants, log[1::2], turns, opens


def test_tpu_run_grades_as_the_contract_says(tpu_rows):
    rows, mutants, _log, _turns, _opens = tpu_rows
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
    _rows, mutants, log, turns, opens = tpu_rows
    assert "refused" not in log, log
    # the reference's turn, then one per student worker of ex04 (solution, stub, mutants); more only for a check that
    # asked the reference something new (a turn each)
    assert log.count("open") >= 2 + len(mutants) + 1
    # the run counts every process that opened the chip (what it reports: cost_note), and a turn only where the chip
    # changed hands: these gradings asked the reference nothing new, so each turn was one open (no turn taken by a
    # grading whose exercise the reference had answered already)
    assert opens == log.count("open") and turns == opens, (turns, opens, log)


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

    def make(opens):
        class Run:
            seed = 1
            chip = None if opens is None else _chip.ChipLease()

            def __init__(self, **_kw):
                if self.chip is not None:
                    for _ in range(opens):
                        self.chip.opened()

            def grade(self, paths, only=None, jobs=1, on_result=None, **_kw):
                return []

            def cancel(self):
                pass

            def close(self):
                pass

            def keep_outputs(self, places, rewritten):
                pass

        return Run

    for opens in (9, None, 0):
        notes.clear()
        with _session.Interrupts() as interrupts:
            _session.grade_batch(make(opens), ["a", "b", "c"], ["ex04"], interrupts=interrupts, add=lambda r: None,
                                 progress=Progress(), on_note=notes.append)
        said = [n for n in notes if "TPU chip" in n]
        if opens:
            assert notes[-2:-1] == ["closed"] and said == [notes[-1]]
            assert "opened 9 times for 3 submission(s), 3.0 a submission" in said[0]
            assert "--device auto` keeps JAX on the CPU" in said[0]
        else:
            assert not said and notes[-1] == "closed"


def test_unlike_changes_every_float_and_nothing_else():
    from collections import namedtuple

    pair = namedtuple("pair", "a b")
    answer = {"losses": [0.5, np.float32(2.0)], "params": {"w": np.ones((2, 3), np.float32)},
              "out": (4, 10), "ids": np.arange(3), "name": "step", "both": pair(1.0, 2), "ok": True}
    changed = _chip.unlike(answer)
    assert changed["losses"][0] != 0.5 and changed["losses"][1] != 2.0
    assert type(changed["losses"][1]) is np.float32
    w = changed["params"]["w"]
    assert w.shape == (2, 3) and w.dtype == np.float32 and not np.any(w == 1.0)
    assert changed["out"] == (4, 10) and changed["name"] == "step" and changed["ok"] is True
    assert np.array_equal(changed["ids"], np.arange(3)) and changed["both"] == pair(1.75, 2)
    changed["ids"][0] = 7  # a copy: what a check does to a stand-in's answer never reaches the bank's
    assert answer["ids"][0] == 0 and answer["params"]["w"][0, 0] == 1.0


def test_the_reference_answers_first_what_a_wrong_answer_asks(monkeypatch):
    """The preparation's turn also asks what a check asks only once the student's answer differs (a diagnosis), so
    that the first wrong student does not pay two more chip opens for it; and a second grading of the exercise
    takes no turn for it."""
    from contextlib import contextmanager
    from types import SimpleNamespace

    from autograder.engine import run as _run

    asked: list[str] = []
    turns: list[str] = []

    class Bank:
        @contextmanager
        def preparing(self, exercise):
            turns.append(exercise)
            yield

        def call(self, exercise, probe, kwargs):
            asked.append(probe)
            return {"losses": np.array([1.0, 2.0], np.float32), "n": kwargs["n"]}

    def check_fn(ctx):
        got, want = ctx.both("train", call="step(params, x)", n=3)
        if ctx.difference(got["losses"], want["losses"], kind="step", framework="jax") is not None:
            ctx.reference("loss_after_update", n=3)

    monkeypatch.setattr(_run._rows, "exercise_checks",
                        lambda exercise, public_only: [SimpleNamespace(name="steps", fn=check_fn)])
    run = SimpleNamespace(_preparing=threading.Lock(), _prepared=set(), reference=Bank(), public_only=False,
                          seed=1, device_for=lambda exercise: {"torch": "cpu", "jax": "tpu"})
    _run.GradingRun._prepare_chip(run, JAX_EX)
    _run.GradingRun._prepare_chip(run, JAX_EX)
    assert turns == [JAX_EX]
    assert set(asked) == {"train", "loss_after_update"}, asked
