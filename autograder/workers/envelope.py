"""Grader side: the box the grader runs in: the container's memory limit and CPU quota (cgroup v1 or v2), read once.

A grading run plans from it (``sizing``: how many exercises at once, which zygotes, each student worker's
cap, whether reference workers stay warm; a box too small is refused there). The grader also asks it, when a
worker dies by SIGKILL, whether the kernel's OOM killer struck meanwhile (:func:`oom_kills`), and judges whose
the kill is (:func:`judge_kill`): one caused by the container's limit is the grader's trouble, one at the
worker's own memory cgroup's cap the student's. It also measures the cgroup's memory
in use (:func:`memory_in_use`).

Everything is read from files under ``root`` (``/`` by default), so tests fake a container in a
temporary folder: ``proc/self/cgroup``, ``proc/self/mountinfo``, ``proc/meminfo``, ``proc/vmstat`` and the
cgroup files below the mount points that mountinfo names.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

# A limit at or above this is "none" (cgroup v1 writes 2^63 - 4096 for unlimited).
UNLIMITED = 1 << 60
GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class Envelope:
    """What this process may use.

    Attributes:
        memory_bytes: the cgroup's memory limit (the smallest on the way to the root), None when none.
        machine_memory_bytes: the machine's memory (``MemTotal``).
        cpu_quota: CPUs the cgroup's quota allows (``quota / period``, e.g. 0.5), None when none.
        cpus: CPUs this process may run on (``sched_getaffinity``).
        cgroup: ``v2``, ``v1`` or ``none`` (where the memory limit was read).
        memory_dir: the cgroup folder whose memory files count this process ("" when none).
        affinity: the CPUs themselves (their numbers), when known.
        foreign_proc: ``/proc`` here is another PID namespace's (its ``self`` names another process: the host's
            /proc bound into a container): a worker's PID there is someone else's, so its time, its processes and
            its threads cannot be read (:func:`foreign_proc`).
    """

    memory_bytes: int | None
    machine_memory_bytes: int
    cpu_quota: float | None
    cpus: int
    cgroup: str = "none"
    memory_dir: str = ""
    affinity: tuple[int, ...] = ()
    foreign_proc: bool = False

    @property
    def usable_memory(self) -> int:
        """Bytes the grader may use in all: the limit, or the machine's memory without one."""
        if self.memory_bytes is None:
            return self.machine_memory_bytes
        return min(self.memory_bytes, self.machine_memory_bytes or self.memory_bytes)

    @property
    def usable_cpus(self) -> float:
        """CPUs the grader gets: the affinity, or less under a quota (e.g. 0.5)."""
        return min(float(self.cpus), self.cpu_quota) if self.cpu_quota else float(self.cpus)

    def describe(self) -> str:
        """One line for the terminal, e.g. ``768 MiB memory (cgroup v2 limit), 0.5 CPU (quota of 2)``."""
        mem = (f"{self.usable_memory / MIB:.0f} MiB memory (cgroup {self.cgroup} limit)"
               if self.memory_bytes is not None else f"{self.usable_memory / GIB:.1f} GiB memory (no limit)")
        cpu = (f"{self.usable_cpus:g} CPU (quota, {self.cpus} visible)" if self.cpu_quota
               else f"{self.cpus} CPU{'s' if self.cpus != 1 else ''}")
        return f"{mem}, {cpu}"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _number(text: str | None) -> int | None:
    """A limit file's value; None for ``max``, unlimited, absent or unreadable."""
    if text is None:
        return None
    word = text.split()[0] if text.split() else ""
    if word in ("", "max", "-1"):
        return None
    try:
        value = int(word)
    except ValueError:
        return None
    return value if 0 <= value < UNLIMITED else None


def _keyed(text: str | None, key: str) -> int | None:
    """The value of ``key`` in a ``key value`` file (memory.stat, memory.events, vmstat...)."""
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            try:
                return int(parts[1])
            except ValueError:
                return None
    return None


@dataclass
class _Mount:
    root: str  # the path within the hierarchy that is mounted
    point: str  # where (under ``root`` of :func:`read`)
    fstype: str
    options: set[str] = field(default_factory=set)


def _mounts(root: str) -> list[_Mount]:
    out = []
    for line in (_read(os.path.join(root, "proc/self/mountinfo")) or "").splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or not tail[0].startswith("cgroup"):
            continue
        point = fields[4].replace("\\040", " ")
        out.append(_Mount(fields[3], os.path.join(root, point.lstrip("/")), tail[0], set(tail[2].split(","))))
    return out


def _memberships(root: str) -> dict[str, str]:
    """Controller -> this process's cgroup path (``""`` keys the v2 unified hierarchy)."""
    out: dict[str, str] = {}
    for line in (_read(os.path.join(root, "proc/self/cgroup")) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _folder(mount: _Mount, path: str) -> str:
    """This process's cgroup folder in ``mount``: its path made relative to what the mount shows.

    In a container with its own cgroup namespace both are ``/``; without one (Docker's v1 default)
    the process sees ``/docker/ID`` while the mount shows only that folder, as its root.
    """
    rel = path
    if mount.root not in ("", "/") and (path == mount.root or path.startswith(mount.root.rstrip("/") + "/")):
        rel = path[len(mount.root):]
    candidate = os.path.join(mount.point, rel.lstrip("/"))
    return candidate if os.path.isdir(candidate) else mount.point


def _up(folder: str, top: str) -> list[str]:
    """``folder`` and its parents up to ``top`` (the mount point), nearest first."""
    out, cur = [], os.path.abspath(folder)
    top = os.path.abspath(top)
    while True:
        out.append(cur)
        if cur == top or not cur.startswith(top.rstrip("/") + "/"):
            return out
        cur = os.path.dirname(cur)


def _smallest(values: list[int | None]) -> int | None:
    got = [v for v in values if v is not None]
    return min(got) if got else None


def _v2(mount: _Mount, path: str) -> tuple[int | None, float | None, str]:
    folder = _folder(mount, path)
    chain = _up(folder, mount.point)
    mem = _smallest([_number(_read(os.path.join(d, "memory.max"))) for d in chain])
    quotas = []
    for d in chain:
        text = _read(os.path.join(d, "cpu.max"))
        if text and len(text.split()) == 2 and text.split()[0] != "max":
            q, p = text.split()
            try:
                quotas.append(int(q) / int(p))
            except (ValueError, ZeroDivisionError):
                pass
    memdir = folder if os.path.exists(os.path.join(folder, "memory.current")) else ""
    return mem, (min(quotas) if quotas else None), memdir


def _v1_memory(mount: _Mount, path: str) -> tuple[int | None, str]:
    folder = _folder(mount, path)
    stat = _read(os.path.join(folder, "memory.stat"))
    # hierarchical_memory_limit already accounts for every ancestor's limit
    values = [_number(_read(os.path.join(d, "memory.limit_in_bytes"))) for d in _up(folder, mount.point)]
    hier = _keyed(stat, "hierarchical_memory_limit")
    values.append(hier if hier is not None and hier < UNLIMITED else None)
    return _smallest(values), folder


def _v1_cpu(mount: _Mount, path: str) -> float | None:
    quotas = []
    for d in _up(_folder(mount, path), mount.point):
        q = _number(_read(os.path.join(d, "cpu.cfs_quota_us")))
        p = _number(_read(os.path.join(d, "cpu.cfs_period_us")))
        if q and p:
            quotas.append(q / p)
    return min(quotas) if quotas else None


def _machine_memory(root: str) -> int:
    kib = _keyed((_read(os.path.join(root, "proc/meminfo")) or "").replace(":", " ").replace(" kB", ""),
                 "MemTotal")
    return (kib or 0) * 1024


def _affinity() -> tuple[int, ...]:
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return tuple(range(os.cpu_count() or 1))


def read(root: str = "/", cpus: int | None = None) -> Envelope:
    """Reads this process's envelope.

    Args:
        root: where ``proc/`` and the cgroup mounts live (``/``; a temporary folder in tests).
        cpus: the CPUs this process may run on (default: ``os.sched_getaffinity``).

    Returns:
        The :class:`Envelope`; limits it cannot read are None (no limit), never an error.
    """
    mounts = _mounts(root)
    members = _memberships(root)
    mem: int | None = None
    quota: float | None = None
    kind, memdir = "none", ""
    v1 = {o: m for m in mounts if m.fstype == "cgroup" for o in m.options}
    unified = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if "memory" in v1 and "memory" in members:
        mem, memdir = _v1_memory(v1["memory"], members["memory"])
        kind = "v1"
    if "cpu" in v1 and "cpu" in members:
        quota = _v1_cpu(v1["cpu"], members["cpu"])
    if unified is not None and "" in members:
        m2, q2, d2 = _v2(unified, members[""])
        if kind == "none" and (m2 is not None or d2):
            mem, memdir, kind = m2, d2, "v2"
        if quota is None:
            quota = q2
    affinity = _affinity() if cpus is None else tuple(range(cpus))
    return Envelope(memory_bytes=mem, machine_memory_bytes=_machine_memory(root), cpu_quota=quota,
                    cpus=max(1, len(affinity)), cgroup=kind, memory_dir=memdir, affinity=affinity,
                    foreign_proc=foreign_proc(root))


def foreign_proc(root: str = "/") -> bool:
    """Whether ``/proc`` belongs to another PID namespace than this process's: its ``self`` link names another PID
    (a chroot into a bind of the host's ``/`` inside a container). False where that cannot be told."""
    try:
        return int(os.readlink(os.path.join(root, "proc", "self"))) != os.getpid()
    except (OSError, ValueError):
        return False


def oom_kills(env: Envelope, root: str = "/") -> int | None:
    """How many processes the kernel's OOM killer has killed so far, in this cgroup and machine-wide.

    A counter to compare before and after: it rose while a worker died by SIGKILL -> the kill was
    (most likely) the OOM killer's. None when neither counter can be read (old kernels).
    """
    counts = []
    if env.cgroup == "v2" and env.memory_dir:
        counts.append(_keyed(_read(os.path.join(env.memory_dir, "memory.events")), "oom_kill"))
    elif env.cgroup == "v1" and env.memory_dir:
        counts.append(_keyed(_read(os.path.join(env.memory_dir, "memory.oom_control")), "oom_kill"))
    counts.append(_keyed(_read(os.path.join(root, "proc/vmstat")), "oom_kill"))
    got = [c for c in counts if c is not None]
    return sum(got) if got else None


def judge_kill(accounting: str | None, own: dict[str, int] | None, outside_rose: bool | None) -> dict[str, bool | None]:
    """Whose a worker's death by SIGKILL is, from what the grader itself read (docs/instructors/time-and-memory.md,
    "Whose trouble"). Never from anything the worker said or could set: a student may kill its own worker
    with ``kill -9`` at any moment, e.g. just after some OOM kill made the machine's counter rise.

    Args:
        accounting: the sandbox's ``memory_accounting`` for a student's worker: ``cgroup`` (a memory cgroup of
            its own capped all it started) or ``process`` (none could be made, or its record never came);
            None for a worker without a sandbox (the reference's: the grader's code).
        own: its memory cgroup's counters (``autograder.sandbox.pids_cgroup.memory_events``: ``oom_kill``,
            ``at_cap``), None where they could not be read.
        outside_rose: whether the OOM-kill counter of the container or the machine (:func:`oom_kills`) rose
            while it lived; None where it cannot be read.

    Returns:
        ``{"oom": ..., "memory_cap": ...}``. ``oom`` True: the kernel's OOM killer took one of its processes
        while the worker stayed under its own cap: a limit above it ran out (the grader's trouble).
        ``memory_cap`` True: its own cap was reached (its children, its tmpfs included): the student's,
        like a MemoryError. Both False: an ordinary death. With ``process`` accounting nothing says the
        student's processes together stayed under any cap, so an OOM kill is never the grader's there.
    """
    if accounting is None:
        return {"oom": outside_rose, "memory_cap": False}
    if accounting != "cgroup" or own is None:
        return {"oom": False, "memory_cap": False}
    if own.get("at_cap", 0) > 0:
        return {"oom": False, "memory_cap": True}
    return {"oom": bool(outside_rose) and own.get("oom_kill", 0) > 0, "memory_cap": False}


def memory_in_use(env: Envelope) -> tuple[int | None, int | None]:
    """``(now, peak)`` bytes the cgroup has charged (None where it cannot be read)."""
    if not env.memory_dir:
        return None, None
    names = (("memory.current", "memory.peak") if env.cgroup == "v2"
             else ("memory.usage_in_bytes", "memory.max_usage_in_bytes"))
    return tuple(_number(_read(os.path.join(env.memory_dir, n))) for n in names)  # type: ignore[return-value]


def as_record(env: Envelope) -> dict[str, Any]:
    """The envelope for the JSON (``memory_dir`` left out: a path of the grading machine)."""
    out = asdict(env)
    out.pop("memory_dir", None)
    out.pop("affinity", None)
    out.pop("foreign_proc", None)  # (a run with it True is refused: sizing.plan)
    out["usable_memory"] = env.usable_memory
    out["usable_cpus"] = env.usable_cpus
    return out


_CURRENT: Envelope | None = None


def current() -> Envelope:
    """This process's envelope, read once (a container's limits do not change while it runs)."""
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = read()
    return _CURRENT
