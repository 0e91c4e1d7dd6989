"""The early row -- an exercise whose submission cannot be read -- is decided once
(:func:`autograder.engine.rows.early_row`) and is the same, field by field, on every driver.

Every early case (a corrupt zip, a truncated or empty notebook, a path that is not there, a notebook over the
size limit, a name that is not UTF-8, the reading child failing to start) goes through ``tapetrace grade``'s run
(``GradingRun.grade``: also what the otter zip's ``otter_grade`` calls), ``tapetrace regrade --all``, the Dask
client's loop (``ClusterRun.grade``: its reading happens on the client) and the pytest entry; the exercise rows are
compared field by field (the run's facts -- seconds, isolation, launcher -- aside). Before the rule was one
function, the pytest entry said ``missing`` where ``tapetrace grade`` said ``unreadable``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import make_submission

from autograder.core.paths import ROOT
from autograder.submissions import loader as _loader
from autograder.submissions import loadguard as _loadguard

EX = "ex01_torch_mlp"
SEED = 7
TROUBLE = "reader_trouble.ipynb"  # the reading child "cannot start" for this one (the grader's trouble)
RUN_FACTS = ("seconds",)  # what differs by run, not by rule


def _cases(root: Path) -> dict[str, Path]:
    """One submission per early case, each in a folder of its own (named after the case)."""
    out: dict[str, Path] = {}

    def place(case: str, name: str | bytes) -> Path:
        folder = root / case
        folder.mkdir(parents=True)
        if isinstance(name, bytes):
            return Path(os.fsdecode(os.fsencode(folder) + b"/" + name))
        return folder / name

    p = place("corrupt_zip", "sub.zip")
    p.write_bytes(b"PK\x03\x04 not a zip at all" * 10)
    out["corrupt_zip"] = p
    good = make_submission(root / "good", only=[EX])
    nb = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    p = place("truncated", "sub.ipynb")
    p.write_text(nb[: len(nb) // 2])
    out["truncated"] = p
    p = place("empty", "sub.ipynb")
    p.write_bytes(b"")
    out["empty"] = p
    out["missing"] = place("missing", "nowhere.ipynb")
    p = place("too_large", "sub.ipynb")
    with open(p, "wb") as fh:
        fh.truncate(_loader.MAX_NOTEBOOK_BYTES + 1)
    out["too_large"] = p
    p = place("not_utf8_name", b"caf\xe9.zip")  # a Latin-1 name, and a zip of the good folder cut short
    with zipfile.ZipFile(root / "whole.zip", "w") as zf:
        for f in good.iterdir():
            zf.write(f, f.name)
    p.write_bytes((root / "whole.zip").read_bytes()[:200])
    out["not_utf8_name"] = p
    p = place("reader_trouble", TROUBLE)
    p.write_text(nb)
    out["reader_trouble"] = p
    return out


def _troubled_load(real):
    def load(self, path: str):
        if path.endswith(TROUBLE):
            raise _loadguard.ReaderTrouble("the reading child could not start (a test's stand-in)")
        return real(self, path)
    return load


def _exercise_row(row: dict) -> dict:
    ex = dict(row["exercises"][EX])
    for key in RUN_FACTS:
        ex.pop(key, None)
    return ex


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Path]:
    return _cases(tmp_path_factory.mktemp("early"))


@pytest.fixture(scope="module")
def local_results(cases) -> dict[str, dict]:
    """``GradingRun.grade`` over every case at once (the rows of ``grade`` and the otter path): whole rows."""
    from autograder.engine.run import GradingRun

    mp = pytest.MonkeyPatch()
    mp.setattr(_loadguard.Reader, "load", _troubled_load(_loadguard.Reader.load))
    run = GradingRun(device="cpu", seed=SEED, exercises=[EX])
    try:
        rows = run.grade([str(p) for p in cases.values()], only=[EX])
    finally:
        run.close()
        mp.undo()
    return dict(zip(cases, rows))


@pytest.fixture(scope="module")
def local_rows(local_results) -> dict[str, dict]:
    """Each case's exercise row, the run's facts aside."""
    return {case: _exercise_row(r) for case, r in local_results.items()}


def test_each_early_case_has_the_status_its_rule_gives(local_rows):
    for case, row in local_rows.items():
        want = "grader_error" if case == "reader_trouble" else "unreadable"
        assert row["status"] == want, (case, row["status"], row["message"])
        assert row["score"] == 0 and row["tests"] and not any(t["passed"] for t in row["tests"]), case


def test_the_cluster_gives_the_same_early_rows(cases, local_rows, monkeypatch):
    """The Dask client's loop reads on the client (tasks never start for an unreadable submission)."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    from test_cluster_client import fake_run

    monkeypatch.setattr(_loadguard.Reader, "load", _troubled_load(_loadguard.Reader.load))
    run = fake_run(monkeypatch, lambda item, n: pytest.fail(f"a task started for {item}"))
    run.seed = SEED  # the rows' fingerprint names the seed
    rows = run.grade([str(p) for p in cases.values()], only=[EX])
    for case, row in zip(cases, rows):
        assert _exercise_row(row) == local_rows[case], case


def test_regrade_gives_the_same_early_rows(cases, local_results, local_rows, tmp_path, monkeypatch):
    """``tapetrace regrade --all`` over those rows grades each case again through the session (its own driver
    since issue 65): the same early rows. A path no longer there is regrade's refusal, not a row."""
    from autograder import cli

    monkeypatch.setattr(_loadguard.Reader, "load", _troubled_load(_loadguard.Reader.load))
    here = [case for case in cases if case != "missing"]
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps([local_results[case] for case in here]))
    assert cli.main(["regrade", str(old), "--all", "--json", str(new), "--device", "cpu", "--quiet"]) == 3
    rows = json.loads(new.read_text())
    assert [r["submission"] for r in rows] == [local_results[case]["submission"] for case in here]
    for case, row in zip(here, rows):
        assert _exercise_row(row) == local_rows[case], case


PYTEST_ROW = """
import json, sys
import pytest
from autograder.submissions import loadguard
real = loadguard.Reader.load
def load(self, path):
    if path.endswith({trouble!r}):
        raise loadguard.ReaderTrouble("the reading child could not start (a test's stand-in)")
    return real(self, path)
loadguard.Reader.load = load
class Probe:
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        row = session.config.pluginmanager.get_plugin("tapetrace-session").row
        with open({out!r}, "w") as fh:
            json.dump(row, fh)
sys.exit(pytest.main({args!r}, plugins=[Probe()]))
"""


def _pytest_entry_row(sub: Path, out: Path) -> tuple[int, dict | None, str]:
    args = ["-p", "autograder.pytest_plugin", f"--tapetrace-submission={os.fsdecode(sub)}", "--tapetrace-seed",
            str(SEED), "--tapetrace-device", "cpu", "-k", EX, "-q", "-p", "no:cacheprovider"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    code = PYTEST_ROW.format(trouble=TROUBLE, out=str(out), args=args)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          errors="replace", timeout=600)
    row = json.loads(out.read_text()) if out.exists() else None
    return proc.returncode, row, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("case", ["corrupt_zip", "truncated", "empty", "too_large", "not_utf8_name",
                                  "reader_trouble"])
def test_the_pytest_entry_gives_the_same_early_rows(case, cases, local_rows, tmp_path):
    code, row, out = _pytest_entry_row(cases[case], tmp_path / "row.json")
    assert row is not None, out
    assert code == pytest.ExitCode.TESTS_FAILED, out  # every check of the exercise fails, none errors
    assert _exercise_row(row) == local_rows[case], case


def test_the_pytest_entry_refuses_a_missing_submission_before_grading(cases, tmp_path):
    """A path that is not there is the command line's mistake (a usage error), as documented; never a row."""
    code, row, out = _pytest_entry_row(cases["missing"], tmp_path / "row.json")
    assert code == pytest.ExitCode.USAGE_ERROR and row is None, out
