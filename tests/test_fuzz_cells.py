"""Fuzzing a notebook's cells as modules (issue 53; docs/security.md#fuzzing): any Python source (hypothesmith,
from Python's grammar) and any text a student could write (tests/fuzzing.py) -> cells, graded modules, IPython's
plain Python, never an exception. Budgets: tests/fuzzing.py."""

from __future__ import annotations

import hypothesmith
from fuzzing import ANY_TEXT, budget, source_text
from hypothesis import given
from hypothesis import strategies as st

from autograder.core.paths import EXERCISES
from autograder.core.registry import contracts
from autograder.submissions import cells, ipython_cells

TEXT = st.one_of(source_text(), ANY_TEXT)


def _graded(text: str) -> None:
    """A percent script's graded modules, each safe UTF-8 with no NUL, and what their trailers record."""
    found = cells.percent_cells(text, EXERCISES)
    for src in cells.graded_sources(found, EXERCISES, contracts=contracts(EXERCISES)).values():
        if src is None:
            continue
        src.encode("utf-8")
        assert "\x00" not in src
        body, later = cells.split_graded(src)
        assert isinstance(body, str) and isinstance(later, list)
        cells.faults_of(src)
        cells.written_files(src)


@budget(25)
@given(hypothesmith.from_grammar())
def test_any_python_source_splits_into_modules(code: str) -> None:
    _graded("# %% [markdown]\n# ex01_torch_mlp\n# %%\n" + code)
    ipython_cells.transform_cell(code)
    cells.hoist_future_imports(code)


@budget(60)
@given(TEXT)
def test_any_text_splits_into_modules(text: str) -> None:
    _graded(text)


@budget(60)
@given(TEXT)
def test_any_cell_is_plain_python_or_none(text: str) -> None:
    out = ipython_cells.transform_cell(text)
    assert out is None or isinstance(out, str)
    ipython_cells.written_file(text)
    cells.hoist_future_imports(text)
