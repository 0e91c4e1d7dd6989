"""The one loader: directories, single files, notebooks and zips."""

from __future__ import annotations

import json
import zipfile

import pytest

from autograder.core.paths import EXERCISES
from autograder.submissions import cells as _cells
from autograder.submissions import loader as _loader


def _nb(cells):
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _code(src, **meta):
    return {"cell_type": "code", "source": src, "metadata": {"tapetrace": meta} if meta else {},
            "outputs": [], "execution_count": None}


def _md(src, **meta):
    return {"cell_type": "markdown", "source": src, "metadata": {"tapetrace": meta} if meta else {}}


def test_directory_missing_files_are_none(tmp_path):
    (tmp_path / "ex01_torch_mlp.py").write_text("x = 1\n")
    (tmp_path / "notes.py").write_text("y = 2\n")
    sub = _loader.load(str(tmp_path))
    assert sub.sources["ex01_torch_mlp"] == "x = 1\n"
    assert all(sub.sources[e] is None for e in EXERCISES[1:])


def test_single_file_named_like_an_exercise(tmp_path):
    p = tmp_path / "ex04_jax_mlp.py"
    p.write_text("a = 1\n")
    sub = _loader.load(str(p))
    assert sub.sources["ex04_jax_mlp"] == "a = 1\n" and sub.sources["ex01_torch_mlp"] is None


def test_any_other_single_file_is_the_whole_submission(tmp_path):
    p = tmp_path / "all.py"
    p.write_text("b = 2\n")
    assert set(_loader.load(str(p)).sources.values()) == {"b = 2\n"}


def test_notebook_groups_cells_by_metadata_and_headings(tmp_path):
    nb = _nb([
        _code("import torch  # setup", role="setup"),
        _md("## ex01_torch_mlp — write an nn.Module"),
        _code("class MLP: pass"),
        _code("check('ex01')"),
        _code("%pip install foo\nHELPER = 1", exercise="ex01_torch_mlp"),
        _md("## Exercise ex02: training"),  # not the template's form: no new section
        _code("def fit(): pass"),
        _md("## ex02_torch_training"),
        _code("def train_step(): pass"),
        _code("print('check me')", exercise="ex02_torch_training", role="check"),
    ])
    p = tmp_path / "nb.ipynb"
    p.write_text(json.dumps(nb))
    src = {ex: _cells.split_graded(s)[0] if s else s for ex, s in _loader.load(str(p)).sources.items()}
    assert "class MLP" in src["ex01_torch_mlp"] and "HELPER = 1" in src["ex01_torch_mlp"]
    assert "def fit" in src["ex01_torch_mlp"]
    assert "check(" not in src["ex01_torch_mlp"] and "%pip" not in src["ex01_torch_mlp"]
    assert "import torch  # setup" not in src["ex01_torch_mlp"]
    assert "def train_step" in src["ex02_torch_training"] and "def fit" not in src["ex02_torch_training"]
    assert "check me" in src["ex02_torch_training"]  # code in a check cell runs in "Run all": graded
    assert src["ex03_torch_cnn"] is None


def test_zip_of_a_folder(tmp_path):
    z = tmp_path / "s.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("alice/ex01_torch_mlp.py", "c = 3\n")
        zf.writestr("alice/../../evil.py", "nope")
        zf.writestr("__MACOSX/alice/._ex01_torch_mlp.py", "junk")
    sub = _loader.load(str(z))
    assert sub.sources["ex01_torch_mlp"] == "c = 3\n" and sub.form == "zip"
    assert not (tmp_path.parent / "evil.py").exists()


def test_zip_with_a_notebook(tmp_path):
    z = tmp_path / "export.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("hw.ipynb", json.dumps(_nb([_md("# ex09_autograd_tape"), _code("def manual_grads(w, x, b): pass")])))
        zf.writestr(".OTTER_LOG", "x")
    assert "manual_grads" in _loader.load(str(z)).sources["ex09_autograd_tape"]


@pytest.mark.parametrize("name,content", [("bad.ipynb", "{not json"), ("bad.zip", "not a zip"),
                                          ("file.txt", "hello")])
def test_unreadable_submissions_raise(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(_loader.SubmissionError):
        _loader.load(str(p))


def test_missing_path_raises(tmp_path):
    with pytest.raises(_loader.SubmissionError):
        _loader.load(str(tmp_path / "nope"))


def test_future_imports_move_to_the_top_of_the_exercise(tmp_path):
    """Each cell may start with `from __future__ import ...`; joined, they would be mid-module (a SyntaxError)."""
    nb = _nb([
        _md("## ex01_torch_mlp"),
        _code("import math\nHELPER = math.pi\n"),
        _code('"""cell docstring"""\nfrom __future__ import annotations\n\ndef f(x: Undefined) -> Nope:\n'
              "    return x\n"),
        _code("from __future__ import annotations, division  # again\nY = 1\n"),
        _md("## ex02_torch_training"),
        _code('"""Module docstring."""\n\nfrom __future__ import annotations\n\nZ = 2\n'),
    ])
    p = tmp_path / "nb.ipynb"
    p.write_text(json.dumps(nb))
    src = {ex: _cells.split_graded(s)[0] if s else s for ex, s in _loader.load(str(p)).sources.items()}
    ex01 = src["ex01_torch_mlp"]
    assert ex01.splitlines()[0] == "from __future__ import annotations, division"
    assert ex01.count("from __future__") == 1
    ns: dict = {}
    exec(compile(ex01, "ex01_torch_mlp.py", "exec"), ns)  # annotations stay unevaluated: no NameError
    assert ns["f"](3) == 3 and ns["Y"] == 1 and ns["HELPER"] > 3
    # already at the top (after a docstring): left exactly as written
    assert src["ex02_torch_training"] == '"""Module docstring."""\n\nfrom __future__ import annotations\n\nZ = 2\n'


def test_future_import_hoisting_keeps_later_line_numbers_close():
    src = "x = 1\nfrom __future__ import annotations\ny = 2\n"
    out = _loader.hoist_future_imports(src)
    assert out == "from __future__ import annotations\nx = 1\n\ny = 2\n"
    compile(out, "m.py", "exec")
    assert _loader.hoist_future_imports("def broken(:\n") == "def broken(:\n"  # unparsable: as is
    same_line = "x = 1\nfrom __future__ import annotations; y = 2\n"
    assert _loader.hoist_future_imports(same_line) == same_line  # shares a line: left for Python to report


def test_size_caps_py_files_small_notebooks_large(tmp_path, monkeypatch):
    """Notebooks carry outputs (images), which are never read: they get a larger cap than .py files."""
    big_output = {"output_type": "display_data", "metadata": {},
                  "data": {"image/png": "A" * (3 * 1024 * 1024), "text/plain": "<Figure>"}}
    cell = _code("def manual_grads(w, x, b):\n    return w, x, b\n")
    cell["outputs"] = [big_output]
    nb = tmp_path / "big.ipynb"
    nb.write_text(json.dumps(_nb([_md("## ex09_autograd_tape"), cell])))
    assert nb.stat().st_size > _loader.MAX_SOURCE_BYTES
    sub = _loader.load(str(nb))
    assert "def manual_grads" in sub.sources["ex09_autograd_tape"] and "AAAA" not in sub.sources["ex09_autograd_tape"]

    py = tmp_path / "ex01_torch_mlp.py"
    py.write_text("# padding\n" * (_loader.MAX_SOURCE_BYTES // 10 + 1))
    with pytest.raises(_loader.SubmissionError, match="larger than 2 MB"):
        _loader.load(str(py))

    assert _loader.MAX_NOTEBOOK_BYTES >= 100 * 1024 * 1024
    monkeypatch.setattr(_loader, "MAX_NOTEBOOK_BYTES", 1024 * 1024)
    with pytest.raises(_loader.SubmissionError, match="larger than 1 MB"):
        _loader.load(str(nb))
