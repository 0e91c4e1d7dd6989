"""The kernel's word that a worker's own loop waits for the next command (autograder/workers/confirm.py), and the
seccomp rule that keeps the worker's pipes to the grader in place (autograder/sandbox/seccomp.py).

A small process here plays the worker: it reads its command pipe as the loop does (``wire.recv`` from its main
frame), once more one C-level call deeper (the calibration), then waits for the next command the way a scenario
says: from its loop (honest), from inside a call (code that serves the commands itself), or from its loop while a
thread of its own also reads them. The attacks in tests/adversarial/attacks (``forge_ex06_serves_the_rest_*``,
``forge_ex06_commands_read_by_a_thread``, ``forge_ex06_answer_frame_answers_the_fence_then_exits``) grade the same
through the engine.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import time

import pytest

from autograder.core import wire as _wire
from autograder.core.paths import ROOT
from autograder.workers import confirm as _confirm

READABLE = sys.platform.startswith("linux") and platform.machine().lower() in _confirm._READ \
    and os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/syscall")
needs_proc = pytest.mark.skipif(not READABLE, reason="needs Linux's /proc/PID/task/TID/syscall on x86_64 or aarch64")

PLAYER = r"""
import operator, os, sys, threading
from autograder.core import wire
from autograder.workers.worker import _calibration_read
fd = int(sys.argv[1]); how = sys.argv[2]
if len(sys.argv) > 3:  # as a worker with a uid of its own: dumpable or not (argv[4])
    uid = int(sys.argv[3])
    os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
    __import__("ctypes").CDLL(None).prctl(4, int(sys.argv[4]), 0, 0, 0)
head = bytearray(8)
wire.recv_rest(fd, head[:os.readv(fd, [head])])  # the loop's own read
operator.call(_calibration_read, fd)        # one C-level call deeper
if how == "thread":
    threading.Thread(target=lambda: os.read(fd, 1), daemon=True).start()
if how == "hidden_child" and os.fork() == 0:  # a child the grader may no longer look into
    __import__("ctypes").CDLL(None).prctl(4, 0, 0, 0, 0)
    __import__("time").sleep(60)
if how == "reopened":  # a description of its own: read without blocking, it would not show as a blocked read
    kept = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
if how == "nested":
    operator.call(_calibration_read, fd)    # code inside a call waits for the next command
else:
    wire.recv_rest(fd, head[:os.readv(fd, [head])])  # the loop waits
"""


def _player(how: str) -> tuple[subprocess.Popen, int, _confirm.LoopWatch | None]:
    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", PLAYER, str(r), how], pass_fds=(r,), cwd=ROOT)
    os.close(r)
    note: dict = {}
    watch = _confirm.calibrate(proc.pid, note, _confirm.pipe_link(w), lambda: _wire.send(w, {"calibrate": 1}),
                               time.monotonic() + 30)
    assert note["answers_confirmed"] == ("stack" if watch and watch.depth_rule else note["answers_confirmed"])
    return proc, w, watch


@needs_proc
@pytest.mark.parametrize(("how", "verdict"), [("loop", None), ("nested", "forged.nested"), ("thread", "forged.reader"),
                                              ("reopened", "forged.reader")])
def test_the_kernel_tells_the_loop_from_code_inside_a_call_and_from_another_reader(how, verdict):
    proc, w, watch = _player(how)
    try:
        assert watch is not None and watch.depth_rule, "calibration saw both reads, a C-level call apart"
        assert watch.loop_sp - watch.nested_sp >= _confirm.MIN_GAP
        if how in ("thread", "reopened"):  # done once the calibration is: wait until it is
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and watch._other_readers() is None:
                time.sleep(0.01)
        assert watch.confirm(time.monotonic() + 30) == verdict
    finally:
        proc.kill()
        proc.wait()
        os.close(w)


@needs_proc
def test_a_worker_that_never_waits_for_a_command_is_not_confirmed():
    proc, w, watch = _player("loop")
    try:
        _wire.send(w, {"go": 1})  # the player ends after its last read: the loop is never seen waiting again
        proc.wait(30)
        assert watch is not None and watch.confirm(time.monotonic() + 2) == "forged.running"
    finally:
        os.close(w)


DRIVER = r"""
import json, os, subprocess, sys, time
from autograder.core import wire
from autograder.workers import confirm
caps = int(next(line for line in open("/proc/self/status") if line.startswith("CapEff")).split()[1], 16)
assert not caps & (1 << 19), "CAP_SYS_PTRACE is still effective"
out = {}
for how, dumpable in [("loop", 1), ("loop", 0), ("nested", 1), ("thread", 1), ("hidden_child", 1)]:
    r, w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", os.environ["PLAYER"], str(r), how, "254321", str(dumpable)],
                            pass_fds=(r,))
    os.close(r)
    deadline = time.monotonic() + 30  # a worker is read once it is sandboxed: here, once it is the player's own user
    while time.monotonic() < deadline and "254321" not in next(
            line for line in open(f"/proc/{proc.pid}/status") if line.startswith("Uid")):
        time.sleep(0.01)
    # and, when it stays dumpable, has said so (its threads' files are then its own user's: root's until then)
    while dumpable and time.monotonic() < deadline:
        with confirm.as_owner(proc.pid):
            if confirm.state(proc.pid, proc.pid) != "hidden":
                break
        time.sleep(0.01)
    note = {}
    watch = confirm.calibrate(proc.pid, note, confirm.pipe_link(w), lambda: wire.send(w, {"calibrate": 1}),
                              time.monotonic() + 30)
    verdict = None
    if watch is not None:
        deadline = time.monotonic() + 30
        while how in ("thread", "hidden_child") and time.monotonic() < deadline:
            with confirm.as_owner(watch.pid):
                if watch._other_readers() is not None:
                    break
            time.sleep(0.01)
        verdict = watch.confirm(time.monotonic() + 30)
    out[f"{how}-{dumpable}"] = [note["answers_confirmed"], verdict]
    subprocess.run(["pkill", "-KILL", "-U", "254321"])
    proc.wait()
    os.close(w)
print(json.dumps(out))
"""


@needs_proc
def test_without_cap_sys_ptrace_the_grader_reads_a_dumpable_worker_as_its_own_user():
    """As in a default Docker container (root, no CAP_SYS_PTRACE): a worker with a uid of its own that stays
    dumpable is read as that user (``as_owner``) and confirmed like any other; a non-dumpable one cannot be (the
    fence alone); a child of the worker made non-dumpable counts as a reader."""
    import shutil

    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("pkill") is None:
        pytest.skip("needs root, setpriv and pkill (to play Docker's default privileges and a worker's own uid)")
    cp = subprocess.run(["setpriv", "--bounding-set=-sys_admin,-sys_ptrace", "--inh-caps=-sys_admin,-sys_ptrace",
                         "--", sys.executable, "-c", DRIVER], capture_output=True, text=True, cwd=ROOT, timeout=300,
                        env=dict(os.environ, PLAYER=PLAYER, PYTHONPATH=str(ROOT)))
    assert cp.returncode == 0, cp.stderr[-3000:]
    got = __import__("json").loads(cp.stdout.splitlines()[-1])
    assert got["loop-1"] == ["stack", None], got
    assert got["loop-0"][0].startswith("fence only") and "not permitted" in got["loop-0"][0], got
    assert got["nested-1"] == ["stack", "forged.nested"], got
    assert got["thread-1"] == ["stack", "forged.reader"], got
    assert got["hidden_child-1"] == ["stack", "forged.reader"], got


def test_calibration_that_cannot_read_the_threads_says_so_and_still_releases_the_worker(monkeypatch):
    released = []
    note: dict = {}
    monkeypatch.setattr(_confirm, "state", lambda pid, tid: None)
    monkeypatch.setattr(_confirm, "loop_process", lambda pid, iso: pid)
    watch = _confirm.calibrate(os.getpid(), note, "pipe:[1]", lambda: released.append(1), time.monotonic() + 1)
    assert watch is None and released == [1, 1]
    assert note["answers_confirmed"].startswith("fence only")


def test_seccomp_keeps_the_grader_pipes_in_place():
    """dup2/dup3 onto a kept descriptor, closing it and a close_range over it are refused; other descriptors are
    the student's own."""
    from autograder.sandbox import seccomp as _seccomp

    if _seccomp.program(platform.machine().lower(), 1, False) is None:
        pytest.skip("seccomp's program is built for x86_64 and aarch64 only")
    code = r"""
import os, sys
from autograder.sandbox import seccomp
kept = os.dup2(os.open(os.devnull, os.O_RDONLY), 1000)
other = os.open(os.devnull, os.O_RDONLY)
assert seccomp.install(kept_fds=(1000,))
def refused(fn):
    try:
        fn()
    except PermissionError:
        return True
    return False
spare = os.open(os.devnull, os.O_WRONLY)
out = [refused(lambda: os.dup2(spare, 1000)), refused(lambda: os.close(1000)),
       refused(lambda: os.closerange(999, 1001)), refused(lambda: os.dup2(spare, other)),
       refused(lambda: os.close(other)), refused(lambda: os.closerange(1001, 1100))]
os.fstat(1000)
print(out)
"""
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert cp.returncode == 0, cp.stderr[-2000:]
    # os.closerange closes one by one (ignoring errors) where close_range is refused: fd 1000 stays open either way
    assert cp.stdout.split("\n")[0] in ("[True, True, True, False, False, False]",
                                        "[True, True, False, False, False, False]"), cp.stdout


GRADED = r"""
import json, sys
from autograder.core.paths import SOLUTIONS
from autograder.engine.run import GradingRun
run = GradingRun(device="cpu", timeout=60, seed=7, exercises=["ex01_torch_mlp"])
try:
    (row,) = run.grade([str(SOLUTIONS)], only=["ex01_torch_mlp"], jobs=1)
    worker = run.start_worker("ex01_torch_mlp", str(SOLUTIONS / "ex01_torch_mlp.py"), "student")
    try:
        print(json.dumps([row["total"], row["max_total"], worker.isolation]))
    finally:
        worker.close()
finally:
    run.close()
"""


@needs_proc
def test_a_students_worker_is_calibrated_and_confirmed_as_in_a_default_docker_container():
    """Every student's worker is calibrated before its code loads and its isolation record says how its answers
    are confirmed: graded with Docker's default privileges (root without CAP_SYS_ADMIN or CAP_SYS_PTRACE:
    tests/scripts/as_container.sh, Python opened to other users as the otter image's setup does), its worker has a
    uid of its own, stays dumpable and is read as that user: ``stack``, and an honest worker's calls pass."""
    import json
    import shutil

    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("setpriv", "unshare")):
        pytest.skip("needs root, setpriv and unshare (Docker's default privileges, Python opened to other users)")
    cp = subprocess.run(["sh", str(ROOT / "tests" / "scripts" / "as_container.sh"), "--open-root", sys.executable,
                         "-c", GRADED], capture_output=True, text=True, cwd=ROOT, timeout=600,
                        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert cp.returncode == 0, cp.stderr[-3000:]
    total, max_total, record = json.loads(cp.stdout.splitlines()[-1])
    assert total == max_total > 0
    if record.get("uid") is None:
        pytest.skip(f"this Python cannot run as another user here: {record.get('uid_note')}")
    assert record["answers_confirmed"] == "stack" and record["level"] == "container", record


@needs_proc
def test_the_loop_must_have_read_every_byte_the_grader_sent_since_the_last_confirmation():
    """``confirm``'s byte rule on a real thread (this one): the first look takes the count, a thread that read what it
    was sent passes, one that read less (a command taken by another thread) is a reader's forgery."""
    if _confirm._rchar(os.getpid(), threading.get_native_id()) is None:
        pytest.skip("no /proc/PID/task/TID/io here (task I/O accounting)")
    if threading.get_native_id() != os.getpid():
        pytest.skip("runs on the process's main thread only")
    watch = _confirm.LoopWatch(os.getpid())
    r, w = os.pipe()
    try:
        assert watch._read_all(0) is None  # the first look: the count only
        os.write(w, b"x" * 20_000)
        assert len(os.read(r, 20_000)) == 20_000
        assert watch._read_all(20_000) is None
        # nothing read since but the io file itself (a few hundred bytes: here the reader is the thread it counts)
        assert watch._read_all(10_000) == "forged.reader"
    finally:
        os.close(r)
        os.close(w)
