"""The reference's answers kept on disk between runs (autograder/engine/refstore.py): read back as written, never
across a change of solution, grader or device, never from a folder others can write, and a run that finds them
grades as one that asked the reference's workers."""

from __future__ import annotations

import math
import os
import shutil

import numpy as np
import pytest
from conftest import MUTANTS, SEED, make_submission

from autograder.core.paths import SOLUTIONS
from autograder.core.protocol import reference_key
from autograder.engine import refstore
from autograder.engine.run import GradingRun

CPU = {"torch": "cpu", "jax": "cpu"}
EX = "ex01_torch_mlp"
SOLUTION = SOLUTIONS / f"{EX}.py"


def _store(folder, device=None) -> refstore.ReferenceStore:
    return refstore.ReferenceStore(folder, device or CPU)


def test_an_answer_is_read_back_as_it_was_written(tmp_path):
    store = _store(tmp_path)
    value = {"logits": np.arange(6, dtype=np.float32).reshape(2, 3), "shape": (2, 3), "nan": float("nan"),
             "nested": [{"a": np.array([1, 2], dtype=np.int64)}, None, True, "text"]}
    key = reference_key(EX, "forward", {"x": np.ones((2, 2), dtype=np.float32)})
    assert store.get(key, SOLUTION) is refstore.MISS
    store.put(key, SOLUTION, value)
    got = store.get(key, SOLUTION)
    assert got["logits"].dtype == np.float32 and np.array_equal(got["logits"], value["logits"])
    assert got["shape"] == (2, 3) and isinstance(got["shape"], tuple) and math.isnan(got["nan"])
    assert np.array_equal(got["nested"][0]["a"], [1, 2]) and got["nested"][1:] == [None, True, "text"]
    assert _store(tmp_path).get(key, SOLUTION) is not refstore.MISS  # another run, same salt
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".part-")]


def test_nothing_is_read_on_another_device_or_after_the_solution_changed(tmp_path, monkeypatch):
    key = reference_key(EX, "forward", {"n": 3})
    solution = tmp_path / f"{EX}.py"
    shutil.copy(SOLUTION, solution)
    _store(tmp_path).put(key, solution, 1.5)
    assert _store(tmp_path).get(key, solution) == 1.5
    assert _store(tmp_path, {"torch": "cuda", "jax": "gpu"}).get(key, solution) is refstore.MISS
    assert _store(tmp_path).get(reference_key(EX, "forward", {"n": 4}), solution) is refstore.MISS
    with monkeypatch.context() as m:
        m.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", "") + " --xla_cpu_enable_fast_math=true")
        assert _store(tmp_path).get(key, solution) is refstore.MISS  # the flags that change what XLA computes
    solution.write_text(solution.read_text() + "\n# changed\n")
    assert _store(tmp_path).get(key, solution) is refstore.MISS
    solution.unlink()
    assert _store(tmp_path).get(key, solution) is refstore.MISS


def test_a_damaged_or_foreign_entry_is_a_miss(tmp_path):
    store = _store(tmp_path)
    key = reference_key(EX, "forward", {"n": 4})
    store.put(key, SOLUTION, {"v": np.zeros(3)})
    (entry,) = list(tmp_path.iterdir())
    whole = entry.read_bytes()
    for data in (whole[:-5], b"", whole[:8], b"\x80\x04\x95" + whole,  # cut short, empty, a pickle's header
                 _framed(b'{"__nd__": "object", "shape": [1], "data": "AA=="}'), _framed(b"[1, NaN]")):
        entry.write_bytes(data)
        assert store.get(key, SOLUTION) is refstore.MISS, data[:20]


def _framed(payload: bytes) -> bytes:
    return len(payload).to_bytes(8, "big") + payload


def test_the_folder_must_be_the_graders_own(tmp_path, monkeypatch):
    monkeypatch.delenv(refstore.ENV, raising=False)
    assert refstore.folder_from_env() is None
    folder = tmp_path / "refs"
    monkeypatch.setenv(refstore.ENV, str(folder))
    assert refstore.folder_from_env() is None  # absent
    folder.mkdir(mode=0o700)
    assert refstore.folder_from_env() == folder
    for mode in (0o770, 0o707, 0o777):
        folder.chmod(mode)
        assert refstore.folder_from_env() is None, oct(mode)  # a student's worker could plant answers there
    folder.chmod(0o700)
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(refstore.ENV, str(tmp_path / "file"))
    assert refstore.folder_from_env() is None
    if os.getuid() == 0:
        os.chown(folder, 12345, 12345)
        monkeypatch.setenv(refstore.ENV, str(folder))
        assert refstore.folder_from_env() is None  # another user's


@pytest.mark.slow
def test_a_run_that_finds_the_answers_asks_no_reference_worker_and_grades_the_same(tmp_path, monkeypatch):
    folder = tmp_path / "refs"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(refstore.ENV, str(folder))
    mutant = sorted((MUTANTS / EX).glob("*.py"))[0]
    subs = [str(make_submission(tmp_path / "honest", only=[EX])),
            str(make_submission(tmp_path / "mutant", {EX: mutant.read_text()}, only=[EX]))]
    rows, roles = [], []
    for _ in range(2):
        run = GradingRun(device="cpu", timeout=60, seed=SEED, exercises=[EX])
        start = run.start_worker

        def counted(exercise, source_path, role, hide_extra=None, start=start):
            roles.append(role)
            return start(exercise, source_path, role, hide_extra)

        run.start_worker = counted
        try:
            rows.append(run.grade(subs, only=[EX], jobs=1))
        finally:
            run.close()
        if len(rows) == 1:
            assert "reference" in roles and any(folder.iterdir())  # the first run asked and kept its answers
            roles.clear()
    assert "reference" not in roles and "student" in roles, roles
    verdicts = [[{t["name"]: (t["passed"], t["score"]) for t in r["exercises"][EX]["tests"]} for r in rs]
                for rs in rows]
    assert verdicts[0] == verdicts[1]
    assert rows[1][0]["exercises"][EX]["score"] == rows[1][0]["exercises"][EX]["max_score"]
    assert rows[1][1]["exercises"][EX]["score"] < rows[1][1]["exercises"][EX]["max_score"]
