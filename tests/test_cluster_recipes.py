"""The recipes in docs/cluster/: each is rendered (placeholders filled), checked, and run locally where it can be.

- the Slurm array script runs as tasks 1..2 of an array (SLURM_* variables set), then its merge
  script; the result equals one unsharded run; the submit script calls a stand-in ``sbatch``;
- the Kubernetes Indexed Job's container command runs for JOB_COMPLETION_INDEX 0..1, then the
  merge Job's; same check;
- the Dask-on-Kubernetes manifest's scheduler, worker and client commands run here as processes;
- the dask-jobqueue script builds its SLURMCluster and renders the job script Slurm would get.

Grading is cut to ex01 and ex09 by a ``tapetrace`` stand-in on PATH (the recipes grade every
exercise); what is checked (slices, parts, merge, commands, keys) does not depend on it.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import py_compile
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_shards import ONLY, class_of, tapetrace, without_timing

from autograder import cli
from autograder.core.paths import ROOT

yaml = pytest.importorskip("yaml")
DOCS = ROOT / "docs" / "cluster"
SEED = 31337
# slices: two array tasks or Job indexes (each a `tapetrace grade` of its own) show slicing, parts and merge
SHARDS = 2
PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")


def render(name: str, values: dict[str, str], gpu: bool = False) -> str:
    """A recipe with its {{PLACEHOLDERS}} filled; with ``gpu``, its ``#gpu `` lines switched on."""
    text = (DOCS / name).read_text()
    missing = set(PLACEHOLDER.findall(text)) - set(values)
    assert not missing, f"{name}: no value for {missing}"
    text = PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
    if gpu:
        assert "#gpu " in text or name.endswith(".py"), f"{name} names no GPU line"
        text = text.replace("#gpu ", "")
    return text


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


# what a recipe's slices, parts and merge are checked on: four of class_of's seven submissions (a solution,
# mutants, nothing handed in, a corrupt zip), two a slice; the other forms are test_shards' and test_cluster's
KEPT = ("alice", "bob", "dave", "frank.zip")


def small_class(tmp: Path) -> list[str]:
    """The submissions of :data:`KEPT` (made by class_of), in ``tmp / "subs"``."""
    subs = []
    for sub in map(Path, class_of(tmp)):
        if sub.name in KEPT:
            subs.append(str(sub))
        elif sub.is_dir():
            shutil.rmtree(sub)
        else:
            sub.unlink()
    assert [Path(s).name for s in subs] == sorted(KEPT)
    return subs


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Submissions, a stand-in venv whose ``tapetrace grade`` adds --only ex01,ex09, and one unsharded run."""
    tmp = tmp_path_factory.mktemp("recipes")
    subs = small_class(tmp)
    venv = tmp / "venv" / "bin"
    venv.mkdir(parents=True)
    real = ROOT / ".venv" / "bin" / "tapetrace"
    real = real if real.exists() else Path(sys.executable).with_name("tapetrace")
    (venv / "tapetrace").write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = grade ]; then exec {real} grade "${{@:2}}" --only {ONLY}; fi\n'
        f'exec {real} "$@"\n')
    (venv / "tapetrace").chmod(0o755)
    (venv / "activate").write_text(f'export PATH="{venv}:{Path(sys.executable).parent}:$PATH"\n')
    full = tmp / "full"
    full.mkdir()
    cp = tapetrace("grade", *sorted(glob.glob(str(tmp / "subs" / "*"))), "--only", ONLY, "--device", "cpu",
                   "--seed", str(SEED), "--json", str(full / "grades.json"), "--csv", str(full / "grades.csv"),
                   "--quiet")
    assert cp.returncode == 0, cp.stderr
    return {"tmp": tmp, "subs": subs, "venv": venv, "full": full,
            "env": {**os.environ, "PATH": f"{venv}:{Path(sys.executable).parent}:{os.environ['PATH']}"}}


def values(course, out: Path, **more: str) -> dict[str, str]:
    return {"SUBMISSIONS": str(course["tmp"] / "subs"), "OUT": str(out), "SEED": str(SEED), "SHARDS": str(SHARDS),
            "DEVICE": "cpu", "VENV": str(course["venv"].parent), "WORKERS": "2", "PARTITION": "gpu",
            "IMAGE": "registry.example/tapetrace:1", "SUBMISSIONS_PVC": "course-submissions",
            "OUT_PVC": "course-grades", **more}


def same_as_one_run(course, out: Path) -> None:
    merged = json.loads((out / "grades.json").read_text())
    full = json.loads((course["full"] / "grades.json").read_text())
    assert [r["submission"] for r in merged] == course["subs"]
    assert without_timing(merged) == without_timing(full)
    assert (out / "grades.csv").read_text() == (course["full"] / "grades.csv").read_text()


def sbatch_lines(text: str) -> list[str]:
    return [ln.split(None, 1)[1] for ln in text.splitlines() if ln.startswith("#SBATCH ")]


# ---------------------------------------------------------------------- Slurm
@pytest.mark.parametrize("gpu", [False, True])
def test_slurm_scripts_are_valid_bash(tmp_path, course, gpu):
    vals = values(course, tmp_path, DEVICE="cuda" if gpu else "cpu")
    for name in ("slurm-array.sbatch", "slurm-merge.sbatch", "slurm-submit.sh"):
        path = write(tmp_path, name, render(name, vals, gpu=gpu and name == "slurm-array.sbatch"))
        cp = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert cp.returncode == 0, f"{name}: {cp.stderr}"
    array = sbatch_lines((tmp_path / "slurm-array.sbatch").read_text())
    assert f"--array=1-{SHARDS}" in array and f"--output={tmp_path}/logs/grade-%A_%a.out" in array
    assert ("--gres=gpu:1" in array) == gpu
    assert 'DEVICE="cuda"' in (tmp_path / "slurm-array.sbatch").read_text() if gpu else True


def test_slurm_array_tasks_then_merge_equal_one_run(tmp_path, course):
    out = tmp_path / "out"
    vals = values(course, out)
    array = write(tmp_path, "slurm-array.sbatch", render("slurm-array.sbatch", vals))
    merge = write(tmp_path, "slurm-merge.sbatch", render("slurm-merge.sbatch", vals))
    for task in (2, 1):  # array tasks run in any order
        env = {**course["env"], "SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_COUNT": str(SHARDS),
               "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": str(SHARDS), "SLURM_CPUS_PER_TASK": "2"}
        env.pop("JOB_COMPLETION_INDEX", None)
        cp = subprocess.run(["bash", str(array)], capture_output=True, text=True, env=env, timeout=300)
        assert cp.returncode == 0, cp.stderr
        assert (out / "parts" / f"part-{task}.json").exists()
    cp = subprocess.run(["bash", str(merge)], capture_output=True, text=True, env=course["env"], timeout=120)
    assert cp.returncode == 0, cp.stderr
    same_as_one_run(course, out)
    (out / "parts" / "part-2.json").unlink()  # a task that never ran: the merge names what is lost
    cp = subprocess.run(["bash", str(merge)], capture_output=True, text=True, env=course["env"], timeout=120)
    assert cp.returncode == 2 and "missing submission" in cp.stderr and f"shard 2/{SHARDS}" in cp.stderr


def test_slurm_submit_chains_the_merge_after_the_array(tmp_path, course):
    vals = values(course, tmp_path / "out")
    for name in ("slurm-array.sbatch", "slurm-merge.sbatch", "slurm-submit.sh"):
        write(tmp_path, name, render(name, vals))
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "sbatch.log"
    (fake / "sbatch").write_text(f'#!/bin/bash\necho "$*" >> {log}\necho "4711;cluster"\n')
    (fake / "sbatch").chmod(0o755)
    cp = subprocess.run(["bash", str(tmp_path / "slurm-submit.sh")], capture_output=True, text=True,
                        env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert log.read_text().splitlines() == ["--parsable slurm-array.sbatch",
                                            "--dependency=afterany:4711 slurm-merge.sbatch"]
    assert (tmp_path / "out" / "logs").is_dir()


@pytest.mark.parametrize("gpu", [False, True])
def test_dask_jobqueue_recipe_renders_its_slurm_job(tmp_path, course, gpu):
    path = write(tmp_path, "slurm_dask.py", render("slurm_dask.py", values(course, tmp_path / "out"), gpu=gpu))
    py_compile.compile(str(path), doraise=True)
    spec = importlib.util.spec_from_file_location("slurm_dask_recipe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cmd = mod.grade_command("tcp://10.0.0.1:8786", gpu=gpu)
    args = cli.build_parser().parse_args(cmd[1:])
    assert args.scheduler == "tcp://10.0.0.1:8786" and args.device == ("cuda" if gpu else "cpu")
    assert args.seed == SEED and args.submissions == course["subs"]
    pytest.importorskip("dask_jobqueue")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (it makes the recipe's TLS certificate)")
    cluster = mod.make_cluster(gpu=gpu)
    try:
        script = cluster.job_script()
        address = cluster.scheduler_address
    finally:
        cluster.close()
    assert address.startswith("tls://")  # TLS by default, with certificates only the course's jobs read
    tls = tmp_path / "out" / "tls"
    assert f"--tls-ca-file {tls}/cert.pem" in script and f"--tls-key {tls}/key.pem" in script
    assert (tls / "key.pem").stat().st_mode & 0o077 == 0
    assert "--dashboard-address 127.0.0.1:0" in script
    env = mod.client_env(mod.make_security())
    assert env["DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT"] == f"{tls}/cert.pem"
    lines = sbatch_lines(script)
    assert "-p gpu" in lines and ("--gres=gpu:1" in lines) == gpu and "-t 02:00:00" in lines
    assert f"source {course['venv'].parent}/bin/activate" in script
    assert "--nthreads 2" in script and "--nanny" in script  # one nanny-spawned worker of 2 threads per job


# ----------------------------------------------------------------- Kubernetes
def container(doc: dict) -> dict:
    (c,) = doc["spec"]["template"]["spec"]["containers"]
    return c


def shell_of(c: dict, mapping: dict[str, str]) -> str:
    """A container's ``bash -c`` script with the pod's paths mapped to local ones."""
    assert c["command"] == ["bash", "-c"] and len(c["args"]) == 1
    script = c["args"][0]
    for pod_path, local in mapping.items():
        script = script.replace(pod_path, local)
    return script


def tapetrace_args(script: str) -> argparse.Namespace:
    words = shlex.split(script)
    start = words.index("tapetrace")
    return cli.build_parser().parse_args([w for w in words[start + 1:] if w != "&&"])


@pytest.mark.parametrize("gpu", [False, True])
def test_k8s_manifests_parse_with_the_expected_keys(tmp_path, course, gpu):
    vals = values(course, tmp_path, DEVICE="cuda" if gpu else "cpu")
    (job,) = yaml.safe_load_all(render("k8s-indexed-job.yaml", vals, gpu=gpu))
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["completions"] == SHARDS
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never" and container(job)["image"] == vals["IMAGE"]
    limits = container(job)["resources"]["limits"]
    assert (limits.get("nvidia.com/gpu") == 1) == gpu
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
    assert claims == {"submissions": "course-submissions", "out": "course-grades"}
    args = tapetrace_args(shell_of(container(job), {}))
    assert args.shard == "" and args.shards == SHARDS and args.device == ("cuda" if gpu else "cpu")
    assert args.json == "/out/parts/part-$JOB_COMPLETION_INDEX.json" and args.resume

    (merge,) = yaml.safe_load_all(render("k8s-merge-job.yaml", vals, gpu=False))
    assert merge["kind"] == "Job" and shell_of(container(merge), {}).startswith("tapetrace merge ")

    docs = list(yaml.safe_load_all(render("k8s-dask.yaml", vals, gpu=gpu)))
    assert [d["kind"] for d in docs] == ["Service", "Deployment", "Deployment", "Job"]
    service, scheduler, workers, client = docs
    assert service["spec"]["ports"][0]["port"] == 8786
    assert service["spec"]["selector"] == scheduler["spec"]["template"]["metadata"]["labels"]
    assert workers["spec"]["replicas"] == 2
    wc = container(workers)
    assert wc["command"][:5] == ["tini", "--", "dask", "worker", f"tls://{service['metadata']['name']}:8786"]
    assert "--nthreads" in wc["command"]
    assert [m["mountPath"] for m in wc["volumeMounts"]] == ["/tls"]  # sources travel in the tasks
    assert (wc["resources"]["limits"].get("nvidia.com/gpu") == 1) == gpu
    for dask in (container(scheduler), wc):  # an init reaps zombies; TLS with certificates; dashboards local
        cmd = dask["command"]
        assert cmd[:2] == ["tini", "--"] and cmd[cmd.index("--dashboard-address") + 1].startswith("127.0.0.1:")
        assert {cmd[cmd.index(f) + 1] for f in ("--tls-ca-file", "--tls-cert", "--tls-key")} == {
            "/tls/cert.pem", "/tls/key.pem"}
    assert container(scheduler)["command"][container(scheduler)["command"].index("--protocol") + 1] == "tls"
    cargs = tapetrace_args(shell_of(container(client), {}))
    assert cargs.scheduler == "tls://tapetrace-dask:8786" and cargs.device == ("cuda" if gpu else "cpu")
    assert cargs.json == "/out/grades.json" and cargs.seed == SEED and cargs.resume
    env = {e["name"]: e["value"] for e in container(client)["env"]}
    assert env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] == "True"
    assert env["DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"] == "/tls/key.pem"
    for doc in (scheduler, workers, client):
        vols = {v["name"]: v for v in doc["spec"]["template"]["spec"]["volumes"]}
        assert vols["tls"]["secret"]["secretName"] == "tapetrace-dask-tls"


def test_k8s_indexed_job_then_merge_job_equal_one_run(tmp_path, course):
    out = tmp_path / "out"
    out.mkdir()
    vals = values(course, out)
    mapping = {"/submissions": str(course["tmp"] / "subs"), "/out": str(out)}
    (job,) = yaml.safe_load_all(render("k8s-indexed-job.yaml", vals))
    (merge,) = yaml.safe_load_all(render("k8s-merge-job.yaml", vals))
    for index in range(job["spec"]["completions"]):
        env = {**course["env"], "JOB_COMPLETION_INDEX": str(index)}
        env.pop("SLURM_ARRAY_TASK_ID", None)
        cp = subprocess.run(["bash", "-c", shell_of(container(job), mapping)], capture_output=True, text=True,
                            env=env, timeout=300)
        assert cp.returncode == 0, cp.stderr
    assert sorted(p.name for p in (out / "parts").iterdir()) == [f"part-{i}.json" for i in range(SHARDS)]
    cp = subprocess.run(["bash", "-c", shell_of(container(merge), mapping)], capture_output=True, text=True,
                        env=course["env"], timeout=120)
    assert cp.returncode == 0, cp.stderr
    same_as_one_run(course, out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in reversed(procs):
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)


def make_certificate(folder: Path) -> None:
    """What k8s-dask.yaml's header says to run: one self-signed certificate and its key."""
    folder.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=tapetrace-dask", "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")],
                   check=True, capture_output=True)


def _listening(pids: set[int]) -> list[tuple[str, int]]:
    """(address, port) of the TCP sockets the processes ``pids`` listen on (``ss``)."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        owners = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if owners & pids:
            local = line.split()[3]
            host, port = local.rsplit(":", 1)
            found.append((host.strip("[]"), int(port)))
    return found


def _answers_http(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            s.settimeout(10)
            return s.recv(16).startswith(b"HTTP/")
    except OSError:
        return False


def test_k8s_dask_commands_run_here(tmp_path, course):
    """The manifest's scheduler, worker and client commands, as local processes (the Service is 127.0.0.1).

    TLS as the manifest sets it up (a certificate made as its header says); a client without the
    certificate cannot connect; no dashboard answers on an interface other than loopback.
    """
    distributed = pytest.importorskip("distributed")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (it makes the recipe's TLS certificate)")
    out = tmp_path / "out"
    out.mkdir()
    tls = tmp_path / "tls"
    make_certificate(tls)
    port = _free_port()
    text = render("k8s-dask.yaml", values(course, out)).replace("tapetrace-dask:8786", f"127.0.0.1:{port}")
    text = text.replace("/tls/", f"{tls}/")
    _service, scheduler, workers, client = yaml.safe_load_all(text)
    init = [] if shutil.which("tini") else ["tini", "--"]  # the image has tini; here it may be absent
    sched_cmd = [a if a != "8786" else str(port) for a in container(scheduler)["command"]][len(init):]
    env = {**course["env"], "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "600s",
           **{e["name"]: e["value"] for e in container(client)["env"]}}
    procs: list[subprocess.Popen] = []
    try:
        for cmd in (sched_cmd, container(workers)["command"][len(init):]):
            procs.append(subprocess.Popen(cmd, env=env, cwd=tmp_path, start_new_session=True,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(1.0)
        script = shell_of(container(client), {"/submissions": str(course["tmp"] / "subs"), "/out": str(out)})
        cp = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=1200)
        assert cp.returncode == 0, cp.stderr
        assert all(p.poll() is None for p in procs), "the scheduler or the worker died"
        for address in (f"tls://127.0.0.1:{port}", f"tcp://127.0.0.1:{port}"):  # no certificate: no entry
            with pytest.raises(Exception):  # noqa: B017 - TLS refuses it whichever way it fails
                distributed.Client(address, timeout="5s", security=distributed.security.Security())
        if shutil.which("ss"):
            pids = {p.pid for p in procs} | {c for p in procs for c in _descendants(p.pid)}
            wide = [(h, p) for h, p in _listening(pids) if h not in ("127.0.0.1", "::1")]
            assert wide and not [p for _h, p in wide if _answers_http(p)], wide
    finally:
        _stop(procs)
    same_as_one_run(course, out)
    assert len(list((out / "feedback").iterdir())) == len(course["subs"])


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for k in map(int, kids):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def test_dockerfile_copies_what_exists_and_installs_the_extra():
    text = (DOCS / "Dockerfile").read_text()
    copies = [ln.split()[1:-1] for ln in text.splitlines() if ln.startswith("COPY ")]
    assert copies and all((ROOT / src).exists() for srcs in copies for src in srcs)
    assert re.search(r"pip install .*-c constraints\.txt -e '\.\[cluster\]'", text)
    assert any(src == ["solutions"] for src in copies)  # the reference runs in every worker
    assert re.search(r"apt-get install .*\btini\b", text) and 'ENTRYPOINT ["/usr/bin/tini", "--"]' in text
