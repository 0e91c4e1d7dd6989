"""`tapetrace build`: the committed student template is current, complete and leaks nothing."""

from __future__ import annotations

import inspect
import json
import os
import re
import textwrap

import pytest

from autograder import _cmd_build, _engine, _loader, _notebook, _otter, _public, _stubs
from autograder._paths import ROOT, SOLUTIONS
from autograder._protocol import reference_key

TEMPLATE = ROOT / "student_template"
NOTEBOOK = TEMPLATE / _notebook.NOTEBOOK


@pytest.fixture(scope="module")
def nb() -> dict:
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runtime(nb) -> dict[str, bytes]:
    return _cmd_build.zip_members(_notebook.runtime_of(nb))


@pytest.fixture(scope="module")
def snapshot(runtime) -> dict:
    return json.loads(runtime[_cmd_build.SNAPSHOT_ARC])


def test_student_template_is_up_to_date():
    problems = _cmd_build.stale(TEMPLATE)
    assert not problems, "student_template/ is stale, run `tapetrace build`:\n" + "\n".join(problems)


def test_cli_check_mode(capsys):
    assert _cmd_build.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_notebook_has_every_exercise_in_order(nb):
    exercises = _cmd_build.present()
    assert nb["metadata"]["tapetrace"]["exercises"] == exercises
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    roles = [_notebook.role_of(c) for c in nb["cells"]]
    assert roles[:2] == [(None, "markdown"), (None, "setup")]
    expected = [(ex, r) for ex in exercises for r in ("markdown", "answer", "check")]
    assert roles[2:-1] == expected and roles[-1] == (None, "markdown")
    for cell in nb["cells"]:
        ex, role = _notebook.role_of(cell)
        src = _notebook.source_of(cell)
        if role == "markdown" and ex:
            assert src.startswith(f"## {ex} — "), src[:80]
        if role == "check":
            assert src.strip() == f'check("{ex}")'
        if role in ("answer", "check"):
            assert cell["metadata"]["otter"] == {"ignore": True}  # never executed in otter's kernel


def test_notebook_is_valid_nbformat(nb):
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.from_dict(nb))
    assert _notebook.dumps(nb) == NOTEBOOK.read_text(encoding="utf-8")  # written as Jupyter writes it


def test_loader_reads_the_stubs_back(nb):
    sources = _loader.notebook_sources(nb)
    for ex in _cmd_build.present():
        stub = _stubs.stub_source((SOLUTIONS / f"{ex}.py").read_text(), ex)
        assert sources[ex] is not None and _notebook.code_cell_source(stub).strip() in sources[ex]
        assert "raise NotImplementedError" in sources[ex]


def test_fill_with_puts_the_solutions_where_the_loader_finds_them(nb):
    sols = {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in _cmd_build.present()}
    filled = _notebook.fill_with(nb, sols)
    got = _loader.notebook_sources(filled)
    for ex, text in sols.items():
        assert got[ex].strip() == text.strip()
    assert _loader.notebook_sources(nb) != got  # the original is untouched
    with pytest.raises(KeyError):
        _notebook.fill_with(nb, {"ex99_nothing": "x = 1\n"})


def test_setup_cell_installs_nothing_and_writes_one_file(nb):
    src = _notebook.source_of(_notebook.setup_cell(_notebook.without_runtime(nb)))  # the code, not the blob
    assert "pip" not in src and "install(" not in src and "subprocess" not in src
    assert src.count("open(") == 2 and _notebook.RUNTIME_FILE in src  # read + write of tapetrace_checks.zip


def test_runtime_holds_only_public_parts(runtime):
    allowed = re.compile(r"^autograder/(__init__\.py|_[a-z_]+\.py|_snapshot\.json|data/datasets\.npz|"
                         r"(messages|probes|public)/[a-z0-9_]+\.py)$")
    for name in runtime:
        assert allowed.match(name), name
        assert "/hidden/" not in name and "solutions" not in name
    modules = {n.split("/")[-1] for n in runtime if n.count("/") == 1}
    assert modules <= {"__init__.py", "_snapshot.json", *(_cmd_build.RUNTIME_MODULES)}


def _student_texts(nb, runtime) -> dict[str, str]:
    texts = {"tapetrace.ipynb (cells)": json.dumps(_notebook.without_runtime(nb))}
    for name, data in runtime.items():
        if name.endswith((".py", ".json")):
            texts[f"runtime:{name}"] = data.decode()
    for path in TEMPLATE.iterdir():
        if path.suffix in (".py", ".md"):
            texts[path.name] = path.read_text()
    return texts


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_no_solution_body_leaks(nb, runtime):
    texts = {k: _norm(v) for k, v in _student_texts(nb, runtime).items()}
    for ex in _cmd_build.present():
        solution = (SOLUTIONS / f"{ex}.py").read_text()
        given = _norm(_stubs.stub_source(solution, ex))
        for region in _stubs.solution_regions(solution):
            body = _norm(textwrap.dedent(region))
            if not body or re.sub(r"^return ", "", body) in given:
                continue  # empty, or spelled out by the instructions themselves (nothing left to leak)
            for where, text in texts.items():
                assert body not in text, f"the solution of {ex} leaks into {where}: {body[:80]}"


def test_no_long_solution_line_leaks(nb, runtime):
    """A line of 40+ characters from a solution region, verbatim in student material, is a leak too
    (e.g. a probe re-implementing the answer as a helper); probes ship pruned to the public ones."""
    texts = {k: _norm(v) for k, v in _student_texts(nb, runtime).items()}
    for ex in _cmd_build.present():
        solution = (SOLUTIONS / f"{ex}.py").read_text()
        given = _norm(_stubs.stub_source(solution, ex))
        for region in _stubs.solution_regions(solution):
            for line in region.splitlines():
                line = _norm(line)
                if len(line) < 40 or line.startswith("#") or re.sub(r"^return ", "", line) in given:
                    continue
                for where, text in texts.items():
                    assert line not in text, f"a line of the solution of {ex} is in {where}: {line}"


def test_no_hidden_test_source_leaks(nb, runtime):
    texts = {k: _norm(v) for k, v in _student_texts(nb, runtime).items()}
    for ex in _cmd_build.present():
        for check in _engine.load_suite(ex).checks:
            if not check.hidden:
                continue
            body = _norm(inspect.getsource(check.fn).split(":", 1)[1])  # skip the def line
            for where, text in texts.items():
                assert body not in text, f"hidden check {ex}.{check.name} leaks into {where}"
                assert f"def {check.name}(" not in text, f"hidden check {ex}.{check.name} named in {where}"


def test_snapshot_covers_every_public_reference_call(snapshot):
    """Replays the public checks on snapshot values alone: every key the notebook will ask for is there."""
    exercises = _cmd_build.present()
    assert list(snapshot["exercises"]) == exercises
    values = snapshot["values"]
    asked: set[str] = set()

    def reference(ex: str):
        lookup = _public.snapshot_reference(ex, values)

        def call(probe, kwargs):
            asked.add(reference_key(ex, probe, kwargs))
            return lookup(probe, kwargs)

        return call

    for ex in exercises:
        ref = reference(ex)
        tests = _public.run_checks(ex, _cmd_build.public_checks(ex), student=lambda p, c, s, kw, _r=ref: _r(p, kw),
                                   reference=ref, seed=snapshot["seed"], device={"torch": "cpu", "jax": "cpu"})
        assert all(t["passed"] for t in tests), [t["message"] for t in tests]
    assert asked == set(values)  # nothing recorded that no check asks for
    assert _engine._key is reference_key


def test_snapshot_miss_is_never_a_pass():
    check = _cmd_build.public_checks(_cmd_build.present()[0])
    tests = _public.run_checks("x", check, student=lambda p, c, s, kw: 0.0,
                               reference=_public.snapshot_reference("x", {}), seed=1,
                               device={"torch": "cpu", "jax": "cpu"})
    assert not any(t["passed"] for t in tests)
    assert any(t["code"] == "SNAPSHOT_MISMATCH" and "rebuild" in t["message"] for t in tests)


def test_otter_test_files_carry_no_test_code():
    for ex in _cmd_build.present():
        suite = _engine.load_suite(ex)
        src = _otter.test_file_source(ex, [(c.name, c.points, c.hidden) for c in suite.checks])
        compile(src, f"{ex}.py", "exec")
        assert "OK_FORMAT = False" in src
        for check in suite.checks:
            assert f'otter_check("{ex}", "{check.name}")' in src
            assert f"hidden={check.hidden!r}" in src.split(f'name="{check.name}"', 1)[1].split("\n", 1)[0]
            assert _norm(inspect.getsource(check.fn).split(":", 1)[1]) not in _norm(src)


def test_requirements_cpu_torch_flag():
    plain, cpu = _otter.requirements(False), _otter.requirements(True)
    assert "download.pytorch.org" not in plain and re.search(r"^torch==[\d.]+$", plain, re.M)
    assert f"--extra-index-url {_otter.CPU_TORCH_INDEX}" in cpu and re.search(r"^torch==[\d.]+\+cpu$", cpu, re.M)
    for pkg in ("jax", "flax", "optax", "numpy"):
        assert re.search(rf"^{pkg}==", plain, re.M)


def test_otter_bridge_reports_results_and_problems(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")
    assert _otter.submission_path(str(tmp_path)).endswith("a.py")
    (tmp_path / "b.ipynb").write_text("{}")
    assert _otter.submission_path(str(tmp_path)).endswith("b.ipynb")  # a notebook wins
    (tmp_path / "c.ipynb").write_text("{}")
    with pytest.raises(FileNotFoundError):
        _otter.submission_path(str(tmp_path))

    graded = {"exercises": {"ex01_torch_mlp": {"message": "", "tests": [
        {"name": "ok", "passed": True, "message": ""},
        {"name": "bad", "passed": False, "message": "`MLP.forward` differs from the reference: ..."}]}}}
    monkeypatch.setattr(_otter, "results", lambda folder=None: graded)
    _otter.otter_check("ex01_torch_mlp", "ok")
    with pytest.raises(AssertionError, match="differs from the reference"):
        _otter.otter_check("ex01_torch_mlp", "bad")
    with pytest.raises(AssertionError, match="was not graded"):
        _otter.otter_check("ex02_torch_training", "ok")
    monkeypatch.setattr(_otter, "results", lambda folder=None: {"error": "the grader failed (exit status 1)"})
    with pytest.raises(AssertionError, match="not graded: the grader failed"):
        _otter.otter_check("ex01_torch_mlp", "ok")


def test_outputs_are_dropped_before_grading(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": "x = 1\n", "metadata": {},
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": "y" * 10_000}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    src = tmp_path / "sub.ipynb"
    src.write_text(json.dumps(nb))
    copy = _otter._without_outputs(str(src))
    assert json.loads(open(copy).read())["cells"][0]["outputs"] == []
    assert os.path.dirname(copy) == str(tmp_path)  # same folder: the engine hides it from student workers
    assert _otter._without_outputs(str(tmp_path / "a.py")) == str(tmp_path / "a.py")
