"""The grader inside containers with memory and CPU limits (``docker run --memory M --memory-swap M --cpus C``).

Gradescope's default envelope is 768 MB and half a CPU: a solutions submission gets full marks there
(the plan: one exercise at a time, one zygote, student workers capped at their share), a student's slow
leak is still the student's (a MemoryError at its cap, not the container's OOM killer), a container too
small for one exercise is refused before anything is graded, and a worker the kernel's OOM killer takes
is the grader's trouble, never the student's. The image is this machine's folders bound read-only, with the
container's own /proc (benchmarks/hostimage.py, as in tests/test_isolation.py: nothing is pulled).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from hostimage import host_image  # noqa: E402 (benchmarks/: the one image of this machine)

from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS

ATTACKS = ROOT / "tests" / "adversarial" / "attacks"
IMAGE = "tapetrace-envelope:test"
CHROOT_IMAGE = "tapetrace-envelope-chroot:test"
# grades with the plan's worker cap raised far beyond the container (a misplanned envelope): the kernel's
# OOM killer then stops a student's allocation before its cap does. Only the cap: the least a worker needs
# (MIN_WORKER_BYTES) stays, or the plan would refuse the container before grading anything.
UNCAPPED = ("import sys; from autograder.workers import sizing as s; s.BASE_BYTES = s.REFERENCE_BYTES = 0; "
            "s.DEFAULT_WORKER_BYTES = 8 * 2**30; s.Plan.worker_memory_at = lambda self, jobs: 8 * 2**30; "
            "from autograder import cli; sys.exit(cli.main(sys.argv[1:]))")


def _docker() -> str | None:
    if shutil.which("docker") is None:
        return "docker is needed (apt-get install docker.io; start dockerd)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine is running here (start dockerd)"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.container, pytest.mark.skipif(_docker() is not None, reason=str(_docker()))]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """``(image, the docker run arguments that mount it)``."""
    mounts = host_image(tmp_path_factory.mktemp("image"), IMAGE)
    yield IMAGE, mounts
    subprocess.run(["docker", "rmi", "-f", IMAGE], capture_output=True)


@pytest.fixture()
def work():
    folder = Path(tempfile.mkdtemp(prefix="tapetrace-envelope-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _in_container(image: tuple[str, list[str]], work: Path, memory: str, cpus: str, args: str,
                  grade: str = "", extra: tuple[str, ...] = ()) -> tuple[int, str]:
    """Runs ``tapetrace grade ARGS`` in the container (``extra``: more `docker run` arguments); (its exit
    status, stderr)."""
    name, mounts = image
    mounts = [*mounts, *extra]
    grade = grade or f"{sys.executable} -m autograder.cli"
    script = f"chmod o+x /root; cd {ROOT} && HOME=/tmp TAPETRACE_JAX_CACHE=run {grade} grade {args}; echo rc=$? >&2"
    done = subprocess.run(["docker", "run", "--rm", "--memory", memory, "--memory-swap", memory, "--cpus", cpus,
                           *mounts, "-v", f"{work}:{work}", "-v", f"{ROOT}:{ROOT}:ro", name, "/bin/sh", "-c", script],
                          capture_output=True, text=True, timeout=3600)
    rc = [line for line in done.stderr.splitlines() if line.startswith("rc=")]
    assert rc, done.stdout[-2000:] + done.stderr[-3000:]
    return int(rc[-1][3:]), done.stderr


def _folder(work: Path, name: str, files: dict[str, str]) -> Path:
    sub = work / name
    sub.mkdir()
    for ex, text in files.items():
        (sub / f"{ex}.py").write_text(text)
    return sub


def test_full_marks_in_gradescopes_default_envelope_and_a_leak_is_still_the_students(image, work):
    solutions = _folder(work, "solutions", {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in EXERCISES
                                            if (SOLUTIONS / f"{ex}.py").exists()})
    leak = _folder(work, "leak", {"ex01_torch_mlp": (ATTACKS / "slow_leak.py").read_text()})
    out = work / "r.json"
    rc, err = _in_container(image, work, "768m", "0.5", f"{solutions} {leak} --device cpu --seed 3 --json {out}")
    assert rc == 0, err[-3000:]
    rows = {Path(r["submission"]).name: r for r in json.loads(out.read_text())}
    sol = rows["solutions"]
    assert sol["total"] == sol["max_total"] > 0, {ex: e["message"] for ex, e in sol["exercises"].items() if e["score"] < e["max_score"]}
    env = sol["envelope"]
    assert env["memory_bytes"] == 768 * 2**20 and env["cpu_quota"] == 0.5
    assert env["plan"]["jobs"] == 1 and env["plan"]["launcher"] == "zygote"
    bad = rows["leak"]["exercises"]["ex01_torch_mlp"]
    assert bad["status"] == "graded" and bad["score"] < bad["max_score"]
    assert any("ran out of memory" in t["message"] for t in bad["tests"]), bad  # its cap, not the OOM killer
    assert "grader_error" not in {e["status"] for r in rows.values() for e in r["exercises"].values()}


def test_a_container_too_small_for_one_exercise_is_refused_before_grading(image, work):
    sub = _folder(work, "sub", {"ex09_autograd_tape": (SOLUTIONS / "ex09_autograd_tape.py").read_text()})
    out = work / "r.json"
    rc, err = _in_container(image, work, "256m", "0.5", f"{sub} --device cpu --json {out}")
    assert rc == 2 and "256 MiB" in err and "--memory" in err, err[-2000:]
    assert not out.exists()


BALLOON = "\nimport numpy as _np\n_BALLOON = _np.ones(900 * 2**20, dtype=_np.uint8)  # touched: 900 MiB resident\n"


def test_a_worker_the_oom_killer_takes_is_the_graders_not_the_students(image, work):
    """A misplanned cap (far beyond the container): the kernel's OOM killer, not the cap, stops the worker; the
    grader sees the kill (the cgroup's OOM counter rose), grades the exercise again alone, and reports it as
    its own trouble with the setting to raise. That takes a memory cgroup of the worker's own (else nothing says
    its processes together stayed under a cap, and the kill is the student's: envelope.judge_kill): here the
    container's cgroup folder is writable, as where a platform delegates it; Docker's default mounts it
    read-only (the full-marks test above grades so)."""
    # the balloon after the solution: it begins with `from __future__ import annotations`, which must come first
    sub = _folder(work, "sub", {"ex09_autograd_tape": (SOLUTIONS / "ex09_autograd_tape.py").read_text() + BALLOON,
                                "ex01_torch_mlp": (SOLUTIONS / "ex01_torch_mlp.py").read_text()})
    out = work / "r.json"
    rc, err = _in_container(image, work, "640m", "1", f"{sub} --only ex01,ex09 --device cpu --json {out}",
                            grade=f"{sys.executable} -c \"{UNCAPPED}\"", extra=("-v", "/sys/fs/cgroup:/sys/fs/cgroup"))
    res = json.loads(out.read_text())
    assert rc == 3, err[-3000:] + json.dumps(res["exercises"]["ex09_autograd_tape"])[:3000]
    row = res["exercises"]["ex09_autograd_tape"]
    assert row["status"] == "grader_error", row
    assert "OOM killer" in row["grader_reason"] and "640 MiB" in row["grader_reason"]
    assert not any(t.get("code") in ("LOAD_CRASHED", "CALL_CRASHED") for t in row["tests"])
    assert res["exercises"]["ex01_torch_mlp"]["score"] == res["exercises"]["ex01_torch_mlp"]["max_score"]


def test_a_container_that_sees_the_hosts_proc_is_refused_before_grading(work):
    """A static busybox chrooting into a read-only bind of this machine's / (the first image of these tests): the
    container's PIDs are not those of the /proc it sees, so nothing of a worker could be measured: refused."""
    if shutil.which("busybox") is None:
        pytest.skip("a static busybox is needed (apt-get install busybox-static)")
    rootfs = work / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    shutil.copy(shutil.which("busybox"), rootfs / "bin" / "busybox")
    tar = subprocess.run(["tar", "-C", str(rootfs), "-c", "."], capture_output=True, check=True).stdout
    subprocess.run(["docker", "import", "-", CHROOT_IMAGE], input=tar, capture_output=True, check=True)
    try:
        sub = _folder(work, "sub", {"ex09_autograd_tape": (SOLUTIONS / "ex09_autograd_tape.py").read_text()})
        out = work / "r.json"
        script = (f"cd {ROOT} && HOME=/tmp {sys.executable} -m autograder.cli grade {sub} --device cpu --json {out}; "
                  "echo rc=$? >&2")
        done = subprocess.run(["docker", "run", "--rm", "-v", "/:/host:ro", "--tmpfs", "/host/tmp:exec",
                               "-v", f"{work}:/host{work}", CHROOT_IMAGE, "/bin/busybox", "chroot", "/host",
                               "/bin/sh", "-c", script], capture_output=True, text=True, timeout=600)
        assert "rc=2" in done.stderr and "own /proc" in done.stderr, done.stderr[-2000:]
        assert not out.exists()
    finally:
        subprocess.run(["docker", "rmi", "-f", CHROOT_IMAGE], capture_output=True)
