"""Grades a course on Slurm through Dask: dask-jobqueue starts the Dask workers as Slurm jobs.

Unlike the job array (slurm-array.sbatch), one ``tapetrace grade`` drives every worker: tasks
are (submission, exercise) pairs handed out as workers free up, a worker that dies (preemption,
node failure) loses nothing, and the progress bar, ``--feedback`` and the table come from one place.
Each worker keeps its own warm grading process (zygote + reference cache for the run's seed), and
grades only once it proved it runs the client's install (same tapetrace, suites, solutions, libraries).

Workers hold the reference solutions and the hidden suites: every Dask connection is TLS with client
certificates (a self-signed certificate made here once with ``openssl``, kept 0600 in ``OUT/tls``,
which every node reads from the shared filesystem), so nobody else on the cluster can join or submit
work, and the dashboard listens on localhost only.

Run it where ``sbatch`` works (a login node, or a small job of its own) with tapetrace[cluster]
and dask-jobqueue installed: ``python slurm_dask.py``. Fill the {{...}} placeholders
(README.md here). GPU nodes: ``GPU = True`` (one GPU per worker, ``--device cuda``).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from typing import Any

SUBMISSIONS = "{{SUBMISSIONS}}"  # a folder with one entry per student
OUT = "{{OUT}}"
SEED = "{{SEED}}"
PARTITION = "{{PARTITION}}"
VENV = "{{VENV}}"  # the same installation on the login node and the compute nodes
WORKERS = int("{{WORKERS}}")  # Slurm jobs, one Dask worker each
GPU = False


def make_certificate(folder: str) -> tuple[str, str]:
    """A self-signed certificate and its key in ``folder`` (made once, 0600): every role's, and the authority."""
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    if not (os.path.exists(cert) and os.path.exists(key)):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        old = os.umask(0o077)
        try:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:3072", "-nodes", "-days", "60", "-subj",
                            "/CN=tapetrace-dask", "-keyout", key, "-out", cert], check=True, capture_output=True)
        finally:
            os.umask(old)
    return cert, key


def make_security(folder: str = os.path.join(OUT, "tls")) -> Any:
    """TLS for the scheduler, the workers and the client, with client certificates required (a ``Security``)."""
    from distributed.security import Security

    cert, key = make_certificate(folder)
    return Security(tls_ca_file=cert, tls_scheduler_cert=cert, tls_scheduler_key=key, tls_worker_cert=cert,
                    tls_worker_key=key, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def client_env(security: Any) -> dict[str, str]:
    """The environment under which ``tapetrace grade`` connects with ``security`` (Dask reads its config)."""
    tls = security.get_tls_config_for_role("client")
    return {**os.environ, "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": tls["ca_file"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": tls["cert"],
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": tls["key"]}


def make_cluster(gpu: bool = GPU, security: Any = None) -> Any:
    """One Dask worker per Slurm job: 2 cores (two tasks at once), 8 GB; one GPU when ``gpu``; TLS."""
    from dask_jobqueue import SLURMCluster

    return SLURMCluster(
        queue=PARTITION,
        cores=2,  # worker threads: (submission, exercise) tasks graded at once on this worker
        processes=1,  # one worker, so one zygote and one reference cache per job
        memory="8GB",
        walltime="02:00:00",
        job_extra_directives=["--gres=gpu:1"] if gpu else [],
        job_script_prologue=[f"source {VENV}/bin/activate"],
        log_directory=os.path.join(OUT, "logs"),
        security=security or make_security(),  # tls:// everywhere; workers get --tls-* options
        scheduler_options={"dashboard_address": "127.0.0.1:0"},
        worker_extra_args=["--dashboard-address", "127.0.0.1:0"],
    )


def grade_command(scheduler: str, gpu: bool = GPU) -> list[str]:
    """The one ``tapetrace grade`` that drives the workers."""
    subs = sorted(glob.glob(os.path.join(SUBMISSIONS, "*")))
    return ["tapetrace", "grade", *subs, "--scheduler", scheduler, "--device", "cuda" if gpu else "cpu",
            "--seed", SEED, "--json", os.path.join(OUT, "grades.json"), "--csv", os.path.join(OUT, "grades.csv"),
            "--feedback", os.path.join(OUT, "feedback")]


def main() -> int:
    os.makedirs(os.path.join(OUT, "logs"), exist_ok=True)
    security = make_security()
    cluster = make_cluster(security=security)
    try:
        cluster.scale(jobs=WORKERS)  # queued in Slurm; grading starts as soon as the first one is admitted
        # exit status 3: some exercise is ungraded (a cluster fault): run this again, it resumes
        return subprocess.run([*grade_command(cluster.scheduler_address), "--resume"],
                              env=client_env(security)).returncode
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
