"""`tapetrace build` writes the solution notebook and checks what it built before it reports success: the
solution notebook scores the maximum and the untouched template 0 through the zip as built, and every public
self-check passes on it; a problem names the exercise and the check (autograder/builders/verify.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import builders
from autograder.builders import build as build_module
from autograder.builders import notebook as _notebook
from autograder.builders import verify as _verify
from autograder.cli import build as cli_build
from autograder.core.build_record import private_dirs
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite
from autograder.submissions import loader as _loader

EX01, EX04 = "ex01_torch_mlp", "ex04_jax_mlp"


def _template(lang: str = "en") -> dict:
    return json.loads((builders.TEMPLATES[lang] / _notebook.NOTEBOOK).read_text(encoding="utf-8"))


def _tampered(filled: dict, exercise: str) -> dict:
    """The solution notebook with one exercise's answer put back to its stub."""
    return _notebook.fill_with(filled, {exercise: build_module.student_stub(exercise)})


def _cases(exercise: str, passed: bool) -> _verify.ZipResult:
    suite = load_suite(exercise)
    return _verify.ZipResult(suite.max_score if passed else 0.0, suite.max_score,
                             {c.name: (passed, "" if passed else "not attempted") for c in suite.checks})


# --------------------------------------------------------------------------- the solution notebook
@pytest.mark.parametrize("lang", ["en", "es"])
def test_build_writes_the_solution_notebook(lang, tmp_path, monkeypatch, capsys):
    """Beside the zip, in OUT/solutions/ (dist/ is hidden from students' workers): the student notebook with each
    answer cell holding the reference solution, read back by the grader's loader as the solutions."""
    monkeypatch.setattr(build_module, "_reusable_snapshot", lambda *a: builders.committed_snapshot(
        builders.TEMPLATES[lang]))  # no reference run here
    assert cli_build.main(["--only", "template", "--lang", lang, "--template", str(tmp_path / "tpl"),
                           "--out", str(tmp_path / "dist"), "--no-verify"]) == 0
    path = build_module.solution_notebook_path(tmp_path / "dist", lang)
    assert path.name == ("tapetrace-solutions.ipynb" if lang == "en" else "tapetrace-solutions-es.ipynb")
    assert f"wrote {path}" in capsys.readouterr().out
    filled = json.loads(path.read_text(encoding="utf-8"))
    template = json.loads((tmp_path / "tpl" / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
    exercises = template["metadata"]["tapetrace"]["exercises"]
    got = _loader.notebook_sources(filled)
    for ex in exercises:
        assert got[ex].strip() == (SOLUTIONS / f"{ex}.py").read_text(encoding="utf-8").strip(), ex
    # only the answer cells differ from the template written beside it
    assert [c for c in filled["cells"] if _notebook.role_of(c)[1] != "answer"] == \
        [c for c in template["cells"] if _notebook.role_of(c)[1] != "answer"]
    # by default, under dist/: a place no student's worker reads (as solutions/)
    assert build_module.solution_notebook_path(builders.DIST, lang).is_relative_to(ROOT / "dist")
    assert str(ROOT / "dist") in private_dirs() or not (ROOT / "dist").exists()


# --------------------------------------------------------------------------- the comparisons (no grader runs)
def test_a_problem_names_the_exercise_and_the_check(tmp_path):
    """Graders stubbed: a failing case on the solution, a case passing on the stub, a self-check not passed and a
    cell that raised each make one line naming the exercise and the check; agreeing results make none."""
    nb = _template()

    def grade(_zip: Path, notebook: dict, _work: Path) -> dict[str, _verify.ZipResult]:
        filled = notebook is not nb
        out = {EX01: _cases(EX01, filled), EX04: _cases(EX04, filled)}
        if filled:  # the reference fails one hidden case of ex01
            name = next(iter(out[EX01].cases))
            out[EX01] = _verify.ZipResult(out[EX01].max_score - 1, out[EX01].max_score,
                                          dict(out[EX01].cases, **{name: (False, "AssertionError: max error 0.3")}))
        else:  # a case of ex04 passes on the stub
            name = next(iter(out[EX04].cases))
            out[EX04] = _verify.ZipResult(1.0, out[EX04].max_score, dict(out[EX04].cases, **{name: (True, "")}))
        return out

    def self_check(_filled: dict, exercises: list[str], _work: Path) -> _verify.SelfCheckRun:
        return _verify.SelfCheckRun(
            {EX01: _verify.SelfCheckResult("passed", {"shape": (True, "")}),
             EX04: _verify.SelfCheckResult("incorrect", {"forward": (False, "wrong values\nmore"),
                                                          "shape": (True, "")})},
            [(EX04, "NameError: name 'jnp' is not defined")])

    failures = _verify.verify(nb, _verify.solution_notebook(nb), [EX01, EX04], tmp_path, zip_path=tmp_path / "z.zip",
                              grade=grade, self_check=self_check, log=lambda _line: None)
    case01, case04 = load_suite(EX01).checks[0].name, load_suite(EX04).checks[0].name
    got = {(f.exercise, f.check) for f in failures}
    assert got == {(EX01, f"{_verify.FILLED}, case {case01}"), (EX04, f"{_verify.UNTOUCHED}, case {case04}"),
                   (EX04, f"{_verify.SELF_CHECK}, check forward"), (EX04, _verify.SELF_CHECK)}, got
    lines = "\n".join(f.line() for f in failures)
    assert "max error 0.3" in lines and "wrong values" in lines and "more" not in lines and "NameError" in lines
    # an exercise the graders say nothing of is a problem too (never a silent pass)
    missing = _verify.verify(nb, nb, [EX01], tmp_path, zip_path=tmp_path / "z.zip", grade=lambda *a: {},
                             self_check=lambda *a: _verify.SelfCheckRun({}, []), log=lambda _line: None)
    assert {(f.exercise, f.check) for f in missing} == {(EX01, _verify.FILLED), (EX01, _verify.UNTOUCHED),
                                                       (EX01, _verify.SELF_CHECK)}


def test_cli_verification_fails_the_build_naming_the_exercise(tmp_path, monkeypatch, capsys):
    """`tapetrace build` (here `--only otter`, one exercise) exits 1 with a line per problem when the check
    finds one, 0 with a summary line and the time it took when none; `--no-verify` runs no grader."""
    calls = []

    def grade(zip_path: Path, notebook: dict, _work: Path) -> dict[str, _verify.ZipResult]:
        calls.append(zip_path)
        filled = _loader.notebook_sources(notebook)[EX01].strip() == (SOLUTIONS / f"{EX01}.py").read_text().strip()
        return {EX01: _cases(EX01, filled)}

    monkeypatch.setattr(_verify, "otter_run", grade)
    monkeypatch.setattr(_verify, "notebook_self_check", lambda nb, exs, w: _verify.SelfCheckRun(
        {ex: _verify.SelfCheckResult("passed", {}) for ex in exs}, []))
    argv = ["--only", "otter", "--exercises", "ex01", "--out", str(tmp_path)]
    assert cli_build.main(argv) == 0
    out = capsys.readouterr().out
    assert "verified in " in out and "tapetrace-autograder.zip" in out and "(1 exercise(s))" in out
    assert calls == [tmp_path / "tapetrace-autograder.zip"] * 2  # the solution notebook, the untouched template

    monkeypatch.setattr(_verify, "notebook_self_check", lambda nb, exs, w: _verify.SelfCheckRun(
        {EX01: _verify.SelfCheckResult("not attempted", {"shape": (False, "not attempted")})}, []))
    assert cli_build.main(argv) == 1
    err = capsys.readouterr().err
    assert f"FAILED {EX01}: {_verify.SELF_CHECK}, check shape: " in err and "verification failed" in err

    calls.clear()
    assert cli_build.main([*argv, "--no-verify"]) == 0 and not calls
    assert (tmp_path / "solutions" / "tapetrace-solutions.ipynb").exists()


# --------------------------------------------------------------------------- the real graders, two exercises
@pytest.mark.slow
def test_verification_end_to_end_on_a_tampered_notebook(tmp_path):
    """The real graders (`otter run` with a zip built for ex01 and ex04; a Jupyter kernel): the solution notebook
    with ex01's answer put back to its stub fails, on ex01 only, every case through the zip and its public
    self-check, each named; ex04, answered, passes both, and the untouched template scores 0."""
    pytest.importorskip("otter")
    pytest.importorskip("nbclient")
    from autograder.builders import otter_zip as _otter_zip

    zip_path = _otter_zip.build_zip(tmp_path / _otter_zip.ZIP_NAME, [EX01, EX04], timeout=60.0, jobs=2)
    nb = _template()
    tampered = _tampered(_verify.solution_notebook(nb), EX01)
    failures = _verify.verify(nb, tampered, [EX01, EX04], tmp_path / "work", zip_path=zip_path,
                              log=lambda _line: None)
    assert {f.exercise for f in failures} == {EX01}, [f.line() for f in failures]
    checks = {f.check for f in failures}
    assert {f"{_verify.FILLED}, case {c.name}" for c in load_suite(EX01).checks} <= checks, checks
    assert any(c.startswith(f"{_verify.SELF_CHECK}, check ") for c in checks), checks
    assert all("not attempted" in f.problem for f in failures if f.check.startswith(_verify.SELF_CHECK))
