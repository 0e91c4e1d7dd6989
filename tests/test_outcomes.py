"""Three outcomes per exercise (learntools): stub -> not attempted, solution -> full, mutant -> fails its check;
and every other valid implementation (``# VALID:`` files beside the mutants) -> full marks."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import MUTANTS, mutant_files, mutant_meta, valid_files

from autograder.core.paths import EXERCISES, SOLUTIONS
from autograder.hidden import load_suite

PRESENT = [ex for ex in EXERCISES if (SOLUTIONS / f"{ex}.py").exists()
           and importlib.util.find_spec(f"autograder.hidden.{ex}") is not None]


@pytest.mark.parametrize("exercise", PRESENT)
def test_solution_gets_full_marks(solution_and_stub_rows, exercise):
    res = solution_and_stub_rows["solution"]
    ex = res["exercises"][exercise]
    failed = {t["name"]: t["message"] for t in ex["tests"] if not t["passed"]}
    # where the grader met trouble of its own, its reason (grader-side facts only) says which
    assert not failed, (failed, ex.get("grader_reason"), ex.get("status"))
    assert ex["status"] == "graded"
    assert ex["score"] == ex["max_score"] == load_suite(exercise).max_score > 0


@pytest.mark.parametrize("exercise", PRESENT)
def test_stub_is_not_attempted(solution_and_stub_rows, exercise):
    res = solution_and_stub_rows["stub"]
    ex = res["exercises"][exercise]
    assert ex["score"] == 0
    assert ex["status"] == "graded"
    assert ex["message"].startswith("not attempted"), ex["message"]
    assert all(t["code"] == "NOT_ATTEMPTED" for t in ex["tests"]), [t["message"] for t in ex["tests"]]


@pytest.mark.parametrize("path", mutant_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_mutant_fails_exactly_its_checks(case_grades, path):
    meta = mutant_meta(path)
    assert meta["why"] and meta["fails"], f"{path.name}: needs '# MUTANT:' and '# FAILS:' header lines"
    ex = meta["exercise"]
    names = {c.name for c in load_suite(ex).checks}
    assert meta["fails"] <= names, f"unknown checks {meta['fails'] - names}"
    res = case_grades.row(path)
    failed = {t["name"] for t in res["tests"] if not t["passed"]}
    msgs = {t["name"]: f"[{t['code']}] {t['message']}" for t in res["tests"] if not t["passed"]}
    assert failed == meta["fails"], msgs
    for name, code in meta["codes"].items():
        got = next(t for t in res["tests"] if t["name"] == name)
        assert got["code"] == code, msgs
    assert res["score"] < res["max_score"]


@pytest.mark.parametrize("path", valid_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_valid_variant_gets_full_marks(case_grades, path):
    res = case_grades.row(path)
    failed = {t["name"]: f"[{t['code']}] {t['message']}" for t in res["tests"] if not t["passed"]}
    assert not failed, failed
    assert res["status"] == "graded" and res["score"] == res["max_score"] > 0


def test_every_case_file_is_a_mutant_or_a_valid_variant():
    cases = set(mutant_files()) | set(valid_files())
    assert not set(mutant_files()) & set(valid_files())
    assert {p for p in MUTANTS.glob("ex*/*.py")} == cases, "each needs a '# MUTANT:' or a '# VALID:' header"
    assert {p.parent.name for p in cases} <= set(EXERCISES)


@pytest.mark.parametrize("exercise", PRESENT)
def test_every_check_has_a_mutant(exercise):
    covered = set()
    for path in mutant_files():
        meta = mutant_meta(path)
        if meta["exercise"] == exercise:
            covered |= meta["fails"]
    missing = {c.name for c in load_suite(exercise).checks} - covered
    assert not missing, f"checks no mutant proves can fail: {sorted(missing)}"


def test_all_ten_exercises_present():
    assert PRESENT == list(EXERCISES)
