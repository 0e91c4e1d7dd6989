"""Isolation where namespaces are refused: the layers, how they add up to a level, and the run's reaction.

The attack suite (tests/adversarial) runs once with namespaces and once as in a container with Docker's
default privileges (root without CAP_SYS_ADMIN: Landlock + seccomp). Here: the level accounting, the
Landlock allow-list and the seccomp program as units; `--require-isolation` and the one-line note;
a worker with an unprivileged uid and *no* Landlock (an older kernel) grading honest code and refusing
attacks from an engine copy whose private parts are root-only (as the otter zip locks them); and, when
Docker is here, an attack graded inside a real default-privilege container.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from hostimage import host_image  # noqa: E402 (benchmarks/: the one image of this machine)

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.sandbox import isolate as _sandbox
from autograder.sandbox import landlock as _landlock
from autograder.sandbox import privileges as _privileges
from autograder.sandbox import seccomp as _seccomp

AS_CONTAINER = ROOT / "tests" / "scripts" / "as_container.sh"
ATTACKS = ROOT / "tests" / "adversarial" / "attacks"
EX1, EX9 = "ex01_torch_mlp", "ex09_autograd_tape"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not sys.platform.startswith(
    "linux"), reason="needs root and setpriv (to drop CAP_SYS_ADMIN as Docker's default does)")


# --------------------------------------------------------------------------- level accounting
def _record(**layers) -> dict:
    got = {"network_dropped": False, "pid_namespace": False, "read_only_filesystem": False,
           "private_dirs_hidden": False, "capabilities_dropped": True, "landlock": 0, "seccomp": True, "uid": None}
    got.update(layers)
    return got


def test_namespaces_are_full(tmp_path):
    got = _record(network_dropped=True, pid_namespace=True, read_only_filesystem=True, private_dirs_hidden=True)
    _sandbox._guarantees(got, [])
    assert got["level"] == "full"


def test_landlock_and_seccomp_make_a_container(tmp_path):
    got = _record(landlock=7, landlock_scoped=True)
    _sandbox._guarantees(got, [])
    assert got["level"] == "container" and got["private_files_unreadable"] and got["processes_confined"]


def test_a_uid_protects_only_private_files_that_other_users_cannot_read():
    base = Path(tempfile.mkdtemp(dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        base.chmod(0o755)
        private = base / "solutions"
        private.mkdir(mode=0o755)
        private.chmod(0o755)
        (private / "ex01.py").write_text("x = 1\n")  # an empty folder gives away no file
        (private / "ex01.py").chmod(0o644)
        got = _record(uid=300000)
        _sandbox._guarantees(got, [str(private)])
        assert got["level"] == "minimal" and not got["private_files_unreadable"]
        private.chmod(0o700)
        got = _record(uid=300000)
        _sandbox._guarantees(got, [str(private)])
        assert got["level"] == "container"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_seccomp_alone_is_minimal():
    got = _record(seccomp_signals=True)
    _sandbox._guarantees(got, [])
    assert got["level"] == "minimal" and not got["private_files_unreadable"]
    assert "NOT guaranteed: private files unreadable" in _sandbox.describe(got)
    assert not _sandbox.level_at_least(got, "container") and _sandbox.level_at_least(got, "minimal")


def test_readable_by_others_follows_every_ancestor(tmp_path):
    d = tmp_path / "a" / "b"
    d.mkdir(parents=True)
    (d / "f").write_text("x")
    for p in (tmp_path / "a", d):
        p.chmod(0o755)
    assert not _privileges._readable_by_others(str(d / "f"))  # pytest's own folder is 0700
    assert _privileges._readable_by_others("/usr/lib")
    (tmp_path / "a").chmod(0o700)
    assert not _privileges._readable_by_others(str(d / "f"))


# --------------------------------------------------------------------------- Landlock's allow-list
def test_carve_leaves_out_exactly_the_denied_paths(tmp_path):
    for rel in ("pkg/hidden/x.py", "pkg/public/y.py", "pkg/z.py", "other/w.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "pkg" / "link").symlink_to(tmp_path / "pkg" / "hidden")
    rules = dict(_landlock.carve(str(tmp_path), _landlock.READ, [str(tmp_path / "pkg" / "hidden")]))
    assert rules[str(tmp_path)] == _landlock.READ_DIR and rules[str(tmp_path / "pkg")] == _landlock.READ_DIR
    assert rules[str(tmp_path / "other")] == _landlock.READ
    assert rules[str(tmp_path / "pkg" / "public")] == _landlock.READ
    assert rules[str(tmp_path / "pkg" / "z.py")] == _landlock.READ & _landlock.FILE_RIGHTS
    assert not any(p.startswith(str(tmp_path / "pkg" / "hidden")) or p.endswith("link") for p in rules)


def test_plan_reads_the_system_and_python_but_not_home_or_tmp(tmp_path):
    rules = dict(_landlock.plan(scratch=str(tmp_path), read=[sys.prefix], denied=[str(SOLUTIONS)]))
    assert rules[os.path.realpath(str(tmp_path))] == _landlock.ALL
    assert "/usr" in rules and "/tmp" not in rules and os.path.expanduser("~") not in rules
    assert not any(_landlock._inside(p, str(SOLUTIONS)) for p in rules)


def test_plan_denies_a_run_output_not_made_yet(tmp_path):
    """A results file in a folder workers read (a ``sys.path`` entry, the engine's checkout) is left out of the
    allow-list before it exists: its folder is carved, so the checkpoint the grader makes there later is under
    no rule (once the folder was a rule of its own, and a classmate's scores were read)."""
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "notes.py").write_text("")
    rules = dict(_landlock.plan(scratch=str(tmp_path / "w"), read=[str(folder)], denied=[str(folder / "r.json")]))
    assert rules[os.path.realpath(folder)] == _landlock.READ_DIR  # names only: a file made there is unreadable
    assert os.path.realpath(folder / "notes.py") in rules and os.path.realpath(folder / "r.json") not in rules


def test_the_engines_checkout_is_listed_not_read(tmp_path):
    """The checkout holding the engine's package is on a worker's ``sys.path`` for the engine only: its names may
    be listed, its files (an instructor's results, notes, earlier runs) are read only beneath the package (once
    the whole checkout was readable)."""
    checkout = tmp_path / "checkout"
    (checkout / "autograder").mkdir(parents=True)
    (checkout / "notes").mkdir()
    (checkout / "results.json").write_text("{}")
    engine = str(checkout / "autograder")
    home = _sandbox._checkout(engine, [str(checkout), engine])
    assert home == [os.path.realpath(checkout)]
    assert _sandbox._checkout(engine, [engine]) == []  # not on sys.path: nothing to narrow
    rules = dict(_landlock.plan(scratch=str(tmp_path / "w"), read=[engine], denied=[], listed=home))
    assert rules[os.path.realpath(checkout)] == _landlock.READ_DIR
    assert rules[os.path.realpath(engine)] == _landlock.READ
    assert os.path.realpath(checkout / "results.json") not in rules
    site = sysconfig.get_paths()["purelib"]  # an installed engine: its folder is Python's own, read as ever
    assert _sandbox._checkout(os.path.join(site, "autograder"), [site]) == []


def test_an_output_the_sandbox_cannot_keep_lowers_the_level():
    got = _record(network_dropped=True, pid_namespace=True, read_only_filesystem=True, private_dirs_hidden=True,
                  outputs_readable=["/srv/course/r.json"])
    _sandbox._guarantees(got, [])
    assert got["level"] == "minimal" and not got["private_files_unreadable"]
    assert "/srv/course/r.json" in _sandbox.describe(got) and "folder of their own" in _sandbox.describe(got)


def test_the_results_are_written_for_their_owner_only(tmp_path):
    from autograder.reports.report import atomic_write, write_json

    leftover = tmp_path / f"r.json.tmp{os.getpid()}"
    leftover.write_text("left over")  # a leftover keeps no mode of its own
    leftover.chmod(0o644)
    write_json([{"submission": "a", "exercises": {}}], str(tmp_path / "r.json"))
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o600
    atomic_write(tmp_path / "notes.md", "x")
    assert (tmp_path / "notes.md").stat().st_mode & 0o077  # other outputs keep the umask's mode


# --------------------------------------------------------------------------- the seccomp program
def test_seccomp_program_refuses_what_it_says():
    prog = _seccomp.program("x86_64", 4242, confine_signals=True)
    ks = {ins[3] for ins in prog}
    for name in ("ptrace", "connect", "unshare", "io_uring_setup", "bpf", "mount"):
        assert _seccomp._SYSCALLS[name][0] in ks, name
    assert 4242 in ks and _seccomp.AF_UNIX in ks
    assert all(0 <= ins[1] < 256 and 0 <= ins[2] < 256 for ins in prog)  # classic BPF jumps are 8-bit
    assert _seccomp.program("riscv64", 1, False) is None
    assert (-4242) & 0xFFFFFFFF in ks and 0xFFFFFFFF not in ks  # its own group, never kill(-1)


# --------------------------------------------------------------------------- the run's reaction
def _grade(args: list[str], prefix: list[str], cwd: Path = ROOT, env: dict | None = None,
           timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "autograder.cli", "grade", *args, "--device", "cpu"],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@ROOT_ONLY
def test_require_isolation_refuses_and_the_note_says_the_level(tmp_path):
    done = _grade([str(SOLUTIONS), "--only", EX9, "--require-isolation", "full"], [str(AS_CONTAINER)])
    assert done.returncode == 2 and "--require-isolation full" in done.stderr and "container" in done.stderr
    assert "total" not in done.stdout  # nothing graded
    out = tmp_path / "r.json"
    done = _grade([str(SOLUTIONS), "--only", EX9, "--require-isolation", "container", "--json", str(out)],
                  [str(AS_CONTAINER)])
    assert done.returncode == 0, done.stderr
    assert "note: container isolation" in done.stderr
    res = json.loads(out.read_text())
    assert res["isolation"]["level"] == "container" and res["total"] == res["max_total"] > 0
    done = _grade([str(SOLUTIONS), "--only", EX9, "--require-isolation", "full"], [])
    assert done.returncode == 0 and "note:" not in done.stderr


@ROOT_ONLY
@pytest.mark.slow
def test_every_solution_gets_full_marks_as_in_a_container(tmp_path):
    """Landlock's allow-list and seccomp must not cost honest code anything, in any exercise."""
    out = tmp_path / "r.json"
    done = _grade([str(SOLUTIONS), "--json", str(out), "--quiet", "--jobs", "2", "--seed", "7"], [str(AS_CONTAINER)])
    assert done.returncode == 0, done.stderr[-3000:]
    res = json.loads(out.read_text())
    failed = {ex: [t["message"] for t in r["tests"] if not t["passed"]] for ex, r in res["exercises"].items()
              if r["score"] != r["max_score"]}
    assert not failed and res["total"] == res["max_total"] > 0, failed
    assert res["isolation"]["level"] == "container" and res["isolation"]["landlock"]


def _engine_copy(base: Path) -> Path:
    """The engine and the solutions in a folder others may enter, private parts locked (as the otter zip does)."""
    base.parent.chmod(0o755)
    base.mkdir(mode=0o755)
    for sub in ("autograder", "solutions"):
        shutil.copytree(ROOT / sub, base / sub, ignore=shutil.ignore_patterns("__pycache__"))
    for root, dirs, files in os.walk(base):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    (base / "solutions").chmod(0o700)
    (base / "autograder" / "hidden").chmod(0o700)
    return base


def _closed_to_others() -> str | None:
    """A folder on the way to this Python's files that other users cannot enter (``/root`` aside: the
    script opens it), else None."""
    from autograder.sandbox import privileges as _privileges

    for d in _privileges._python_dirs():
        parts = d.split("/")
        for i in range(2, len(parts) + 1):
            ancestor = "/".join(parts[:i])
            if ancestor == "/root" or not os.path.isdir(ancestor):
                continue
            if os.stat(ancestor).st_mode & 0o001 == 0:
                return ancestor
    return None


@ROOT_ONLY
@pytest.mark.slow
def test_an_unprivileged_uid_without_landlock_still_isolates(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("unshare is needed to open /root in a private mount namespace")
    closed = _closed_to_others()
    if closed:  # e.g. a checkout (and its venv) inside a 0700 temporary folder
        pytest.skip(f"{closed} cannot be entered by other users, so no unprivileged uid can run this Python")
    copy = _engine_copy(Path(tempfile.mkdtemp(prefix="tapetrace-engine-", dir="/var/tmp")) / "engine")
    try:
        subs = tmp_path / "subs"
        subs.mkdir()
        attacks = ("read_solution_file", "read_hidden_suite_file", "other_submission_sources", "plant_files",
                   "trace_parent", "kill_parent")
        for name in attacks:
            (subs / name).mkdir()
            (subs / name / f"{EX1}.py").write_text((ATTACKS / f"{name}.py").read_text())
        out = tmp_path / "r.json"
        env = dict(os.environ, PYTHONPATH=str(copy))
        done = _grade([str(copy / "solutions"), *(str(subs / n) for n in attacks), "--only", f"{EX1},{EX9}",
                       "--sandbox-skip", "landlock", "--timeout", "8", "--json", str(out), "--quiet",
                       "--require-isolation", "container"],  # never run the attacks less isolated
                      [str(AS_CONTAINER), "--open-root"], cwd=copy, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        results = {Path(r["submission"]).name: r for r in json.loads(out.read_text())}
        honest = results["solutions"]
        assert honest["total"] == honest["max_total"] > 0
        iso = honest["isolation"]
        assert iso["level"] == "container" and iso["uid"] is not None and not iso["landlock"], json.dumps(iso)
        for name in attacks:
            ex = results[name]["exercises"][EX1]
            if name in ("read_solution_file", "read_hidden_suite_file"):
                assert ex["status"] == "error" and "PermissionError" in ex["message"], ex["message"]
            elif name == "kill_parent":
                assert ex["score"] == 0 and ex["status"] in ("timeout", "crashed"), ex["message"]
            else:
                assert ex["score"] == ex["max_score"], (name, ex["message"])  # its honest part, nothing leaked
        assert not list(Path(copy / "autograder" / "exercises").glob("tapetrace_attack_*"))
    finally:
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):  # world-writable: the one place an unprivileged uid writes
            for p in Path(folder).glob("tapetrace_attack_*"):  # (pass or fail: later attack tests look for plants)
                if p.is_file() and p.lstat().st_uid != 0:
                    p.unlink()
        shutil.rmtree(copy.parent, ignore_errors=True)


# --------------------------------------------------------------------------- a real container
def _docker() -> str | None:
    if shutil.which("docker") is None:
        return "docker is needed (apt-get install docker.io; start dockerd)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine is running here (start dockerd)"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_docker() is not None, reason=str(_docker()))
def test_an_attack_in_a_default_privilege_docker_container(tmp_path):
    """The grader inside `docker run` with Docker's defaults (root, no CAP_SYS_ADMIN or CAP_SYS_PTRACE, default
    seccomp), in an image of this machine (benchmarks/hostimage.py)."""
    image = "tapetrace-host:test"
    mounts = host_image(tmp_path, image)
    work = Path(tempfile.mkdtemp(prefix="tapetrace-docker-", dir="/var/tmp"))
    try:
        for name in ("read_solution_file", "proc_cwd_solution"):
            (work / name).mkdir()
            (work / name / f"{EX1}.py").write_text((ATTACKS / f"{name}.py").read_text())
        (work / "honest").mkdir()
        shutil.copy(SOLUTIONS / f"{EX1}.py", work / "honest" / f"{EX1}.py")
        work.chmod(0o755)
        script = (f"chmod o+x /root; cd {ROOT} && HOME=/tmp TAPETRACE_JAX_CACHE=run {sys.executable} -m autograder.cli "
                  f"grade {work}/honest {work}/read_solution_file {work}/proc_cwd_solution --only {EX1} --device cpu "
                  "--timeout 20 --json /tmp/r.json --quiet --require-isolation container && cat /tmp/r.json")
        done = subprocess.run(["docker", "run", "--rm", *mounts, "-v", f"{ROOT}:{ROOT}:ro",  # ROOT may be in /tmp
                               image, "/bin/sh", "-c", script], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        results = {Path(r["submission"]).name: r for r in json.loads(done.stdout[done.stdout.index("["):])}
        assert results["honest"]["total"] == results["honest"]["max_total"] > 0
        assert results["honest"]["isolation"]["level"] == "container"
        assert results["honest"]["isolation"]["pid_namespace"] is False
        bad = results["read_solution_file"]["exercises"][EX1]
        assert bad["score"] == 0 and bad["status"] == "error" and "PermissionError" in bad["message"], bad["message"]
        sneaky = results["proc_cwd_solution"]["exercises"][EX1]
        assert sneaky["score"] == sneaky["max_score"], sneaky["message"]  # no LEAKED: it found nothing to read
    finally:
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


@pytest.mark.container
@pytest.mark.skipif(_docker() is not None, reason=str(_docker()))
def test_answers_are_confirmed_in_a_default_privilege_docker_container(tmp_path):
    """Inside `docker run` with Docker's defaults (no CAP_SYS_PTRACE, Docker's seccomp profile), with this Python
    usable by other users as the otter image's setup makes it: each worker has a uid of its own, and the grader
    reads its threads as that user. A submission that serves the grader's commands from inside a call (10/10 where
    only the fence stood) is forged; an honest one keeps full marks."""
    image = "tapetrace-host-confirm:test"
    mounts = host_image(tmp_path, image)
    ex6 = "ex06_per_example_grads"
    work = Path(tempfile.mkdtemp(prefix="tapetrace-docker-", dir="/var/tmp"))
    try:
        (work / "forger").mkdir()
        (work / "forger" / f"{ex6}.py").write_text((SOLUTIONS / f"{ex6}.py").read_text() + "\n\n" + (
            ATTACKS / "forge_ex06_serves_the_rest_from_inside_a_call.py").read_text())
        (work / "honest").mkdir()
        shutil.copy(SOLUTIONS / f"{ex6}.py", work / "honest" / f"{ex6}.py")
        work.chmod(0o755)
        script = (f"chmod o+x /root; cd {ROOT} && HOME=/tmp TAPETRACE_JAX_CACHE=run {sys.executable} -m autograder.cli "
                  f"grade {work}/honest {work}/forger --only {ex6} --device cpu --timeout 20 --json /tmp/r.json "
                  "--quiet --require-isolation container && cat /tmp/r.json")
        done = subprocess.run(["docker", "run", "--rm", *mounts, "-v", f"{ROOT}:{ROOT}:ro", image, "/bin/sh", "-c",
                               script], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        results = {Path(r["submission"]).name: r for r in json.loads(done.stdout[done.stdout.index("["):])}
        honest = results["honest"]
        assert honest["total"] == honest["max_total"] > 0, json.dumps(honest)[:2000]
        iso = honest["isolation"]
        assert iso["uid"] is not None and iso["pid_namespace"] is False, json.dumps(iso)
        forged = results["forger"]["exercises"][ex6]
        assert forged["score"] == 0 and forged["tests"][0]["code"] == "EXERCISE_FORGED", forged["message"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
