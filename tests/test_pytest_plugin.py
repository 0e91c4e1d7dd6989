"""The pytest plugin (autograder/pytest_plugin.py): hidden suites as pytest items, same verdicts as `tapetrace grade`.

Each case runs pytest in a subprocess (``python -m pytest -p autograder.pytest_plugin --tapetrace-submission
...``) and reads its JUnit XML: the item's outcome, and the check's code and points the plugin records as
properties. A few exercises only (both frameworks), to keep the cost small.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import MUTANTS, SEED, make_submission, mutant_meta

from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS
from autograder.hidden import load_suite

EXS = ["ex01_torch_mlp", "ex05_jit_train_step", "ex08_jax_transforms", "ex09_autograd_tape"]
K = " or ".join(ex[:4] for ex in EXS)
MUTANT_FILES = {"ex01_torch_mlp": "relu_after_last", "ex05_jit_train_step": "not_jitted",
                "ex08_jax_transforms": "count_jitted", "ex09_autograd_tape": "breadth_first"}
TIMEOUT = os.environ.get("TAPETRACE_TEST_TIMEOUT", "60")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_pytest(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-p", "autograder.pytest_plugin", *args]
    return subprocess.run(cmd, cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True, timeout=900)


def grade_args(sub: Path | str, tmp: Path, *extra: str) -> list[str]:
    return [f"--tapetrace-submission={sub}", "--tapetrace-seed", str(SEED), "--tapetrace-device", "cpu",
            "--tapetrace-timeout", TIMEOUT, "-o", f"cache_dir={tmp / 'cache'}", *extra]


def junit(path: Path) -> dict[str, dict]:
    """node id -> {passed, code, score, max_score, text} of every test case pytest ran."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        out[f"{case.get('classname')}::{case.get('name')}"] = {
            "passed": bad is None and case.find("skipped") is None, "code": props.get("code"),
            "score": float(props.get("score", "nan")), "max_score": float(props.get("max_score", "nan")),
            "text": "" if bad is None else (bad.get("message") or "") + (bad.text or "")}
    return out


def verdicts(result: dict) -> dict[str, tuple[bool, str]]:
    """node id -> (passed, code) of a `tapetrace grade --json` result, for the exercises in EXS."""
    return {f"{ex}::{t['name']}": (t["passed"], t["code"]) for ex in EXS for t in result["exercises"][ex]["tests"]}


@pytest.fixture(scope="module")
def subs(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("subs")
    mutants = make_submission(tmp / "mutants", {ex: (MUTANTS / ex / f"{name}.py").read_text()
                                                for ex, name in MUTANT_FILES.items()}, only=EXS)
    broken = make_submission(tmp / "broken", {
        "ex01_torch_mlp": "import torch\n\nclass MLP(torch.nn.Module:\n    pass\n",  # does not parse
        "ex08_jax_transforms": "raise RuntimeError('half-finished cell')\n",  # raises while loading
        "ex09_autograd_tape": (MUTANTS / "ex09_autograd_tape" / "uses_backward.py").read_text()},
        only=["ex01_torch_mlp", "ex08_jax_transforms", "ex09_autograd_tape"])  # ex05: missing
    return {"solutions": SOLUTIONS, "stub": EXERCISES_DIR, "mutants": mutants, "broken": broken}


@pytest.fixture(scope="module")
def graded(subs, tmp_path_factory) -> dict[str, dict]:
    """`tapetrace grade --json` on every submission (one run, same seed and device)."""
    out = tmp_path_factory.mktemp("grade") / "results.json"
    cmd = [sys.executable, "-m", "autograder.cli", "grade", *map(str, subs.values()), "--only", ",".join(EXS),
           "--seed", str(SEED), "--device", "cpu", "--timeout", TIMEOUT, "--quiet", "--json", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(out.read_text())
    return dict(zip(subs, results, strict=True))


@pytest.fixture(scope="module")
def plugin_runs(subs, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, dict, Path]]:
    """The plugin on every submission: (process, JUnit cases, its folder with the pytest cache)."""
    runs = {}
    for name, sub in subs.items():
        tmp = tmp_path_factory.mktemp(f"plugin-{name}")
        proc = run_pytest(*grade_args(sub, tmp, "-k", K, f"--junitxml={tmp / 'junit.xml'}"))
        assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
        runs[name] = (proc, junit(tmp / "junit.xml"), tmp)
    return runs


# ------------------------------------------------------------------ collection (cheap: nothing is graded)
def test_node_ids_and_k_selects_one_exercise(tmp_path):
    proc = run_pytest(*grade_args(SOLUTIONS, tmp_path, "--collect-only", "-q", "-k", "ex05"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids == [f"ex05_jit_train_step::{c.name}" for c in load_suite("ex05_jit_train_step").checks]
    assert "ex05_jit_train_step::step_any_optimizer" in ids


def test_collects_every_hidden_check_by_default(tmp_path):
    """No path: autograder/hidden, not the project's testpaths; hidden suites include the public checks."""
    proc = run_pytest(*grade_args(SOLUTIONS, tmp_path, "--collect-only", "-q"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = {line for line in proc.stdout.splitlines() if "::" in line}
    assert ids == {f"{ex}::{c.name}" for ex in EXERCISES for c in load_suite(ex).checks}
    assert any(not c.hidden for c in load_suite("ex05_jit_train_step").checks)


def test_public_only_and_a_named_file(tmp_path):
    hidden_file = ROOT / "autograder" / "hidden" / "ex09_autograd_tape.py"
    proc = run_pytest(*grade_args(SOLUTIONS, tmp_path, "--collect-only", "-q", "--tapetrace-public-only",
                                  str(hidden_file)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids == [f"ex09_autograd_tape::{c.name}" for c in load_suite("ex09_autograd_tape").checks if not c.hidden]


def test_inert_without_the_option(tmp_path):
    """Other pytest runs are untouched: no frameworks imported, no hidden checks collected."""
    (tmp_path / "test_other.py").write_text(
        "import sys\n\n\ndef test_no_frameworks():\n"
        "    assert 'torch' not in sys.modules and 'jax' not in sys.modules\n")
    proc = run_pytest("-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path),
                      str(ROOT / "autograder" / "hidden"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout and "::" not in proc.stdout.replace("test_other.py::", "")


def test_entry_point_loads_it_without_p(tmp_path):
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", *grade_args(SOLUTIONS, tmp_path, "-k", "ex09")]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line for line in proc.stdout.splitlines() if "::" in line] == [
        f"ex09_autograd_tape::{c.name}" for c in load_suite("ex09_autograd_tape").checks]


def test_missing_submission_is_a_usage_error(tmp_path):
    proc = run_pytest(*grade_args(tmp_path / "nope", tmp_path, "--collect-only"))
    assert proc.returncode == 4 and "no such file or directory" in proc.stderr


# ------------------------------------------------------------------ nothing of the submission in pytest's process
HOSTILE = Path(__file__).parent / "adversarial" / "hostile_pytest"


def hostile_submission(folder: Path) -> Path:
    """A correct ex01 in a folder carrying a pytest.ini (pythonpath = .), a conftest.py and a numpy.py."""
    folder.mkdir(parents=True)
    for f in HOSTILE.glob("*.txt"):
        (folder / f.name[: -len(".txt")]).write_text(f.read_text())
    (folder / "ex01_torch_mlp.py").write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text())
    return folder


def _marks(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("MARK-*"))


@pytest.mark.parametrize("where", ["space_form", "collected", "cwd_inside"])
def test_refused_before_pytest_reads_the_submission(tmp_path, where):
    """`--tapetrace-submission PATH` (PATH taken for a test path), PATH also given to collect, or pytest run
    from inside the submission: refused before any conftest.py or shadowing module of it is imported."""
    sub = hostile_submission(tmp_path / "sub")
    rest = ["--tapetrace-seed", "1", "--tapetrace-device", "cpu", "-p", "no:cacheprovider", "-k", "ex01"]
    if where == "space_form":
        proc = run_pytest("--tapetrace-submission", str(sub), *rest)
    elif where == "collected":
        proc = run_pytest(f"--tapetrace-submission={sub}", str(sub), *rest)
    else:
        proc = run_pytest("--tapetrace-submission=.", "--rootdir", str(sub), *rest, cwd=sub)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "--tapetrace-submission" in proc.stderr
    assert _marks(sub) == [], "the submission's files ran in pytest's process"


def test_equals_form_grades_without_reading_the_submission(tmp_path):
    sub = hostile_submission(tmp_path / "sub")
    proc = run_pytest(*grade_args(sub, tmp_path, "-k", "ex01 and forward_matches_reference",
                                  f"--junitxml={tmp_path / 'junit.xml'}"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [c["passed"] for c in junit(tmp_path / "junit.xml").values()] == [True]
    assert _marks(sub) == []


# ------------------------------------------------------------------ verdicts (graded)
@pytest.mark.parametrize("name", ["solutions", "stub", "mutants", "broken"])
def test_same_verdicts_as_grade(name, graded, plugin_runs):
    proc, cases, _ = plugin_runs[name]
    want = verdicts(graded[name])
    assert {k: (v["passed"], v["code"]) for k, v in cases.items()} == want
    for ex in EXS:
        tests = graded[name]["exercises"][ex]["tests"]
        for t in tests:
            case = cases[f"{ex}::{t['name']}"]
            assert (case["score"], case["max_score"]) == (t["score"], t["max_score"])
            if not t["passed"]:  # the catalogued message and code, not a traceback
                assert f"[{t['code']}] {t['message']}" in case["text"]
                assert "Traceback" not in case["text"] and "_suite.py:" not in case["text"]
    total = sum(graded[name]["exercises"][ex]["score"] for ex in EXS)
    max_total = sum(graded[name]["exercises"][ex]["max_score"] for ex in EXS)
    m = re.search(r"^total\s+(\S+) / (\S+) points$", proc.stdout, re.M)
    assert m and (float(m[1]), float(m[2])) == (pytest.approx(total), pytest.approx(max_total)), proc.stdout[-2000:]
    assert proc.returncode == (0 if total == max_total else 1)


def test_the_three_outcomes_hold(graded, plugin_runs):
    """The comparison is not vacuous: solutions pass, the stub is not attempted, each mutant fails its checks."""
    sol, stub, mut, broken = (plugin_runs[n][1] for n in ("solutions", "stub", "mutants", "broken"))
    assert sol and all(c["passed"] for c in sol.values())
    assert stub.keys() == sol.keys() and all(c["code"] == "NOT_ATTEMPTED" for c in stub.values())
    for ex, name in MUTANT_FILES.items():
        failed = {k.split("::")[1] for k, c in mut.items() if k.startswith(ex + "::") and not c["passed"]}
        assert failed == mutant_meta(MUTANTS / ex / f"{name}.py")["fails"], ex
    codes = {k.split("::")[0]: c["code"] for k, c in broken.items() if not c["passed"]}
    assert codes["ex01_torch_mlp"] == "LOAD_SYNTAX" and codes["ex05_jit_train_step"] == "MISSING_FILE"
    assert codes["ex08_jax_transforms"] == "LOAD_EXCEPTION"
    assert "ex09_autograd_tape" in codes  # a mutant beside exercises that cannot run


def test_points_summary_per_exercise(graded, plugin_runs):
    proc = plugin_runs["mutants"][0]
    assert "tapetrace points" in proc.stdout
    for ex in EXS:
        res = graded["mutants"]["exercises"][ex]
        assert re.search(rf"^{ex}\s+{res['score']:g} / {res['max_score']:g} points", proc.stdout, re.M), ex


def test_lf_reruns_only_the_failures(subs, plugin_runs):
    _, first, tmp = plugin_runs["mutants"]  # its cache: what failed there
    proc = run_pytest(*grade_args(subs["mutants"], tmp, "--lf", "-k", "ex01 or ex09", f"--junitxml={tmp / 'lf.xml'}"))
    assert proc.returncode == 1, proc.stdout[-3000:]
    again = junit(tmp / "lf.xml")
    want = {k for k, c in first.items() if not c["passed"] and k.split("::")[0] in ("ex01_torch_mlp", "ex09_autograd_tape")}
    assert want and set(again) == want
    assert not any(c["passed"] for c in again.values())


def _first_failure(graded: dict, exercise: str) -> str:
    return next(t["name"] for t in graded["mutants"]["exercises"][exercise]["tests"] if not t["passed"])


def test_x_stops_at_the_first_failure_and_tb_long_shows_the_traceback(subs, graded, tmp_path):
    proc = run_pytest(*grade_args(subs["mutants"], tmp_path, "-x", "--tb=long", "-k", "ex01",
                                  f"--junitxml={tmp_path / 'x.xml'}"))
    assert proc.returncode == 1, proc.stdout[-3000:]
    cases = junit(tmp_path / "x.xml")
    names = [t["name"] for t in graded["mutants"]["exercises"]["ex01_torch_mlp"]["tests"]]
    first_bad = _first_failure(graded, "ex01_torch_mlp")
    assert list(cases) == [f"ex01_torch_mlp::{n}" for n in names[:names.index(first_bad) + 1]]
    assert [k for k, c in cases.items() if not c["passed"]] == [f"ex01_torch_mlp::{first_bad}"]
    assert f"def {first_bad}(" in proc.stdout  # --tb=long: the check's source, where it failed


def test_pdb_stops_in_the_failed_check(subs, graded, tmp_path):
    proc = run_pytest(*grade_args(subs["mutants"], tmp_path, "-x", "--pdb", "-k", "ex09"), stdin="where\nquit\n")
    assert "(Pdb)" in proc.stdout, proc.stdout[-3000:]
    assert re.search(rf"\(\d+\){_first_failure(graded, 'ex09_autograd_tape')}\(\)", proc.stdout), proc.stdout[-3000:]


def test_a_forged_answer_that_crashes_a_check_is_the_students_not_the_graders(tmp_path):
    """The plugin's items judge a forged answer as `tapetrace grade` does: a forged answer of a type no check
    expects, written on the result pipe while the worker's own answers go to /dev/null, is never confirmed by the
    worker loop's echo of the grader's fence: the student's 0 (EXERCISE_FORGED), never an internal grader error."""
    attack = ROOT / "tests" / "adversarial" / "attacks" / "forged_value_crashes_check.py"
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_torch_mlp.py").write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text() + "\n\n" + attack.read_text())
    proc = run_pytest(*grade_args(sub, tmp_path, "-k", "ex01 and works_on_any_device",
                                  f"--junitxml={tmp_path / 'j.xml'}"))
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    case = junit(tmp_path / "j.xml")["ex01_torch_mlp::works_on_any_device"]
    assert not case["passed"] and case["code"] == "EXERCISE_FORGED" and case["score"] == 0, case
    assert "INTERNAL_ERROR" not in proc.stdout and "internal grader error" not in proc.stdout
