"""Colab simulation: the student notebook alone, in an empty folder, run top to bottom by a kernel.

One kernel session (kernel start-up and framework imports dominate): the notebook filled with the
solutions, then a mutant pasted into one exercise and its check re-run, then a stub pasted back
into another. The kernel cannot see this repository (the editable install's finder and the repo
path are removed first), its HOME and TMPDIR are empty folders, and afterwards the notebook's folder
holds only the notebook and the one file the set-up cell writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mutant_files, mutant_meta

from autograder import _cmd_build, _notebook, _stubs
from autograder._paths import ROOT, SOLUTIONS

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

TEMPLATE_NB = ROOT / "student_template" / _notebook.NOTEBOOK
MARK = "TAPETRACE-RESULTS="

HIDE_REPO = f"""\
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if os.path.abspath(str(p) or ".") != {str(ROOT)!r}]
"""

DUMP = f"""\
import json, sys
from autograder import _public
print({MARK!r} + json.dumps({{
    "results": {{k: {{"status": v.status, "tests": v.tests, "device": v.device}} for k, v in _public.RESULTS.items()}},
    "modules": {{k: getattr(m, "__file__", None) for k, m in sys.modules.items() if k.split(".")[0] == "autograder"}},
    "hidden_importable": __import__("importlib.util").util.find_spec("autograder.hidden") is not None,
}}))
"""


def _pick_mutant(exercises: list[str]) -> tuple[str, Path, set[str], dict[str, str]]:
    """A mutant that fails some (preferably not all) public checks of its exercise."""
    candidates = []
    for path in mutant_files():
        meta = mutant_meta(path)
        ex = meta["exercise"]
        if ex not in exercises:
            continue
        public = {c.name for c in _cmd_build.public_checks(ex)}
        fails = meta["fails"] & public
        if fails:
            candidates.append((fails == public, exercises.index(ex), path.name, ex, path, fails, meta["codes"]))
    if not candidates:
        pytest.skip("no mutant fails a public check")
    _, _, _, ex, path, fails, codes = min(candidates)
    return ex, path, fails, codes


def _outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        elif "data" in out:
            parts.append(str(out["data"].get("text/plain", "")))
    return "".join(parts)


def _dump(cell) -> dict:
    text = _outputs(cell)
    assert MARK in text, text[-3000:]
    return json.loads(text.split(MARK, 1)[1].strip().splitlines()[0])


@pytest.mark.slow
def test_notebook_alone_in_an_empty_folder(tmp_path):
    src = json.loads(TEMPLATE_NB.read_text(encoding="utf-8"))
    exercises = src["metadata"]["tapetrace"]["exercises"]
    mut_ex, mut_path, mut_fails, mut_codes = _pick_mutant(exercises)
    stub_ex = next(e for e in reversed(exercises) if e != mut_ex)
    filled = _notebook.fill_with(src, {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})

    folder, home, tmp = tmp_path / "colab", tmp_path / "home", tmp_path / "tmp"
    for d in (folder, home, tmp):
        d.mkdir()
    (folder / _notebook.NOTEBOOK).write_text(_notebook.dumps(filled), encoding="utf-8")
    shutil.copy(TEMPLATE_NB, tmp_path / "pristine.ipynb")  # kept outside: the folder holds the notebook alone

    nb = nbformat.reads(_notebook.dumps(filled), as_version=4)
    new = nbformat.v4.new_code_cell
    nb.cells.insert(0, new(HIDE_REPO))
    n_filled = len(nb.cells)
    nb.cells += [
        new(DUMP),
        new(mut_path.read_text()),  # the student pastes a mutant over an exercise ...
        new(f'check("{mut_ex}")'),    # ... and re-runs its check
        new(_notebook.code_cell_source(_stubs.stub_source((SOLUTIONS / f"{stub_ex}.py").read_text(), stub_ex))),
        new(f'check("{stub_ex}")'),
        new(DUMP),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "XDG_", "MPL"))}
    # the libraries' own caches (IPython's profile, torch.func's inductor dir) go elsewhere, as on Colab
    env.update(HOME=str(home), TMPDIR=str(tmp), IPYTHONDIR=str(tmp_path / "ipython"),
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "torchinductor"),
               PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)

    errors = [(i, _outputs(c)) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert not errors, errors
    first = _dump(nb.cells[n_filled])
    last = _dump(nb.cells[-1])

    # solutions filled in: every public check passes, on the kernel's devices, from the zip only
    assert set(first["results"]) == set(exercises)
    for ex, res in first["results"].items():
        assert res["status"] == "passed", (ex, [t["message"] for t in res["tests"] if not t["passed"]])
    zip_path = str(folder / _notebook.RUNTIME_FILE)
    assert first["modules"] and all(f is None or f.startswith(zip_path) for f in first["modules"].values())
    assert first["hidden_importable"] is False
    for ex in exercises:
        check_cell = next(c for c in nb.cells if c.metadata.get("tapetrace", {}) == {"exercise": ex, "role": "check"})
        out = _outputs(check_cell)
        assert "PASSED" in out and "hidden tests grade more" in out, out

    # the mutant: exactly its public checks fail, with their messages, nothing else
    res = last["results"][mut_ex]
    failed = {t["name"] for t in res["tests"] if not t["passed"]}
    assert res["status"] == "incorrect" and failed == mut_fails, res
    for t in res["tests"]:
        if t["name"] in mut_codes and not t["passed"]:
            assert t["code"] == mut_codes[t["name"]], t
        if not t["passed"]:
            assert t["message"] and t["code"] not in ("INTERNAL_ERROR", "SNAPSHOT_MISMATCH"), t
            assert t["message"] in _outputs(nb.cells[-4]), "the failure message is shown to the student"
    assert "INCORRECT" in _outputs(nb.cells[-4])

    # the stub pasted back: not attempted
    assert last["results"][stub_ex]["status"] == "not attempted"
    assert "NOT ATTEMPTED" in _outputs(nb.cells[-2])

    # nothing written outside the notebook's folder (and there only the runtime zip)
    assert sorted(p.name for p in folder.iterdir()) == sorted([_notebook.NOTEBOOK, _notebook.RUNTIME_FILE])
    assert not any(home.rglob("*")), sorted(str(p) for p in home.rglob("*"))[:10]
    assert not any(tmp.rglob("*")), sorted(str(p) for p in tmp.rglob("*"))[:10]


@pytest.mark.slow
def test_check_py_for_students_working_locally(tmp_path):
    """student_template/ copied elsewhere: `python check.py` checks the .py files with the notebook's checks."""
    exercises = json.loads(TEMPLATE_NB.read_text(encoding="utf-8"))["metadata"]["tapetrace"]["exercises"]
    solved, untouched = exercises[0], exercises[1]
    folder = tmp_path / "mine"
    shutil.copytree(ROOT / "student_template", folder)
    shutil.copy(SOLUTIONS / f"{solved}.py", folder / f"{solved}.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONDONTWRITEBYTECODE="1", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "torchinductor"))
    proc = subprocess.run([sys.executable, "-I", str(folder / "check.py"), solved[:4], untouched[:4]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert f"{solved}: public checks" in out and "PASSED" in out, out
    assert f"{untouched}: public checks" in out and "NOT ATTEMPTED" in out, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "torchinductor"]  # zip next to check.py
    assert (folder / _notebook.RUNTIME_FILE).is_file()
