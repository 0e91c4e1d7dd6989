"""Dask workers as other hosts (issue 30): grades equal ``--jobs 1``, and no fault of the cluster becomes a grade.

Each worker runs through ``../shared/tools/other-host/dask_worker_elsewhere.sh``: its own mount and pid
namespaces, a fresh ``/tmp`` and ``HOME``, the class and the outputs hidden, loopback only, the same
install. Scenarios:

- an admission run: ``--require-isolation full`` with no worker yet; then a worker whose hidden suite
  differs (a bind-mounted copy, one check worth other points), one whose flax folder is hidden (a
  tmpfs in its namespace) and one without CAP_SYS_ADMIN (a container's privileges) join: each is
  refused by name and grades nothing; a good worker joins last and the rows equal ``--jobs 1``;
- a scheduler that dies and stays down: every row graded is kept, the rest is ``ungraded`` (exit 3,
  what to do, no traceback); a scheduler restarted mid-run: the client registers the run again. After
  at most one ``--resume`` each run equals ``--jobs 1``, and no row in between holds a false grade.

Grading is cut to ex01 and ex09. Every wait is event-driven (a line of the grader, a port that
answers) with :data:`HANG` seconds as a hang guard only: no outcome depends on the machine's speed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import MUTANTS, SOLUTIONS, make_submission
from test_shards import ONLY, without_timing

from autograder.core.paths import ROOT

distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
OTHER_HOST = ROOT.parent / "shared" / "tools" / "other-host" / "dask_worker_elsewhere.sh"
AS_CONTAINER = ROOT / "tests" / "scripts" / "as_container.sh"
DASK = Path(sys.executable).with_name("dask")
SEED = 4711
COMMON = ["--only", ONLY, "--device", "cpu", "--seed", str(SEED)]
HANG = 600.0  # seconds: a hang guard, never a speed requirement


def _why_not() -> str | None:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "needs root on Linux (mount and pid namespaces)"
    if not OTHER_HOST.exists():
        return f"{OTHER_HOST} is not here (the shared other-host tool)"
    if not DASK.exists():
        return f"no dask command beside {sys.executable}"
    for where in (ROOT, Path(sys.prefix)):  # each worker host mounts its own empty /tmp over the machine's
        if Path(where).resolve().is_relative_to("/tmp"):
            return f"{where} is under /tmp, which each worker host replaces with its own tmpfs: they could not see it"
    cp = subprocess.run(["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc",
                         "true"], capture_output=True, text=True)
    if cp.returncode != 0:
        return f"unshare is refused here: {cp.stderr.strip()[:200]}"
    return None


WHY_NOT = _why_not()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


# ------------------------------------------------------------------ processes
class Hosts:
    """The processes of one test (schedulers, worker hosts, graders): all killed at the end."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        logs.mkdir(exist_ok=True)
        self.procs: list[subprocess.Popen] = []

    def _start(self, cmd: list[str], name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        log = open(self.logs / f"{name}-{len(self.procs)}.log", "w")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})}, cwd=self.logs)
        log.close()
        self.procs.append(proc)
        return proc

    def scheduler(self, port: int) -> subprocess.Popen:
        """A ``dask scheduler`` on 127.0.0.1:``port``, once it answers."""
        proc = self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                            "--dashboard-address", "127.0.0.1:0"], "scheduler")
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            assert proc.poll() is None, "the scheduler died at start (see its log)"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the scheduler never answered")

    def elsewhere(self, port: int, hide: list[Path], pre: str = "true") -> subprocess.Popen:
        """A worker host: ``dask worker`` in its own namespaces, ``hide`` invisible, ``pre`` run first there."""
        return self._start(["bash", str(OTHER_HOST), f"tcp://127.0.0.1:{port}", *map(str, hide)], "host",
                           env={"DASK": str(DASK), "PRE": pre})

    def as_container(self, port: int) -> subprocess.Popen:
        """A worker without CAP_SYS_ADMIN (Docker's default privileges), in this host's namespaces."""
        return self._start(["sh", str(AS_CONTAINER), str(DASK), "worker", f"tcp://127.0.0.1:{port}", "--nthreads",
                            "1", "--nworkers", "1", "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"],
                           "container")

    def kill(self, proc: subprocess.Popen) -> None:
        """Kills a process and everything of its session (a worker host: its whole pid namespace)."""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(60)

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                self.kill(proc)


class Grader:
    """``tapetrace grade`` in the background, its stderr read line by line as it comes."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", *args], cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})}, start_new_session=True)
        self.lines: list[str] = []
        self._new = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.stdout = ""

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._new:
                self.lines.append(line.rstrip("\n"))
                self._new.notify_all()
        with self._new:
            self._new.notify_all()

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str) -> str:
        """The first stderr line matching ``pattern``, once it is printed (the grader must still run)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + HANG
        with self._new:
            while time.monotonic() < deadline:
                hit = next((ln for ln in self.lines if rx.search(ln)), None)
                if hit is not None:
                    return hit
                assert self._reader.is_alive(), f"the grader ended without printing {pattern!r}:\n{self.stderr}"
                self._new.wait(1.0)
        raise AssertionError(f"no line {pattern!r} within {HANG} s:\n{self.stderr}")

    def finish(self) -> int:
        assert self.proc.stdout is not None
        self.stdout = self.proc.stdout.read()  # stderr is the reader thread's
        self.proc.wait(HANG)
        self._reader.join(HANG)
        return self.proc.returncode


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -------------------------------------------------------------------- the class
def small_class(tmp: Path) -> list[str]:
    """Five submissions: a solution, mutants, nothing, a corrupt zip, a linked exercise file."""
    subs = tmp / "subs"
    make_submission(subs / "alice", only=["ex01_torch_mlp", "ex09_autograd_tape"])
    make_submission(subs / "bob", only=["ex01_torch_mlp", "ex09_autograd_tape"],
                    replace={"ex01_torch_mlp": (MUTANTS / "ex01_torch_mlp" / "sigmoid_output.py").read_text(),
                             "ex09_autograd_tape": (MUTANTS / "ex09_autograd_tape" / "post_order.py").read_text()})
    (subs / "dave").mkdir()
    (subs / "frank.zip").write_bytes(b"not a zip at all")
    hank = make_submission(subs / "hank", only=["ex09_autograd_tape"])
    (tmp / "elsewhere.py").write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text())
    (hank / "ex01_torch_mlp.py").symlink_to(tmp / "elsewhere.py")  # refused, locally and on the cluster
    return [str(p) for p in sorted(subs.iterdir())]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The class and its ``--jobs 1`` grades (what every cluster run must equal)."""
    tmp = tmp_path_factory.mktemp("hosts")
    subs = small_class(tmp)
    out = tmp / "out"
    out.mkdir()
    cp = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *subs, *COMMON, "--jobs", "1", "--json",
                         str(out / "jobs1.json"), "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert cp.returncode == 0, cp.stderr
    base = json.loads((out / "jobs1.json").read_text())
    hank = {Path(r["submission"]).name: r for r in base}["hank"]["exercises"]["ex01_torch_mlp"]
    assert hank["status"] == "error" and hank["tests"][0]["code"] == "REFUSED_FILE"
    return {"tmp": tmp, "subs": subs, "out": out, "base": base, "hide": [tmp / "subs", out]}


@pytest.fixture
def hosts(tmp_path):
    h = Hosts(tmp_path / "logs")
    yield h
    h.close()


def exercises_of(rows: list[dict]) -> dict[tuple[str, str], dict]:
    return {(Path(r["submission"]).name, ex): e for r in without_timing(rows) for ex, e in r["exercises"].items()}


def no_false_row(rows: list[dict], base: list[dict]) -> int:
    """Asserts every exercise is the ``--jobs 1`` one or ``ungraded`` (0 points, said so); returns how many are ungraded."""
    got, want = exercises_of(rows), exercises_of(base)
    assert set(got) == set(want)
    ungraded = [k for k, e in got.items() if e["status"] == "ungraded"]
    for key, e in got.items():
        if e["status"] == "ungraded":
            assert e["score"] == 0 and e["grader_reason"] and all(t["code"] == "NOT_GRADED_YET" for t in e["tests"])
        else:
            assert e == want[key], key
    return len(ungraded)


def same_as_jobs_1(path: Path, base: list[dict], resumed: bool = False) -> None:
    """The rows of ``path`` are those of ``--jobs 1`` (after ``--resume``, the rows graded again come last)."""
    rows = json.loads(path.read_text())
    if resumed:
        rows = sorted(rows, key=lambda r: r["submission"])
    assert [r["submission"] for r in rows] == [r["submission"] for r in base]
    got, want = without_timing(rows), without_timing(base)
    assert got == want, _differences(got, want)


def _differences(got: object, want: object, path: str = "") -> list[str]:
    """Where two results differ (the first few paths), for a readable failure."""
    if isinstance(got, dict) and isinstance(want, dict):
        return [d for k in sorted(set(got) | set(want)) for d in _differences(got.get(k), want.get(k), f"{path}/{k}")][:8]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (a, b) in enumerate(zip(got, want)) for d in _differences(a, b, f"{path}[{i}]")][:8]
    return [] if got == want else [f"{path}: {str(got)[:120]} != {str(want)[:120]}"]


# ------------------------------------------------------------------- admission
def _other_suite(pre_dir: str) -> str:
    """A PRE snippet: the ex01 hidden suite replaced, in that host only, by one whose first 1-point check gives 4."""
    suite = ROOT / "autograder" / "hidden" / "ex01_torch_mlp.py"
    assert "points=1)" in suite.read_text()
    return (f'cp "{suite}" {pre_dir}/suite.py && sed -i "0,/points=1)/s//points=4)/" {pre_dir}/suite.py && '
            f'mount --bind {pre_dir}/suite.py "{suite}"')


def test_only_workers_that_qualify_grade_and_they_equal_jobs_1(course, hosts, tmp_path):
    """--require-isolation full, no worker yet; three workers that must not grade join, each refused by name."""
    port = free_port()
    hosts.scheduler(port)
    out = course["out"] / "admission.json"
    grader = Grader([*course["subs"], *COMMON, "--scheduler", f"tcp://127.0.0.1:{port}", "--json", str(out),
                     "--require-isolation", "full"])
    flax = Path(importlib.util.find_spec("flax").origin).parent
    hosts.elsewhere(port, course["hide"], pre=_other_suite("/tmp"))
    hosts.elsewhere(port, course["hide"], pre=f'mount -t tmpfs tmpfs "{flax}"')
    hosts.as_container(port)
    suite = grader.wait_for(r"refused: its install differs from the client's: .*hidden suite "
                            r"autograder/hidden/ex01_torch_mlp\.py differs")
    # its files counted from the wheel's RECORD, in the Dask worker's own process (before the import check ends)
    missing = grader.wait_for(r"refused: it cannot import what grading needs: flax: \d+ of its \d+ files are missing")
    below = grader.wait_for(r"refused: --require-isolation full: student code would run here with container")
    assert grader.proc.poll() is None, "the grader gave up while workers were refused"
    hosts.elsewhere(port, course["hide"])  # a worker that qualifies, joining last
    code = grader.finish()
    assert code == 0, grader.stderr
    same_as_jobs_1(out, course["base"])
    assert all(r["isolation"]["level"] == "full" for r in json.loads(out.read_text()))
    who = grader.wait_for(r"Dask workers: ")
    refused = [re.search(r"Dask worker (\S+) refused", ln).group(1) for ln in (suite, missing, below)]
    assert len(set(refused)) == 3 and all(f"{a} refused" in who and f"{a} graded" not in who for a in refused), who
    assert "Traceback" not in grader.stderr


# -------------------------------------------------------------- scheduler faults
def test_a_scheduler_that_stays_down_keeps_the_rows_then_resume_equals_jobs_1(course, hosts):
    port = free_port()
    sched = hosts.scheduler(port)
    hosts.elsewhere(port, course["hide"])
    out = course["out"] / "down.json"
    grader = Grader([*course["subs"], *COMMON, "--scheduler", f"tcp://127.0.0.1:{port}", "--json", str(out)],
                    env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"})
    grader.wait_for(r"graded 1/")
    hosts.kill(sched)  # and it stays down
    code = grader.finish()
    assert code == 3, grader.stderr
    assert "Traceback" not in grader.stderr
    assert re.search(r"the Dask scheduler \S+ is unreachable.*--resume", grader.stderr), grader.stderr
    rows = json.loads(out.read_text())
    assert no_false_row(rows, course["base"]) >= 1
    assert any(e["status"] != "ungraded" for r in rows for e in r["exercises"].values())

    hosts.scheduler(port)
    hosts.elsewhere(port, course["hide"])  # a worker does not outlive its scheduler: the pool comes back
    cp = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *course["subs"], *COMMON, "--scheduler",
                         f"tcp://127.0.0.1:{port}", "--json", str(out), "--resume", "--quiet"],
                        capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert cp.returncode == 0, cp.stderr
    same_as_jobs_1(out, course["base"], resumed=True)


def test_a_scheduler_restarted_mid_run_loses_no_grade(course, hosts):
    port = free_port()
    sched = hosts.scheduler(port)
    hosts.elsewhere(port, course["hide"])
    out = course["out"] / "restart.json"
    grader = Grader([*course["subs"], *COMMON, "--scheduler", f"tcp://127.0.0.1:{port}", "--json", str(out)],
                    env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": f"{HANG:.0f}s"})
    grader.wait_for(r"graded 1/")
    hosts.kill(sched)
    hosts.scheduler(port)
    hosts.elsewhere(port, course["hide"])  # as a Deployment starts its pods again
    code = grader.finish()
    grader.wait_for(r"was restarted: registering this run with it again")
    rows = json.loads(out.read_text())
    ungraded = no_false_row(rows, course["base"])
    assert code == (3 if ungraded else 0), grader.stderr
    if ungraded:  # a task the cluster failed MAX_ATTEMPTS times: one --resume grades it
        cp = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *course["subs"], *COMMON,
                             "--scheduler", f"tcp://127.0.0.1:{port}", "--json", str(out), "--resume", "--quiet"],
                            capture_output=True, text=True, cwd=ROOT, timeout=HANG)
        assert cp.returncode == 0, cp.stderr
    same_as_jobs_1(out, course["base"], resumed=bool(ungraded))
