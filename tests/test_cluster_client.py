"""The cluster's bookkeeping, without a cluster: admission verdicts, retries, give-ups, rows (issue 30).

:class:`ClusterRun.grade` is driven with a stand-in for Dask (futures that finish as a test says), so
each rule is checked exactly and fast: a task the cluster fails is submitted again then ``ungraded``,
never a grade; a lost scheduler ends the run with every graded row kept; a row's isolation is the
weakest of its exercises'. :class:`GradingPlugin` is checked on what it refuses and why. The real
cluster runs in ``test_cluster.py`` and ``test_cluster_hosts.py``.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import SOLUTIONS, make_submission

from autograder.core import status as _status
from autograder.core.paths import ROOT
from autograder.scaleout import cluster as _cluster
from autograder.scaleout import cluster_link as _cluster_link
from autograder.scaleout import cluster_worker as _cluster_worker
from autograder.workers import fingerprint as _fingerprint

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
EXS = ["ex01_torch_mlp", "ex09_autograd_tape"]
FULL = {"level": "full", "pid_namespace": True}
CONTAINER = {"level": "container", "landlock": 7}


# ---------------------------------------------------------------- fingerprint
def test_the_fingerprint_names_what_decides_a_verdict():
    fp = _fingerprint.fingerprint()
    for key in ("python", "library torch", "library jax", "library flax", "autograder/hidden/ex01_torch_mlp.py",
                "solutions/ex01_torch_mlp.py", "autograder/core/tolerances.py", "autograder/exercises/ex01_torch_mlp/probes.py"):
        assert key in fp, key
    assert not [k for k in fp if "__pycache__" in k or k.endswith(".pyc")]
    assert fp == _fingerprint.fingerprint() and _fingerprint.digest(fp) == _fingerprint.digest(dict(fp))


def test_differences_say_where_two_installs_part():
    mine = _fingerprint.fingerprint()
    theirs = {**mine, "autograder/hidden/ex01_torch_mlp.py": "0" * 64, "library flax": "0.1.0"}
    del theirs["solutions/ex09_autograd_tape.py"]
    diff = _fingerprint.differences(mine, theirs)
    assert diff[0] == f"library flax {mine['library flax']} here, 0.1.0 on the client"
    assert "hidden suite autograder/hidden/ex01_torch_mlp.py differs" in diff
    assert "reference solution solutions/ex09_autograd_tape.py is here but not on the client" in diff
    assert _fingerprint.differences(mine, dict(mine)) == []
    many = {k: "x" for k in mine}
    assert _fingerprint.differences(mine, many, limit=2)[-1] == f"and {len(mine) - 2} more"


def test_the_import_check_imports_in_a_fresh_worker_process():
    assert _fingerprint.ImportCheck(("numpy", "autograder.core.paths")).result() == []
    (problem,) = _fingerprint.ImportCheck(("numpy", "no_such_library_here")).result()
    assert problem.startswith("no_such_library_here: ModuleNotFoundError")


def test_a_library_whose_files_are_hidden_is_missing(monkeypatch, tmp_path):
    real = importlib.metadata.distribution("numpy")

    class Hidden:
        read_text = staticmethod(real.read_text)

        @staticmethod
        def locate_file(path: Any) -> Path:
            return tmp_path / "nowhere" / str(path)

    monkeypatch.setattr(_fingerprint.importlib.metadata, "distribution",
                        lambda name: Hidden if name == "numpy" else real)
    (line,) = _fingerprint.missing_files(("numpy",))
    assert line.startswith("numpy: ") and "files are missing" in line
    monkeypatch.undo()
    assert _fingerprint.missing_files(("numpy",)) == []


# --------------------------------------------------------------------- admission
class FakeWorker:
    address = "tcp://10.0.0.7:4000"

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def log_event(self, topic: str, msg: dict) -> None:
        self.events.append((topic, msg))


def test_a_worker_with_another_install_is_refused_before_it_starts_a_run(monkeypatch):
    client = {**_fingerprint.fingerprint(), "autograder/hidden/ex01_torch_mlp.py": "0" * 64}
    plugin = _cluster.GradingPlugin({"device": "cpu"}, "tapetrace-run-x", client)
    monkeypatch.setattr(_cluster_worker, "GradingRun", lambda **kw: pytest.fail("a refused worker started a run"))
    assert plugin.examine() == {}
    assert plugin.verdict == ("its install differs from the client's: hidden suite "
                              "autograder/hidden/ex01_torch_mlp.py differs")
    with pytest.raises(_cluster.WorkerRefused, match="hidden suite"):
        plugin.admitted(FakeWorker(), plugin.digest)


def test_a_worker_that_cannot_import_a_library_is_refused(monkeypatch):
    plugin = _cluster.GradingPlugin({"device": "cpu"}, "tapetrace-run-x", _fingerprint.fingerprint())
    monkeypatch.setattr(_fingerprint, "missing_files", lambda *a: ["flax: 116 of its 134 files are missing"])
    monkeypatch.setattr(_cluster_worker, "GradingRun", lambda **kw: pytest.fail("a refused worker started a run"))
    plugin.examine()
    assert plugin.verdict == "it cannot import what grading needs: flax: 116 of its 134 files are missing"


def test_every_task_is_checked_again():
    plugin = _cluster.GradingPlugin({"device": "cpu"}, "tapetrace-run-x", _fingerprint.fingerprint())
    worker = FakeWorker()
    with pytest.raises(_cluster.WorkerRefused, match="still being examined"):
        plugin.admitted(worker, plugin.digest)
    plugin.verdict, plugin.run = "", object()  # admitted
    assert plugin.admitted(worker, plugin.digest) is plugin.run
    with pytest.raises(_cluster.WorkerRefused, match="another install"):
        plugin.admitted(worker, "0" * 64)
    plugin.closed = True
    with pytest.raises(_cluster.WorkerRefused, match="closed"):
        plugin.admitted(worker, plugin.digest)


def test_the_plugin_travels_without_its_run():
    import pickle

    plugin = _cluster_worker._plugin_class()({"device": "cpu"}, "tapetrace-run-x", {"python": "3.11"}, "full")
    plugin.verdict, plugin.run = "", "a run"
    copy = pickle.loads(pickle.dumps(plugin))
    assert copy.run is None and copy.verdict is None and copy.require_isolation == "full"
    assert copy.digest == plugin.digest


# ---------------------------------------------------------- the client's bookkeeping
class FakeFuture:
    def __init__(self, key: str, outcome: Any) -> None:
        self.key = key
        self.outcome = outcome
        self.status = "cancelled" if outcome == "cancelled" else (
            "error" if isinstance(outcome, BaseException) else "finished")

    def result(self) -> Any:
        if self.outcome == "cancelled":
            raise distributed.client.FutureCancelledError(self.key, reason="scheduler-connection-lost")
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def done(self) -> bool:
        return True

    def release(self) -> None:
        pass


def graded(exercise: str, isolation: dict, worker: str = "tcp://w1") -> dict[str, Any]:
    return {"result": {"score": 10.0, "max_score": 10.0, "status": "graded", "message": "", "seconds": 1.0,
                       "tests": [{"name": "t", "score": 10.0, "max_score": 10.0, "passed": True, "hidden": True,
                                  "message": "", "code": ""}]},
            "isolation": isolation, "device": {"torch": "cpu", "jax": "cpu"}, "launcher": "zygote",
            "worker": worker}


def fake_run(monkeypatch, outcome, *, device: str = "cpu", give_up_after: int | None = None) -> _cluster.ClusterRun:
    """A ClusterRun whose tasks finish at once as ``outcome(item, attempt)`` says (a result, an exception, "cancelled")."""
    run = _cluster.ClusterRun.__new__(_cluster.ClusterRun)
    run._init_state({"device": device, "seed": 5, "lang": "en"}, where="tcp://fake:8786", quiet=True)
    run._capacity = 2
    polls = {"n": 0}

    def poll() -> None:
        polls["n"] += 1
        if give_up_after is not None and polls["n"] > give_up_after:
            raise _cluster_link._GiveUp("the Dask scheduler tcp://fake:8786 is unreachable (OSError: gone)")

    submitted: list[tuple[int, str, int]] = []

    def submit(item: Any) -> FakeFuture:
        submitted.append((item.i, item.exercise, item.attempts))
        return FakeFuture(f"k{len(submitted)}", outcome(item, item.attempts))

    monkeypatch.setattr(run, "_poll", poll)
    monkeypatch.setattr(run, "_unstick", lambda inflight, retry: None)
    monkeypatch.setattr(run, "_submit", submit)
    monkeypatch.setattr(run, "_wait", lambda inflight: list(inflight))
    run.submitted = submitted  # type: ignore[attr-defined]
    return run


def two_subs(tmp_path: Path) -> list[str]:
    return [str(make_submission(tmp_path / f"s{i}", only=EXS)) for i in range(2)]


def test_a_rows_isolation_is_the_weakest_of_its_exercises(monkeypatch, tmp_path):
    subs = two_subs(tmp_path)
    run = fake_run(monkeypatch, lambda item, n: graded(item.exercise, CONTAINER if (item.i, item.exercise) == (
        0, "ex01_torch_mlp") else FULL))
    rows = run.grade(subs, only=EXS)
    assert [r["isolation"]["level"] for r in rows] == ["container", "full"]
    assert [r["total"] for r in rows] == [20, 20] and run.isolation["level"] == "container"


def test_a_task_the_cluster_fails_is_submitted_again_then_ungraded(monkeypatch, tmp_path):
    subs = two_subs(tmp_path)

    def outcome(item: Any, attempt: int) -> Any:
        if item.i == 0 and item.exercise == "ex01_torch_mlp":  # refused every time
            return _cluster.WorkerRefused("this Dask worker has no tapetrace run tapetrace-run-x")
        if item.i == 1 and item.exercise == "ex01_torch_mlp" and attempt < 2:  # lost twice, then graded
            return "cancelled"
        return graded(item.exercise, FULL)

    run = fake_run(monkeypatch, outcome)
    rows = run.grade(subs, only=EXS)
    tries = [(i, ex, n) for i, ex, n in run.submitted if ex == "ex01_torch_mlp"]
    assert sorted(tries) == [(0, "ex01_torch_mlp", n) for n in range(_cluster.MAX_ATTEMPTS)] + [
        (1, "ex01_torch_mlp", 0), (1, "ex01_torch_mlp", 1), (1, "ex01_torch_mlp", 2)]
    lost = rows[0]["exercises"]["ex01_torch_mlp"]
    assert lost["status"] == "ungraded" and lost["score"] == 0 and lost["max_score"] > 0
    assert f"not graded after {_cluster.MAX_ATTEMPTS} tries" in lost["grader_reason"]
    assert "no tapetrace run" in lost["grader_reason"]
    assert all(t["code"] == "NOT_GRADED_YET" and not t["passed"] for t in lost["tests"])
    assert rows[0]["exercises"]["ex09_autograd_tape"]["score"] == 10  # one exercise's loss costs no other
    assert rows[1]["total"] == 20
    assert _status.count_graders(rows) == {"ungraded": 1}


def test_a_killed_worker_task_is_ungraded_at_once(monkeypatch, tmp_path):
    subs = two_subs(tmp_path)[:1]
    from types import SimpleNamespace

    from distributed.scheduler import KilledWorker

    died = SimpleNamespace(address="tcp://w1")
    run = fake_run(monkeypatch, lambda item, n: KilledWorker("tapetrace-x", died, 3)
                   if item.exercise == "ex09_autograd_tape" else graded(item.exercise, FULL))
    (row,) = run.grade(subs, only=EXS)
    assert [t for t in run.submitted if t[1] == "ex09_autograd_tape"] == [(0, "ex09_autograd_tape", 0)]
    assert row["exercises"]["ex09_autograd_tape"]["status"] == "ungraded"
    assert "died" in row["exercises"]["ex09_autograd_tape"]["grader_reason"]


def test_a_lost_scheduler_keeps_the_graded_rows_and_the_rest_is_ungraded(monkeypatch, tmp_path):
    subs = [str(make_submission(tmp_path / f"s{i}", only=EXS)) for i in range(4)]
    run = fake_run(monkeypatch, lambda item, n: graded(item.exercise, FULL), give_up_after=1)
    seen: list[str] = []
    rows = run.grade(subs, only=EXS, on_result=lambda r: seen.append(r["submission"]))
    assert [r["submission"] for r in rows] == subs and sorted(seen) == sorted(subs)  # no row dropped
    statuses = [[e["status"] for e in r["exercises"].values()] for r in rows]
    assert statuses[0] == ["graded", "graded"]  # the first window was graded before the scheduler went
    assert all(s == ["ungraded", "ungraded"] for s in statuses[2:])
    reason = rows[-1]["exercises"]["ex01_torch_mlp"]["grader_reason"]
    assert "scheduler tcp://fake:8786 is unreachable" in reason
    assert all(e["score"] == 0 for r in rows[1:] for e in r["exercises"].values() if e["status"] == "ungraded")


def test_a_linked_exercise_file_travels_as_refused(monkeypatch, tmp_path):
    sub = make_submission(tmp_path / "s", only=["ex09_autograd_tape"])
    (sub / "ex01_torch_mlp.py").symlink_to(SOLUTIONS / "ex01_torch_mlp.py")
    run = fake_run(monkeypatch, lambda item, n: graded(item.exercise, FULL))
    items = list(run._tasks([str(sub)], [EXS], lambda *a: None, [str(tmp_path)]))
    args = {it.exercise: it.args for it in items}
    assert args["ex01_torch_mlp"][3] is None and args["ex01_torch_mlp"][4] == ["ex01_torch_mlp.py", "KIND_LINK"]
    assert args["ex09_autograd_tape"][4] is None


def test_a_rows_device_waits_for_the_workers_word(monkeypatch, tmp_path):
    bad = tmp_path / "a.zip"
    bad.write_bytes(b"not a zip")
    good = make_submission(tmp_path / "b", only=EXS)
    run = fake_run(monkeypatch, lambda item, n: {**graded(item.exercise, FULL), "device": {"torch": "cuda",
                                                                                           "jax": "gpu"}},
                   device="auto")
    rows = run.grade([str(bad), str(good)], only=EXS)
    assert rows[0]["exercises"]["ex01_torch_mlp"]["status"] == "unreadable"
    assert rows[0]["device"] == rows[1]["device"] == {"torch": "cuda", "jax": "gpu"}


def test_refusals_are_said_once_and_admissions_teach_the_device(monkeypatch, capsys):
    run = _cluster.ClusterRun.__new__(_cluster.ClusterRun)
    run._init_state({"device": "auto", "seed": 5}, where="tcp://fake:8786")
    refusal = {"worker": "tcp://10.0.0.7:4000", "state": "refused", "reason": "its install differs: x\x1b[2J"}
    run._heard(refusal)
    run._heard(dict(refusal))
    run._heard({"worker": "tcp://10.0.0.8:4000", "state": "admitted", "device": {"torch": "cpu", "jax": "cpu"},
                "launcher": "zygote", "isolation": FULL})
    err = capsys.readouterr().err
    assert err.count("Dask worker tcp://10.0.0.7:4000 refused: its install differs: x?[2J") == 1
    assert "\x1b" not in err
    assert run.device == {"torch": "cpu", "jax": "cpu"} and run.isolation == FULL


def test_the_install_is_what_the_repository_holds():
    fp = _fingerprint.fingerprint()
    on_disk = {f"autograder/{p.relative_to(ROOT / 'autograder').as_posix()}" for p in (ROOT / "autograder").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert on_disk == {k for k in fp if k.startswith("autograder/")}


class FakeClient:
    """What ``_poll`` asks of a Dask client: the scheduler's identity and workers, and the run's events."""

    status = "running"

    def __init__(self) -> None:
        self.id = "scheduler-1"
        self.workers: dict[str, dict] = {}
        self.events: list[dict] = []
        self.registered = 0

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return {"id": self.id, "workers": self.workers}

    def get_events(self, topic: str) -> list:
        return [(0.0, e) for e in self.events]

    def register_plugin(self, plugin: Any, name: str) -> None:
        self.registered += 1


def test_the_run_waits_for_workers_being_examined_and_gives_up_only_on_refusals(monkeypatch):
    from types import SimpleNamespace

    clock = [0.0]
    monkeypatch.setattr(_cluster_link, "time", SimpleNamespace(monotonic=lambda: clock[0], sleep=lambda s: None))
    run = _cluster.ClusterRun.__new__(_cluster.ClusterRun)
    run._init_state({"device": "cpu", "seed": 5}, where="tcp://fake:8786", patience=10)
    run.client = client = FakeClient()
    run._scheduler_id = client.id
    client.workers = {"tcp://a": {"nthreads": 2, "resources": {}}}
    client.events = [{"worker": "tcp://a", "state": "examining"}]
    for t in (0, 5, 20, 300):  # a slow examination is no reason to give up
        clock[0] = t
        run._poll()
    assert run._capacity == 0
    client.events.append({"worker": "tcp://a", "state": "refused", "reason": "its install differs: x"})
    clock[0] = 301
    run._poll()
    clock[0] = 305
    run._poll()  # refused 4 s ago: patience is 10 s
    clock[0] = 312
    with pytest.raises(_cluster_link._GiveUp, match="no Dask worker could grade this run for 10 s.*tcp://a: its install"):
        run._poll()
    client.workers["tcp://b"] = {"nthreads": 3, "resources": {run.plugin_name: 3.0}}  # admitted
    clock[0] = 400
    run._poll()
    assert run._capacity == 3


def test_a_new_scheduler_gets_the_run_again(monkeypatch):
    run = _cluster.ClusterRun.__new__(_cluster.ClusterRun)
    run._init_state({"device": "cpu", "seed": 5}, where="tcp://fake:8786")
    run.client = client = FakeClient()
    run._scheduler_id = client.id
    run._poll()
    assert client.registered == 0
    client.id = "scheduler-2"  # restarted: it knows nothing of the run
    run._polled = float("-inf")
    run._poll()
    assert client.registered == 1 and run._scheduler_id == "scheduler-2"


def test_editor_leftovers_are_not_part_of_an_install(tmp_path, monkeypatch):
    tree = tmp_path / "autograder"
    (tree / "hidden").mkdir(parents=True)
    (tree / "hidden" / "ex01_torch_mlp.py").write_text("suite = 1\n")
    monkeypatch.setattr(_fingerprint, "_trees", lambda: [("autograder", tree)])
    clean = _fingerprint.file_hashes()
    (tree / "hidden" / ".ex01_torch_mlp.py.swp").write_text("x")
    (tree / "hidden" / "ex01_torch_mlp.py~").write_text("x")
    (tree / ".DS_Store").write_text("x")
    assert _fingerprint.file_hashes() == clean == {
        "autograder/hidden/ex01_torch_mlp.py": _fingerprint.hashlib.sha256(b"suite = 1\n").hexdigest()}


def test_a_first_attempt_with_retry_is_submitted_again_once_final(monkeypatch, tmp_path):
    """The assembly's rule (docs/grading-contract.md, "Assembling a submission's row") on the cluster too: a first
    attempt whose row carries ``retry`` is not recorded; once every first attempt is done it is submitted again,
    final, and its row says so; a cluster given up meanwhile records it ungraded, never drops it."""
    subs = two_subs(tmp_path)

    def outcome(item: Any, attempt: int) -> Any:
        out = graded(item.exercise, FULL)
        if (item.i, item.exercise) == (1, "ex01_torch_mlp") and item.again is None:
            out["result"] = {**out["result"], "score": 0.0, "status": "grader_error", "retry": "the worker died"}
        return out

    run = fake_run(monkeypatch, outcome)
    rows = run.grade(subs, only=EXS)
    finals = [s for s in run.submitted if (s[0], s[1]) == (1, "ex01_torch_mlp")]
    assert len(finals) == 2 and run.submitted[-1][:2] == (1, "ex01_torch_mlp")  # again after every first attempt
    row = rows[1]["exercises"]["ex01_torch_mlp"]
    assert row["status"] == "graded" and "retry" not in row and rows[1]["total"] == 20
    assert row["instructor_log"] == ["first attempt: the worker died; graded again alone"]

    run = fake_run(monkeypatch, outcome, give_up_after=4)
    rows = run.grade(subs, only=EXS)
    assert [r["submission"] for r in rows] == subs
    assert rows[1]["exercises"]["ex01_torch_mlp"]["status"] in ("ungraded", "graded")
