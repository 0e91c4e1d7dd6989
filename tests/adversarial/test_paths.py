"""The engine's attacks graded on every path a submission takes: `tapetrace grade`, the pytest entry
(``--tapetrace-submission=PATH``; the space form is refused, tests/test_pytest_plugin.py) and
``--cluster local:1``, then ``tapetrace report`` on the results.

One batch, each folder a class of attack beside honest exercises (the canaries): a worker that breaks
the protocol (a 30 MB frame of nested lists, a 100,000-deep status then a spin), one that forges the
run's isolation record, exception type names full of terminal escapes, a 1 GB exercise file, a notebook
too long to read within the budget, and folder names of any bytes (not UTF-8, escapes, TeX, a formula, a
leading space, a leading ``-``). Every path must give each exercise what its code earns, the same on
each path, and no output may carry what the student wrote raw.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite
from autograder.submissions.loadguard import READ_SECONDS_ENV

from .attacklib import ATTACKS_DIR, attack_source

ONLY = ["ex01_torch_mlp", "ex04_jax_mlp", "ex09_autograd_tape"]
SEED = 4242
READ_SECONDS = "8"
TIMEOUT = "20"  # per call; the reading budget is twice that (_loadguard.read_seconds)
NAMES = [b"caf\xe9", b"esc\x1b]52;c;aGk=\x07\rX", b"$\\x$", b" alice", b"alice", b'=HYPERLINK("x")', b"--public-only"]
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what no output may carry from a student (\t and \n are layout)


def _attack(name: str) -> tuple[str, str]:
    """(target exercise, source) of an attack file, appended to the reference solution when it says so."""
    return attack_source(ATTACKS_DIR / f"{name}.py")


def _folder(path: Path, replace: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for ex in ONLY:
        (path / f"{ex}.py").write_text(replace.get(ex) or (SOLUTIONS / f"{ex}.py").read_text())
    return path


def _slow_notebook(path: Path) -> Path:
    nb = json.loads((ROOT / "student_template" / "tapetrace.ipynb").read_text())
    nb["cells"][3:3] = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                         "source": f"v{i} = {i}\ndef f{i}(x):\n    return x + v{i}\n"} for i in range(200_000)]
    path.write_text(json.dumps(nb))
    return path


def _points(ex: str, passing: set[str] | None = None) -> float:
    return float(sum(c.points for c in load_suite(ex).checks if passing is None or c.name in passing))


def _expected() -> dict[str, dict[str, tuple[str, float, str]]]:
    """submission key -> exercise -> (status, score, a text its message holds)."""
    full = {ex: ("graded", _points(ex), "") for ex in ONLY}
    out = {
        "protocol": {**full, "ex01_torch_mlp": ("crashed", 0.0, "does not accept"),
                     "ex04_jax_mlp": ("crashed", 0.0, "does not accept")},
        # patching the grader's own code (here autograder.core.wire.send) is refused: every check scores 0
        "forged": {**full, "ex01_torch_mlp": ("graded", 0.0, "the grader's own code")},
        # an answer frame written beside the worker's loop: the whole exercise scores 0, passes before it included
        "pipe": {**full, "ex01_torch_mlp": ("graded", 0.0, "wrote on the grader's result pipe")},
        "escapes": {**full, "ex01_torch_mlp": ("graded", _points("ex01_torch_mlp", {"parameter_shapes_in_order"}),
                                               "\\x1b]52")},
        "oversized": {**full, "ex04_jax_mlp": ("unreadable", 0.0, "larger than")},
        # over the reading budget (READ_SECONDS in _env: 200,000 cells take ~30-60 s here), in time or memory
        "slow": {ex: ("unreadable", 0.0, "hand in the notebook made from the template") for ex in ONLY},
    }
    for i in range(len(NAMES)):
        out[f"name{i}"] = {"ex01_torch_mlp": ("graded", _points("ex01_torch_mlp"), ""),
                           "ex04_jax_mlp": ("missing", 0.0, ""), "ex09_autograd_tape": ("missing", 0.0, "")}
    return out


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict[str, bytes]:
    """submission key -> its path (bytes: some names are not UTF-8)."""
    tmp = tmp_path_factory.mktemp("paths")
    subs: dict[str, Path] = {}
    protocol = dict([_attack("bloated_frame"), _attack("deep_frame_then_spin")])
    subs["protocol"] = _folder(tmp / "protocol", protocol)
    subs["forged"] = _folder(tmp / "forged", dict([_attack("forged_isolation_record")]))
    subs["escapes"] = _folder(tmp / "escapes", dict([_attack("escapes_in_type_name")]))
    subs["pipe"] = _folder(tmp / "pipe", dict([_attack("forge_ex01_answer_frame_before_the_first")]))
    subs["oversized"] = _folder(tmp / "oversized", {})
    with open(subs["oversized"] / "ex04_jax_mlp.py", "r+b") as fh:  # sparse: 1 GB without the disk
        fh.truncate(1024**3)
    subs["slow"] = _slow_notebook(tmp / "slow.ipynb")
    out = {k: os.fsencode(v) for k, v in subs.items()}
    names = tmp / "names"
    names.mkdir()
    for i, name in enumerate(NAMES):
        folder = os.path.join(os.fsencode(names), name)
        os.mkdir(folder)
        with open(os.path.join(folder, b"ex01_torch_mlp.py"), "wb") as fh:
            fh.write((SOLUTIONS / "ex01_torch_mlp.py").read_bytes())
        out[f"name{i}"] = folder
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    # a reading budget far from both sides: the other submissions read in well under a second, the slow
    # notebook in tens of seconds (the default, max(20 s, 2 x --timeout), would make its verdict a race)
    env[READ_SECONDS_ENV] = READ_SECONDS
    return env


def _grade(batch: dict[str, bytes], out: Path, *extra: str) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """`tapetrace grade` on the whole batch; (the process, key -> its row)."""
    out.mkdir()
    cmd = [sys.executable, "-m", "autograder.cli", "grade", "--only", ",".join(ONLY), "--device", "cpu",
           "--seed", str(SEED), "--timeout", TIMEOUT, "--jobs", "2", "--json", str(out / "r.json"),
           "--csv", str(out / "r.csv"), "--feedback", str(out / "fb"), "--feedback-format", "both", *extra,
           "--", *batch.values()]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((out / "r.json").read_text())
    by_path = {r["submission"]: r for r in rows}
    return proc, {k: by_path[os.fsdecode(p)] for k, p in batch.items()}


def _check_rows(rows: dict[str, dict]) -> None:
    """Each exercise as expected; every row's isolation record the sandbox's, one and the same for all."""
    for key, want in _expected().items():
        row = rows[key]
        for ex, (status, score, text) in want.items():
            e = row["exercises"][ex]
            assert (e["status"], e["score"]) == (status, score), (key, ex, e["status"], e["score"], e["message"])
            assert text in e["message"], (key, ex, e["message"])
            for t in e["tests"]:
                assert not RAW.search(t["message"]) and len(t["message"]) < 600, (key, ex, t["message"][:300])
        assert not row["isolation"].get("forged"), (key, row["isolation"])
    assert len({json.dumps(r["isolation"], sort_keys=True) for r in rows.values()}) == 1


@pytest.fixture(scope="module")
def graded(batch, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict[str, dict], Path]:
    out = tmp_path_factory.mktemp("grade")
    proc, rows = _grade(batch, out / "out")
    return proc, rows, out / "out"


def test_tapetrace_grade(graded):
    proc, rows, out = graded
    _check_rows(rows)
    text = proc.stdout.decode("utf-8") + proc.stderr.decode("utf-8")  # everything printed is UTF-8
    assert not RAW.search(text.replace("\r\n", "\n")), "raw control characters reached the terminal"
    assert (out / "r.json").stat().st_size < 2 * 1024**2  # a 8 MB type name once made a 146 MB JSON
    for row in csv.reader((out / "r.csv").open(encoding="utf-8")):
        assert row[0].lstrip()[:1] not in ("=", "+", "-", "@"), row[0]
        assert not RAW.search(row[0]), row[0]
    feedback = sorted(p.name for p in (out / "fb").iterdir())
    assert len(feedback) == 2 * len(rows), feedback  # one .md and one .html each: no two share a file


def test_the_report_is_built_from_these_results(graded, tmp_path):
    _proc, _rows, out = graded
    cmd = [sys.executable, "-m", "autograder.cli", "report", str(out / "r.json"), "--out", str(tmp_path / "rep")]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]  # a name like $\x$ once stopped it (matplotlib's mathtext)
    for row in csv.reader((tmp_path / "rep" / "summary.csv").open(encoding="utf-8")):
        assert all(cell.lstrip()[:1] not in ("=", "+", "@") for cell in row), row
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "\x1b" not in page and "<script" not in page


def test_a_glob_that_expands_to_an_option_is_refused(batch):
    names = os.path.dirname(batch["name0"])
    cmd = [sys.executable, "-m", "autograder.cli", "grade", "--only", ",".join(ONLY), "--device", "cpu",
           *sorted(os.listdir(names))]
    proc = subprocess.run(cmd, cwd=names, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--public-only" in proc.stderr, proc.stderr[-2000:]


def test_cluster(batch, graded, tmp_path):
    pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    _proc, rows, _out = graded
    _cproc, crows = _grade(batch, tmp_path / "out", "--cluster", "local:1")
    _check_rows(crows)
    for key in rows:
        for ex in ONLY:
            a, b = rows[key]["exercises"][ex], crows[key]["exercises"][ex]
            assert [(t["name"], t["passed"]) for t in a["tests"]] == [(t["name"], t["passed"]) for t in b["tests"]]


def _junit(path: Path) -> dict[str, bool]:
    return {f"{c.get('classname')}::{c.get('name')}": c.find("failure") is None and c.find("error") is None
            for c in ET.parse(path).getroot().iter("testcase")}


@pytest.mark.parametrize("key", ["protocol", "escapes", "oversized", "slow"])
def test_pytest_entry(batch, graded, tmp_path, key):
    _proc, rows, _out = graded
    sub = os.fsdecode(batch[key])
    cmd = [sys.executable, "-m", "pytest", "-p", "autograder.pytest_plugin", f"--tapetrace-submission={sub}",
           "--tapetrace-seed", str(SEED), "--tapetrace-device", "cpu", "--tapetrace-timeout", TIMEOUT,
           "-p", "no:cacheprovider", "-k", " or ".join(ex[:4] for ex in ONLY), f"--junitxml={tmp_path / 'j.xml'}"]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=3000)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    want = {f"{ex}::{t['name']}": t["passed"] for ex in ONLY for t in rows[key]["exercises"][ex]["tests"]}
    assert _junit(tmp_path / "j.xml") == want
    assert not RAW.search(proc.stdout.replace("\r\n", "\n")), "raw control characters reached pytest's output"


def test_pytest_entry_counts_no_point_of_a_forged_exercise(batch, graded, tmp_path):
    """The pytest entry reports each check as it runs: the checks before the forged answer keep the pass pytest
    printed (honest answers), the one that meets it and every later one fail, and the points summary counts
    nothing of the exercise, as `grade` does; the other exercises' verdicts are `grade`'s."""
    _proc, rows, _out = graded
    sub = os.fsdecode(batch["pipe"])
    cmd = [sys.executable, "-m", "pytest", "-p", "autograder.pytest_plugin", f"--tapetrace-submission={sub}",
           "--tapetrace-seed", str(SEED), "--tapetrace-device", "cpu", "--tapetrace-timeout", TIMEOUT,
           "-p", "no:cacheprovider", "-k", " or ".join(ex[:4] for ex in ONLY), f"--junitxml={tmp_path / 'j.xml'}"]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=3000)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = _junit(tmp_path / "j.xml")
    forged = [got[f"ex01_torch_mlp::{t['name']}"] for t in rows["pipe"]["exercises"]["ex01_torch_mlp"]["tests"]]
    assert False in forged and all(not p for p in forged[forged.index(False):]), forged
    others = {f"{ex}::{t['name']}": t["passed"] for ex in ONLY if ex != "ex01_torch_mlp"
              for t in rows["pipe"]["exercises"][ex]["tests"]}
    assert {k: v for k, v in got.items() if not k.startswith("ex01_torch_mlp::")} == others
    assert re.search(r"ex01_torch_mlp\s+0 / 10 points", proc.stdout), proc.stdout[-3000:]
    assert "wrote on the grader's result pipe" in proc.stdout
