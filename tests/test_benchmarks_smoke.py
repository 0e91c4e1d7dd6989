"""Each benchmark at its smallest: it fails loudly (non-zero exit) on a zero score or an empty table.

After the engine's split ``benchmarks/profile_lone.py`` patched names that had moved and printed a table of
zeros and "score 0/130" with exit status 0 (issue 38). Every benchmark now ends through
``benchmarks/_loud.py``; these runs are the cheapest that still grade something (one exercise, one
submission). The heavier ones are marked ``slow`` (still part of ``make test``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from autograder.core.paths import ROOT, SOLUTIONS

BENCH = ROOT / "benchmarks"
ONE = "ex01_torch_mlp"


def _bench(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def _loud():
    spec = importlib.util.spec_from_file_location("_loud", BENCH / "_loud.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_zero_score_or_an_empty_table_exits_non_zero(capsys):
    loud = _loud()
    loud.require_score("x", 3.0, 10.0)
    loud.require_rows("t", [1])
    for call in (lambda: loud.require_score("x", 0.0, 10.0), lambda: loud.require_score("x", 1.0, 0.0),
                 lambda: loud.require_rows("t", [])):
        with pytest.raises(SystemExit) as exc:
            call()
        assert exc.value.code == 1
    assert capsys.readouterr().err.count("BENCHMARK BROKEN") == 3


def test_profile_lone_measures_both_sides_and_scores():
    """Each side's probe calls, its workers' CPU and, for a JAX exercise, JAX's compiles (the worker's loop
    frames its answers itself: an instrument that only wrapped ``wire.send`` measured ~nothing and no compile)."""
    jax_one = "ex04_jax_mlp"
    cp = _bench(str(BENCH / "profile_lone.py"), "--jobs", "1", "--only", f"{ONE},{jax_one}")
    assert cp.returncode == 0, cp.stdout[-2000:] + cp.stderr[-2000:]
    got = re.search(r"score ([\d.]+)/([\d.]+)", cp.stdout)
    assert got and float(got[1]) == float(got[2]) > 0, cp.stdout[-1500:]
    for ex in (ONE, jax_one):
        rows = {m[1]: m[2].split() for m in re.finditer(rf"^{ex}\s+(student|reference)\s+(.*)$", cp.stdout, re.M)}
        assert set(rows) == {"student", "reference"}
        for side, cols in rows.items():
            n, cpu, jax_compile, xla, n_xla = (float(c) for c in cols[3:8])
            assert n > 0 and cpu > 0, f"{ex} {side}: no probe call or worker CPU measured: {cols}"
            if ex == jax_one:
                assert jax_compile > 0 and (xla > 0 and n_xla > 0 or side == "student"), \
                    f"{ex} {side}: JAX compiled nothing measured: {cols}"


def test_the_in_process_baseline_fails_on_an_empty_table():
    cp = _bench(str(BENCH / "inprocess.py"), str(SOLUTIONS))
    assert cp.returncode == 1 and "BENCHMARK BROKEN" in cp.stderr


def test_similarity_on_a_tiny_class_finds_its_ring():
    cp = _bench(str(BENCH / "similarity.py"), "--students", "8", "--exercises", ONE, "--rings", "1",
                "--ring-size", "2", "--jobs", "1")
    assert cp.returncode == 0, cp.stdout[-1500:] + cp.stderr[-1500:]
    assert "ring pairs ranked first: 1/1" in cp.stdout
    cp = _bench(str(BENCH / "similarity.py"), "--students", "8", "--exercises", "ex99_nothing")
    assert cp.returncode == 1 and "BENCHMARK BROKEN" in cp.stderr


@pytest.mark.parametrize("script, args", [
    ("run.py", ["--sections", "iso", "--only", "ex99"]),
    ("seed_sweep.py", ["--only", "ex99", "--seeds", "1"]),
    ("jax_cache_probe.py", ["ex99_nothing"]),
])
def test_a_benchmark_given_nothing_to_grade_says_so(script, args):
    cp = _bench(str(BENCH / script), *args)
    assert cp.returncode == 1 and "BENCHMARK BROKEN" in cp.stderr, cp.stdout[-1000:] + cp.stderr[-1000:]


@pytest.mark.slow
def test_run_py_iso_section_grades_one_exercise():
    """``make bench``'s first section at its smallest: one exercise, one repetition (it runs
    benchmarks/inprocess.py too, whose scores it compares with the isolated run's)."""
    cp = _bench(str(BENCH / "run.py"), "--sections", "iso", "--only", ONE, "--reps", "1")
    assert cp.returncode == 0, cp.stdout[-2000:] + cp.stderr[-2000:]
    assert "same scores both ways" in cp.stdout and "True" in cp.stdout.split("same scores both ways")[1][:80]


@pytest.mark.slow
def test_zygote_safety_on_one_exercise():
    cp = _bench(str(BENCH / "zygote_safety.py"), ONE)
    assert cp.returncode == 0, cp.stdout[-2000:] + cp.stderr[-2000:]
    assert '"probe_mismatches": []' in cp.stdout
