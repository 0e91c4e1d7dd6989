"""`python check.py` for students working on the .py files (issue 37, newcomer item 2): a name that is no
exercise, `exN` and `--help` say something; the exit status says whether the checks passed; an untouched
file's advice names the file, not a notebook cell."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import builders
from autograder.core.i18n import section

LANGS = ["en", "es"]


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONDONTWRITEBYTECODE="1", TORCHINDUCTOR_CACHE_DIR=str(folder.parent / "torchinductor"))
    return subprocess.run([sys.executable, "-I", str(folder / "check.py"), *args], cwd=folder.parent, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def template(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    shutil.copytree(builders.TEMPLATES["en"], folder, ignore=shutil.ignore_patterns("es"))
    return folder


@pytest.mark.parametrize("lang", LANGS)
def test_help_prints_the_usage_and_exits_0(tmp_path: Path, lang: str) -> None:
    (tmp_path / "check.py").write_text(builders.check_py(lang), encoding="utf-8")  # no notebook needed for --help
    done = _run(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == section("check_py")[lang]["doc"].strip()


def test_an_unknown_exercise_is_an_error_naming_the_choices(template: Path) -> None:
    done = _run(template, "ex99")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "ex99" in done.stderr and "ex01" in done.stderr and "ex13" in done.stderr
    assert "public checks" not in done.stdout


def test_ex1_is_ex01_and_a_check_not_passed_exits_1_naming_the_file(template: Path) -> None:
    done = _run(template, "ex1")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "ex01_torch_mlp: public checks" in done.stdout, done.stdout
    assert "ex01_torch_mlp.py" in done.stdout and "python check.py ex01" in done.stdout
    assert "cell" not in done.stdout, done.stdout


@pytest.mark.parametrize("lang", LANGS)
def test_check_of_every_exercise_reminds_once_and_ends_with_how_many_pass(capsys, monkeypatch, lang: str) -> None:
    """check() with no argument printed the points reminder 13 times and never said how many pass (issue 37)."""
    from autograder.builders import public
    from autograder.core.i18n import render

    exercises = builders.present()
    fake = {"seed": 1, "values": {}, "exercises": {ex: {"public_points": 5, "total_points": 10} for ex in exercises}}
    monkeypatch.setattr(public, "snapshot", lambda: fake)
    public.check(None, {}, lang=lang)  # nothing defined: every exercise not attempted
    out = capsys.readouterr().out
    n = len(exercises)
    reminder = render("public.reminder", lang, public=5, total=10)
    assert out.count(reminder) == 0
    assert render("public.all", lang, passed=0, n=n, public=5 * n, total=10 * n) in out
    last = out.strip().splitlines()[-1]
    assert last.startswith({"en": f"0 of {n} exercises pass", "es": f"0 de {n} ejercicios pasan"}[lang]), last
    assert out.count(render("public.title", lang, exercise="ex01_torch_mlp", torch="cpu", jax="cpu")[:20]) == 1


@pytest.mark.parametrize("lang", LANGS)
def test_the_notebooks_check_of_an_unknown_exercise_prints_one_line(capsys, monkeypatch, lang: str) -> None:
    """Issue 56: check("ex99") in the notebook printed a 30-line traceback; check.py prints one line."""
    from autograder.builders import public

    fake = {"seed": 1, "values": {}, "exercises": {ex: {"public_points": 5, "total_points": 10}
                                                   for ex in builders.present()}}
    monkeypatch.setattr(public, "snapshot", lambda: fake)
    assert public.check("ex99", {}, lang=lang) is None  # no exception
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1
    assert "'ex99'" in out and "ex01" in out and "ex13" in out


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("failed", [1, 2])
def test_incorrect_from_check_py_names_the_file_not_a_cell(lang: str, failed: int) -> None:
    """Issue 56: check.py's INCORRECT line said "run your code cell again" (a terminal has no cells)."""
    from autograder.builders import public

    tests = [{"name": f"c{i}", "points": 1.0, "passed": i >= failed, "code": "" if i >= failed else "MISMATCH",
              "message": "wrong"} for i in range(3)]
    on_file = public.CheckResult("ex01_torch_mlp", "incorrect", tests, 5, 10, {"torch": "cpu", "jax": "cpu"},
                                 file="ex01_torch_mlp.py")
    text = public.report_lines(on_file, lang)
    assert "ex01_torch_mlp.py" in text and "python check.py ex01" in text
    assert {"en": "cell", "es": "celda"}[lang] not in text
    in_notebook = public.report_lines(public.CheckResult("ex01_torch_mlp", "incorrect", tests, 5, 10,
                                                         {"torch": "cpu", "jax": "cpu"}), lang)
    assert {"en": "code cell", "es": "celda de código"}[lang] in in_notebook and "check.py" not in in_notebook


def test_several_exercises_end_with_how_many_pass_and_one_reminder(template: Path) -> None:
    from autograder.core.paths import SOLUTIONS

    shutil.copy(SOLUTIONS / "ex01_torch_mlp.py", template / "ex01_torch_mlp.py")
    done = _run(template, "1", "ex03")
    assert done.returncode == 1, done.stderr[-2000:]  # ex03 is not attempted
    out = done.stdout
    assert out.count("Reminder") == 1 and out.strip().splitlines()[-1].startswith("1 of 2 exercises pass"), out
