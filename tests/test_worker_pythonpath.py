"""Libraries the grader finds through PYTHONPATH, which grading workers do not get (issue 54, item 4).

A grader whose torch/JAX come from ``PYTHONPATH`` (a TPU host's, an HPC module system's) graded every exercise
``grader_error`` ("cannot import jax") without saying why: workers start with the engine's folder as their
``PYTHONPATH``. The run's first line now says so (autograder/workers/environment.py), and
``TAPETRACE_WORKER_PYTHONPATH`` names library folders workers may import from.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from autograder.core.paths import ROOT
from autograder.workers import environment

SAY = ("from autograder.workers import environment as e\n"
       "print(e.unseen_note(e.unseen_libraries(('numpy', 'optax', 'tapetrace_fake_lib'))))\n")


def _libraries(tmp_path: Path) -> Path:
    """A library folder: a fake optax (shadowing the venv's) and a library only there."""
    folder = tmp_path / "modules"
    for name in ("optax", "tapetrace_fake_lib"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text("")
    return folder


def _say(tmp_path: Path, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", environment.WORKER_PYTHONPATH))}
    proc = subprocess.run([sys.executable, "-c", SAY], capture_output=True, text=True, cwd=tmp_path,
                          env={**base, **env}, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_libraries_on_the_graders_pythonpath_are_named_with_what_to_do(tmp_path: Path) -> None:
    folder = _libraries(tmp_path)
    said = _say(tmp_path, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))
    assert said.startswith("grading workers will not import the grader's optax, tapetrace_fake_lib"), said
    assert str(folder.resolve()) in said and "through PYTHONPATH" in said, said
    assert "would import optax from " in said and "site-packages" in said  # the venv's optax instead of the fake
    assert "tapetrace_fake_lib from nowhere" in said
    assert "grader_error" in said and "virtual environment" in said and "TAPETRACE_WORKER_PYTHONPATH" in said
    assert "numpy" not in said.split(":")[0]  # the venv's numpy: workers import the same one


def test_named_in_tapetrace_worker_pythonpath_the_workers_import_them(tmp_path: Path) -> None:
    folder = _libraries(tmp_path)
    said = _say(tmp_path, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]),
                TAPETRACE_WORKER_PYTHONPATH=str(folder))
    assert said == ""


def test_a_plain_virtual_environment_says_nothing(monkeypatch) -> None:
    monkeypatch.delenv(environment.WORKER_PYTHONPATH, raising=False)
    assert environment.unseen_libraries() == []
    assert environment.start_notes() == []


def test_worker_pythonpath_takes_absolute_library_folders_outside_the_checkout(tmp_path: Path, monkeypatch) -> None:
    folder = _libraries(tmp_path)
    given = os.pathsep.join([str(folder), "relative/lib", str(tmp_path / "absent"), str(ROOT),
                             str(ROOT / "solutions"), str(ROOT.parent), str(folder)])
    kept, refused = environment.worker_pythonpath({environment.WORKER_PYTHONPATH: given})
    assert kept == [os.path.realpath(folder)]
    assert len(refused) == 5 and "not an absolute path" in refused[0] and "not a folder" in refused[1]
    assert all("engine's checkout" in r for r in refused[2:])
    monkeypatch.setenv(environment.WORKER_PYTHONPATH, given)
    assert environment.worker_env()["PYTHONPATH"] == os.pathsep.join([str(ROOT), os.path.realpath(folder)])
    notes = environment.start_notes()  # the workers' fake optax is not the grader's, and 5 folders left out
    assert "the grader imports them from " in notes[0] and f"would import optax from {folder.resolve()}" in notes[0]
    assert [line.split(" left out ")[0] for line in notes[1:]] == [f"{environment.WORKER_PYTHONPATH}:"] * 5


def test_the_pytest_entry_says_it_in_its_header(tmp_path: Path) -> None:
    """The run's first lines (here the pytest entry's header, nothing graded) carry the warning."""
    from autograder.core.paths import SOLUTIONS

    folder = _libraries(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON", environment.WORKER_PYTHONPATH))}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "autograder.pytest_plugin",
                           f"--tapetrace-submission={SOLUTIONS}", "--collect-only", "-k", "ex01",
                           "-o", f"cache_dir={tmp_path / 'cache'}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    header = proc.stdout.split("collected", 1)[0]
    assert "tapetrace: warning: grading workers will not import the grader's optax" in header, header
