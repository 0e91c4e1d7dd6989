"""Forging a grade on the otter path: what a student can put in the notebook must never decide otter's score.

Each case is a submission a grade-hungry student could hand in — a cell above (or instead of) the
set-up cell that patches otter's test machinery, metadata stripped or a kernel renamed, a notebook not
made from the template, a ``.py`` script, a zip that ships its own ``otter`` package, a cell that
plants a results file — graded with the real ``otter run`` CLI and the zip ``tapetrace build`` makes.
Its otter score must equal what ``tapetrace grade`` gives the same file with the same seed (0 for the
forgeries of an untouched stub; the honest exercise's points where one was answered), and none of
the forging code may run in otter's kernel (it would leave a marker file).
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import SEED

from autograder.builders import notebook as _notebook
from autograder.builders import otter as _otter
from autograder.builders import otter_zip as _otter_zip
from autograder.core.paths import ROOT, SOLUTIONS

from .attacklib import ATTACKS_DIR, attack_source

pytest.importorskip("otter")
pytestmark = pytest.mark.slow

GRADED = ["ex01_torch_mlp", "ex09_autograd_tape"]
TEMPLATE = ROOT / "student_template" / _notebook.NOTEBOOK
MARK = "tapetrace_forgery_ran"

# Patches otter in the kernel so that every case passes and every score is full (what the issue's
# forgery did), and leaves a marker in the submission's folder if it ever runs there.
FORGE = f"""\
import os, pathlib
pathlib.Path(os.environ.get("TAPETRACE_FORGERY_MARK", "/nonexistent"), "{MARK}").touch()
import otter.test_files.exception_test as _e
import otter.test_files.abstract_test as _a
_e.test_case.call_func = lambda self, env: None
_a.TestFile.score = property(lambda self: self.possible)
_a.TestFile.passed_all = property(lambda self: True)
"""
PLANT = f"""\
import atexit, glob, os, pickle, pathlib
pathlib.Path(os.environ.get("TAPETRACE_FORGERY_MARK", "/nonexistent"), "{MARK}").touch()
def _plant():
    for p in glob.glob("/tmp/*.pkl") + glob.glob(os.path.join(os.environ.get("TMPDIR", "/tmp"), "*.pkl")):
        try:
            pickle.dump({{"forged": True}}, open(p, "wb"))
        except Exception:
            pass
atexit.register(_plant)
"""


class _Unpickled:
    """What a pickle of it runs when loaded: ``exec(code)`` (dill loads plain pickles)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self) -> tuple:
        return (exec, (self.code,))


# otter's runner loads a submission's `.OTTER_LOG` with dill in its own process (as root on Gradescope and in
# otter grade's containers), after `before_grading` and before `before_execution`: this one forges full marks
OTTER_LOG = pickle.dumps(_Unpickled(FORGE))


def _template() -> dict:
    return json.loads(TEMPLATE.read_text(encoding="utf-8"))


def _code(src: str) -> dict:
    return {"cell_type": "code", "id": f"c{abs(hash(src)) % 10**8}", "metadata": {}, "execution_count": None,
            "outputs": [], "source": src.splitlines(keepends=True)}


def _no_setup(nb: dict) -> dict:
    nb = copy.deepcopy(nb)
    nb["cells"] = [c for c in nb["cells"] if _notebook.role_of(c)[1] != "setup"]
    return nb


def _stripped(nb: dict) -> dict:
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        cell["metadata"] = {}
    nb["metadata"] = {"kernelspec": {"name": "evil-kernel", "display_name": "x", "language": "python"}}
    return nb


def _with_answer(nb: dict, ex: str) -> dict:
    return _notebook.fill_with(nb, {ex: (SOLUTIONS / f"{ex}.py").read_text()})


def _write_nb(nb: dict, path: Path) -> Path:
    path.write_text(_notebook.dumps(nb), encoding="utf-8")
    return path


def _submission(kind: str, folder: Path) -> Path:
    tpl = _template()
    if kind == "cell_above_setup":
        nb = copy.deepcopy(tpl)
        nb["cells"].insert(0, _code(FORGE))
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "setup_deleted":
        nb = _no_setup(tpl)
        nb["cells"].insert(1, _code(FORGE))
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "metadata_stripped_other_kernel":
        nb = _stripped(tpl)
        nb["cells"].insert(0, _code(FORGE))
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "foreign_notebook":
        nb = {"cells": [_code(FORGE)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "script":
        path = folder / "submission.py"
        path.write_text(FORGE)
        return path
    if kind == "planted_results":
        nb = copy.deepcopy(tpl)
        nb["cells"].insert(0, _code(PLANT))
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "zip_with_own_otter":
        nb = copy.deepcopy(tpl)
        path = folder / "submission.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("submission.ipynb", _notebook.dumps(nb))
            zf.writestr("otter/__init__.py", FORGE + "\nclass Notebook:\n    @staticmethod\n"
                        "    def init_grading_mode(*a, **k):\n        pass\n")
            zf.writestr("json.py", FORGE)
        return path
    if kind == "zip_with_otter_log":
        path = folder / "submission.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("submission.ipynb", _notebook.dumps(tpl))
            zf.writestr(".OTTER_LOG", OTTER_LOG)
        return path
    if kind == "answer_frame_on_the_result_pipe":  # the engine's own forgery check, behind otter's runner
        _target, source = attack_source(ATTACKS_DIR / "forge_ex01_answer_frame_before_the_first.py")
        nb = _notebook.fill_with(tpl, {GRADED[0]: source})
        return _write_nb(nb, folder / "submission.ipynb")
    if kind == "honest_answer_and_forgery":
        nb = _with_answer(tpl, GRADED[0])
        nb["cells"].insert(0, _code(FORGE))
        return _write_nb(nb, folder / "submission.ipynb")
    raise ValueError(kind)


# In ``make test``: a forgery in otter's own kernel, one beside an honest answer, and the engine's result-pipe
# check behind otter's runner; the other kinds are opt-in (``make test-containers``; docs/benchmarks.md "Opt-in
# tests"): each is one more `otter run` (~9 CPU-s) of the path otter grade's and Gradescope's containers run.
KINDS = ["cell_above_setup", "honest_answer_and_forgery", "answer_frame_on_the_result_pipe"]
OPT_IN_KINDS = ["setup_deleted", "metadata_stripped_other_kernel", "foreign_notebook", "script", "planted_results",
                "zip_with_own_otter", "zip_with_otter_log"]


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ag") / _otter_zip.ZIP_NAME
    return _otter_zip.build_zip(out, GRADED, timeout=30.0, jobs=2, seed=SEED)


def _otter_run(zip_path: Path, submission: Path, work: Path, marks: Path) -> dict[str, float]:
    out = work / "out"
    out.mkdir(parents=True)
    env = dict(os.environ, TMPDIR=str(work), TAPETRACE_FORGERY_MARK=str(marks))
    proc = subprocess.run([sys.executable, "-m", "otter", "run", "--no-logo", "-a", str(zip_path), "-o", str(out),
                           str(submission)], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "tapetrace: graded" in proc.stdout, proc.stdout[-2000:]
    results = json.loads((out / "results.json").read_text())
    return {t["name"]: t["score"] for t in results["tests"] if "score" in t}


@pytest.mark.parametrize("kind", [*KINDS, *(pytest.param(k, marks=pytest.mark.container) for k in OPT_IN_KINDS)])
def test_a_forgery_costs_only_the_forger(run, zip_path, tmp_path, kind):
    marks = tmp_path / "marks"
    marks.mkdir()
    sub = _submission(kind, tmp_path)
    otter_scores = _otter_run(zip_path, sub, tmp_path / "work", marks)
    assert not (marks / MARK).exists(), "the submission's code ran in otter's kernel (or process)"
    engine = run.grade([str(sub)], only=GRADED)[0]["exercises"]
    assert otter_scores == {ex: engine[ex]["score"] for ex in GRADED}, (otter_scores, engine)
    expected = {ex: 0.0 for ex in GRADED}
    if kind == "honest_answer_and_forgery":
        expected[GRADED[0]] = engine[GRADED[0]]["max_score"]
    if kind == "answer_frame_on_the_result_pipe":  # graded, and found: not a stub
        assert "wrote on the grader's result pipe" in engine[GRADED[0]]["message"], engine[GRADED[0]]["message"]
    assert otter_scores == expected


def test_without_the_plugin_nothing_is_graded(monkeypatch):
    """The test files alone (a zip whose otter_config.json lost the plugin) fail closed."""
    monkeypatch.delenv(_otter.RESULT_ENV, raising=False)
    with pytest.raises(AssertionError, match="the tapetrace otter plugin did not run"):
        _otter.otter_check(GRADED[0], "forward_matches_reference")


def test_the_zip_names_the_plugin_and_opens_its_import_path(zip_path):
    with zipfile.ZipFile(zip_path) as zf:
        config = json.loads(zf.read("otter_config.json"))
        run_otter = zf.read("run_otter.py").decode()
        setup = zf.read("setup.sh").decode()
        names = zf.namelist()
    assert config["plugins"] == [_otter.PLUGIN]
    assert "files" in run_otter.split("from otter.run")[0] and "sys.path.insert" in run_otter
    assert "chmod o+x /root" in setup
    assert "files/autograder/otter_plugin.py" in names
    settings = json.loads(zipfile.ZipFile(zip_path).read(f"files/autograder/{_otter.SETTINGS}"))
    assert settings["require_isolation"] == "container"


@pytest.mark.container
@pytest.mark.parametrize("path", ["gradescope_upload", "otter_grade_zip"])
def test_files_beside_the_notebook_never_reach_otters_runner(zip_path, tmp_path, path):
    """The zip's run_otter.py, started as Gradescope and otter grade's containers start it: a multi-file
    upload (the notebook, a forged `.OTTER_LOG`, an `otter/` package, a `json.py`) or a zip submission
    (`otter grade --ext zip`) leaves otter's runner nothing but the notebook; the stub scores 0."""
    from test_otter import lay_out, run_otter_py

    marks = tmp_path / "marks"
    marks.mkdir()
    files = {"submission.ipynb": _notebook.dumps(_template()).encode(), ".OTTER_LOG": OTTER_LOG,
             "json.py": FORGE.encode()}
    config = None
    if path == "otter_grade_zip":
        archive = tmp_path / "submission.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            for name, data in files.items():
                zf.writestr(name, data)
            zf.writestr("otter/__init__.py", FORGE)
        files, config = {"submission.zip": archive.read_bytes()}, {"zips": True}
    ag = lay_out(zip_path, tmp_path / "run", files, config=config)
    if path == "gradescope_upload":
        (ag / "submission" / "otter").mkdir()
        (ag / "submission" / "otter" / "__init__.py").write_text(FORGE)
    proc, results = run_otter_py(ag, env={"TAPETRACE_FORGERY_MARK": str(marks)}, limit=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "tapetrace: graded submission.ipynb" in proc.stdout
    assert not (marks / MARK).exists(), "a file of the submission ran in otter's process"
    assert {t["name"]: t["score"] for t in results["tests"] if "score" in t} == {ex: 0.0 for ex in GRADED}
    if path == "otter_grade_zip":  # otter grade copies the submission back out of the container afterwards
        assert (ag / "submission" / "submission.zip").read_bytes() == archive.read_bytes()
