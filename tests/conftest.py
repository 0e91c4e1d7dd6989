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
MUTANTS = ROOT / "tests" / "mutants"


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
