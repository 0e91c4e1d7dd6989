"""Shared fixtures: one grading run per test session (one zygote, one reference cache)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS
from autograder.engine.run import GradingRun

SEED = int(os.environ.get("TAPETRACE_TEST_SEED", "20261129"))
# The reference's answers are kept on disk by default (autograder/engine/refstore.py); the suite asks the
# reference's workers every time (what it counts and measures: worker starts, the chip's turns) and keeps nothing
# between runs of the suite. The store's own tests (tests/test_refstore.py) name a folder of their own.
os.environ.setdefault("TAPETRACE_REFERENCE_CACHE", "off")
MUTANTS = ROOT / "tests" / "mutants"


CONTAINERS_OPT_IN = ("opt-in: grading inside Docker containers, the slowest end-to-end paths "
                     "(docs/benchmarks.md): set TAPETRACE_CONTAINERS=1 or run `make test-containers`")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``container`` are skipped unless TAPETRACE_CONTAINERS=1 (``make test-containers``)."""
    if os.environ.get("TAPETRACE_CONTAINERS") == "1":
        return
    for item in items:
        if item.get_closest_marker("container"):
            item.add_marker(pytest.mark.skipif(True, reason=CONTAINERS_OPT_IN), append=False)  # before the docker one


CASE = re.compile(r"tests/test_outcomes\.py::test_(mutant_fails_exactly_its_checks|valid_variant_gets_full_marks)"
                  r"\[(ex\d\d_\w+)/")
SOLUTION_OR_STUB = re.compile(r"tests/test_outcomes\.py::test_(solution_gets_full_marks|stub_is_not_attempted)\[")


def xdist_unit(nodeid: str) -> str:
    """The unit pytest-xdist hands one worker whole (``make test`` runs ``-n 3``): all of tests/adversarial,
    whose checks look at the whole machine (a student's process left anywhere, a file planted in /tmp) and so
    run beside no other attack; in tests/test_outcomes.py an exercise's cases (graded together by
    :class:`CaseGrades`), the solutions and stubs (one grading), any other test alone; any other test file
    whole (its module fixtures, often a grading, are made once, not once per worker)."""
    if nodeid.startswith("tests/adversarial/"):
        return "adversarial"
    if m := CASE.match(nodeid):
        return f"cases-{m.group(2)}"
    if SOLUTION_OR_STUB.match(nodeid):
        return "solutions-and-stubs"
    if nodeid.startswith("tests/test_outcomes.py::"):
        return nodeid
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduler with :func:`xdist_unit` as the scope (its own ``xdist_group`` marks need the
    node ids pytest 9.2 no longer lets a plugin rename). The first groups go out first: tests/adversarial, the
    longest, starts at once."""
    from xdist.scheduler import LoadScopeScheduling

    class Groups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    return Groups(config, log)


def pytest_report_header(config):
    return f"tapetrace grading seed: {SEED} (set TAPETRACE_TEST_SEED to change)"


@pytest.fixture(autouse=True)
def _fresh_notebook_session():
    """Each test is a notebook session of its own: what an earlier test's self-checks found
    (autograder.student.checked, read by figure()) never reaches the next one."""
    from autograder.student import checked

    checked.LAST.clear()
    yield
    checked.LAST.clear()


@pytest.fixture(scope="session")
def run():
    r = GradingRun(device="cpu", timeout=float(os.environ.get("TAPETRACE_TEST_TIMEOUT", "60")), seed=SEED)
    yield r
    r.close()


@pytest.fixture(scope="session")
def fast_run():
    """A run with a short timeout, for tests of hangs."""
    r = GradingRun(device="cpu", timeout=6.0, seed=SEED)
    yield r
    r.close()


class CaseGrades:
    """Each exercise's cases (its mutants and valid variants, ``tests/mutants/exNN_*``) graded in ONE grading of the
    session's run, two at a time, the first time a test asks for one of them; the tests then read their row. Same
    rows as one ``run.grade`` per case (one zygote, one reference cache, the same seed): only the waiting is shared."""

    def __init__(self, run: GradingRun, folder: Path) -> None:
        self.run, self.folder = run, folder
        self.rows: dict[Path, dict] = {}

    def row(self, path: Path) -> dict:
        """The exercise row ``path`` (a case file) got, grading its exercise's cases first if none is yet."""
        if path not in self.rows:
            ex = path.parent.name
            cases = [p for p in [*mutant_files(), *valid_files()] if p.parent.name == ex]
            subs = [make_submission(self.folder / ex / p.stem, {ex: p.read_text()}, only=[ex]) for p in cases]
            results = self.run.grade([str(s) for s in subs], only=[ex], jobs=2)
            for case, res in zip(cases, results, strict=True):
                self.rows[case] = res["exercises"][ex]
        return self.rows[path]


@pytest.fixture(scope="session")
def solution_and_stub_rows(run) -> dict[str, dict]:
    """The solutions and the stubs, every exercise, graded once in the session's run (two at a time):
    ``{"solution": result, "stub": result}`` (a grading result each)."""
    from autograder.core.paths import EXERCISES_DIR

    solution, stub = run.grade([str(SOLUTIONS), str(EXERCISES_DIR)], jobs=2)
    return {"solution": solution, "stub": stub}


@pytest.fixture(scope="session")
def case_grades(run, tmp_path_factory) -> CaseGrades:
    return CaseGrades(run, tmp_path_factory.mktemp("cases"))


def make_submission(tmp: Path, replace: dict[str, str] | None = None, only: list[str] | None = None) -> Path:
    """A directory submission: the solutions, with some exercises replaced by given source text."""
    tmp.mkdir(parents=True, exist_ok=True)
    for ex in only or EXERCISES:
        src = SOLUTIONS / f"{ex}.py"
        if replace and ex in replace:
            (tmp / f"{ex}.py").write_text(replace[ex])
        elif src.exists():
            shutil.copy(src, tmp / f"{ex}.py")
    return tmp


def _case_files(header: str) -> list[Path]:
    return sorted(p for p in MUTANTS.glob("ex*/*.py")
                  if any(re.match(rf"#\s*{header}:", line) for line in p.read_text().splitlines()[:15]))


def mutant_files() -> list[Path]:
    """The mutants: ``tests/mutants/exNN_*/*.py`` with a ``# MUTANT:`` header (and ``# FAILS:``)."""
    return _case_files("MUTANT")


def valid_files() -> list[Path]:
    """Other valid implementations (``# VALID: why`` header): each must get full marks."""
    return _case_files("VALID")


def mutant_meta(path: Path) -> dict:
    """Reads ``# MUTANT:``, ``# FAILS:`` and optional ``# CODE name: KEY`` header lines."""
    text = path.read_text()
    meta = {"exercise": path.parent.name, "fails": set(), "codes": {}, "why": ""}
    for line in text.splitlines()[:15]:
        if m := re.match(r"#\s*MUTANT:\s*(.+)", line):
            meta["why"] = m.group(1).strip()
        elif m := re.match(r"#\s*FAILS:\s*(.+)", line):
            meta["fails"] = {s.strip() for s in m.group(1).split(",") if s.strip()}
        elif m := re.match(r"#\s*CODE\s+(\w+):\s*(\w+)", line):
            meta["codes"][m.group(1)] = m.group(2)
    return meta
