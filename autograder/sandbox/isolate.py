"""Containment applied inside a student's worker before its code is loaded.

Layers, each tried and recorded (the JSON's ``isolation`` says what was obtained, and its
``level`` sums it up: ``full``, ``container`` or ``minimal``):

- resource limits: address space (memory cap), file size, no core dumps;
- a new session, so the grader can kill the whole process group;
- Linux namespaces when permitted (root with CAP_SYS_ADMIN, e.g. CI, a grading box; refused in
  a container with Docker's default privileges such as ``otter grade``'s and Gradescope's):
  * network: a fresh net namespace (loopback only, down): no network;
  * pid: the student's process is alone in its pid namespace, so it cannot
    signal the grader, the zygote or another student's worker;
  * mounts: every mount becomes read-only, /tmp and /dev/shm become small
    private tmpfs (the scratch lives there), and the reference solutions,
    hidden suites, tests, the run's folder and other submissions are covered by empty tmpfs;
  * then every capability is dropped (no remounting back) and
    no_new_privs is set;
- where namespaces are refused ("container" level when every guarantee below still holds):
  * an unprivileged uid/gid of its own, where Python's files are readable by such a user
    (:func:`_uid_feasible`; Docker's default keeps CAP_SETUID/CAP_SETGID), with its own process
    limit; private files are then unreadable only where their modes say so;
  * Landlock (:mod:`autograder.sandbox.landlock`): reads beneath the system, Python and the engine's
    package only, with the private paths carved out; writes beneath the scratch only; no TCP;
    signals, abstract sockets and tracing confined to the worker itself;
  * every capability dropped, the process made non-dumpable (no tracing, no /proc/PID/mem);
- on every level, a seccomp filter (:mod:`autograder.sandbox.seccomp`): no network socket, no
  ``connect`` (Unix sockets such as docker.sock included), no ptrace, no new namespaces or
  mounts, no io_uring, bpf, keyrings or modules;
- an import blocker for the private packages (defence in depth);
- scratch working directory, HOME and TMPDIR.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import tempfile
from pathlib import Path

from autograder.sandbox.libc import c_library

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
BLOCKED_PACKAGES = ("solutions", "tests", "autograder.hidden")
_SKIP_RO = ("/proc", "/sys", "/dev")


def _vm_size_bytes() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def preload() -> None:
    """Imports the sandbox's layers and loads the C library: what every student's worker needs, paid
    once in the zygote instead of in each worker (the modules would be compiled from source there)."""
    from autograder.sandbox import landlock as _landlock  # noqa: F401
    from autograder.sandbox import seccomp as _seccomp  # noqa: F401

    c_library()


class _Blocker:
    """Meta-path finder refusing the grader's private packages."""

    def find_spec(self, fullname, path=None, target=None):
        for pkg in BLOCKED_PACKAGES:
            if fullname == pkg or fullname.startswith(pkg + "."):
                raise ModuleNotFoundError(f"No module named {fullname!r}")
        return None


def _mount_points() -> list[str]:
    points = []
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            mp = line.split()[4].replace("\\040", " ")
            points.append(mp)
    except OSError:
        pass
    return sorted(set(points), key=len)


def _needed_under(covered: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """What the worker still needs that lives under a folder about to be covered.

    Returns:
        ``(directories, links)``: real directories to bind back, and symbolic links on the way to a
        needed path (``link -> target``, e.g. a virtualenv under /tmp linking elsewhere) to recreate.
    """
    engine = str(Path(__file__).resolve().parents[2])
    candidates = [engine, sys.prefix, sys.base_prefix, *[p for p in sys.path if p and os.path.isdir(p)]]

    def under(p: str) -> bool:
        return any(p == d or p.startswith(d + "/") for d in covered)

    out: list[str] = []
    links: dict[str, str] = {}
    for lexical in candidates:
        lexical = os.path.abspath(lexical)
        part = ""
        for name in lexical.strip("/").split("/"):
            part = f"{part}/{name}"
            if under(part) and os.path.islink(part):
                links[part] = os.readlink(part)
        c = os.path.realpath(lexical)
        if under(c) and os.path.isdir(c):
            if not any(c == o or c.startswith(o + "/") for o in out):
                out = [o for o in out if not o.startswith(c + "/")] + [c]
    return out, links


def _mirror_child(pid: int) -> None:
    """The outer process: close the worker's pipes, wait for the inner one, mirror its end."""
    for fd in range(3, 256):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _drop_capabilities(libc: ctypes.CDLL) -> bool:
    last = 40
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (Data * 2)()
    ok = libc.capset(ctypes.byref(header), data) == 0
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return ok


def _namespaces(hide: list[str], network: bool, got: dict[str, object], skip: list[str] | None = None) -> str | None:
    """Enters new namespaces; returns the new scratch root (a private /tmp) or None."""
    libc = c_library()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | (0 if network else CLONE_NEWNET)
    if libc.unshare(flags) != 0:
        return None
    got["network_dropped"] = not network
    pid = os.fork()
    if pid != 0:
        _mirror_child(pid)  # never returns
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    got["pid_namespace"] = True
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return None
    ro_ok = True
    for mp in _mount_points():
        if mp.startswith(_SKIP_RO):
            continue
        if libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None) != 0:
            ro_ok = ro_ok and mp != "/"
    got["read_only_filesystem"] = ro_ok
    covered = ("/tmp", "/dev/shm")
    keep, links = _needed_under(covered)
    held = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in keep}
    # size and inode caps: all a worker may write (autograder/sandbox/quota.py)
    for d, size in (("/tmp", b"size=256m,nr_inodes=10000,mode=1777"), ("/dev/shm", b"size=64m,nr_inodes=1000,mode=1777")):
        if os.path.isdir(d):
            libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, size)
    for p, fd in held.items():  # the engine or Python itself lived there (e.g. `otter run` unpacks to /tmp)
        os.makedirs(p, exist_ok=True)
        src = f"/proc/self/fd/{fd}".encode()
        if libc.mount(src, p.encode(), None, MS_BIND | MS_REC, None) == 0:
            libc.mount(None, p.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
        os.close(fd)
    for link, target in sorted(links.items()):
        try:
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(target, link)
        except OSError:
            pass
    hidden_ok = True
    for d in hide:
        if os.path.isdir(d):
            if libc.mount(b"tmpfs", d.encode(), b"tmpfs", MS_RDONLY, b"size=4k,mode=000") != 0:
                hidden_ok = False
        elif os.path.isfile(d) and libc.mount(b"/dev/null", d.encode(), None, MS_BIND, None) != 0:
            hidden_ok = False  # a private file (e.g. the otter zip's settings) reads as empty
    got["private_dirs_hidden"] = hidden_ok
    for mp in _mount_points():  # its process cap (a cgroup) must stay where it is: no way back to the parent
        if mp.startswith("/sys/fs/cgroup"):
            libc.mount(None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV, None) == 0:
        got["proc_private"] = True
    # an unprivileged uid of its own here too: the kernel never applies a process limit to root (a fork
    # bomb would fill the machine's process table); the bounding set goes first (that needs CAP_SETPCAP)
    _drop_bounding_set(libc)
    if "uid" not in (skip or []):
        os.makedirs("/tmp/scratch", exist_ok=True)
        _drop_uid("/tmp/scratch", got)
    got["capabilities_dropped"] = _drop_capabilities(libc)
    return "/tmp"


def _readable_by_others(path: str) -> bool:
    """Whether a user who is neither the owner nor in the group could read ``path`` (modes only)."""
    real = os.path.realpath(path)
    parts = real.split("/")
    for i in range(2, len(parts) + 1):
        ancestor = "/".join(parts[:i]) or "/"
        try:
            st = os.stat(ancestor)
        except OSError:
            return False
        last = i == len(parts)
        if os.path.isdir(ancestor):
            need = 0o005 if last else 0o001  # list and enter the directory itself; enter its ancestors
            if st.st_mode & need != need:
                return False
        elif last and not st.st_mode & 0o004:
            return False
    return True


def _python_dirs() -> list[str]:
    """Directories a worker's Python may import from or read (stdlib, site-packages, sys.path)."""
    dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)]
    dirs += [p for p in sys.path if p and os.path.isdir(p)]
    return list(dict.fromkeys(os.path.realpath(d) for d in dirs))


def _uid_feasible() -> str | None:
    """None if an unprivileged user could run this worker's Python, else why not."""
    if not hasattr(os, "setresuid") or os.geteuid() != 0:
        return "not root"
    for d in _python_dirs():
        if not _readable_by_others(d):
            return f"{d} is not readable by other users"
    return None


def _drop_uid(scratch: str, got: dict[str, object]) -> None:
    """Becomes a fresh unprivileged user (uid = gid, random, in no /etc/passwd) owning the scratch."""
    why = _uid_feasible()
    if why:
        got["uid_note"] = why
        return
    uid = 200_000 + int.from_bytes(os.urandom(4), "big") % 800_000
    try:
        for root, dirs, files in os.walk(scratch):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.chown(name, uid, uid)
        nproc = max(512, 8 * (os.cpu_count() or 1))  # threads count too (XLA, torch)
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as err:
        got["uid_note"] = f"refused: {err.strerror or err}"
        return
    got["uid"] = uid
    os.environ["USER"] = os.environ["LOGNAME"] = "tapetrace-student"  # getpass.getuser() without a passwd entry


def _guarantees(got: dict[str, object], hide: list[str]) -> None:
    """What the obtained layers add up to, and the level."""
    landlock = bool(got.get("landlock"))
    uid = got.get("uid") is not None
    got["private_files_unreadable"] = bool(got["private_dirs_hidden"] or landlock or (
        uid and not any(_readable_by_others(d) for d in hide if os.path.exists(d))))
    got["writes_confined"] = bool(got["read_only_filesystem"] or landlock or uid)
    got["network_blocked"] = bool(got["network_dropped"] or got.get("seccomp"))
    got["processes_confined"] = bool(got["pid_namespace"] or uid or got.get("landlock_scoped")
                                     or got.get("seccomp_signals")) and bool(got["capabilities_dropped"])
    keys = ("private_files_unreadable", "writes_confined", "network_blocked", "processes_confined")
    if all(got[k] for k in keys):
        full = got["pid_namespace"] and got["network_dropped"] and got["read_only_filesystem"] \
            and got["private_dirs_hidden"]
        got["level"] = "full" if full else "container"
    else:
        got["level"] = "minimal"


LEVELS = ("minimal", "container", "full")


def level_at_least(got: dict[str, object], wanted: str) -> bool:
    """Whether an isolation record reaches ``wanted`` (one of :data:`LEVELS`)."""
    have = str(got.get("level", "minimal"))
    return LEVELS.index(have if have in LEVELS else "minimal") >= LEVELS.index(wanted)


def describe(got: dict[str, object]) -> str:
    """One line on what an isolation record obtained (for the run's warning below full)."""
    parts = []
    if got.get("pid_namespace"):
        parts.append("namespaces")
    if got.get("landlock"):
        parts.append(f"Landlock ABI {got['landlock']}")
    if got.get("uid") is not None:
        parts.append("unprivileged uid")
    if got.get("seccomp"):
        parts.append("seccomp")
    if got.get("capabilities_dropped"):
        parts.append("no capabilities")
    missing = [k.replace("_", " ") for k in ("private_files_unreadable", "writes_confined", "network_blocked",
                                              "processes_confined") if not got.get(k)]
    text = f"{got.get('level', 'minimal')} isolation ({', '.join(parts) or 'resource limits only'})"
    return text + (f"; NOT guaranteed: {', '.join(missing)}" if missing else "")


def apply(*, scratch: str, mem_bytes: int, fsize_bytes: int, hide: list[str],
          read: list[str] | None = None, network: bool = False,
          skip: list[str] | None = None) -> tuple[str, dict[str, object]]:
    """Contains the current process (a single-threaded worker, before student code loads).

    Args:
        scratch: preferred scratch directory (used when no private /tmp is possible).
        mem_bytes: extra address space allowed beyond what is mapped now.
        fsize_bytes: largest file the process may write.
        hide: paths the student must not read (covered by an empty tmpfs, or carved out of Landlock's
            allow-list): solutions, hidden suites, the run's folder, other submissions.
        read: extra paths the worker reads afterwards (the engine's package, the compile cache).
        network: keep the network (default: drop it).
        skip: layers not to try (``namespaces``, ``landlock``, ``uid``): what a machine that refuses them
            obtains (benchmarks and tests; the record says what was skipped).

    Returns:
        ``(scratch_dir, isolation)``: where student files go, and what was obtained.
    """
    got: dict[str, object] = {"network_dropped": False, "pid_namespace": False,
                              "read_only_filesystem": False, "private_dirs_hidden": False,
                              "capabilities_dropped": False, "landlock": 0, "seccomp": False, "uid": None}
    try:
        os.setsid()
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    linux = sys.platform.startswith("linux")
    from autograder.sandbox.landlock import SECRETS

    private = list(hide)  # what the guarantees speak of
    hide = [*hide, *(p for p in SECRETS if os.path.exists(p))]  # and the machine's password hashes, host keys
    skip = list(skip or [])
    if skip:
        got["skipped"] = skip
    if linux and "pids" not in skip:
        _pids_cgroup(got)  # first: the namespaces' worker and whatever it starts stay in it
    root = _namespaces(hide, network, got, skip) if linux and "namespaces" not in skip else None
    if root:
        scratch = os.path.join(root, "scratch")
    if mem_bytes > 0:
        cap = _vm_size_bytes() + mem_bytes
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            got["memory_cap_bytes"] = mem_bytes
        except (ValueError, OSError):
            got["memory_cap_bytes"] = None
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_bytes, fsize_bytes))
        got["file_size_cap_bytes"] = fsize_bytes
    except (ValueError, OSError):
        got["file_size_cap_bytes"] = None
    os.makedirs(scratch, exist_ok=True)
    if linux:
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:  # Landlock and seccomp (via prctl) bind the calling thread only
            got["sandbox_error"] = f"{threads} threads at sandbox time"
        else:  # Landlock on every level: with namespaces it also keeps out what no list names (another checkout)
            _landlock_layer(scratch, hide, list(read or ()), got, skip, private_shm=bool(root))
            if not root:
                _fallback(scratch, got, skip)
        libc = c_library()
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        if threads == 1:
            from autograder.sandbox import seccomp as _seccomp

            got["seccomp_signals"] = not (got["pid_namespace"] or got.get("uid") is not None
                                          or got.get("landlock_scoped"))
            got["seccomp"] = _seccomp.install(confine_signals=bool(got["seccomp_signals"]))
            got["seccomp_signals"] = bool(got["seccomp"] and got["seccomp_signals"])
    _guarantees(got, private)
    sys.meta_path.insert(0, _Blocker())
    os.chdir(scratch)
    # every per-user cache a library may write (torch inductor's under tempfile's folder, matplotlib's, XDG's)
    for var in ("HOME", "TMPDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        os.environ[var] = scratch
    tempfile.tempdir = scratch  # tempfile caches its folder: a call before the sandbox would keep /tmp
    return scratch, got


def _landlock_layer(scratch: str, hide: list[str], read: list[str], got: dict[str, object], skip: list[str],
                    private_shm: bool) -> None:
    """Landlock's allow-list (see :mod:`autograder.sandbox.landlock`); ``private_shm``: /dev/shm is the worker's own."""
    from autograder.sandbox import landlock as _landlock

    abi = 0 if "landlock" in skip else _landlock.abi_version()
    if abi:
        engine = str(Path(__file__).resolve().parents[1])
        writable = [scratch, "/dev/shm"] if private_shm and os.path.isdir("/dev/shm") else [scratch]
        rules = _landlock.plan(scratch=writable, read=[*_python_dirs(), engine, *read], denied=hide)
        got.update(_landlock.restrict(rules, abi))
    else:
        got["landlock_error"] = "skipped" if "landlock" in skip else \
            "not available (kernel older than 5.13, or refused by a seccomp policy)"


def pids_cap() -> int:
    """The most processes and threads one worker may have (its own, XLA's and torch's threads included)."""
    return max(1024, 16 * (os.cpu_count() or 1))


def _cgroup_dirs() -> list[str]:
    """This process's own cgroup folders where a pids controller can be set: cgroup v1's pids hierarchy,
    or v2's where pids is enabled for children (``cgroup.subtree_control``)."""
    mounts: dict[str, str] = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fstype, _src, opts = (right.split() + ["", "", ""])[:3]
            mp = left.split()[4].replace("\\040", " ")
            if fstype == "cgroup" and "pids" in opts.split(","):
                mounts.setdefault("v1", mp)
            elif fstype == "cgroup2":
                mounts.setdefault("v2", mp)
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in own:
        hid, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "v1" in mounts and "pids" in controllers.split(","):
            out.append(os.path.join(mounts["v1"], path.lstrip("/")))
        elif "v2" in mounts and hid == "0":
            folder = os.path.join(mounts["v2"], path.lstrip("/"))
            try:
                if "pids" in Path(folder, "cgroup.subtree_control").read_text().split():
                    out.append(folder)
            except OSError:
                continue
    return out


def _pids_cgroup(got: dict[str, object]) -> None:
    """Moves this process into a cgroup of its own capped at :func:`pids_cap` processes (a fork bomb stops
    there, as root too: the kernel applies no RLIMIT_NPROC to root). Where the machine allows it: root
    with cgroupfs writable (a grading box; not Docker's default, where the uid's limit does it)."""
    cap = pids_cap()
    for parent in _cgroup_dirs():
        folder = os.path.join(parent, f"tapetrace-{os.getpid()}")
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass
        except OSError:
            continue
        try:
            Path(folder, "pids.max").write_text(str(cap))
            Path(folder, "cgroup.procs").write_text("0")
        except OSError:
            try:
                os.rmdir(folder)
            except OSError:
                pass
            continue
        got["pids_cap"] = cap
        got["pids_cgroup"] = folder
        return


def _drop_bounding_set(libc: ctypes.CDLL) -> None:
    """Empties the capability bounding set (before anything that loses CAP_SETPCAP, which that needs)."""
    last = 40
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        pass
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def _fallback(scratch: str, got: dict[str, object], skip: list[str]) -> None:
    """The layers of a worker without namespaces (after Landlock's): an unprivileged uid, no capabilities."""
    libc = c_library()
    _drop_bounding_set(libc)  # first: dropping it needs CAP_SETPCAP
    if "uid" not in skip:
        _drop_uid(scratch, got)
    got["capabilities_dropped"] = _drop_capabilities(libc)
