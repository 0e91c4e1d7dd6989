"""A library missing from the grader's environment is the grader's trouble, never the student's crash.

The end-to-end test hides flax's folder under a tmpfs in a private mount namespace (as a broken image
or a partial install would) and grades the reference solutions of ex01 (torch only) and ex07 (flax):
ex01 is graded in full, ex07 is ``grader_error`` with a reason naming flax, and the run exits 3. Before,
the worker's death at load was retried once and then reported to the student as a crash of their code.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.core.paths import ROOT
from autograder.engine import libraries as _libraries

TAPETRACE = Path(sys.executable).with_name("tapetrace")


def test_reference_imports_name_top_level_packages():
    assert "flax" in _libraries.reference_imports("ex07_flax_cnn")
    assert "torch" in _libraries.reference_imports("ex01_torch_mlp")
    assert "flax" not in _libraries.reference_imports("ex01_torch_mlp")


@pytest.mark.parametrize(("status", "expected"), [
    ({"status": "crashed", "code": "LOAD_CRASHED", "fields": {"how": "exited with status 0"}}, True),
    ({"status": "error", "code": "LOAD_EXCEPTION", "fields": {"error": "ModuleNotFoundError: No module named 'flax'"}},
     True),
    ({"status": "error", "code": "LOAD_EXCEPTION", "fields": {"error": "ImportError: cannot import name 'linen'"}}, True),
    ({"status": "error", "code": "LOAD_EXCEPTION", "fields": {"error": "ValueError: bad"}}, False),
    ({"status": "error", "code": "LOAD_SYNTAX", "fields": {"error": "SyntaxError: x", "line": 3}}, False),
    ({"status": "timeout", "code": "LOAD_TIMEOUT", "fields": {"timeout": 30}}, False),
])
def test_which_load_failures_may_be_the_environment(status, expected):
    assert _libraries.may_be_missing_library(status) is expected


def test_trouble_names_only_what_the_reference_imports(monkeypatch):
    check = _libraries.LibraryCheck()
    calls = []

    def problems(**_kwargs):
        calls.append(1)
        return ["flax: 3 of its 134 files are missing (e.g. flax/__init__.py)", "jaxlib: broken"]

    monkeypatch.setattr("autograder.workers.fingerprint.import_problems", problems)
    assert check.trouble("ex01_torch_mlp") is None
    why = check.trouble("ex07_flax_cnn")
    assert why is not None and "cannot import flax, jax" in why and "files are missing" in why
    assert "jax" in check.trouble("ex04_jax_mlp")
    assert len(calls) == 1  # one check per run, however many loads fail


def test_a_healthy_environment_leaves_a_students_import_error_to_the_student(tmp_path):
    from autograder.engine import GradingRun

    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_torch_mlp.py").write_text("import no_such_package_for_tapetrace  # the student's typo\n")
    run = GradingRun(device="cpu", seed=3, exercises=["ex01_torch_mlp"])
    try:
        res = run.grade([str(sub)], only=["ex01_torch_mlp"])[0]["exercises"]["ex01_torch_mlp"]
    finally:
        run.close()
    assert res["status"] == "error", res
    assert "no_such_package_for_tapetrace" in res["message"]


def _can_hide_folders() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if probe.returncode:
        return f"no private mount namespace here ({probe.stderr.decode(errors='replace').strip()[:120]})"
    return None


@pytest.mark.skipif(_can_hide_folders() is not None, reason=str(_can_hide_folders()))
def test_a_hidden_library_is_the_graders_error(tmp_path):
    flax = Path(importlib.util.find_spec("flax").origin).parent
    out = tmp_path / "out.json"
    cmd = (f'mount -t tmpfs tmpfs "{flax}" && exec "{TAPETRACE}" grade "{ROOT / "solutions"}" '
           f'--only ex01_torch_mlp,ex07_flax_cnn --device cpu --seed 5 --jobs 2 --quiet --json "{out}"')
    proc = subprocess.run(["unshare", "-m", "sh", "-c", cmd], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = json.loads(out.read_text())
    row = (rows[0] if isinstance(rows, list) else rows)["exercises"]
    assert row["ex01_torch_mlp"]["status"] == "graded" and row["ex01_torch_mlp"]["score"] == 10
    ex07 = row["ex07_flax_cnn"]
    assert ex07["status"] == "grader_error", ex07["message"]
    assert "cannot import flax" in ex07["grader_reason"]
    for test in ex07["tests"]:  # the student reads no crash of their code
        assert "your code" not in test["message"] or "not caused by your code" in test["message"]
