"""Real containers (opt-in): the zip `tapetrace build` makes, graded by otter-grader 7's own `otter grade`
(its Dockerfile, buildx, the zip's setup.sh, one container per notebook) and run as Gradescope's harness
runs it (a fresh container of that image, the files in /autograder/submission/, real metadata,
/autograder/run_autograder, results.json read back).

Opt-in, because the first image build takes ~10 minutes and ~3 GB: set TAPETRACE_CONTAINERS=1 (`make test-containers`) and TAPETRACE_OTTER_DOCKER=1. It
also needs Docker with the buildx plugin (DOCKER_CONFIG) and a base image, by default the offline
Debian image of shared/tools/otter-real/ (`build_base.sh`; `TAPETRACE_OTTER_IMAGE` names another, e.g.
ubuntu:22.04 where registries are reachable). Each missing piece skips with the reason. Later runs
reuse otter's cached image layers (seconds) while setup.sh and the requirements are unchanged.
The cheap checks of the same paths without Docker are in tests/test_otter.py (the zip's run_otter.py
on otter's real runner) and tests/adversarial/test_otter_attacks.py.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import CONTAINERS_OPT_IN

from autograder.builders import notebook as _notebook
from autograder.builders import otter_zip as _otter_zip
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite

pytest.importorskip("otter")
pytestmark = [pytest.mark.slow, pytest.mark.container]  # and TAPETRACE_OTTER_DOCKER=1 (_why_not)

BASE_IMAGE = os.environ.get("TAPETRACE_OTTER_IMAGE", "otter-real/base:bookworm")
NAME = "tapetrace-test"  # the otter-grade image's tag
TEMPLATE = ROOT / "student_template" / _notebook.NOTEBOOK
MARK = "/tmp/tapetrace_forgery_ran"
FORGED = "ex06_per_example_grads"
# what a forged .OTTER_LOG runs when otter's runner unpickles it: full marks, and a marker in the container
FORGE = f"""\
import otter.test_files.abstract_test as _a
import otter.test_files.exception_test as _e
_e.test_case.call_func = lambda self, env: None
_a.TestFile.score = property(lambda self: self.possible)
_a.TestFile.passed_all = property(lambda self: True)
open("{MARK}", "w").close()
"""


class _Unpickled:
    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self) -> tuple:
        return (exec, (self.code,))


def _docker(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=check)


def _why_not() -> str | None:
    if os.environ.get("TAPETRACE_CONTAINERS") != "1":
        return CONTAINERS_OPT_IN + " (and TAPETRACE_OTTER_DOCKER=1)"
    if os.environ.get("TAPETRACE_OTTER_DOCKER") != "1":
        return "opt-in (first image build ~10 min, ~3 GB): set TAPETRACE_OTTER_DOCKER=1"
    if shutil.which("docker") is None:
        return "no docker client"
    try:
        if _docker("info", timeout=60, check=False).returncode != 0:
            return "the Docker daemon does not answer (`docker info` failed)"
        if _docker("buildx", "version", timeout=60, check=False).returncode != 0:
            return "otter grade needs the buildx plugin (shared/tools/otter-real/setup_buildx.sh; DOCKER_CONFIG)"
        if _docker("image", "inspect", BASE_IMAGE, timeout=60, check=False).returncode != 0:
            return f"no base image {BASE_IMAGE} (shared/tools/otter-real/build_base.sh builds it offline)"
    except subprocess.TimeoutExpired:
        return "Docker does not answer within 60 s"
    return None


WHY_NOT = _why_not()
if WHY_NOT:
    pytest.skip(WHY_NOT, allow_module_level=True)


def _template() -> dict:
    return json.loads(TEMPLATE.read_text(encoding="utf-8"))


def _exercises() -> list[str]:
    return _template()["metadata"]["tapetrace"]["exercises"]


def _totals() -> dict[str, float]:
    return {ex: load_suite(ex).max_score for ex in _exercises()}


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory) -> Path:
    """The zip as `tapetrace build` writes it (docs/instructors/index.md) (default settings)."""
    return _otter_zip.build_zip(tmp_path_factory.mktemp("ag") / _otter_zip.ZIP_NAME, _exercises())


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("subs")
    tpl = _template()
    sol = _notebook.fill_with(tpl, {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in _exercises()})
    (where / "solutions.ipynb").write_text(_notebook.dumps(sol), encoding="utf-8")
    (where / "stub.ipynb").write_text(_notebook.dumps(tpl), encoding="utf-8")
    # every answer, and ex06's also serving the grader's commands from inside a call (Docker's default privileges:
    # confirmed as the worker's own user, autograder/workers/confirm.py)
    attack = (ROOT / "tests" / "adversarial" / "attacks" / "forge_ex06_serves_the_rest_from_inside_a_call.py").read_text()
    forger = _notebook.fill_with(tpl, {ex: (SOLUTIONS / f"{ex}.py").read_text() + ("\n\n" + attack if ex == FORGED
                                                                                   else "") for ex in _exercises()})
    (where / "forger.ipynb").write_text(_notebook.dumps(forger), encoding="utf-8")
    with zipfile.ZipFile(where / "forged.zip", "w") as zf:
        zf.writestr("forged.ipynb", _notebook.dumps(tpl))
        zf.writestr(".OTTER_LOG", _pickle_forge())
    return where


def _pickle_forge() -> bytes:
    import pickle

    return pickle.dumps(_Unpickled(FORGE))


def otter_grade(zip_path: Path, out: Path, *paths: Path, options: tuple[str, ...] = ()) -> dict[str, dict[str, str]]:
    """The `otter grade` of docs/instructors/otter.md (one container at a time); final_grades.csv by file name."""
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "otter", "grade", "-n", NAME, "-a", str(zip_path), "-o", str(out),
                           "--image", BASE_IMAGE, "--containers", "1", *options, *map(str, paths)],
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out / "final_grades.csv", newline="") as fh:
        rows = {row["file"]: row for row in csv.DictReader(fh)}
    assert "docker container failed" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    return rows


def _points(row: dict[str, str]) -> dict[str, float]:
    return {ex: float(row[ex]) for ex in _exercises()}


def test_otter_grade_grades_solutions_full_and_the_stub_zero(zip_path, notebooks, tmp_path):
    rows = otter_grade(zip_path, tmp_path / "out", notebooks / "solutions.ipynb", notebooks / "stub.ipynb",
                       notebooks / "forger.ipynb")
    assert _points(rows["solutions.ipynb"]) == _totals()
    assert _points(rows["stub.ipynb"]) == {ex: 0.0 for ex in _exercises()}
    assert _points(rows["forger.ipynb"]) == {**_totals(), FORGED: 0.0}  # 10/10 for ex06 where only the fence stood


def test_otter_grade_zip_submission_with_a_forged_otter_log_scores_zero(zip_path, notebooks, tmp_path):
    rows = otter_grade(zip_path, tmp_path / "out", notebooks / "forged.zip", options=("--ext", "zip", "--no-kill"))
    assert _points(rows["forged.zip"]) == {ex: 0.0 for ex in _exercises()}
    cid = _docker("ps", "-a", "-q", "--latest", "--filter", f"ancestor=otter-grade:{NAME}").stdout.strip()
    try:
        assert _docker("cp", f"{cid}:{MARK}", str(tmp_path / "mark"), check=False).returncode != 0, \
            "the forged .OTTER_LOG ran in otter's process"
    finally:
        _docker("rm", "-f", cid, check=False)


def test_otter_grade_pdfs_is_refused_and_grades_kept(zip_path, notebooks, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    rows = otter_grade(zip_path, tmp_path / "out", notebooks / "stub.ipynb", options=("--pdfs",))
    assert _points(rows["stub.ipynb"]) == {ex: 0.0 for ex in _exercises()}
    note = pypdf.PdfReader(tmp_path / "out" / "submission_pdfs" / "stub.pdf").pages[0].extract_text()
    assert "makes no PDFs" in " ".join(note.split())


def test_gradescope_style_multi_file_upload_scores_only_the_notebook(zip_path, notebooks, tmp_path):
    """The otter-grade image run as Gradescope's harness runs its own (same /autograder layout, setup.sh
    and run_autograder): real metadata, an upload of the notebook plus a forged .OTTER_LOG and json.py."""
    otter_grade(zip_path, tmp_path / "build", notebooks / "stub.ipynb")  # (re)builds the image for this zip
    cid = _docker("create", "-w", "/autograder", f"otter-grade:{NAME}", "/autograder/run_autograder").stdout.strip()
    try:
        meta = tmp_path / "submission_metadata.json"
        meta.write_text(json.dumps({"id": 1, "users": [{"email": "s@example.edu", "id": 1, "name": "s"}],
                                    "assignment": {"id": 1, "title": "tapetrace"}, "submission_method": "upload"}))
        (tmp_path / "up").mkdir()
        shutil.copy(notebooks / "stub.ipynb", tmp_path / "up" / "stub.ipynb")
        (tmp_path / "up" / ".OTTER_LOG").write_bytes(_pickle_forge())
        (tmp_path / "up" / "json.py").write_text(FORGE)
        _docker("cp", str(meta), f"{cid}:/autograder/submission_metadata.json")
        for path in (tmp_path / "up").iterdir():
            _docker("cp", str(path), f"{cid}:/autograder/submission/{path.name}")
        started = _docker("start", "-a", cid, timeout=3600, check=False)
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        _docker("cp", f"{cid}:/autograder/results/results.json", str(tmp_path / "results.json"))
        assert _docker("cp", f"{cid}:{MARK}", str(tmp_path / "mark"), check=False).returncode != 0, \
            "the forged .OTTER_LOG ran in otter's process"
    finally:
        _docker("rm", "-f", cid, check=False)
    results = json.loads((tmp_path / "results.json").read_text())
    assert {t["name"]: t["score"] for t in results["tests"] if "score" in t} == {ex: 0.0 for ex in _exercises()}
