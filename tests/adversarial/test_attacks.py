"""The attack suite: each file in attacks/ replaces one exercise of a correct submission.

An attack headed `# AFTER: solution` is appended to the exercise's reference solution (an
honest answer that also attacks), so the file holds only the attack.

The attacked exercise must get exactly what its honest part earns (the checks named in
FAILS score 0, all others pass) with a clear message, and the rest of the run must be
untouched: a canary exercise graded in the same submission keeps full marks, and after
all attacks the same grading run (same zygote, same reference cache) still gives the
solutions full marks. Nothing may be written outside the run's temp folders, no student
process may survive its exercise, and the network must be unreachable.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.engine.run import GradingRun
from autograder.hidden import load_suite

from .attacklib import ATTACKS, NO_SYS_ADMIN, attack_source, meta, targets

CANARY = "ex09_autograd_tape"  # graded beside every attack on another exercise
CANARY_FOR_EX09 = "ex01_torch_mlp"
LEVELS = {"namespaces": ([], "full"), "no_sys_admin": (NO_SYS_ADMIN, "container")}


def _levels() -> list:
    """The namespaces level in ``make test``; the container level (no CAP_SYS_ADMIN, as in a default Docker
    container: Landlock, seccomp, a uid) opt-in (``make test-containers``, docs/benchmarks.md "Opt-in tests"):
    ~190 CPU-s more. ``make test`` still grades at that level the class kept apart
    (test_class_isolation.py), the run's outputs kept from workers (test_outputs.py) and the solutions
    (tests/test_isolation.py)."""
    out = [pytest.param("namespaces")]
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        out.append(pytest.param("no_sys_admin", marks=[pytest.mark.container, pytest.mark.skip(
            reason="setpriv and root are needed to grade without CAP_SYS_ADMIN (as in a default Docker container)")]))
    else:
        out.append(pytest.param("no_sys_admin", marks=pytest.mark.container))
    return out


@pytest.fixture(scope="module", params=_levels())
def attack_run(request, listener):  # the listeners' addresses must be in the environment the zygote inherits
    prefix, level = LEVELS[request.param]
    # planned for the exercises the attacks target and their canaries (its zygotes import what those need)
    r = GradingRun(device="cpu", timeout=8.0, seed=1234, mem_bytes=1024**3, launch_prefix=prefix,
                   exercises=sorted({*targets(), CANARY, CANARY_FOR_EX09}))
    r.expected_level = level
    yield r
    r.close()


@pytest.fixture(scope="module")
def listener(tmp_path_factory):
    """A TCP, a UDP and a Unix-socket listener (outside /tmp: a worker with namespaces gets a private /tmp)."""
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    folder = Path(tempfile.mkdtemp(prefix="tapetrace-attack-", dir="/var/tmp"))
    folder.chmod(0o755)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(folder / "sock"))
    (folder / "sock").chmod(0o777)
    unix.listen(8)
    hits: list[bytes] = []
    stop = threading.Event()

    def serve(srv: socket.socket, stream: bool) -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                if stream:
                    conn, _ = srv.accept()
                    hits.append(conn.recv(64))
                    conn.close()
                else:
                    hits.append(srv.recv(64))
            except OSError:
                continue

    threads = [threading.Thread(target=serve, args=(s, st), daemon=True) for s, st in ((tcp, True), (udp, False),
                                                                                        (unix, True))]
    for t in threads:
        t.start()
    os.environ["TAPETRACE_ATTACK_PORT"] = str(tcp.getsockname()[1])
    os.environ["TAPETRACE_ATTACK_UDP"] = str(udp.getsockname()[1])
    os.environ["TAPETRACE_ATTACK_UNIX"] = str(folder / "sock")
    yield hits
    stop.set()
    for t in threads:
        t.join(2)
    for s in (tcp, udp, unix):
        s.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def _no_stale_leftovers():
    """Removes what an interrupted earlier run left, so each test sees only its own attack's plants."""
    for stale in _leftovers():
        os.unlink(stale)


def _leftovers() -> list[str]:
    planted = "tapetrace_attack_planted.py"
    found = []
    for p in [Path("/tmp/tapetrace_attack_tmp.txt"), Path("/dev/shm/tapetrace_attack_shm.txt"),
              Path.home() / "tapetrace_attack_home.txt", ROOT / "autograder" / "tapetrace_attack_engine.txt",
              Path.cwd().parent / "tapetrace_attack_parent.txt", ROOT / "autograder" / "exercises" / planted,
              Path(sysconfig.get_paths()["purelib"]) / planted, Path(os.__file__).parent.parent / planted,
              Path("/var/tmp") / planted, Path.home() / ".cache" / "tapetrace" / "jax-compile" / planted]:
        if p.exists():
            found.append(str(p))
    return found


def _survivors(marks: tuple[str, ...] = ("sleep 4242", "sleep 4243", "tt-spinner"), wait: float = 3.0) -> list[str]:
    """Processes a student started that are still alive (the zygote sweeps orphans about once a second), or a
    worker the grader should have killed (named tt-spinner)."""
    deadline = time.monotonic() + wait
    while True:
        ps = subprocess.run(["ps", "-eo", "comm,args"], capture_output=True, text=True).stdout
        alive = [m for m in marks if m in ps]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _attack_params() -> list:
    """Every attack; one headed ``# OPEN: why`` breaks out today (docs/security.md says so): it is expected
    to fail, strictly, so that the day it is contained the test says so and the header goes."""
    out = []
    for path in ATTACKS:
        why = meta(path).get("open")
        marks = [pytest.mark.xfail(strict=True, reason=f"open: {why}")] if why else []
        out.append(pytest.param(path, marks=marks, id=path.stem))
    return out


def _attack_submission(folder: Path, path: Path) -> tuple[Path, list[str]]:
    """A submission holding the attack (after the honest solution where it says so) and a canary; (its folder,
    the two exercises graded)."""
    target, source = attack_source(path)
    sub = folder / path.stem
    sub.mkdir(parents=True)
    (sub / f"{target}.py").write_text(source)
    canary = CANARY if target != CANARY else CANARY_FOR_EX09
    (sub / f"{canary}.py").write_text((SOLUTIONS / f"{canary}.py").read_text())
    return sub, [target, canary]


@pytest.fixture(scope="module")
def attack_results(attack_run, listener, tmp_path_factory) -> dict:
    """Every attack graded in ONE grading of the level's run, two submissions at a time (as ``--jobs 2`` grades a
    class: an attack runs beside another student's exercise), then what they left on the machine:
    ``{"rows": {attack path: result}, "leftovers": [...], "hits": [...], "survivors": [...]}``."""
    folder = tmp_path_factory.mktemp("attacks")
    rows: dict[Path, dict] = {}
    for attacks, limit in ((_stopped_by_the_time_limit(False), attack_run.timeout),
                           (_stopped_by_the_time_limit(True), SPIN_LIMIT)):
        subs = {path: _attack_submission(folder, path) for path in attacks}
        timeout, attack_run.timeout = attack_run.timeout, limit
        try:
            results = attack_run.grade([str(sub) for sub, _ in subs.values()], jobs=2,
                                       only=sorted({ex for _, exs in subs.values() for ex in exs}),
                                       exercises_for={str(sub): exs for sub, exs in subs.values()})
        finally:
            attack_run.timeout = timeout
        rows.update(zip(subs, results, strict=True))
    return {"rows": rows, "leftovers": _leftovers(), "hits": list(listener), "survivors": _survivors()}


# The attacks only the time limit stops (an endless loop, a sleep, work relayed through children...) spin until it,
# once per check: they are graded at a shorter limit, in working seconds like any (their canary's honest checks take
# well under a second of CPU each). What they prove does not depend on the limit's length: the limit holds.
SPIN_LIMIT = 2.5


def _stopped_by_the_time_limit(wanted: bool) -> list[Path]:
    """The attacks whose expected message is the time limit's (``wanted``), or all the others."""
    return [p for p in ATTACKS
            if (meta(p)["status"] == "timeout" or "did not finish" in meta(p)["message"]) == wanted]


def _fail_set(text: str, names: list[str]) -> set[str]:
    """The checks one ``# FAILS:`` alternative names: ``all``, ``none`` or a comma-separated list."""
    text = text.strip()
    return set(names) if text == "all" else set() if text == "none" else {s.strip() for s in text.split(",")}


@pytest.mark.parametrize("path", _attack_params())
def test_attack_is_contained(attack_run, attack_results, path):
    m = meta(path)
    if attack_run.expected_level != "full" and m.get("status_container"):
        m["status"] = m["status_container"]  # e.g. no pid namespace: a loop that kills "everything" only loops
    target = m["target"]
    canary = CANARY if target != CANARY else CANARY_FOR_EX09
    res = attack_results["rows"][path]
    ex = res["exercises"][target]
    suite = load_suite(target)
    names = [c.name for c in suite.checks]
    failed = {t["name"] for t in ex["tests"] if not t["passed"]}
    detail = {t["name"]: t["message"] for t in ex["tests"] if not t["passed"]}
    assert ex["status"] in m["status"].split("|"), (ex["status"], ex["message"])  # "a|b": either, by machine
    # "all | x, y": either set, for an attack that races the grader (it lost: x and y fail as the honest part would)
    options = [_fail_set(alt, names) for alt in m["fails"].split("|")]
    assert failed in options, detail
    fails = failed
    assert ex["score"] == sum(c.points for c in suite.checks if c.name not in fails)
    message = m.get("message_container") if attack_run.expected_level != "full" and m.get("message_container") \
        else m["message"]
    if message:
        texts = [ex["message"], *detail.values()]
        assert any(alt in t for t in texts for alt in message.split("|")), texts
    for t in [*ex["tests"], *res["exercises"][canary]["tests"]]:
        assert len(t["message"]) < 600
        assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e]", t["message"]), t["message"][:200]
    iso = res["isolation"]  # the sandbox's own record: nothing a worker says reaches it
    assert iso.get("level") == attack_run.expected_level and not iso.get("forged"), iso
    kept = res["exercises"][canary]
    assert kept["score"] == kept["max_score"], kept
    assert set(res["exercises"]) == {target, canary}, sorted(res["exercises"])


def test_the_attacks_left_nothing_behind(attack_results):
    """After the whole class of attacks: no file planted outside the run's temporary folders, no student worker
    reached the network, no process a student started outlived its exercise (checked once the grading is over:
    the names say which kind of plant or process was left)."""
    assert not attack_results["leftovers"], attack_results["leftovers"]
    assert not attack_results["hits"], "a student worker reached the network"
    assert not attack_results["survivors"], attack_results["survivors"]


def test_run_still_sound_after_attacks(attack_run):
    """Same zygote and reference cache as the attacks: the solutions still get full marks."""
    res = attack_run.grade([str(SOLUTIONS)], only=[CANARY, CANARY_FOR_EX09])[0]
    assert res["total"] == res["max_total"] > 0
    iso = res["isolation"]
    assert iso["level"] == attack_run.expected_level, iso
    for guarantee in ("private_files_unreadable", "writes_confined", "network_blocked", "processes_confined"):
        assert iso[guarantee] is True, (guarantee, iso)
    assert iso["seccomp"] is True
    # time limits count the CPU of all a worker starts from its cgroup, at either level, where root may make one
    assert iso.get("cpu_accounting") == ("cgroup" if _cgroups_writable() else "process tree"), iso
    if attack_run.expected_level == "full":
        assert iso["private_dirs_hidden"] is True and iso["network_dropped"] is True
    else:
        assert iso["pid_namespace"] is False and (iso["landlock"] or iso["uid"] is not None), iso


def _cgroups_writable() -> bool:
    """Whether this process may make a cgroup (v1's cpuacct hierarchy or the unified one) and enter it."""
    for parent in ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        folder = Path(parent, f"tapetrace-probe-{os.getpid()}")
        try:
            folder.mkdir()
        except OSError:
            continue
        try:
            return (folder / "cgroup.procs").exists()
        finally:
            folder.rmdir()
    return False


def test_a_workers_time_is_its_cgroups(attack_run, tmp_path):
    """A student's load that takes a second is timed from the CPU cgroup the sandbox made for the worker (every
    thread and child it starts counts), at either level, where root may make one; once it is closed none of its
    cgroups (pids, CPU, memory) is left."""
    src = tmp_path / "slow" / "ex01_torch_mlp.py"
    src.parent.mkdir()
    src.write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text() + "\nimport time\ntime.sleep(1.5)\n")
    worker = attack_run.start_worker("ex01_torch_mlp", str(src), "student")
    try:
        assert worker.status.get("status") == "loaded", worker.status
        if _cgroups_writable():
            assert (worker.isolation or {}).get("cpu_cgroup"), worker.isolation
        assert worker.time_accounting == ("cgroup" if _cgroups_writable() else "process tree")
        iso = worker.isolation or {}
        # a memory cgroup of its own caps all it starts together where one can be made; its record says which
        assert iso.get("memory_accounting") == ("cgroup" if iso.get("memory_cgroup") else "process"), iso
    finally:
        worker.close()
    left = [f for key in ("cpu_cgroup", "pids_cgroup", "memory_cgroup")
            if (f := (worker.isolation or {}).get(key)) and os.path.exists(f)]
    assert not left, f"a closed worker's cgroups were left: {left}"


def test_workers_forked_from_one_zygote_share_no_writable_state(attack_run, tmp_path):
    """One worker takes every shared lock it inherited, overwrites every shared writable mapping and exits;
    the next worker forked from the same zygote must neither block nor see it (a semaphore tqdm made while
    the zygote warmed up once cost a later student's torch.compile a point after a 242 s reference timeout)."""
    import json

    taker = tmp_path / "taker" / "ex01_torch_mlp.py"
    probe = tmp_path / "probe" / "ex01_torch_mlp.py"
    for target, source in ((taker, Path(__file__).parent / "attacks" / "shared_lock_taken.py"),
                           (probe, Path(__file__).parent.parent / "scripts" / "shared_state_probe.py")):
        target.parent.mkdir()
        target.write_text(source.read_text())
    attack_run.start_worker("ex01_torch_mlp", str(taker), "student").close()
    worker = attack_run.start_worker("ex01_torch_mlp", str(probe), "student")
    worker.close()
    error = str(worker.status.get("fields", {}).get("error", ""))
    assert "PROBE " in error, worker.status
    seen = json.loads(error.split("PROBE ", 1)[1])
    assert seen["free"] == seen["locks"], seen
    assert seen["shared_writable"] == 0 and seen["overwritten"] == 0, seen


def _student_says(run: GradingRun, script: str, tmp_path: Path, marker: str) -> tuple[dict, dict]:
    """Loads tests/scripts/SCRIPT as a student's ex01 in the run (a load deadline of 120 s: these take their
    time on a loaded machine); (its load status, the JSON after MARKER)."""
    import json

    src = tmp_path / script.replace(".py", "") / "ex01_torch_mlp.py"
    src.parent.mkdir()
    src.write_text((Path(__file__).parent.parent / "scripts" / script).read_text())
    timeout, run.timeout = run.timeout, 120.0
    try:
        worker = run.start_worker("ex01_torch_mlp", str(src), "student")
    finally:
        run.timeout = timeout
    worker.close()
    error = str(worker.status.get("fields", {}).get("error", ""))
    return worker.status, (json.loads(error.split(marker, 1)[1]) if marker in error else {})


def test_a_worker_fills_no_disk(attack_run, tmp_path):
    """20,000 files and 1 GB in 8 MB files (under the 64 MB file cap), in the scratch and /tmp: with namespaces
    the private tmpfs refuses past its caps; without, the grader's watch kills the worker (it once left 1 GB
    until the run ended). Either way nothing it wrote is left once it is closed."""
    from autograder.sandbox import quota as _quota

    status, wrote = _student_says(attack_run, "disk_filler.py", tmp_path, "FILLED ")
    if status.get("code") == "SCRATCH_FULL":
        assert status["status"] == "error" and attack_run.expected_level != "full", status
    else:
        assert wrote, status
        assert wrote["files"] <= _quota.SCRATCH_FILES and wrote["mb"] * 1024**2 <= _quota.SCRATCH_BYTES, wrote
    left = [p for d in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(d).glob("tapetrace-fill-*")]
    assert not left, left
    assert not [p for p in Path(attack_run.tmp).glob("w*/f1*")], "a closed worker's scratch was left"


def test_a_fork_bomb_is_capped(attack_run, tmp_path):
    """3,000 processes tried: each worker is capped (a pids cgroup of its own where root may make one, else an
    unprivileged uid's RLIMIT_NPROC; the kernel holds root to no RLIMIT_NPROC), and none outlives it."""
    status, said = _student_says(attack_run, "fork_bomb.py", tmp_path, "FORKED ")
    assert said, status
    assert 0 < said["forked"] < 3000, said  # 3,000: every fork it tried succeeded
    cap = max(1024, 16 * (os.cpu_count() or 1))  # pids_cgroup.pids_cap(); an unprivileged uid's limit is lower
    assert said["forked"] < cap, said
    deadline = time.monotonic() + 10
    while "tt-forkbomb" in subprocess.run(["ps", "-eo", "comm"], capture_output=True, text=True).stdout:
        assert time.monotonic() < deadline, "the fork bomb's processes outlived their worker"
        time.sleep(0.2)


def test_at_least_twenty_attacks():
    assert len(ATTACKS) >= 20


def test_every_attack_is_graded_by_the_runs_made_for_it():
    """Each file in attacks/ is graded, by glob, at each level, in a run planned for the attacks' targets: its
    header must name a known exercise (one with a hidden suite) within its first lines, or it would not be."""
    from autograder.core.registry import REGISTRY
    from autograder.hidden import available_exercises

    names = {p.stem for p in (Path(__file__).parent / "attacks").iterdir() if p.suffix == ".py"}
    assert {p.stem for p in ATTACKS} == names
    for path in ATTACKS:
        assert meta(path).get("target") in REGISTRY, f"{path.name}: no '# TARGET: exercise' in its first 8 lines"
    assert set(targets()) <= set(available_exercises())


def test_engine_unpacked_under_tmp_is_still_usable_and_hidden(tmp_path):
    """`otter run` unpacks the grader under /tmp, which workers cover with a private tmpfs."""
    import json
    import shutil
    import sys
    import tempfile

    copy = Path(tempfile.mkdtemp(prefix="tapetrace-engine-", dir="/tmp"))
    try:
        for sub in ("autograder", "solutions"):
            shutil.copytree(ROOT / sub, copy / sub, ignore=shutil.ignore_patterns("__pycache__"))
        attack = tmp_path / "attack"
        attack.mkdir()
        (attack / f"{CANARY_FOR_EX09}.py").write_text(
            (Path(__file__).parent / "attacks" / "read_solution_file.py").read_text())
        out = tmp_path / "r.json"
        done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(copy / "solutions"), str(attack),
                               "--only", CANARY_FOR_EX09, "--device", "cpu", "--json", str(out), "--quiet"],
                              cwd=copy, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        good, bad = json.loads(out.read_text())
        assert good["total"] == good["max_total"] > 0, good
        msg = bad["exercises"][CANARY_FOR_EX09]["message"]
        assert bad["total"] == 0 and bad["exercises"][CANARY_FOR_EX09]["status"] == "error"
        assert "PermissionError" in msg or "No such file" in msg
    finally:
        shutil.rmtree(copy, ignore_errors=True)
