"""`tapetrace build`: the committed student templates (English and Spanish) are current, complete and
leak nothing; the self-study build provides the solutions and the graded builds never do."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from test_i18n import ENGLISH_WORDS, glossary, prose_words

from autograder import builders, hidden
from autograder.builders import build as build_module
from autograder.builders import notebook as _notebook
from autograder.builders import otter as _otter
from autograder.builders import otter_grade as _otter_grade
from autograder.builders import otter_zip as _otter_zip
from autograder.builders import public as _public
from autograder.builders import public_snapshot as _public_snapshot
from autograder.builders import stubs as _stubs
from autograder.cli import build as cli_build
from autograder.core import i18n as _i18n
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.core.protocol import reference_key
from autograder.engine import run as _engine
from autograder.student import instructions_es
from autograder.submissions import loader as _loader

TEMPLATE = ROOT / "student_template"
NOTEBOOK = TEMPLATE / _notebook.NOTEBOOK
LANGS = ("en", "es")


def _template(lang: str):
    return builders.TEMPLATES[lang]


@pytest.fixture(scope="module")
def notebooks() -> dict[str, dict]:
    return {lang: json.loads((_template(lang) / _notebook.NOTEBOOK).read_text(encoding="utf-8")) for lang in LANGS}


@pytest.fixture(scope="module")
def runtimes(notebooks) -> dict[str, dict[str, bytes]]:
    return {lang: builders.zip_members(_notebook.runtime_of(nb)) for lang, nb in notebooks.items()}


@pytest.fixture(scope="module")
def nb(notebooks) -> dict:
    return notebooks["en"]


@pytest.fixture(scope="module")
def runtime(runtimes) -> dict[str, bytes]:
    return runtimes["en"]


@pytest.fixture(scope="module")
def snapshot(runtime) -> dict:
    return json.loads(runtime[builders.SNAPSHOT_ARC])


@pytest.fixture(scope="module")
def self_study() -> dict[str, bytes]:
    """The files of a self-study build (English), rendered in memory from the committed snapshot."""
    raw = builders.committed_snapshot(TEMPLATE)
    assert raw is not None
    return builders.render_template(builders.present(), raw, "en", self_study=True)


@pytest.mark.parametrize("lang", LANGS)
def test_student_template_is_up_to_date(lang):
    problems = builders.stale(lang=lang)
    fix = "tapetrace build" + ("" if lang == "en" else f" --lang {lang} --only template")
    assert not problems, f"{_template(lang)} is stale, run `{fix}`:\n" + "\n".join(problems)


def test_cli_check_mode(capsys):
    assert cli_build.main(["--check"]) == 0
    out = capsys.readouterr().out
    assert "student_template/ is up to date" in out and "student_template/es/ is up to date" in out


def test_both_languages_share_the_runtime_and_the_snapshot(runtimes):
    assert runtimes["en"] == runtimes["es"]  # the language is set by the set-up cell, not by the runtime


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_has_every_exercise_in_order(notebooks, lang):
    nb = notebooks[lang]
    exercises = builders.present()
    assert nb["metadata"]["tapetrace"]["exercises"] == exercises
    assert nb["metadata"]["tapetrace"]["lang"] == lang and "self_study" not in nb["metadata"]["tapetrace"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    roles = [_notebook.role_of(c) for c in nb["cells"]]
    assert roles[:2] == [(None, "markdown"), (None, "setup")]
    expected = [(ex, r) for ex in exercises for r in ("markdown", "answer", "check", "markdown", "figure")]
    assert roles[2:-1] == expected and roles[-1] == (None, "markdown")
    text = instructions_es.NOTEBOOK_TEXT[lang]
    assert _notebook.source_of(nb["cells"][0]).startswith(text["intro_md"].rstrip("\n"))
    assert text["intro_help_md"].strip() in _notebook.source_of(nb["cells"][0])
    assert not any("solution(" in _notebook.source_of(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert _notebook.source_of(nb["cells"][-1]) == text["outro_md"]
    for i, cell in enumerate(nb["cells"]):
        ex, role = _notebook.role_of(cell)
        src = _notebook.source_of(cell)
        if role == "markdown" and ex and _notebook.role_of(nb["cells"][i - 1])[1] != "check":
            assert src.startswith(f"## {ex} — "), src[:80]
            title = (instructions_es.INSTRUCTIONS_ES[ex] if lang == "es" else
                     builders.exercise_stub(ex).split('"""')[1]).splitlines()[0].split("—", 1)[1].strip()
            assert src.splitlines()[0] == f"## {ex} — {title.rstrip('.')}"
        elif role == "markdown" and ex:  # after the check: hints and the figure, never the solution
            assert f'hint("{ex[:4]}", 2)' in src and f'figure("{ex[:4]}")' in src and "solution(" not in src
        if role == "check":
            assert src.strip() == f'check("{ex}")'
        if role == "figure":
            assert src.strip() == f'figure("{ex[:4]}")'
        if role in ("answer", "check", "figure"):
            assert cell["metadata"]["otter"] == {"ignore": True}  # never executed in otter's kernel
        if role == "answer":
            assert instructions_es.STUB_MARKERS[lang]["code_here"] in src


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_is_valid_nbformat(notebooks, lang):
    nbformat = pytest.importorskip("nbformat")
    nbformat.validate(nbformat.from_dict(notebooks[lang]))
    path = _template(lang) / _notebook.NOTEBOOK
    assert _notebook.dumps(notebooks[lang]) == path.read_text(encoding="utf-8")  # written as Jupyter writes it


@pytest.mark.parametrize("lang", LANGS)
def test_loader_reads_the_stubs_back(notebooks, lang):
    sources = _loader.notebook_sources(notebooks[lang])
    for ex in builders.present():
        stub = _stubs.stub_source((SOLUTIONS / f"{ex}.py").read_text(), ex)
        stub = instructions_es.localize_stub(stub, ex, lang)
        assert sources[ex] is not None and _notebook.code_cell_source(stub).strip() in sources[ex]
        assert "raise NotImplementedError" in sources[ex]
        assert "figure(" not in sources[ex] and "check(" not in sources[ex]  # those cells are never graded
        assert (_template(lang) / f"{ex}.py").read_text() == stub.split("\n", 1)[1]  # the .py stub, localized


def test_fill_with_puts_the_solutions_where_the_loader_finds_them(nb):
    sols = {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in builders.present()}
    filled = _notebook.fill_with(nb, sols)
    got = _loader.notebook_sources(filled)
    for ex, text in sols.items():
        assert got[ex].strip() == text.strip()
    assert _loader.notebook_sources(nb) != got  # the original is untouched
    with pytest.raises(KeyError):
        _notebook.fill_with(nb, {"ex99_nothing": "x = 1\n"})


@pytest.mark.parametrize("lang", LANGS)
def test_setup_cell_installs_nothing_and_writes_one_file(notebooks, lang):
    src = _notebook.source_of(_notebook.setup_cell(_notebook.without_runtime(notebooks[lang])))  # not the blob
    assert "pip" not in src and "install(" not in src and "subprocess" not in src
    assert src.count("open(") == 2 and _notebook.RUNTIME_FILE in src  # read + write of tapetrace_checks.zip
    assert src.startswith(instructions_es.NOTEBOOK_TEXT[lang]["setup_comment"] + "\n")
    assert f'_public.set_language("{lang}")' in src and f'student.set_language("{lang}")' in src
    assert "check, hint, figure = _tapetrace_setup(" in src and "student.solution" not in src


def test_runtime_holds_only_public_parts(runtime):
    allowed = re.compile(r"^autograder/(__init__\.py|_[a-z0-9_]+\.py|_snapshot\.json|data/datasets\.npz|"
                         r"(messages|student|exercises|core|probing|submissions|workers|builders)/[a-z0-9_]+\.py|"
                         r"exercises/ex\d\d_[a-z0-9_]+/[a-z0-9_]+\.py)$")
    for name in runtime:
        assert allowed.match(name), name
        assert "/hidden/" not in name and "solutions" not in name
    modules = {n.removeprefix("autograder/") for n in runtime
               if n.count("/") == 1 or n.split("/")[1] not in ("messages", "student", "exercises", "data")}
    inits = {f"{m.rsplit('/', 1)[0]}/__init__.py" for m in builders.RUNTIME_MODULES if "/" in m}
    assert modules <= {"__init__.py", "_snapshot.json", *builders.RUNTIME_MODULES, *inits}
    student = {n.split("/")[-1] for n in runtime if n.startswith("autograder/student/")}
    assert student == {p.name for p in (ROOT / "autograder" / "student").glob("*.py")}
    assert builders.SELF_STUDY_ARC not in runtime  # the graded build holds no solutions
    # each exercise built ships as its whole folder (probes pruned), and nothing of any other
    for ex in builders.present():
        folder = {p.name for p in (ROOT / "autograder" / "exercises" / ex).glob("*.py")}
        assert {n.split("/")[-1] for n in runtime if n.startswith(f"autograder/exercises/{ex}/")} == folder
    shipped = {n.split("/")[2] for n in runtime if n.count("/") == 3 and n.startswith("autograder/exercises/")}
    assert shipped == set(builders.present())


def _json_strings(value) -> list[str]:
    """Every string inside a JSON value (a solution stored as a JSON string has its newlines escaped)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_json_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _json_strings(v)]
    return []


def _runtime_texts(runtime: dict[str, bytes]) -> dict[str, str]:
    texts = {}
    for name, data in runtime.items():
        if name.endswith(".py"):
            texts[f"runtime:{name}"] = data.decode()
        elif name.endswith(".json"):
            texts[f"runtime:{name}"] = data.decode() + "\n" + "\n".join(_json_strings(json.loads(data)))
    return texts


def _student_texts(nb, runtime, folder=None) -> dict[str, str]:
    """Everything a student receives, as text: the notebook's cells, the runtime decoded from the set-up
    cell's base64 and unzipped (JSON members also as their strings), and the template's files."""
    texts = {"tapetrace.ipynb (cells)": json.dumps(_notebook.without_runtime(nb), ensure_ascii=False)}
    texts["tapetrace.ipynb (cell sources)"] = "\n".join(_notebook.source_of(c) for c in nb["cells"])
    texts.update(_runtime_texts(runtime))
    for path in (folder or TEMPLATE).iterdir():
        if path.suffix in (".py", ".md"):
            texts[path.name] = path.read_text()
    return texts


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _solution_leaks(texts: dict[str, str]) -> list[str]:
    """Each solution region (autograder.builders.stubs.solution_regions) found in the texts, unless the stub
    already spells it out."""
    texts = {k: _norm(v) for k, v in texts.items()}
    leaks = []
    for ex in builders.present():
        solution = (SOLUTIONS / f"{ex}.py").read_text()
        given = _norm(_stubs.stub_source(solution, ex))
        for region in _stubs.solution_regions(solution):
            body = _norm(textwrap.dedent(region))
            if not body or re.sub(r"^return ", "", body) in given:
                continue  # empty, or spelled out by the instructions themselves (nothing left to leak)
            leaks += [f"the solution of {ex} leaks into {where}: {body[:80]}" for where, text in texts.items()
                      if body in text]
    return leaks


@pytest.mark.parametrize("lang", LANGS)
def test_no_solution_body_leaks(notebooks, runtimes, lang):
    leaks = _solution_leaks(_student_texts(notebooks[lang], runtimes[lang], _template(lang)))
    assert not leaks, "\n".join(leaks[:10])


def test_the_leak_scan_finds_the_solutions_of_a_self_study_build(self_study):
    """Positive control: the same scan on a self-study build finds every solution, inside the runtime
    zip that the set-up cell carries as base64."""
    nb = json.loads(self_study[_notebook.NOTEBOOK])
    runtime = builders.zip_members(_notebook.runtime_of(nb))
    assert builders.SELF_STUDY_ARC in runtime
    leaks = _solution_leaks(_runtime_texts(runtime))
    for ex in builders.present():
        assert any(f"solution of {ex} leaks into runtime:{builders.SELF_STUDY_ARC}" in x for x in leaks), ex
    # and without decoding, base64 and deflate hide them: decoding is what makes the scan meaningful
    assert not _solution_leaks({"raw notebook": self_study[_notebook.NOTEBOOK].decode()})


@pytest.mark.parametrize("lang", LANGS)
def test_no_long_solution_line_leaks(notebooks, runtimes, lang):
    """A line of 40+ characters from a solution region, verbatim in student material, is a leak too
    (e.g. a probe re-implementing the answer as a helper); probes ship pruned to the public ones."""
    texts = {k: _norm(v) for k, v in _student_texts(notebooks[lang], runtimes[lang], _template(lang)).items()}
    for ex in builders.present():
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
    for ex in builders.present():
        for check in hidden.load_suite(ex).checks:
            if not check.hidden:
                continue
            body = _norm(inspect.getsource(check.fn).split(":", 1)[1])  # skip the def line
            for where, text in texts.items():
                assert body not in text, f"hidden check {ex}.{check.name} leaks into {where}"
                assert f"def {check.name}(" not in text, f"hidden check {ex}.{check.name} named in {where}"


def test_snapshot_covers_every_public_reference_call(snapshot):
    """Replays the public checks on snapshot values alone: every key the notebook will ask for is there."""
    exercises = builders.present()
    assert list(snapshot["exercises"]) == exercises
    values = snapshot["values"]
    asked: set[str] = set()

    def reference(ex: str):
        lookup = _public_snapshot.snapshot_reference(ex, values)

        def call(probe, kwargs):
            asked.add(reference_key(ex, probe, kwargs))
            return lookup(probe, kwargs)

        return call

    for ex in exercises:
        ref = reference(ex)
        tests = _public.run_checks(ex, builders.public_checks(ex), student=lambda p, c, s, kw, _r=ref: _r(p, kw),
                                   reference=ref, seed=snapshot["seed"], device={"torch": "cpu", "jax": "cpu"})
        assert all(t["passed"] for t in tests), [t["message"] for t in tests]
    assert asked == set(values)  # nothing recorded that no check asks for
    assert _engine._key is reference_key


def test_snapshot_miss_is_never_a_pass():
    check = builders.public_checks(builders.present()[0])
    tests = _public.run_checks("x", check, student=lambda p, c, s, kw: 0.0,
                               reference=_public_snapshot.snapshot_reference("x", {}), seed=1,
                               device={"torch": "cpu", "jax": "cpu"})
    assert not any(t["passed"] for t in tests)
    assert any(t["code"] == "SNAPSHOT_MISMATCH" and "rebuild" in t["message"] for t in tests)


def test_otter_test_files_carry_no_test_code():
    for ex in builders.present():
        suite = hidden.load_suite(ex)
        src = _otter_zip.test_file_source(ex, [(c.name, c.points, c.hidden) for c in suite.checks])
        compile(src, f"{ex}.py", "exec")
        assert "OK_FORMAT = False" in src
        for check in suite.checks:
            assert f'otter_check("{ex}", "{check.name}")' in src
            assert f"hidden={check.hidden!r}" in src.split(f'name="{check.name}"', 1)[1].split("\n", 1)[0]
            assert _norm(inspect.getsource(check.fn).split(":", 1)[1]) not in _norm(src)


def test_requirements_cpu_torch_by_default_gpu_on_request():
    cpu, gpu = _otter_zip.requirements(), _otter_zip.requirements(gpu_torch=True)
    assert "download.pytorch.org" not in gpu and re.search(r"^torch==[\d.]+$", gpu, re.M)
    assert f"--extra-index-url {_otter_zip.CPU_TORCH_INDEX}" in cpu and re.search(r"^torch==[\d.]+\+cpu$", cpu, re.M)
    plain = gpu
    for pkg in ("jax", "flax", "optax", "numpy"):
        assert re.search(rf"^{pkg}==", plain, re.M)
    # what Colab preinstalls and students import, and IPython (the engine reads cells as IPython does)
    for pkg in ("ipython", "tqdm", "pandas", "matplotlib", "scikit-learn", "seaborn"):
        assert re.search(rf"^{pkg}==[\d.]+$", plain, re.M), pkg


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
    copy = _otter_grade._without_outputs(str(src))
    assert json.loads(open(copy).read())["cells"][0]["outputs"] == []
    assert os.path.dirname(copy) == str(tmp_path)  # same folder: the engine hides it from student workers
    assert _otter_grade._without_outputs(str(tmp_path / "a.py")) == str(tmp_path / "a.py")


# --------------------------------------------------------------------------- languages and self-study
def _prose(lang: str, nb: dict) -> dict[str, str]:
    """The texts of a build a student reads outside code: markdown cells, the set-up cell's comments,
    the README and check.py's messages."""
    out = {f"cell {c.get('id')}": _notebook.source_of(c) for c in nb["cells"] if c["cell_type"] == "markdown"}
    setup = _notebook.source_of(_notebook.setup_cell(nb))
    out["set-up cell comments"] = "\n".join(ln.lstrip("#@ ") for ln in setup.splitlines() if ln.startswith("#"))
    out["README.md"] = (_template(lang) / "README.md").read_text()
    out["check.py"] = "\n".join(_i18n.section("check_py")[lang].values())
    return out


def test_spanish_build_has_no_english_prose(notebooks):
    """Outside code (code spans, identifiers, >>> lines), the Spanish build uses no word the glossary says to
    avoid in Spanish and no common English word."""
    avoid, _ = glossary()
    bad = []
    for where, text in _prose("es", notebooks["es"]).items():
        found = sorted(set(prose_words(text)) & (avoid | ENGLISH_WORDS))
        if found:
            bad.append(f"{where}: {found} — {text[:120]!r}")
    assert not bad, "English in the Spanish build:\n" + "\n".join(bad)
    # the check can see English: the same scan finds it in the English build
    assert set(prose_words(" ".join(_prose("en", notebooks["en"]).values()))) & ENGLISH_WORDS


def test_spanish_stubs_keep_the_code(notebooks):
    en = _loader.notebook_sources(notebooks["en"])
    es = _loader.notebook_sources(notebooks["es"])
    for ex in builders.present():
        strip = re.compile(r'""".*?"""|# YOUR CODE HERE|# TU CÓDIGO AQUÍ|raise NotImplementedError\(".*?"\)', re.S)
        assert strip.sub("", en[ex]) == strip.sub("", es[ex]), ex


_RUN_SETUP = """\
import json, os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if os.path.abspath(str(p) or ".") != {root!r}]
nb = json.load(open("tapetrace.ipynb", encoding="utf-8"))
g = {{"__name__": "__main__"}}
exec(next("".join(c["source"]) for c in nb["cells"] if c["metadata"].get("tapetrace", {{}}).get("role") == "setup"), g)
import autograder
assert autograder.__file__.startswith(os.path.abspath("tapetrace_checks.zip")), autograder.__file__
from autograder import student
out = {{"helpers": sorted(k for k in ("check", "hint", "figure", "solution") if k in g),
        "lang": student.get_language(), "hint": str(g["hint"]("ex01", 2))}}
try:
    out["solution"] = str((g.get("solution") or student.solution)("ex01"))
except LookupError as err:
    out["error"] = str(err)
print("RESULT=" + json.dumps(out))
"""


def _run_setup(folder, files: dict[str, bytes]) -> dict:
    """The build's notebook alone in a folder: its set-up cell run by a fresh Python (repo hidden)."""
    folder.mkdir()
    (folder / _notebook.NOTEBOOK).write_bytes(files[_notebook.NOTEBOOK])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([sys.executable, "-I", "-c", _RUN_SETUP.format(root=str(ROOT))], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.split("RESULT=", 1)[1])


def test_self_study_build_provides_the_solutions_and_the_graded_build_does_not(tmp_path, self_study):
    nb = json.loads(self_study[_notebook.NOTEBOOK])
    assert nb["metadata"]["tapetrace"]["self_study"] is True
    setup = _notebook.source_of(_notebook.setup_cell(_notebook.without_runtime(nb)))
    assert "check, hint, figure, solution = _tapetrace_setup(" in setup
    assert instructions_es.NOTEBOOK_TEXT["en"]["intro_selfstudy_md"].strip() in _notebook.source_of(nb["cells"][0])
    assert any('solution("ex01")' in _notebook.source_of(c) for c in nb["cells"] if c["cell_type"] == "markdown")

    got = _run_setup(tmp_path / "self-study", self_study)
    assert got["helpers"] == ["check", "figure", "hint", "solution"]
    ex01 = builders.present()[0]
    for region in _stubs.solution_regions((SOLUTIONS / f"{ex01}.py").read_text()):
        assert region.strip() in got["solution"]
    assert "BEGIN SOLUTION" not in got["solution"]

    graded = {_notebook.NOTEBOOK: (TEMPLATE / "es" / _notebook.NOTEBOOK).read_bytes()}
    got = _run_setup(tmp_path / "graded", graded)
    assert got["helpers"] == ["check", "figure", "hint"] and got["lang"] == "es"
    assert got["hint"].startswith("Pista 2/3") and "solution" not in got
    assert "versión evaluada" in got["error"]  # the graded build: solution() explains there is none


def test_cli_self_study_and_spanish_options(tmp_path, monkeypatch, capsys):
    """`--self-study` writes its own folder (never student_template/) and no zip; `--lang es` names the zip."""
    monkeypatch.setattr(build_module, "SELF_STUDY", {"en": tmp_path / "ss", "es": tmp_path / "ss" / "es"})
    committed = builders.committed_snapshot(TEMPLATE)
    monkeypatch.setattr(build_module, "_reusable_snapshot", lambda *a: committed)  # no reference run here
    assert cli_build.main(["--self-study", "--lang", "es"]) == 0
    out = capsys.readouterr().out
    assert "tapetrace-autograder" not in out
    nb = json.loads((tmp_path / "ss" / "es" / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
    assert nb["metadata"]["tapetrace"]["lang"] == "es" and nb["metadata"]["tapetrace"]["self_study"]
    assert cli_build.main(["--self-study", "--only", "otter"]) == 2
    assert builders.zip_name("es") == "tapetrace-autograder-es.zip" and builders.zip_name("en") == _otter_zip.ZIP_NAME
