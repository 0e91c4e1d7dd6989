"""Load errors that are not the student's mistake, or whose fix is not where Python's words point.

Python 3.12's f-strings on a 3.11 grader load (:mod:`autograder.submissions.fstrings`); syntax a grader's
Python is too old for says so (``load.older_python``); importing another exercise's module says each
exercise file is graded on its own (``LOAD_OTHER_EXERCISE``). One grading run checks them end to end.
"""

from __future__ import annotations

import json
import re
import sys

import pytest

from autograder.builders import notebook as _notebook
from autograder.builders import public_graded as _public_graded
from autograder.core.i18n import render
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite
from autograder.workers import intake as _intake
from autograder.workers import worker as _worker

EX01 = "ex01_torch_mlp"
OLD = sys.version_info < (3, 12)


def _status(source: str, path: str = "/student/ex01_torch_mlp.py") -> dict:
    """The load status the worker sends for ``source``'s failure, as the grader reads it back."""
    try:
        exec(compile(source, path, "exec"), {"__name__": "graded"})  # noqa: S102 - the test's own code
    except BaseException as err:  # noqa: BLE001
        return _intake.status(_worker.load_error(err, path))
    raise AssertionError("the source loaded")


def _rendered(st: dict, lang: str) -> str:
    return render(st["code"], lang, **st["fields"])


def test_a_syntax_error_on_an_older_grader_names_its_python(monkeypatch):
    monkeypatch.setattr(_worker, "STUDENT_PYTHON", (99, 0))  # the grader is older than the student's Python
    st = _status("type Pair = tuple[int, int]\n" if OLD else "x = (\n")
    mine = "{}.{}".format(*sys.version_info[:2])
    en, es = _rendered(st, "en"), _rendered(st, "es")
    assert st["code"] == "LOAD_SYNTAX" and st["fields"]["line"] == 1
    assert f"this grader runs Python {mine}" in en and "runs on your Python (99.0 or newer" in en and "`type` statements" in en and "Python 99.0 or newer" in en
    assert f"este corrector usa Python {mine}" in es and "funciona en tu Python (99.0 o posterior" in es and "sentencias `type`" in es and "Python 99.0 o posterior" in es
    assert "{" not in en + es


def test_a_syntax_error_on_a_grader_as_new_as_the_students_is_only_the_error(monkeypatch):
    monkeypatch.setattr(_worker, "STUDENT_PYTHON", (3, 0))
    st = _status("x = (\n")
    assert st["fields"]["older"] == ""
    assert _rendered(st, "en").endswith("fix the syntax error, then re-run") and "Python" not in _rendered(st, "en")


@pytest.mark.parametrize("line", ["from ex04_jax_mlp import init_mlp", "import ex04_jax_mlp as mine",
                                  "from ex04_jax_mlp.helpers import f"])
def test_importing_another_exercise_says_each_file_is_graded_on_its_own(line):
    st = _status(f"import math\n{line}\n")
    assert st["code"] == "LOAD_OTHER_EXERCISE" and st["fields"]["module"] == "ex04_jax_mlp"
    en, es = _rendered(st, "en"), _rendered(st, "es")
    assert "`ex04_jax_mlp`" in en and "line 2 of your code" in en and "graded on its own" in en
    assert "copy what you need into this file" in en
    assert "`ex04_jax_mlp`" in es and "se corrige por separado" in es and "copia lo que necesites" in es


def test_a_missing_library_is_still_the_students_import_error():
    st = _status("import no_such_package_for_tapetrace\n")
    assert st["code"] == "LOAD_EXCEPTION" and "no_such_package_for_tapetrace" in st["fields"]["error"]


def test_the_notebooks_self_check_loads_312_f_strings_and_names_another_exercises_import(monkeypatch):
    """The self-check loads a section as the grader does (the same loader, the same load errors)."""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    view = _public_graded.graded_module(EX01, 'CFG = {"w": 4}\ndef MLP():\n    return f"{CFG["w"]:>{3}}"\n',
                                        ("MLP",), "en")
    assert not view.problem and view.module.MLP() == "  4"
    for lang, words in (("en", "graded on its own"), ("es", "se corrige por separado")):
        view = _public_graded.graded_module(EX01, "from ex04_jax_mlp import init_mlp\n", ("MLP",), lang)
        assert view.module is None and view.code == "LOAD_OTHER_EXERCISE" and words in view.problem, view.problem


# --------------------------------------------------------------------------- end to end
_F312_MODULE = '''
LABELS = {"name": "mlp"}
BANNER = f"{LABELS["name"]!r:>{8}}"  # Python 3.12: the f-string's own quotes inside its braces
'''
_F312_INIT = ('        self.summary = f"{LABELS["name"]}: {"->".join(f"{d}" for d in [input_dim, *hidden_dims, output_dim])}"\n'
              '        assert self.summary.startswith(f"{BANNER.strip()[1:-1]}")\n')


def _ex01_with_312_f_strings() -> str:
    """The solution, with 3.12-only f-strings at the top level and in ``__init__`` (graded code runs both)."""
    text = (SOLUTIONS / f"{EX01}.py").read_text(encoding="utf-8")
    text = text.replace("\n\nclass MLP", _F312_MODULE + "\n\nclass MLP", 1)
    text = re.sub(r"(        self\.layers = nn\.ModuleList\(.*\n)", lambda m: m[1] + _F312_INIT, text, count=1)
    assert _F312_INIT in text and _F312_MODULE in text
    return text


def test_312_f_strings_grade_full_and_the_other_load_errors_say_why(run, tmp_path):
    """A folder and a notebook with 3.12-only f-strings get full marks on this grader; a folder importing another
    exercise and one with a ``type`` statement get their messages."""
    code = _ex01_with_312_f_strings()
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / f"{EX01}.py").write_text(code, encoding="utf-8")
    importer = tmp_path / "importer"
    importer.mkdir()
    imports = "from collections.abc import Sequence\n"
    (importer / f"{EX01}.py").write_text(code.replace(imports, imports + "from ex04_jax_mlp import init_mlp\n"),
                                         encoding="utf-8")
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / f"{EX01}.py").write_text(code + "\ntype Widths = list[int]\n", encoding="utf-8")
    template = json.loads((ROOT / "student_template" / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
    answer = code.replace('LABELS = {"name": "mlp"}\n', "")
    nb = _notebook.fill_with(template, {EX01: answer})
    at = next(i for i, c in enumerate(nb["cells"]) if _notebook.role_of(c) == (EX01, "answer"))
    nb["cells"].insert(at, {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                            "source": ['LABELS = {"name": "mlp"}\n', 'print(f"{LABELS["name"]}")\n']})
    book = tmp_path / "nb.ipynb"
    book.write_text(_notebook.dumps(nb), encoding="utf-8")
    subs = [folder, book, importer, newer]
    rows = {str(r["submission"]): r for r in run.grade([str(s) for s in subs], only=[EX01])}
    got = [next(r for p, r in rows.items() if p.endswith(s.name))["exercises"][EX01] for s in subs]
    full = load_suite(EX01).max_score
    assert [(g["status"], g["score"]) for g in got[:2]] == [("graded", full), ("graded", full)], got[:2]
    assert got[2]["score"] == 0 and "each exercise file is graded on its own" in got[2]["message"], got[2]
    assert got[2]["tests"][0]["code"] == "LOAD_OTHER_EXERCISE"
    assert got[3]["score"] == 0 and got[3]["tests"][0]["code"] == "LOAD_SYNTAX", got[3]
    assert ("this grader runs Python 3.11" in got[3]["message"]) == OLD


def test_a_forged_module_not_found_error_is_an_ordinary_load_exception():
    class Odd(ModuleNotFoundError):
        @property
        def name(self):  # noqa: D401 - a student's hostile property
            raise RuntimeError("no")

    st = _intake.status(_worker.load_error(Odd("ex04_jax_mlp"), "/student/ex01_torch_mlp.py"))
    assert st["code"] == "LOAD_EXCEPTION"
