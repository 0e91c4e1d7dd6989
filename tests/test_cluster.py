"""Grading on a Dask cluster (``--cluster local:N``, ``--scheduler ADDRESS``): same rows as ``--jobs``.

A real multi-process ``distributed.LocalCluster`` runs here. Grading uses ex01 and ex09 only (the
two cheapest exercises); what is checked (rows, scores, files, worker deaths) does not depend on
the exercise.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pytest
from conftest import SOLUTIONS, make_submission
from test_shards import ONLY, class_of, tapetrace, without_timing

from autograder.core.paths import ROOT
from autograder.engine.reading import HideRefused
from autograder.reports import report as _report
from autograder.scaleout import cluster as _cluster
from autograder.scaleout import cluster_options as _cluster_options

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
SEED = 777
HANG = 600  # seconds: a hang guard, never a speed requirement
SLOW = 6  # seconds (asleep: no CPU) a slow task takes to load: a dozen looks of the killer below see it running
POLL = 0.5  # seconds between two looks at what the workers run
COMMON = ["--only", ONLY, "--device", "cpu", "--seed", str(SEED)]


def notebook(path: Path, sources: dict[str, str]) -> Path:
    cells = []
    for ex, src in sources.items():
        cells += [{"cell_type": "markdown", "metadata": {}, "source": [f"## {ex}"]},
                  {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": src.splitlines(keepends=True)}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def mixed_class(tmp: Path) -> list[str]:
    """class_of's seven submissions plus a notebook and a zip of a folder."""
    subs = class_of(tmp)
    folder = tmp / "subs"
    notebook(folder / "hana.ipynb", {"ex01_torch_mlp": (SOLUTIONS / "ex01_torch_mlp.py").read_text(),
                                     "ex09_autograd_tape": "raise RuntimeError('unfinished')\n"})
    src = make_submission(tmp / "ivan", only=["ex01_torch_mlp", "ex09_autograd_tape"])
    with zipfile.ZipFile(folder / "ivan.zip", "w") as zf:
        for f in src.iterdir():
            zf.write(f, f"ivan/{f.name}")
    jon = make_submission(folder / "jon", only=["ex09_autograd_tape"])
    (jon / "ex01_torch_mlp.py").symlink_to(SOLUTIONS / "ex01_torch_mlp.py")  # refused, on the cluster too
    return sorted([*subs, str(folder / "hana.ipynb"), str(folder / "ivan.zip"), str(jon)])


def slow_submission(path: Path, seconds: float) -> Path:
    """The ex01/ex09 solutions, ex01 taking ``seconds`` to load (a task long enough to kill mid-way)."""
    make_submission(path, only=["ex01_torch_mlp", "ex09_autograd_tape"])
    ex01 = path / "ex01_torch_mlp.py"
    head, future, rest = ex01.read_text().partition("from __future__ import annotations\n")
    ex01.write_text(f"{head}{future}import time\ntime.sleep({seconds})\n{rest}")
    return path


@pytest.fixture(scope="module")
def dask_cluster():
    """A LocalCluster of 2 worker processes in this process (its scheduler too, so tests can reach in)."""
    import dask

    # one task per worker thread at a time (as `--cluster local:N` runs): a killed worker holds only its task
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
    client = distributed.Client(cluster)
    yield cluster, client
    client.close()
    cluster.close()


def _executing(dask_worker) -> tuple[int, list[str]]:
    return os.getpid(), [str(ts.key) for ts in dask_worker.state.executing]


def kill_worker_running(client, prefix: str, timeout: float = HANG) -> tuple[threading.Thread, list[str]]:
    """Starts a thread that SIGKILLs the Dask worker process running a task whose key starts with ``prefix``.

    It watches until it has killed one (``timeout``: a hang guard; the workers' admission comes first).
    """
    killed: list[str] = []

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not killed:
            try:
                running = client.run(_executing)  # one round trip a look: its pid and its tasks
            except Exception:  # noqa: BLE001 - a worker is restarting
                time.sleep(POLL)
                continue
            for addr, (pid, keys) in running.items():
                if any(k.startswith(prefix) for k in keys):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(addr)
                    return
            time.sleep(POLL)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread, killed


def test_dask_is_imported_only_for_a_cluster():
    code = ("import sys, autograder.cli as c, autograder.scaleout.cluster\n"
            "c.build_parser().parse_args(['grade', 'x', '--cluster', 'local:2'])\n"
            "print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_without_dask_the_reason_names_the_extra(monkeypatch):
    real = _cluster_options.importlib.util.find_spec
    monkeypatch.setattr(_cluster_options.importlib.util, "find_spec", lambda n, *a: None if n == "distributed" else real(n, *a))
    assert "tapetrace[cluster]" in _cluster_options.check_args("local:2", None)
    assert "tapetrace[cluster]" in _cluster_options.check_args(None, "tcp://127.0.0.1:8786")


@pytest.mark.parametrize("extra,needle", [(["--cluster", "local:0"], "local:N"), (["--cluster", "slurm"], "local:N"),
                                          (["--cluster", "local:2", "--scheduler", "tcp://x:1"], "not allowed")])
def test_bad_cluster_options_exit_2(tmp_path, extra, needle):
    sub = make_submission(tmp_path / "s", only=["ex01_torch_mlp"])
    cp = tapetrace("grade", str(sub), "--only", "ex01", *extra)
    assert cp.returncode == 2 and needle in cp.stderr and cp.stderr.count("\n") == 1, cp.stderr


def test_unreachable_scheduler_exits_2(tmp_path):
    sub = make_submission(tmp_path / "s", only=["ex01_torch_mlp"])
    cp = tapetrace("grade", str(sub), "--only", "ex01", "--scheduler", "tcp://127.0.0.1:9", "--quiet",
                   env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}, timeout=120)
    assert cp.returncode == 2 and "cannot reach the Dask scheduler" in cp.stderr, cp.stderr


def test_dasks_logged_errors_are_one_line_each():
    """A scheduler lost mid-write makes distributed log its traceback (batched.py): one line in the grader's log."""
    code = ("import logging, distributed\n"
            "from autograder.scaleout.cluster_link import one_line_logs\n"
            "one_line_logs(); one_line_logs()\n"
            "try:\n    raise OSError('connection lost')\n"
            "except OSError:\n    logging.getLogger('distributed.batched').exception('Error in batched write')\n"
            "logging.getLogger('distributed.client').error('Failed to reconnect to %s', 'scheduler')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in out.stderr, out.stderr
    assert "Error in batched write (OSError: connection lost)" in lines[0] and "to scheduler" in lines[1]


def test_local_cluster_gives_the_rows_of_jobs(tmp_path):
    """--cluster local:2 and --jobs 2 on a mix of forms and outcomes: same JSON, CSV and feedback."""
    subs = mixed_class(tmp_path)
    outs = {}
    for label, extra in (("jobs", ["--jobs", "2"]), ("cluster", ["--cluster", "local:2"])):
        out = tmp_path / label
        out.mkdir()
        t0 = time.monotonic()
        cp = tapetrace("grade", *subs, *COMMON, *extra, "--json", str(out / "r.json"), "--csv", str(out / "r.csv"),
                       "--feedback", str(out / "fb"))
        outs[label] = (out, time.monotonic() - t0, cp)
        assert cp.returncode == 0, cp.stderr
        assert f"graded {len(subs)}/{len(subs)}" in cp.stderr  # the progress lines
    (jobs, tj, cj), (clus, tc, cc) = outs["jobs"], outs["cluster"]
    a, b = json.loads((jobs / "r.json").read_text()), json.loads((clus / "r.json").read_text())
    assert [r["submission"] for r in b] == subs
    assert without_timing(b) == without_timing(a)
    assert (clus / "r.csv").read_text() == (jobs / "r.csv").read_text()
    fb = sorted(p.name for p in (jobs / "fb").iterdir())
    assert fb == sorted(p.name for p in (clus / "fb").iterdir()) and len(fb) == len(subs)
    assert all((jobs / "fb" / n).read_text() == (clus / "fb" / n).read_text() for n in fb)
    # the table (its last line names where the full messages are: each run's own folder)
    assert cj.stdout.replace(str(jobs), "OUT") == cc.stdout.replace(str(clus), "OUT")
    totals = {Path(r["submission"]).name: r["total"] for r in b}
    assert totals["alice"] == totals["ivan.zip"] == 20 and totals["hana.ipynb"] == 10 and totals["dave"] == 0
    jon = {Path(r["submission"]).name: r for r in b}["jon"]["exercises"]["ex01_torch_mlp"]
    assert jon["status"] == "error" and jon["tests"][0]["code"] == "REFUSED_FILE"  # not "missing"
    assert "Dask workers: " in cc.stderr and "graded" in cc.stderr
    print(f"\n--jobs 2: {tj:.1f} s; --cluster local:2: {tc:.1f} s ({len(subs)} submissions x 2 exercises)")


def forger(path: Path) -> Path:
    """ex01 and ex09 solved, ex01 with a forged answer that crashes a check's verdict
    (tests/adversarial/attacks/forged_value_crashes_check.py)."""
    sub = make_submission(path, only=["ex01_torch_mlp", "ex09_autograd_tape"])
    attack = (ROOT / "tests" / "adversarial" / "attacks" / "forged_value_crashes_check.py").read_text()
    with open(sub / "ex01_torch_mlp.py", "a") as fh:
        fh.write("\n\n" + attack)
    return sub


@pytest.fixture(scope="module")
def killed_mid_task(dask_cluster, tmp_path_factory):
    """One ``--resume`` run on the shared cluster whose worker grading the slow submission's ex01 is SIGKILLed
    mid-task.

    The class: a solution, the slow one and a forger. The solution is graded first on its own (``--jobs 1``,
    no cluster); the run on the cluster resumes the other two (new rows come after the kept one). One cluster run read by three tests (each
    costs every worker an admission: an import check and a zygote).
    Returns ``(the grader's process, the killed workers, its rows, the submissions, the solution's row graded
    before)``.
    """
    cluster, client = dask_cluster
    tmp = tmp_path_factory.mktemp("killed")
    subs = [str(make_submission(tmp / "b", only=["ex01_torch_mlp", "ex09_autograd_tape"])),
            str(slow_submission(tmp / "a-slow", SLOW)),
            str(forger(tmp / "c-forger"))]
    out = tmp / "r.json"
    cp = tapetrace("grade", subs[0], *COMMON, "--jobs", "1", "--json", str(out), "--quiet")
    assert cp.returncode == 0, cp.stderr
    first = json.loads(out.read_text())  # one submission: one object
    thread, killed = kill_worker_running(client, "tapetrace-ex01_torch_mlp-0-")  # a-slow: the first to go
    cp = tapetrace("grade", *subs, *COMMON, "--scheduler", cluster.scheduler_address, "--json", str(out),
                   "--resume")
    thread.join(5)
    rows = json.loads(out.read_text()) if cp.returncode in (0, 3) else []
    return cp, killed, rows, subs, first


def test_a_worker_killed_mid_task_loses_nothing(killed_mid_task):
    cp, killed, rows, subs, _first = killed_mid_task
    assert cp.returncode == 0, cp.stderr
    assert killed, "the slow task was never seen running"
    assert [r["submission"] for r in rows] == subs
    assert all(set(r["exercises"]) == set(ONLY.split(",")) for r in rows)
    assert [r["total"] for r in rows[:2]] == [20, 20], \
        [(r["submission"], r["total"]) for r in rows]  # retried on the other worker: graded in full


def test_a_task_whose_workers_keep_dying_is_a_grader_error_row(dask_cluster, tmp_path):
    cluster, client = dask_cluster
    client.wait_for_workers(2, timeout=HANG)
    slow = slow_submission(tmp_path / "a-slow", SLOW)
    other = make_submission(tmp_path / "b", only=["ex01_torch_mlp", "ex09_autograd_tape"])
    before = cluster.scheduler.allowed_failures
    cluster.scheduler.allowed_failures = 0  # the first death is one too many
    try:
        thread, killed = kill_worker_running(client, "tapetrace-ex01_torch_mlp-0-")
        cp = tapetrace("grade", str(slow), str(other), *COMMON, "--scheduler", cluster.scheduler_address,
                       "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv"), "--quiet")
        thread.join(5)
    finally:
        cluster.scheduler.allowed_failures = before
    assert cp.returncode == 3, cp.stderr  # a row the cluster lost is not a grade: --resume grades it
    assert killed
    rows = json.loads((tmp_path / "r.json").read_text())
    assert len(rows) == 2 and rows[1]["total"] == 20
    ex01, ex09 = rows[0]["exercises"]["ex01_torch_mlp"], rows[0]["exercises"]["ex09_autograd_tape"]
    assert ex01["status"] == "ungraded" and ex01["score"] == 0 and "KilledWorker" in ex01["grader_reason"]
    assert ex01["tests"] and all(t["code"] == "NOT_GRADED_YET" and not t["passed"] for t in ex01["tests"])
    assert ex09["status"] == "graded" and ex09["score"] == 10  # one exercise's loss costs no other
    assert rows[0]["total"] == 10


def test_resume_on_a_running_scheduler(dask_cluster, killed_mid_task):
    """``--resume`` on a cluster (killed_mid_task's run): the row graded before is kept, the rest graded."""
    cluster, _client = dask_cluster
    cp, _killed, rows, subs, first = killed_mid_task
    assert cp.returncode == 0, cp.stderr
    assert "1 already graded" in cp.stderr and "2 to go" in cp.stderr
    assert rows[0] == first and [r["submission"] for r in rows] == subs
    assert rows[1]["total"] == 20 and all(r["exercises"][ex]["status"] == "graded" for r in rows for ex in r["exercises"])
    assert not any(k.startswith("tapetrace-run-") for k in cluster.scheduler.worker_plugins)  # runs closed


def test_workers_without_the_device_are_refused_and_nothing_is_graded(dask_cluster, tmp_path):
    """No worker has the device: each is refused (saying so), and every exercise is ungraded (exit 3)."""
    cluster, client = dask_cluster
    client.wait_for_workers(2, timeout=HANG)
    if any(client.run(lambda: os.path.exists("/dev/nvidia0")).values()):
        pytest.skip("this machine has a GPU")
    sub = make_submission(tmp_path / "s", only=["ex01_torch_mlp"])
    cp = tapetrace("grade", str(sub), "--only", "ex01", "--device", "cuda", "--scheduler",
                   cluster.scheduler_address, "--json", str(tmp_path / "r.json"), "--quiet",
                   env={_cluster_options.PATIENCE_ENV: "1"}, timeout=HANG)
    assert cp.returncode == 3, cp.stderr
    assert cp.stderr.count("refused: --device cuda: torch sees no CUDA device") == 2, cp.stderr
    row = json.loads((tmp_path / "r.json").read_text())  # one submission: one object
    ex01 = row["exercises"]["ex01_torch_mlp"]
    assert ex01["status"] == "ungraded" and "no Dask worker could grade this run" in ex01["grader_reason"]
    assert "Traceback" not in cp.stderr
    assert not any(k.startswith("tapetrace-run-") for k in cluster.scheduler.worker_plugins)


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_keeps_what_was_graded_and_stops_the_local_cluster(tmp_path):
    """A batch system's SIGTERM mid-run: exit 130, finished rows written, no worker, zygote or nanny left."""
    fast = [make_submission(tmp_path / f"a{i}", only=["ex01_torch_mlp"]) for i in range(2)]
    hang = tmp_path / "b-hang"
    hang.mkdir()
    (hang / "ex01_torch_mlp.py").write_text((ROOT / "tests" / "adversarial" / "attacks" /
                                             "call_infinite_loop.py").read_text())
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", *map(str, [*fast, hang]),
                             "--only", "ex01", "--device", "cpu", "--seed", str(SEED), "--timeout", "120",
                             "--cluster", "local:2", "--json", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        graded: list = []
        while time.monotonic() < deadline and not graded:  # the checkpoint (rewritten at most every 2 s)
            time.sleep(0.5)
            try:
                graded = _report.read_json(str(out)) if out.exists() else []
            except ValueError:
                continue
        assert graded, "the fast submissions were not graded in time"
        time.sleep(3.0)  # the other fast one too; the hang's worker spins
        before = _descendants(proc.pid)
        assert len(before) >= 4, "no nanny, worker or zygote below the grader?"
        proc.send_signal(signal.SIGTERM)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    rows = json.loads(out.read_text())
    assert sorted(Path(r["submission"]).name for r in rows) == ["a0", "a1"] and all(r["total"] == 10 for r in rows)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in before):
        time.sleep(0.2)
    assert not [p for p in before if _alive(p)], "processes of the cluster outlived the grader"


def test_hide_list_is_the_submissions_folder():
    folder = Path(tempfile.mkdtemp(prefix="tapetrace-hide-"))  # a class two levels below the system's /tmp
    try:
        subs = [str(make_submission(folder / "class" / f"s{i}", only=["ex09_autograd_tape"])) for i in range(3)]
        assert _cluster.hide_list(subs) == [str(folder)]  # up to the folder below /tmp, never /tmp itself
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    many = [f"/usr/local/d{i}/s" for i in range(_cluster.MAX_HIDE + 1)]  # never /usr/local: one place each
    with pytest.raises(HideRefused, match="more than 256"):  # never [] (each task would hide its own only)
        _cluster.hide_list(many)


def test_required_isolation_is_each_workers_entry_rule(dask_cluster, tmp_path):
    """Workers below --require-isolation are refused by name; nothing is graded below it (exit 3, ungraded)."""
    cluster, client = dask_cluster
    client.wait_for_workers(2, timeout=HANG)
    sub = make_submission(tmp_path / "s", only=["ex01_torch_mlp"])
    cp = tapetrace("grade", str(sub), "--only", "ex01", "--scheduler", cluster.scheduler_address, "--quiet",
                   "--sandbox-skip", "namespaces,landlock,uid", "--require-isolation", "full",
                   "--json", str(tmp_path / "r.json"), env={_cluster_options.PATIENCE_ENV: "1"}, timeout=HANG)
    assert cp.returncode == 3, cp.stderr
    assert cp.stderr.count("refused: --require-isolation full: student code would run here with ") == 2, \
        cp.stderr
    row = json.loads((tmp_path / "r.json").read_text())  # one submission: one object
    assert row["exercises"]["ex01_torch_mlp"]["status"] == "ungraded" and row["total"] == 0
    assert not any(k.startswith("tapetrace-run-") for k in cluster.scheduler.worker_plugins)


def test_a_worker_grades_nothing_where_the_clients_places_hide_its_own_python(monkeypatch, tmp_path):
    """The client chose the places on its machine: a Dask worker whose Python or engine lies under one
    gives a grader_error row (hiding it would break the student's worker; not hiding it would leak)."""
    from types import SimpleNamespace

    from autograder.scaleout import cluster_worker as _worker

    graded: list[list[str]] = []

    class Run:
        tmp = str(tmp_path / "tapetrace-run-x")
        isolation: dict = {}
        device: dict = {}
        launcher = SimpleNamespace(kind="spawn")

        def hide(self, places):
            graded.append(list(places))

        def grade_exercise(self, sub, exercise, final=True):
            return {"status": "graded"}

        def graders_row(self, exercise, status, reason):
            return {"status": status, "message": reason}

    holder = SimpleNamespace(admitted=lambda worker, digest: Run(), after=lambda worker, run: None)
    worker = SimpleNamespace(plugins={"p": holder}, address="tcp://w")
    monkeypatch.setattr(distributed, "get_worker", lambda: worker)
    clash = _worker.grade_task("p", "d", str(tmp_path / "s"), "directory", "ex01_torch_mlp", "", None,
                               [os.path.dirname(sys.prefix)])
    assert clash["result"]["status"] == "grader_error" and sys.prefix.startswith(
        clash["result"]["message"].split("'")[1]) and not graded
    fine = _worker.grade_task("p", "d", str(tmp_path / "s"), "directory", "ex01_torch_mlp", "", None,
                              [str(tmp_path / "class")])
    assert fine["result"] == {"status": "graded"} and graded == [[str(tmp_path / "class")]]


def test_a_forged_answer_is_the_students_on_the_cluster_too(killed_mid_task):
    """A forged answer written on the result pipe (tests/adversarial/attacks/forged_value_crashes_check.py), graded
    on a Dask worker (autograder/scaleout/cluster_worker.py): found by the grader's fence, the student's 0s
    (EXERCISE_FORGED on every check), not a grader_error."""
    cp, _killed, rows, _subs, _first = killed_mid_task
    assert cp.returncode == 0, cp.stderr  # no grader_error: exit status 3 would ask for --resume
    ex01 = {Path(r["submission"]).name: r for r in rows}["c-forger"]["exercises"]["ex01_torch_mlp"]
    assert ex01["status"] == "graded" and "grader_reason" not in ex01, ex01
    assert {t["code"] for t in ex01["tests"]} == {"EXERCISE_FORGED"} and ex01["score"] == 0, ex01


def test_half_an_emoji_is_the_students_on_the_cluster_too(tmp_path):
    """A notebook whose ex01 cell holds a lone surrogate (tests/test_text_intake.py), graded on a Dask worker
    (``--cluster local:1``): the client's loader made its text safe at intake, the worker fails its load as the
    student's (LOAD_SURROGATE), a final row (exit 0), never a grader_error."""
    from test_text_intake import EX01, HALF, notebook, with_comment

    nb = notebook(tmp_path / "nb.ipynb", with_comment(HALF))
    cp = tapetrace("grade", str(nb), "--only", EX01, "--device", "cpu", "--seed", str(SEED), "--cluster", "local:1",
                   "--json", str(tmp_path / "r.json"), "--quiet", timeout=HANG)
    assert cp.returncode == 0, cp.stderr
    row = json.loads((tmp_path / "r.json").read_text())["exercises"][EX01]  # one submission: one object
    assert row["status"] == "error" and row["score"] == 0 and "grader_reason" not in row, row
    assert {t["code"] for t in row["tests"]} == {"LOAD_SURROGATE"}, row
