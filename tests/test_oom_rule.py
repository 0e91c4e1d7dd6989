"""Whose a worker's death by SIGKILL is, from the grader's own facts (docs/instructors/time-and-memory.md,
"Whose trouble"): the OOM-kill counter of the container or the machine, and the counters of the memory
cgroup the sandbox made for the worker (``autograder.sandbox.pids_cgroup``), which caps everything it starts.

A student may kill its own worker with ``kill -9`` just after any OOM kill made the machine's counter rise,
or push its own processes together past its cap: neither is the grader's trouble. Only an OOM kill of one of
its processes while its cgroup stayed under its own cap is (a limit above it ran out). Where no memory cgroup
could be made, an OOM kill is never the grader's.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import signal
import time
from pathlib import Path

import pytest

from autograder.sandbox import pids_cgroup as _pids_cgroup
from autograder.sandbox import quota as _quota
from autograder.workers.envelope import judge_kill

GRADERS = {"oom": True, "memory_cap": False}
STUDENTS_CAP = {"oom": False, "memory_cap": True}
ORDINARY = {"oom": False, "memory_cap": False}


@pytest.mark.parametrize(("own", "rose", "expected"), [
    ({"oom_kill": 1, "at_cap": 0}, True, GRADERS),  # the OOM killer took it under its own cap: a limit above ran out
    ({"oom_kill": 0, "at_cap": 0}, True, ORDINARY),  # the counter rose elsewhere; its own SIGKILL is a kill -9
    ({"oom_kill": 1, "at_cap": 0}, False, ORDINARY),  # nothing outside says a limit ran out
    ({"oom_kill": 1, "at_cap": 0}, None, ORDINARY),  # the outside counter cannot be read: not the grader's
    ({"oom_kill": 1, "at_cap": 5}, True, STUDENTS_CAP),  # killed at its own cap: its children, its tmpfs
    ({"oom_kill": 0, "at_cap": 2}, True, STUDENTS_CAP),  # reached its cap, then killed itself
    (None, True, ORDINARY),  # its cgroup could not be read: never the grader's
], ids=["oom-under-its-cap", "kill-9-while-counter-rose", "no-outside-kill", "outside-unreadable",
        "at-its-cap", "cap-then-kill-9", "cgroup-unreadable"])
def test_a_sigkill_with_a_memory_cgroup_is_judged_from_its_counters(own, rose, expected):
    assert judge_kill("cgroup", own, rose) == expected


def test_without_a_memory_cgroup_an_oom_kill_is_never_the_graders():
    """``process`` accounting: the student's processes together had no cap, so they may have caused it."""
    assert judge_kill("process", None, True) == ORDINARY
    assert judge_kill("process", {"oom_kill": 1, "at_cap": 0}, True) == ORDINARY


def test_a_worker_without_a_sandbox_keeps_the_counter_rule():
    """The reference's worker runs the grader's code: the counter rising says the OOM killer's."""
    assert judge_kill(None, None, True) == {"oom": True, "memory_cap": False}
    assert judge_kill(None, None, None) == {"oom": None, "memory_cap": False}


@pytest.fixture
def any_folder(monkeypatch):
    """memory_events reads only a cgroup the sandbox made; here a faked one under tmp_path."""
    monkeypatch.setattr(_pids_cgroup, "OWN_CGROUP", re.compile(r".*/tapetrace-\d+"))


def _folder(tmp_path: Path, files: dict[str, str]) -> str:
    folder = tmp_path / "tapetrace-42"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return str(folder)


def test_v2_counters(tmp_path, any_folder):
    folder = _folder(tmp_path, {"memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n"})
    assert _pids_cgroup.memory_events(folder) == {"oom_kill": 1, "at_cap": 4}


def test_v1_counters_a_peak_at_the_cap_counts_though_failcnt_stays_0(tmp_path, any_folder):
    """With memory and swap capped together (memsw) some kernels count no failure: the peak says it."""
    mib = 2**20
    base = {"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "memory.failcnt": "0\n",
            "memory.limit_in_bytes": f"{100 * mib}\n"}
    at_cap = _folder(tmp_path / "a", {**base, "memory.max_usage_in_bytes": f"{100 * mib}\n"})
    under = _folder(tmp_path / "b", {**base, "memory.max_usage_in_bytes": f"{60 * mib}\n"})
    assert _pids_cgroup.memory_events(at_cap) == {"oom_kill": 1, "at_cap": 1}
    assert _pids_cgroup.memory_events(under) == {"oom_kill": 1, "at_cap": 0}


def test_unreadable_or_foreign_counters_are_none(tmp_path, monkeypatch):
    assert _pids_cgroup.memory_events(None) is None
    assert _pids_cgroup.memory_events("/sys/fs/cgroup/memory/someone-else") is None  # not one the sandbox made
    monkeypatch.setattr(_pids_cgroup, "OWN_CGROUP", re.compile(r".*/tapetrace-\d+"))
    assert _pids_cgroup.memory_events(_folder(tmp_path, {"memory.events": "max 1\n"})) is None


def _capped_children(cap: int, each: int, write_to) -> None:
    """In a forked child: a pids and a memory cgroup of its own capped at ``cap`` bytes, two children each
    taking ``each`` bytes (under any one process's limit), their end awaited; the folder sent on ``write_to``."""
    got: dict[str, object] = {}
    _pids_cgroup._pids_cgroup(got)
    _pids_cgroup._memory_cgroup(got, cap)
    os.write(write_to, (json.dumps(got) + "\n").encode())
    if not got.get("memory_cgroup"):
        return
    # each child holds its pages until the parent lets go (EOF on ``release``): the two are in the cgroup together
    # however the scheduler orders them (one that exited before the other touched its pages proved nothing)
    release_r, release_w = os.pipe()
    kids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            os.close(release_w)
            hold = mmap.mmap(-1, each)  # fresh pages (malloc could reuse a heap's, charged elsewhere before)
            for offset in range(0, each, mmap.PAGESIZE):
                hold[offset] = 1
            os.read(release_r, 1)
            os._exit(0)
        kids.append(pid)
    os.close(release_r)
    alive = set(kids)
    stop = time.monotonic() + 120  # a safety net only: the kernel takes one of them as soon as both hold pages
    while len(alive) == 2 and time.monotonic() < stop:
        for pid in list(alive):
            if os.waitpid(pid, os.WNOHANG)[0]:
                alive.discard(pid)
        time.sleep(0.02)
    os.close(release_w)
    for pid in alive:
        os.waitpid(pid, 0)


def test_a_memory_cgroup_caps_a_workers_children_together_and_goes_with_it():
    """The real kernel: two children of 48 MiB each under a 64 MiB cgroup cap: the OOM killer strikes in the
    cgroup, its counters say so, and releasing it (as a closed worker's) leaves nothing behind."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            _capped_children(64 * 2**20, 48 * 2**20, w)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        got = json.loads(fh.readline() or "{}")
    os.waitpid(pid, 0)
    folder = str(got.get("memory_cgroup") or "")
    try:
        if not folder:
            assert got.get("memory_accounting") == "process", got
            pytest.skip("no memory cgroup can be made here (cgroupfs not writable): the rule is `process`")
        assert got["memory_accounting"] == "cgroup", got
        facts = _pids_cgroup.memory_events(folder)
        assert facts and facts["oom_kill"] >= 1 and facts["at_cap"] >= 1, facts
        assert judge_kill("cgroup", facts, True) == STUDENTS_CAP
    finally:
        _quota.release_cgroup(got)
    assert not [f for f in (folder, got.get("pids_cgroup")) if f and os.path.exists(f)], "a cgroup was left"


def test_releasing_a_cgroup_kills_what_is_left_in_it():
    """A closed worker's cgroup may still hold children (stuck under memory pressure, or holding its pipes):
    release kills every process in it before removing it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            got: dict[str, object] = {}
            _pids_cgroup._memory_cgroup(got, 256 * 2**20)
            os.write(w, f"{got.get('memory_cgroup') or ''}\n".encode())
            signal.pause()
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as fh:
        folder = fh.readline().strip()
    try:
        if not folder:
            pytest.skip("no memory cgroup can be made here (cgroupfs not writable)")
        _quota.release_cgroup({"memory_cgroup": folder})
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert not os.path.exists(folder)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (OSError, ChildProcessError):
            pass
