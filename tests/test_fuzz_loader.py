"""Fuzzing the loader (issue 53; docs/security.md#fuzzing): any notebook (nbformat's schema, any Unicode, broken
structures), any ``.py`` bytes, any zip of them -> a :class:`Submission` whose texts are safe UTF-8 (no NUL, no
lone surrogate), or :class:`SubmissionError`; never another exception. Budgets: tests/fuzzing.py."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from fuzzing import budget, notebook_bytes, py_bytes
from hypothesis import given
from hypothesis import strategies as st

from autograder.core.paths import EXERCISES
from autograder.submissions.loader import Submission, SubmissionError, load


def _load(name: str, data: bytes) -> Submission | None:
    """``load`` on a file of that name holding ``data``; None where it refused it with SubmissionError."""
    with tempfile.TemporaryDirectory(prefix="tapetrace-fuzz-") as tmp:
        path = Path(tmp) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        target = path if "/" not in name else Path(tmp) / name.split("/", 1)[0]
        try:
            return load(str(target))
        except SubmissionError:
            return None


def _safe(sub: Submission | None) -> None:
    """A loaded submission: a source (or None) for every exercise, each a str UTF-8 can write, with no NUL."""
    if sub is None:
        return
    assert set(sub.sources) == set(EXERCISES)
    for ex, src in sub.sources.items():
        assert src is None or isinstance(src, str), ex
        if src is not None:
            src.encode("utf-8")  # no lone surrogate reaches a worker
            assert "\x00" not in src, ex


@budget(40)
@given(notebook_bytes())
def test_any_notebook_is_loaded_or_refused(data: bytes) -> None:
    _safe(_load("work.ipynb", data))


@budget(15)
@given(notebook_bytes())
def test_any_notebook_in_a_folder_is_loaded_or_refused(data: bytes) -> None:
    _safe(_load("alice/work.ipynb", data))


@budget(40)
@given(py_bytes(), st.sampled_from(["ex01_torch_mlp.py", "solution.py", "ex04_jax_mlp.py"]))
def test_any_py_file_is_loaded_or_refused(data: bytes, name: str) -> None:
    _safe(_load(name, data))


@budget(15)
@given(py_bytes(), st.sampled_from(["alice/ex01_torch_mlp.py", "alice/x/ex02_torch_training.py"]))
def test_any_py_file_in_a_folder_is_loaded_or_refused(data: bytes, name: str) -> None:
    _safe(_load(name, data))


@budget(15)
@given(st.lists(st.tuples(st.sampled_from(["ex01_torch_mlp.py", "a/ex01_torch_mlp.py", "work.ipynb", "../x.py",
                                           "/abs.py", "a/b/c/d.py", "__MACOSX/ex01_torch_mlp.py", "é\udcff.py"]),
                          st.one_of(py_bytes(), notebook_bytes())), max_size=3, unique_by=lambda e: e[0]))
def test_any_zip_is_loaded_or_refused(entries: list[tuple[str, bytes]]) -> None:
    with tempfile.TemporaryDirectory(prefix="tapetrace-fuzz-") as tmp:
        path = Path(tmp) / "sub.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in entries:
                zf.writestr(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), data)
        try:
            _safe(load(str(path)))
        except SubmissionError:
            pass
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["sub.zip"]  # nothing extracted beside it
