"""`make test`'s shape: it runs on every core, and what it leaves out (the opt-in container paths) is the list
docs/benchmarks.md gives, each skipped saying how to run it."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest

from autograder.core.paths import ROOT

DOC = ROOT / "docs" / "benchmarks.md"


def _marked(name: str) -> set[str]:
    """Test files that use ``pytest.mark.NAME`` anywhere (a decorator or ``pytestmark``)."""
    out = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "mark":
                out.add(str(path.relative_to(ROOT)))
    return out


def _documented_opt_in() -> set[str]:
    text = DOC.read_text()
    section = text.split("## Opt-in tests", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(tests/[\w/]+\.py)`", section))


def test_the_opt_in_container_tests_are_the_documented_ones():
    marked = _marked("container")
    assert marked, "no test is marked container"
    assert marked == _documented_opt_in(), "docs/benchmarks.md's 'Opt-in tests' must list the container tests"


def test_an_opt_in_test_is_skipped_saying_how_to_run_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TAPETRACE_CONTAINERS" and not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--basetemp={tmp_path / 'b'}", "-m", "container", *sorted(_marked("container"))],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" not in done.stdout and "skipped" in done.stdout, done.stdout[-2000:]
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips and all("TAPETRACE_CONTAINERS=1" in line for line in skips), skips


def test_make_test_runs_on_every_core():
    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "-n $(TEST_WORKERS)" in recipe, recipe
    assert "make test-containers" in DOC.read_text() and "\ntest-containers:" in make
    assert '"pytest-xdist' in (ROOT / "pyproject.toml").read_text()


def test_make_demo_installs_only_what_grading_needs_and_make_test_the_dev_extras(tmp_path):
    """Issue 56: `make demo` installed the dev extras (pytest, otter, mkdocs, dask...) to grade three examples."""
    import shutil

    if shutil.which("make") is None:
        pytest.skip("no make on this machine")

    def dry(target):
        done = subprocess.run(["make", "-n", target, f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    demo, test = dry("demo"), dry("test")
    assert "pip install -q -c constraints.txt -e ." in demo and "[dev]" not in demo, demo
    assert "tapetrace grade examples/submissions/" in demo
    assert "-e '.[dev]'" in test, test


def test_make_test_compiles_the_graders_bytecode_before_the_suite():
    """Under PYTHONDONTWRITEBYTECODE (this CI image sets it) no interpreter writes bytecode: without it compiled
    once up front, each of the suite's interpreters compiled every autograder module it imported again."""
    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    lines = recipe.splitlines()
    compile_at = next(i for i, line in enumerate(lines) if "-m compileall" in line)
    assert "autograder" in lines[compile_at].split("compileall", 1)[1]
    assert compile_at < next(i for i, line in enumerate(lines) if "-m pytest" in line)


def test_tests_that_share_a_grading_or_the_machine_go_to_one_worker():
    from conftest import xdist_unit

    assert xdist_unit("tests/adversarial/test_attacks.py::test_attack_is_contained[namespaces-x]") == \
        xdist_unit("tests/adversarial/test_paths.py::test_cluster") == "adversarial"
    mutant = "tests/test_outcomes.py::test_mutant_fails_exactly_its_checks[ex07_flax_cnn/flatten_channels_first]"
    valid = "tests/test_outcomes.py::test_valid_variant_gets_full_marks[ex07_flax_cnn/nhwc_pooling]"
    assert xdist_unit(mutant) == xdist_unit(valid) == "cases-ex07_flax_cnn"
    assert xdist_unit(mutant.replace("ex07_flax_cnn", "ex08_jax_transforms")) == "cases-ex08_jax_transforms"
    assert xdist_unit("tests/test_outcomes.py::test_solution_gets_full_marks[ex01_torch_mlp]") == \
        xdist_unit("tests/test_outcomes.py::test_stub_is_not_attempted[ex13_spmd]") == "solutions-and-stubs"
    alone = "tests/test_outcomes.py::test_every_check_has_a_mutant[ex01_torch_mlp]"
    assert xdist_unit(alone) == alone
    assert xdist_unit("tests/test_pytest_plugin.py::test_same_verdicts_as_grade[stub]") == \
        xdist_unit("tests/test_pytest_plugin.py::test_same_verdicts_as_grade[broken]") == "tests/test_pytest_plugin.py"
