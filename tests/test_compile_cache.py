"""The reference's compiled programs are lent to students' workers by key only (autograder/workers/compile_cache.py).

- the grader answers a key with that entry of the run's cache and nothing else: no path, no link, no
  folder, nothing that is not a regular file named ``<key>-cache`` in it;
- a student's spec names no cache folder; JAX exercises borrow, PyTorch-only ones do not, and
  ``TAPETRACE_JAX_CACHE=off`` lends nothing;
- a real run lends programs to students' workers and grades as before;
- a worker that floods requests and stops reading cannot hang the grader: its call times out.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SEED

from autograder.core import registry as _registry
from autograder.core import wire as _wire
from autograder.core.paths import SOLUTIONS
from autograder.engine.jaxcache import CACHE_ENV
from autograder.engine.run import GradingRun
from autograder.workers import compile_cache as _compile_cache
from autograder.workers import handle as _handle
from autograder.workers import launch as _launch

KEY = "jit_step-" + "ab" * 32


@pytest.fixture
def lender(tmp_path: Path) -> _compile_cache.Lender:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / f"{KEY}-cache").write_bytes(b"compiled program")
    (tmp_path / "secret.txt").write_text("the reference")
    (cache / f"jit_link-{'cd' * 32}-cache").symlink_to(tmp_path / "secret.txt")
    (cache / f"jit_dir-{'ef' * 32}-cache").mkdir()
    os.mkfifo(cache / f"jit_fifo-{'01' * 32}-cache")
    return _compile_cache.Lender(str(cache))


def test_a_key_gets_its_entry(lender):
    answer = lender.answer({_compile_cache.REQUEST: KEY})
    assert answer[_compile_cache.ANSWER].tobytes() == b"compiled program"
    assert (lender.asked, lender.lent) == (1, 1)


@pytest.mark.parametrize("asked", [
    "jit_step-" + "00" * 32,  # a key nobody compiled
    "../secret.txt", "../secret", f"../cache/{KEY}", f"{KEY}-cache", f"./{KEY}", f"/{KEY}", KEY + "/",
    f".{KEY}", "jit_step-" + "AB" * 32, "jit_step-" + "ab" * 31, "jit/step-" + "ab" * 32, "",
    "jit_link-" + "cd" * 32,  # a link, even inside the folder
    "jit_dir-" + "ef" * 32, "jit_fifo-" + "01" * 32,  # not a regular file (a FIFO must not block the grader)
    None, 7, ["jit_step"], {"key": KEY},
])
def test_anything_else_gets_nothing(lender, asked):
    answer = lender.answer({_compile_cache.REQUEST: asked})
    assert answer == {_compile_cache.ANSWER: None}
    assert lender.lent == 0


def test_only_the_exact_request_is_a_request():
    assert _compile_cache.is_request({_compile_cache.REQUEST: KEY})
    assert not _compile_cache.is_request({_compile_cache.REQUEST: KEY, "ok": True})
    assert not _compile_cache.is_request({"ok": True, "value": 1})
    assert not _compile_cache.is_request([_compile_cache.REQUEST])


def test_a_student_spec_names_no_cache_and_only_jax_exercises_borrow(monkeypatch, tmp_path):
    seen: list[tuple[dict, object]] = []

    class _Fake:
        def __init__(self, launcher, spec, timeout, lender=None, **_options) -> None:
            seen.append((spec, lender))
            self.status = {"status": "loaded", "missing": []}
            self.isolation = None

    monkeypatch.setattr(_handle, "Worker", _Fake)
    torch_only = sorted(_registry.TORCH_ONLY)[0]
    for choice in (str(tmp_path / "c"), "off"):
        monkeypatch.setenv(CACHE_ENV, choice)
        seen.clear()
        run = GradingRun(device="cpu", seed=1, launcher="spawn")
        try:
            for ex in ("ex04_jax_mlp", "ex10_bridge", torch_only):
                for role in ("student", "reference"):
                    run.start_worker(ex, str(SOLUTIONS / f"{ex}.py"), role)
        finally:
            run.close()
        if choice != "off":
            assert os.path.isdir(tmp_path / "c"), "a persistent cache must survive the run"
        for spec, lender in seen:
            if spec["role"] == "student":
                # the folder is named only to be hidden from it (an empty mount, or outside Landlock's list)
                hidden = spec["sandbox"]["hide"]
                assert spec["jax_cache"] is None and (str(tmp_path / "c") in hidden) is (choice != "off")
                assert str(tmp_path / "c") not in json.dumps({**spec, "sandbox": {**spec["sandbox"], "hide": []}})
                # every JAX worker asks the grader for its programs (the grader counts them: _observe);
                # only a run with a cache lends any
                asks = spec["exercise"] != torch_only
                lends = choice != "off" and asks
                assert spec["borrow_compiles"] is asks and (lender is not None) is lends
            else:
                assert spec["jax_cache"] == (None if choice == "off" else str(tmp_path / "c"))
                assert lender is None and not spec["borrow_compiles"]


@pytest.mark.parametrize("choice", ["run", "off"])
def test_a_run_lends_the_references_programs_and_grades_alike(monkeypatch, tmp_path, choice):
    """ex08's checks compile the same programs on both sides (at the same shapes): with a cache, students'
    workers borrow them; without one, nothing is lent; the grade is the same."""
    monkeypatch.setenv(CACHE_ENV, choice)
    sub = tmp_path / "sub"
    sub.mkdir()
    ex = "ex08_jax_transforms"
    (sub / f"{ex}.py").write_text((SOLUTIONS / f"{ex}.py").read_text())
    run = GradingRun(device="cpu", seed=SEED, timeout=60.0, exercises=[ex])
    try:
        res = run.grade([str(sub)], only=[ex])[0]
        lender = run.lender
    finally:
        run.close()
    assert res["total"] == res["max_total"] > 0, res["exercises"][ex]["message"]
    if choice == "off":
        assert lender is None
    else:
        assert lender.lent >= 5 and lender.asked >= lender.lent, (lender.asked, lender.lent)


class _Requester:
    """A launcher whose "worker" loads, then answers a probe with requests forever.

    Args:
        reads: whether it reads the probe and every answer (False: it never reads, so the grader's
            answers fill the pipe).
    """

    kind = "test"

    def __init__(self, reads: bool) -> None:
        self.reads = reads

    def spawn(self, spec, fds):
        pid = os.fork()
        if pid == 0:
            try:
                cmd_r, res_w = fds[:2]  # (a third: its stderr pipe)
                _wire.send(res_w, {"status": "loaded"})
                if self.reads:
                    _wire.recv(cmd_r)  # the probe
                else:  # the probe has come (left unread): requests between two calls would be a forgery
                    select.select([cmd_r], [], [])
                while True:
                    _wire.send(res_w, {_compile_cache.REQUEST: KEY})
                    if self.reads:
                        _wire.recv(cmd_r)
            finally:
                os._exit(0)
        return _launch.Proc(pid)


def test_a_worker_that_floods_requests_and_reads_nothing_times_out(lender):
    worker = _handle.Worker(_Requester(reads=False), {}, 5.0, lender)
    assert worker.status["status"] == "loaded", worker.status
    outcome: list[object] = []

    def call() -> None:
        try:
            worker.call("anything", {}, 2.0)
        except _handle.WorkerDied as err:
            outcome.append(err.kind)

    t0 = time.monotonic()
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(20)
    hung = thread.is_alive()
    os.kill(worker.proc.pid, 9)  # (a hung write then fails at once: its reader is gone)
    assert not hung, "the grader hung on a worker that stopped reading"
    assert outcome == ["timeout"] and time.monotonic() - t0 < 10
    assert lender.lent > 0  # it was answered until its pipe was full


def test_a_worker_that_keeps_asking_is_broken_after_the_cap(lender, monkeypatch):
    monkeypatch.setattr(_compile_cache, "MAX_REQUESTS", 50)
    worker = _handle.Worker(_Requester(reads=True), {}, 5.0, lender)
    try:
        with pytest.raises(_handle.WorkerDied) as err:
            worker.call("anything", {}, 30.0)
        assert err.value.kind == "broken" and "requests for compiled programs" in err.value.how
        assert lender.asked == 50
    finally:
        os.kill(worker.proc.pid, 9)


def test_a_borrower_asks_only_on_the_main_thread_while_serving():
    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    try:
        borrower = _compile_cache.Borrower(cmd_r, res_w)
        assert borrower.get(KEY) is None  # not serving: nothing asked
        _wire.send(cmd_w, {_compile_cache.ANSWER: np.frombuffer(b"xyz", dtype=np.uint8)})
        with borrower.serving():
            assert borrower.get(KEY) == b"xyz"
            got: list[object] = []
            thread = threading.Thread(target=lambda: got.append(borrower.get(KEY)))
            thread.start()
            thread.join(5)
            assert got == [None]  # another thread compiles for itself
        assert _wire.recv(res_r, time.monotonic() + 1) == {_compile_cache.REQUEST: KEY}
        borrower.put(KEY, b"planted")  # stores nothing, sends nothing
        os.set_blocking(res_r, False)
        with pytest.raises(BlockingIOError):
            os.read(res_r, 1)
    finally:
        for fd in (cmd_r, cmd_w, res_r, res_w):
            os.close(fd)


@pytest.mark.parametrize("skip", [["landlock"], ["namespaces"]])
def test_a_student_cannot_list_or_read_the_cache_folder_with_one_layer_left_out(monkeypatch, tmp_path, request,
                                                                                   skip):
    """Namespaces alone cover the folder with an empty mount, Landlock alone leaves it out of what the worker
    may read: either way the folder the grader lends from stays closed to the student's code."""
    # outside /tmp (a namespaced worker's /tmp is a private tmpfs anyway), like ~/.cache/tapetrace
    cache = Path(tempfile.mkdtemp(prefix="tapetrace-cache-test-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(cache, ignore_errors=True))
    monkeypatch.setenv(CACHE_ENV, str(cache))
    ex = "ex06_per_example_grads"
    probe = (f"import os as _os\n_found = []\nfor _d in ({str(cache)!r},):\n"
             "    try:\n        _found += _os.listdir(_d)\n    except OSError:\n        pass\n"
             "if _found:\n    raise RuntimeError(f'listed the compile cache: {_found[:3]}')\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    source = (SOLUTIONS / f"{ex}.py").read_text()
    head, sep, rest = source.partition("from __future__ import annotations\n")
    (sub / f"{ex}.py").write_text(head + sep + probe + rest if sep else probe + source)
    run = GradingRun(device="cpu", seed=SEED, timeout=60.0, sandbox_skip=skip, exercises=[ex])
    try:
        run.grade([str(SOLUTIONS)], only=[ex])  # the reference fills the (persistent) cache first
        assert os.listdir(cache), "the reference wrote no entry: nothing to protect"
        res = run.grade([str(sub)], only=[ex])[0]
    finally:
        run.close()
    assert res["exercises"][ex]["score"] == res["exercises"][ex]["max_score"], res["exercises"][ex]["message"]
    if "namespaces" in skip:
        assert res["isolation"]["level"] == "container"
