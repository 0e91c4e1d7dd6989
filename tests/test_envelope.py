"""The box the grader runs in: cgroup v1 and v2 limits read from faked files, and the plan made from them."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from autograder.cli import grade as _cmd_grade
from autograder.workers import envelope as _envelope
from autograder.workers import sizing as _sizing
from autograder.workers.envelope import GIB, MIB, Envelope

MEMINFO = "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n"
V1_UNLIMITED = "9223372036854771712"


def _box(root: Path, cgroup: str, mountinfo: str, files: dict[str, str], vmstat: str = "oom_kill 7\n") -> str:
    """A fake /proc and /sys/fs/cgroup under ``root``."""
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "cgroup").write_text(cgroup)
    (root / "proc" / "self" / "mountinfo").write_text(mountinfo)
    (root / "proc" / "meminfo").write_text(MEMINFO)
    (root / "proc" / "vmstat").write_text(vmstat)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


V2_MOUNT = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"


def test_cgroup_v2_container_with_its_own_namespace(tmp_path):
    """Docker on a v2 host (Gradescope's default envelope): memory.max 768 MiB, cpu.max 0.5 of a CPU."""
    root = _box(tmp_path, "0::/\n", V2_MOUNT, {
        "sys/fs/cgroup/memory.max": "805306368\n", "sys/fs/cgroup/cpu.max": "50000 100000\n",
        "sys/fs/cgroup/memory.current": "123\n", "sys/fs/cgroup/memory.peak": "456\n",
        "sys/fs/cgroup/memory.events": "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n"})
    env = _envelope.read(root, cpus=16)
    assert (env.memory_bytes, env.cpu_quota, env.cgroup) == (768 * MIB, 0.5, "v2")
    assert env.usable_memory == 768 * MIB and env.usable_cpus == 0.5
    assert env.machine_memory_bytes == 16384000 * 1024
    assert _envelope.oom_kills(env, root) == 2 + 7  # the cgroup's counter and the machine's
    assert _envelope.memory_in_use(env) == (123, 456)


def test_cgroup_v2_nested_without_a_namespace_takes_the_smallest_limit_on_the_way_up(tmp_path):
    """A pod's limit set on a parent folder, the container's own unlimited: the parent's counts."""
    pod = "sys/fs/cgroup/kubepods/pod1"
    root = _box(tmp_path, "0::/kubepods/pod1/ctr\n", V2_MOUNT, {
        f"{pod}/memory.max": "536870912\n", f"{pod}/cpu.max": "200000 100000\n",
        f"{pod}/ctr/memory.max": "max\n", f"{pod}/ctr/cpu.max": "max 100000\n",
        f"{pod}/ctr/memory.current": "1\n"})
    env = _envelope.read(root, cpus=8)
    assert (env.memory_bytes, env.cpu_quota) == (512 * MIB, 2.0)
    assert env.memory_dir.endswith("kubepods/pod1/ctr")


V1_MOUNTS = ("40 30 0:35 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
             "41 30 0:36 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
             "42 30 0:37 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n")


def test_cgroup_v1_docker_without_a_cgroup_namespace(tmp_path):
    """Docker on a v1 host: /proc/self/cgroup names /docker/ID, the mounts show the whole hierarchy."""
    mem, cpu = "sys/fs/cgroup/memory/docker/abc", "sys/fs/cgroup/cpu,cpuacct/docker/abc"
    root = _box(tmp_path, "7:pids:/docker/abc\n4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n", V1_MOUNTS, {
        "sys/fs/cgroup/memory/memory.limit_in_bytes": V1_UNLIMITED,
        f"{mem}/memory.limit_in_bytes": "805306368\n",
        f"{mem}/memory.stat": f"cache 1\nrss 2\nhierarchical_memory_limit 805306368\nhierarchical_memsw_limit {V1_UNLIMITED}\n",
        f"{mem}/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n",
        f"{mem}/memory.usage_in_bytes": "10\n", f"{mem}/memory.max_usage_in_bytes": "20\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        f"{cpu}/cpu.cfs_quota_us": "50000\n", f"{cpu}/cpu.cfs_period_us": "100000\n"})
    env = _envelope.read(root, cpus=2)
    assert (env.memory_bytes, env.cpu_quota, env.cgroup) == (768 * MIB, 0.5, "v1")
    assert _envelope.oom_kills(env, root) == 5 + 7
    assert _envelope.memory_in_use(env) == (10, 20)


def test_cgroup_v1_with_the_containers_own_folder_mounted(tmp_path):
    """A runtime that mounts only the container's folder (mount root /docker/abc): the files are at the mount."""
    mounts = V1_MOUNTS.replace("0:35 / ", "0:35 /docker/abc ").replace("0:36 / ", "0:36 /docker/abc ")
    root = _box(tmp_path, "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n", mounts, {
        "sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n",
        "sys/fs/cgroup/memory/memory.stat": "hierarchical_memory_limit 1073741824\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "150000\n",
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    env = _envelope.read(root, cpus=4)
    assert (env.memory_bytes, env.cpu_quota) == (GIB, 1.5)
    assert env.usable_cpus == 1.5


def test_a_parents_v1_limit_reaches_through_hierarchical_memory_limit(tmp_path):
    mem = "sys/fs/cgroup/memory/docker/abc"
    root = _box(tmp_path, "4:memory:/docker/abc\n", V1_MOUNTS, {
        f"{mem}/memory.limit_in_bytes": V1_UNLIMITED,
        f"{mem}/memory.stat": "hierarchical_memory_limit 2147483648\n"})
    assert _envelope.read(root, cpus=2).memory_bytes == 2 * GIB


def test_no_cgroup_limits_and_unreadable_files_mean_no_limit(tmp_path):
    root = _box(tmp_path, "0::/\n", V2_MOUNT, {"sys/fs/cgroup/memory.max": "max\n",
                                               "sys/fs/cgroup/cpu.max": "max 100000\n"}, vmstat="")
    env = _envelope.read(root, cpus=3)
    assert (env.memory_bytes, env.cpu_quota) == (None, None)
    assert env.usable_memory == 16384000 * 1024 and env.usable_cpus == 3.0
    assert _envelope.oom_kills(env, root) is None  # no counter anywhere: unknown, not 0
    bare = tmp_path / "bare"
    bare.mkdir()
    env = _envelope.read(str(bare), cpus=1)
    assert (env.memory_bytes, env.cpu_quota, env.cgroup, env.machine_memory_bytes) == (None, None, "none", 0)


# ------------------------------------------------------------------------------------------ the plan
def _env(memory: int | None, quota: float | None, cpus: int = 8) -> Envelope:
    return Envelope(memory_bytes=memory, machine_memory_bytes=64 * GIB, cpu_quota=quota, cpus=cpus, cgroup="v2")


def test_gradescopes_default_envelope_grades_one_exercise_at_a_time_with_one_zygote():
    plan = _sizing.plan(_env(768 * MIB, 0.5))
    assert plan.refuse is None
    assert (plan.jobs, plan.max_jobs, plan.launcher, plan.keep_references) == (1, 1, "zygote", False)
    # a student's worker may grow by its share of what is left, never more than fits
    assert _sizing.MIN_WORKER_BYTES <= plan.worker_memory <= 768 * MIB - _sizing.BASE_BYTES
    assert plan.jobs_for(4) == 1  # --jobs 4 is lowered to what the memory allows


def test_a_cpu_quota_sets_the_jobs_default_not_the_cpus_the_machine_has():
    """os.cpu_count() says 8 inside a container with half a CPU: one exercise at a time, not four."""
    assert _sizing.plan(_env(16 * GIB, 0.5, cpus=8)).jobs == 1
    assert _sizing.plan(_env(16 * GIB, 2.0, cpus=8)).jobs == 2
    assert _sizing.plan(_env(None, None, cpus=2)).jobs == 2
    assert _sizing.plan(_env(None, None, cpus=64)).jobs == _sizing.MAX_JOBS


def test_a_many_core_box_grades_as_many_exercises_at_once_as_asked():
    """Issue 66: the 13-core TPU host lowered `--jobs 12` to 4 (a fixed cap), 4.5x for "12 workers"; the CPUs and
    the memory are the only bounds now."""
    plan = _sizing.plan(_env(None, None, cpus=13))
    assert plan.jobs == 13 and plan.jobs_for(12) == 12 and plan.jobs_for(1) == 1
    small = _sizing.plan(_env(2 * GIB, None, cpus=13))  # the memory still bounds it
    assert small.jobs_for(12) == small.max_jobs == (2 * GIB - _sizing.BASE_BYTES) // (
        _sizing.REFERENCE_BYTES + _sizing.MIN_WORKER_BYTES)


def test_a_big_box_keeps_everything_warm_and_the_default_cap():
    plan = _sizing.plan(_env(None, None, cpus=4))
    assert (plan.launcher, plan.keep_references, plan.worker_memory) == ("pair", True, _sizing.DEFAULT_WORKER_BYTES)
    assert _sizing.plan(_env(None, None), fork=False).launcher == "spawn"


def test_a_box_too_small_for_one_exercise_is_refused_with_the_setting_to_raise():
    plan = _sizing.plan(_env(300 * MIB, 0.5))
    assert plan.refuse is not None
    assert "300 MiB" in plan.refuse and "--memory" in plan.refuse
    need = _sizing.BASE_BYTES + _sizing.REFERENCE_BYTES + _sizing.MIN_WORKER_BYTES
    assert f"{need // MIB} MiB" in plan.refuse
    assert _sizing.plan(_env(need, 0.5)).refuse is None  # exactly enough is enough


def test_the_worker_cap_shrinks_with_more_exercises_at_once():
    plan = _sizing.plan(_env(3 * GIB, 4.0, cpus=4))
    assert plan.jobs >= 2
    assert plan.worker_memory_at(1) > plan.worker_memory_at(plan.jobs) >= _sizing.MIN_WORKER_BYTES


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**{"jobs": None, "quiet": True, **kw})


def test_tapetrace_grade_takes_its_jobs_default_from_the_envelope(monkeypatch):
    monkeypatch.setattr(_envelope, "_CURRENT", _env(16 * GIB, 0.5, cpus=16))
    args = _args()
    assert _cmd_grade._plan_jobs(args) is None and args.jobs == 1
    args = _args(jobs=3)
    monkeypatch.setattr(_envelope, "_CURRENT", _env(768 * MIB, 2.0, cpus=16))
    assert _cmd_grade._plan_jobs(args) is None and args.jobs == 1  # lowered: the memory allows one


def test_tapetrace_grade_refuses_before_grading_when_one_exercise_does_not_fit(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(_envelope, "_CURRENT", _env(256 * MIB, 0.5))
    (tmp_path / "sub").mkdir()
    from autograder import cli

    code = cli.main(["grade", str(tmp_path / "sub"), "--json", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2 and "256 MiB" in err and "--memory" in err
    assert not (tmp_path / "out.json").exists()  # nothing graded, nothing written


def test_the_json_records_the_envelope_and_the_plan():
    env = _env(768 * MIB, 0.5, cpus=2)
    rec = _sizing.as_json(env, _sizing.plan(env), jobs=1)
    assert rec["memory_bytes"] == 768 * MIB and rec["cpu_quota"] == 0.5 and rec["cpus"] == 2
    assert rec["plan"]["jobs"] == 1 and rec["plan"]["launcher"] == "zygote"
    assert "memory_dir" not in rec


def test_this_machine_reads_without_error():
    env = _envelope.read()
    assert env.cpus >= 1 and env.usable_memory > 0
    assert dataclasses.asdict(env)


@pytest.mark.parametrize("n,words", [(4 * GIB, "4 GiB"), (320 * MIB, "320 MiB"), (1536 * MIB, "1.5 GiB")])
def test_memory_words(n, words):
    from autograder.core.protocol import memory_words

    assert memory_words(n) == words


def test_under_a_quota_workers_keep_to_a_few_of_many_visible_cpus():
    """Half a CPU on a 64-CPU host: XLA would size its thread pools (memory, and address space under the
    worker's cap) from 64 CPUs; the zygote and its workers keep to two of them, not always the same two."""
    many = dataclasses.replace(_env(768 * MIB, 0.5, cpus=64), affinity=tuple(range(64)))
    plan = _sizing.plan(many)
    assert plan.worker_cpus is not None and len(plan.worker_cpus) == 2
    assert set(plan.worker_cpus) <= set(range(64))
    assert plan.stacks() == _sizing.STACK_BYTES * (4 * 2 + 12)
    assert _sizing.plan(dataclasses.replace(many, cpu_quota=None)).worker_cpus is None  # no quota: all of them
    few = dataclasses.replace(_env(768 * MIB, 0.5, cpus=2), affinity=(0, 1))
    assert _sizing.plan(few).worker_cpus is None


def test_a_zygote_or_spawned_worker_keeps_to_the_planned_cpus():
    import os
    import subprocess
    import sys

    from autograder.core.paths import ROOT
    from autograder.workers.environment import CPUS_ENV

    cpu = max(os.sched_getaffinity(0))
    code = "from autograder.workers.environment import keep_to_planned_cpus as k; import os; k(); print(sorted(os.sched_getaffinity(0)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, CPUS_ENV: str(cpu), "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == f"[{cpu}]", out.stderr


@pytest.mark.parametrize("ours", [True, False])
def test_a_proc_of_another_pid_namespace_is_refused_before_grading(tmp_path, ours):
    """A chroot into a bind of the host's / inside a container: /proc/self names the host's PID, not this process's,
    and every /proc/PID the grader reads for a worker (its time, its processes, its threads) is someone else's (the
    container tests' first image: a host process's children counted as a worker's strays and stopped ex05)."""
    root = Path(_box(tmp_path, "0::/\n", V2_MOUNT, {"sys/fs/cgroup/memory.max": "max\n"}))
    import os

    pid = str(os.getpid() if ours else os.getpid() + 100_000)
    (root / "proc" / "self").rename(root / "proc" / pid)
    (root / "proc" / "self").symlink_to(pid)
    env = _envelope.read(str(root), cpus=4)
    assert env.foreign_proc is (not ours)
    refuse = _sizing.plan(env).refuse
    assert (refuse is None) if ours else ("/proc" in refuse and "own /proc" in refuse)
    assert "foreign_proc" not in _envelope.as_record(env)
    assert _envelope.foreign_proc() is False  # this machine's own
