"""The reference's answers kept on disk between runs (autograder/engine/refstore.py): on by default, read back as
written, never across a change of solution, grader or device, never from a folder others can write, never an
entry cut short, altered, renamed or planted (each carries an HMAC under the store's own key), never readable by
a student's worker, and a run that finds them grades as one that asked the reference's workers."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

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
    folder.chmod(0o700)
    key = refstore._key_of(folder)
    assert key is not None
    return refstore.ReferenceStore(folder, device or CPU, key)


def _entries(folder):
    return [p for p in folder.iterdir() if p.name != refstore.KEY_FILE]


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
    assert oct((tmp_path / refstore.KEY_FILE).stat().st_mode & 0o777) == oct(0o600)


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
    (entry,) = _entries(tmp_path)
    whole = entry.read_bytes()
    payload = whole[8 + 32:]
    flipped = bytearray(whole)
    flipped[-3] ^= 1
    for data in (whole[:-5], b"", whole[:8], b"\x80\x04\x95" + whole,  # cut short, empty, a pickle's header
                 bytes(flipped),  # one bit of the payload changed
                 _framed(payload),  # the old format: no MAC
                 len(payload).to_bytes(8, "big") + b"\0" * 32 + payload,  # a MAC made up
                 _framed(b'{"__nd__": "object", "shape": [1], "data": "AA=="}'), _framed(b"[1, NaN]")):
        entry.write_bytes(data)
        assert store.get(key, SOLUTION) is refstore.MISS, data[:20]
    entry.write_bytes(whole)
    assert store.get(key, SOLUTION) is not refstore.MISS


def test_an_entry_renamed_planted_or_linked_is_a_miss(tmp_path):
    """An authentic answer under another question's name, one written under another key, a link to one."""
    store = _store(tmp_path)
    k1, k2 = reference_key(EX, "forward", {"n": 1}), reference_key(EX, "forward", {"n": 2})
    store.put(k1, SOLUTION, {"v": np.ones(3)})
    (e1,) = _entries(tmp_path)
    name2 = store._name(k2, SOLUTION)
    (tmp_path / name2).write_bytes(e1.read_bytes())  # the answer to question 1 offered for question 2
    assert store.get(k2, SOLUTION) is refstore.MISS
    other = tmp_path / "other"
    other.mkdir()
    planted = _store(other)  # a store with a key of its own: its entries are not this store's
    planted.put(k2, SOLUTION, {"v": np.zeros(3)})
    (tmp_path / name2).write_bytes((other / planted._name(k2, SOLUTION)).read_bytes())
    assert store.get(k2, SOLUTION) is refstore.MISS
    (tmp_path / name2).unlink()
    (tmp_path / name2).symlink_to(e1)
    assert store.get(k2, SOLUTION) is refstore.MISS


def _framed(payload: bytes) -> bytes:
    return len(payload).to_bytes(8, "big") + payload


def test_on_by_default_off_by_name_and_its_key_must_be_the_graders_own(tmp_path, monkeypatch):
    monkeypatch.delenv(refstore.ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = refstore.open_store(CPU)
    assert store is not None and store.folder == tmp_path / "home" / ".cache" / "tapetrace" / "reference"
    assert oct(store.folder.stat().st_mode & 0o777) == oct(0o700)
    monkeypatch.setenv(refstore.ENV, "off")
    assert refstore.open_store(CPU) is None
    monkeypatch.delenv(refstore.ENV)
    key = store.folder / refstore.KEY_FILE
    key.chmod(0o666)
    assert refstore.open_store(CPU) is None  # a key others could write: a planted entry could carry its MAC
    key.chmod(0o600)
    key.write_bytes(b"short")
    assert refstore.open_store(CPU) is None
    key.unlink()
    key.symlink_to(tmp_path / "elsewhere")
    assert refstore.open_store(CPU) is None
    key.unlink()
    assert refstore.open_store(CPU) is not None and len(key.read_bytes()) == 32  # made again


def test_the_folder_must_be_the_graders_own(tmp_path, monkeypatch):
    folder = tmp_path / "refs"
    monkeypatch.setenv(refstore.ENV, str(folder))
    assert refstore.folder_from_env() is None  # absent
    folder.mkdir(mode=0o700)
    assert refstore.folder_from_env() == folder
    for mode in (0o770, 0o707, 0o777):
        folder.chmod(mode)
        assert refstore.folder_from_env() is None, oct(mode)  # a student's worker could plant answers there
    folder.chmod(0o700)
    (tmp_path / "link").symlink_to(folder)
    monkeypatch.setenv(refstore.ENV, str(tmp_path / "link"))
    assert refstore.folder_from_env() is None  # a link: where it points may change under the run
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


def test_no_students_worker_reads_the_kept_answers(tmp_path, monkeypatch, request):
    """The store's folder is among what every student worker's sandbox hides: with the mount namespace as the only
    layer (no Landlock, no uid of its own) an attack that lists and reads it finds nothing; before, it read the
    answers (tests/adversarial/attacks/read_reference_store.py, graded at every layer in the attack suite)."""
    import tempfile

    from adversarial.attacklib import attack_source

    from autograder.core.paths import ROOT

    # outside /tmp: a worker with namespaces gets a private /tmp, which would hide any folder there anyway
    folder = Path(tempfile.mkdtemp(prefix="tapetrace-refs-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    monkeypatch.setenv(refstore.ENV, str(folder))
    ex, source = attack_source(ROOT / "tests" / "adversarial" / "attacks" / "read_reference_store.py")
    sub = make_submission(tmp_path / "s", {ex: source}, only=[ex])
    run = GradingRun(device="cpu", timeout=60, seed=SEED, exercises=[ex], sandbox_skip=["landlock", "uid"])
    try:
        assert run.reference.store_folder == str(folder)
        (row,) = run.grade([str(sub)], only=[ex])
    finally:
        run.close()
    got = row["exercises"][ex]
    assert _entries(folder), ("the run kept its answers", got["message"])
    assert got["status"] == "graded" and got["score"] == got["max_score"], got["message"]


def test_the_graders_private_caches_are_hidden_and_nothing_readable_beside_them(tmp_path, monkeypatch):
    """The reference store, the compile caches; never the folder holding them nor the stacks' venvs (0755): a hidden
    place others can read costs a worker that only has a uid of its own its guarantee (tests/test_isolation.py's
    unprivileged-uid run went minimal when the whole folder was hidden)."""
    from autograder.engine.jaxcache import cache_places, caches_root

    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_places() == []  # no caches yet
    root = Path(caches_root())
    for name in ("reference", "jax-compile", "jax-abc123", "stacks"):
        (root / name).mkdir(parents=True)
    assert cache_places() == [str(root / n) for n in ("jax-abc123", "jax-compile", "reference")]


def test_a_store_over_its_size_is_pruned_oldest_first_and_keeps_its_key(tmp_path, monkeypatch):
    folder = tmp_path / "refs"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(refstore.ENV, str(folder))
    store = refstore.open_store(CPU)
    assert store is not None
    for n in range(8):
        store.put(reference_key(EX, "forward", {"n": n}), SOLUTION, np.zeros(64))
        os.utime(folder / store._name(reference_key(EX, "forward", {"n": n}), SOLUTION), (n, n))
    size = sum(p.stat().st_size for p in _entries(folder))
    monkeypatch.setattr(refstore, "STORE_MAX_BYTES", size - 1)
    again = refstore.open_store(CPU)
    assert again is not None and (folder / refstore.KEY_FILE).exists()
    left = {p.name for p in _entries(folder)}
    assert 0 < len(left) <= 4 and store._name(reference_key(EX, "forward", {"n": 7}), SOLUTION) in left
    assert again.get(reference_key(EX, "forward", {"n": 7}), SOLUTION) is not refstore.MISS  # same key: still read
