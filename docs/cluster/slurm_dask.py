"""Grades a course on Slurm through Dask: dask-jobqueue starts the Dask workers as Slurm jobs.

Unlike the job array (slurm-array.sbatch), one ``tapetrace grade`` drives every worker: tasks
are (submission, exercise) pairs handed out as workers free up, a worker that dies (preemption,
node failure) loses nothing, and the progress bar, ``--feedback`` and the table come from one place.
Each worker keeps its own warm grading process (zygote + reference cache for the run's seed).

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


def make_cluster(gpu: bool = GPU) -> Any:
    """One Dask worker per Slurm job: 2 cores (two tasks at once), 8 GB; one GPU when ``gpu``."""
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
    )


def grade_command(scheduler: str, gpu: bool = GPU) -> list[str]:
    """The one ``tapetrace grade`` that drives the workers."""
    subs = sorted(glob.glob(os.path.join(SUBMISSIONS, "*")))
    return ["tapetrace", "grade", *subs, "--scheduler", scheduler, "--device", "cuda" if gpu else "cpu",
            "--seed", SEED, "--json", os.path.join(OUT, "grades.json"), "--csv", os.path.join(OUT, "grades.csv"),
            "--feedback", os.path.join(OUT, "feedback")]


def main() -> int:
    os.makedirs(os.path.join(OUT, "logs"), exist_ok=True)
    cluster = make_cluster()
    try:
        cluster.scale(jobs=WORKERS)  # queued in Slurm; grading starts as soon as the first one runs
        return subprocess.run(grade_command(cluster.scheduler_address)).returncode
    finally:
        cluster.close()


if __name__ == "__main__":
    sys.exit(main())
