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
    (:func:`autograder.sandbox.privileges._uid_feasible`; Docker's default keeps CAP_SETUID/CAP_SETGID),
    with its own process limit; private files are then unreadable only where their modes say so;
  * Landlock (:mod:`autograder.sandbox.landlock`): reads beneath the system, Python, the engine's package and the
    loader's folders only (:func:`worker_read_roots`), with the private paths carved out; writes beneath the scratch only; no TCP;
    signals, abstract sockets and tracing confined to the worker itself;
  * every capability dropped; the process non-dumpable (no tracing, no /proc/PID/mem) unless it has a uid
    of its own: then it stays dumpable, so that the grader may read its threads as that user without
    CAP_SYS_PTRACE (:mod:`autograder.workers.confirm`); no other process has that uid, and seccomp refuses
    ``ptrace`` and ``process_vm_*`` (core dumps are off: RLIMIT_CORE 0);
- on every level, a seccomp filter (:mod:`autograder.sandbox.seccomp`): no network socket, no
  ``connect`` (Unix sockets such as docker.sock included), no ptrace, no new namespaces or
  mounts, no io_uring, bpf, keyrings or modules;
- an import blocker for the private packages (defence in depth);
- scratch working directory, HOME and TMPDIR.

This module applies them in order (:func:`apply`) and sums up what was obtained (:func:`describe`,
:func:`level_at_least`); the layers live beside it: the namespaces (:mod:`autograder.sandbox.namespaces`),
the uid and capabilities (:mod:`autograder.sandbox.privileges`), the pids, CPU and memory cgroups
(:mod:`autograder.sandbox.pids_cgroup`), Landlock and seccomp.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from autograder.sandbox.libc import c_library
from autograder.sandbox.namespaces import _namespaces
from autograder.sandbox.pids_cgroup import _cpu_cgroup, _memory_cgroup, _pids_cgroup
from autograder.sandbox.privileges import _fallback, _python_dirs, reachable_by_others

PR_SET_DUMPABLE = 4
BLOCKED_PACKAGES = ("solutions", "tests", "autograder.hidden")


def _status_bytes(field: str) -> int:
    """A size from ``/proc/self/status`` (``VmSize``, ``VmRSS``), 0 where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
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


def _exposed(hide: list[str]) -> list[str]:
    """The places of ``hide`` where another user (a worker's unprivileged uid) could read a file: judged with
    the grader's rights, before the uid is dropped (see :func:`reachable_by_others`)."""
    return [d for d in hide if os.path.lexists(d) and reachable_by_others(d)]


def _guarantees(got: dict[str, object], hide: list[str], exposed: list[str] | None = None) -> None:
    """What the obtained layers add up to, and the level.

    Args:
        got: the isolation record (its layers).
        hide: what students must not read.
        exposed: :func:`_exposed` of ``hide`` as measured before the worker dropped its uid (None: measured now).
    """
    landlock = bool(got.get("landlock"))
    uid = got.get("uid") is not None
    if not (got["private_dirs_hidden"] or landlock) and uid and exposed is None:
        exposed = _exposed(hide)
    got["private_files_unreadable"] = bool(got["private_dirs_hidden"] or landlock or (uid and not exposed)) \
        and not got.get("outputs_readable")
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


def level_at_least(got: Mapping[str, object], wanted: str) -> bool:
    """Whether an isolation record reaches ``wanted`` (one of :data:`LEVELS`)."""
    have = str(got.get("level", "minimal"))
    return LEVELS.index(have if have in LEVELS else "minimal") >= LEVELS.index(wanted)


def describe(got: Mapping[str, object]) -> str:
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
    text += f"; NOT guaranteed: {', '.join(missing)}" if missing else ""
    outputs = got.get("outputs_readable")
    if outputs and isinstance(outputs, list):
        text += (f" (without Landlock or a uid of its own, student code could read {', '.join(map(str, outputs))}"
                 " while it is rewritten: write the results in a folder of their own)")
    return text


def apply(*, scratch: str, mem_bytes: int, fsize_bytes: int, hide: list[str],
          read: list[str] | None = None, network: bool = False,
          skip: list[str] | None = None, rewritten: list[str] | None = None,
          kept_fds: tuple[int, ...] = ()) -> tuple[str, dict[str, object]]:
    """Contains the current process (a single-threaded worker, before student code loads).

    Args:
        scratch: preferred scratch directory (used when no private /tmp is possible).
        mem_bytes: extra address space allowed beyond what is mapped now.
        fsize_bytes: largest file the process may write.
        hide: paths the student must not read (covered by an empty tmpfs, or carved out of Landlock's
            allow-list): solutions, hidden suites, the run's folder, other submissions.
        read: extra paths the worker reads afterwards (the engine's package, the compile cache).
        network: keep the network (default: drop it).
        skip: layers not to try (``namespaces``, ``landlock``, ``uid``, ``pids``, ``cpu``, ``memory``): what a
            machine that refuses them
            obtains (benchmarks and tests; the record says what was skipped).
        rewritten: places of ``hide`` that are files the grader writes anew while the worker runs (the run's
            ``--json`` checkpoint in a folder workers need): a mount covers what exists, and a file replaced
            under it escapes it, so only Landlock (a file made later is under no rule) or the worker's own uid
            (the grader writes them owner-only) keeps them out; without either they are recorded
            (``outputs_readable``) and private files are not guaranteed.
        kept_fds: the worker's pipes to the grader: no system call may replace or close them (seccomp).

    Returns:
        ``(scratch_dir, isolation)``: where student files go, and what was obtained.
    """
    exposed: list[str] | None = None
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
    if linux and "cpu" not in skip:
        _cpu_cgroup(got)  # the CPU time of all it starts, for the grader's time limits
    else:
        got["cpu_accounting"] = "process tree"
    if linux and mem_bytes > 0 and "memory" not in skip:
        # all it starts together: what it holds now (pages shared with the zygote are charged to the worker
        # only once it writes them) and as much again as RLIMIT_AS gives one process
        _memory_cgroup(got, _status_bytes("VmRSS") + mem_bytes)
    else:
        got["memory_accounting"] = "process"
    outputs = {p: _folder_identity(p) for p in rewritten or ()}  # as the grader sees their folders
    root = _namespaces(hide, network, got, skip) if linux and "namespaces" not in skip else None
    if root:
        scratch = os.path.join(root, "scratch")
    if mem_bytes > 0:
        cap = _status_bytes("VmSize") + mem_bytes
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
                # what only file modes keep from the worker's uid: looked at while the folders can still be listed
                exposed = None if got.get("landlock") else _exposed(private)
                _fallback(scratch, got, skip)
        libc = c_library()
        # dumpable only as a uid of its own (dropping root made it non-dumpable): see the module's docstring
        libc.prctl(PR_SET_DUMPABLE, int(got.get("uid") is not None), 0, 0, 0)
        if threads == 1:
            from autograder.sandbox import seccomp as _seccomp

            got["seccomp_signals"] = not (got["pid_namespace"] or got.get("uid") is not None
                                          or got.get("landlock_scoped"))
            got["seccomp"] = _seccomp.install(confine_signals=bool(got["seccomp_signals"]), kept_fds=tuple(kept_fds))
            got["seccomp_signals"] = bool(got["seccomp"] and got["seccomp_signals"])
    # the grader writes them owner-only (report.atomic_write's private), so a worker that dropped to a uid of
    # its own cannot read a new one either; one that stays the grader's uid reads what no Landlock rule refuses
    # (a folder the worker does not see as the grader does, e.g. under its private /tmp, holds nothing of them)
    unkept = [p for p, seen in outputs.items() if not got.get("landlock") and got.get("uid") is None
              and seen is not None and _folder_identity(p) == seen]
    if unkept:
        got["outputs_readable"] = unkept
    _guarantees(got, private, exposed)
    sys.meta_path.insert(0, _Blocker())
    os.chdir(scratch)
    # every per-user cache a library may write (torch inductor's under tempfile's folder, matplotlib's, XDG's)
    for var in ("HOME", "TMPDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
        os.environ[var] = scratch
    tempfile.tempdir = scratch  # tempfile caches its folder: a call before the sandbox would keep /tmp
    return scratch, got


def _checkout(engine: str, readable: list[str]) -> list[str]:
    """The folder holding the engine's package where it is among ``readable`` only for the engine's sake (a
    checkout or an editable install: the worker's ``PYTHONPATH``), not a Python folder (site-packages): a worker
    may list it, and read beneath it only what another rule allows (the package, a virtual environment).

    Returns:
        That folder (a real path), or nothing.
    """
    import site
    import sysconfig

    home = os.path.realpath(os.path.dirname(engine))
    python = {*sysconfig.get_paths().values(), *site.getsitepackages(), site.getusersitepackages(), sys.prefix,
              sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)}
    if home in {os.path.realpath(p) for p in python} or home not in {os.path.realpath(d) for d in readable}:
        return []
    return [home]


LIBRARY_VARS = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH")
"""The grader's variables naming folders the dynamic loader reads after the sandbox (CUDA's libraries)."""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def library_dirs(environ: Mapping[str, str] | None = None) -> list[str]:
    """The loader's folders the grader's environment names (:data:`LIBRARY_VARS`), which a worker reads.

    Args:
        environ: the environment (default ``os.environ``: a worker's is the grader's).

    Returns:
        Real paths of absolute, existing folders other than ``/`` that neither are, hold nor lie in the engine's
        checkout (its solutions, hidden suites and tests stay out of reach), in order.
    """
    env = os.environ if environ is None else environ
    root = str(Path(__file__).resolve().parents[2])
    out: list[str] = []
    for entry in (e for var in LIBRARY_VARS for e in env.get(var, "").split(os.pathsep)):
        real = os.path.realpath(entry) if entry and os.path.isabs(entry) else ""
        if real not in ("", "/") and os.path.isdir(real) and not (_inside(real, root) or _inside(root, real)):
            out.append(real)
    return list(dict.fromkeys(out))


def worker_read_roots(extra: Iterable[str] = ()) -> list[str]:
    """Where a student's worker may read beneath (Landlock's roots, before the private places are carved out).

    The least it needs: the system's libraries and settings (:data:`autograder.sandbox.landlock.SYSTEM_ROOTS`,
    ``/dev``), Python's own folders (its prefixes, the standard library, site-packages), the engine's package and
    the loader's folders (:func:`library_dirs`). The engine's checkout itself is listed, never read (``_checkout``).

    Args:
        extra: the rest of a worker's ``sys.path`` (``TAPETRACE_WORKER_PYTHONPATH``'s folders).

    Returns:
        Real paths, in order, without duplicates.
    """
    import site
    import sysconfig

    from autograder.sandbox.landlock import SYSTEM_ROOTS

    python = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__),
              *sysconfig.get_paths().values(), *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        python.append(site.getusersitepackages())
    engine = str(Path(__file__).resolve().parents[1])
    roots = [*SYSTEM_ROOTS, "/dev", *python, engine, *library_dirs(), *extra]
    return list(dict.fromkeys(os.path.realpath(r) for r in roots if r and os.path.isabs(r)))


def worker_reads(path: str | os.PathLike[str], extra: Iterable[str] = ()) -> str | None:
    """The root of :func:`worker_read_roots` beneath which a student's worker reads ``path`` (None: none), e.g. to
    refuse a build's output there (only what a private place covers is carved out of those roots).

    Args:
        path: a place (it need not exist; its real path is judged).
        extra: see :func:`worker_read_roots`.
    """
    real = os.path.realpath(path)
    return next((root for root in worker_read_roots(extra) if _inside(real, root)), None)


def _folder_identity(path: str) -> tuple[int, int] | None:
    """The device and inode of the folder holding ``path`` (None: it cannot be looked at from here)."""
    try:
        st = os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _landlock_layer(scratch: str, hide: list[str], read: list[str], got: dict[str, object], skip: list[str],
                    private_shm: bool) -> None:
    """Landlock's allow-list (see :mod:`autograder.sandbox.landlock`); ``private_shm``: /dev/shm is the worker's own."""
    from autograder.sandbox import landlock as _landlock

    abi = 0 if "landlock" in skip else _landlock.abi_version()
    if abi:
        engine = str(Path(__file__).resolve().parents[1])
        writable = [scratch, "/dev/shm"] if private_shm and os.path.isdir("/dev/shm") else [scratch]
        readable = [*_python_dirs(), engine, *library_dirs(), *read]
        home = _checkout(engine, readable)
        rules = _landlock.plan(scratch=writable, read=[d for d in readable if os.path.realpath(d) not in home],
                               denied=hide, listed=home)
        got.update(_landlock.restrict(rules, abi))
    else:
        got["landlock_error"] = "skipped" if "landlock" in skip else \
            "not available (kernel older than 5.13, or refused by a seccomp policy)"
