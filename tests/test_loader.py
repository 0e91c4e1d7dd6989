"""The one loader: directories, single files, notebooks and zips."""

from __future__ import annotations

import json
import zipfile

import pytest

from autograder import _loader
from autograder._paths import EXERCISES


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
        _md("## Exercise ex02: training"),
        _code("def fit(): pass"),
        _code("print('check me')", exercise="ex02_torch_training", role="check"),
    ])
    p = tmp_path / "nb.ipynb"
    p.write_text(json.dumps(nb))
    src = _loader.load(str(p)).sources
    assert "class MLP" in src["ex01_torch_mlp"] and "HELPER = 1" in src["ex01_torch_mlp"]
    assert "check(" not in src["ex01_torch_mlp"] and "%pip" not in src["ex01_torch_mlp"]
    assert "import torch  # setup" not in src["ex01_torch_mlp"]
    assert "def fit" in src["ex02_torch_training"] and "check me" not in src["ex02_torch_training"]
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
        zf.writestr("hw.ipynb", json.dumps(_nb([_md("# ex09"), _code("def manual_grads(w, x, b): pass")])))
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
