"""Colab simulation: the student notebook alone, in an empty folder, run top to bottom by a kernel.

Once per language (student_template/tapetrace.ipynb and student_template/es/tapetrace.ipynb), one
kernel session each (kernel start-up and framework imports dominate), read by several tests; the English
kernel is the floor stack's venv (scripts/stack_matrix.py: the oldest supported jax, flax, optax, numpy,
matplotlib and IPython), so the same session is also the floor's run (once a test of its own in
tests/test_stacks.py, a kernel session more): the notebook filled with the
solutions (every check cell and every figure cell runs), then a mutant pasted into one exercise's
answer cell and that cell and its check re-run, then a stub pasted back into another (its check says
not attempted, its figure cell explains instead of failing), then a cell the student added under a
third exercise that cannot run as graded (its check says so, as the grader would), then
``hint("ex05", 2)``, then the notebook put back untouched (every exercise not attempted). ``check``
reads the notebook's cells as the grader does: in English through a stand-in of Colab's ``google.colab._message`` serving the notebook as the browser holds it, in Spanish
through ``JPY_SESSION_NAME`` (Jupyter's path of the saved notebook). The kernel cannot see this repository
(the editable install's finder and the repo path are removed first), its HOME and TMPDIR are empty
folders, and afterwards the notebook's folder holds only the notebook and the one file the set-up
cell writes. In Spanish, no English word reaches the student's outputs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import mutant_files, mutant_meta
from test_i18n import ENGLISH_WORDS, glossary, prose_words

from autograder import builders
from autograder.builders import notebook as _notebook
from autograder.builders import stubs as _stubs
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.student import figure_canvas, hints, instructions_es

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

MARK = "TAPETRACE-RESULTS="
# What the student reads, per language: the check report's outcomes and reminder.
WORDS = {
    "en": {"passed": "PASSED", "incorrect": "INCORRECT", "not_attempted": "NOT ATTEMPTED",
           "reminder": "hidden tests grade more"},
    "es": {"passed": "SUPERADO", "incorrect": "INCORRECTO", "not_attempted": "SIN INTENTAR",
           "reminder": "pruebas ocultas corrigen más"},
}

HIDE_REPO = f"""\
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if os.path.abspath(str(p) or ".") != {str(ROOT)!r}]
"""

DUMP = f"""\
import json, sys
from autograder.builders import public as _public
print({MARK!r} + json.dumps({{
    "results": {{k: {{"status": v.status, "tests": v.tests, "device": v.device}} for k, v in _public.RESULTS.items()}},
    "modules": {{k: getattr(m, "__file__", None) for k, m in sys.modules.items() if k.split(".")[0] == "autograder"}},
    "hidden_importable": __import__("importlib.util").util.find_spec("autograder.hidden") is not None,
}}))
"""


# Colab's frontend, as far as `check` needs it: `blocking_request("get_ipynb")` answers with the notebook as
# the browser holds it (BROWSER: a JSON file the edit cells below change, like a student typing in a cell).
COLAB_STANDIN = """\
import json, sys, types
try:
    import google
except ImportError:
    google = types.ModuleType("google")
    google.__path__ = []
    sys.modules["google"] = google
_colab = types.ModuleType("google.colab")
_colab.__path__ = []
_message = types.ModuleType("google.colab._message")


def blocking_request(request_type, request="", timeout_sec=5, parent=None):
    assert request_type == "get_ipynb", request_type
    with open({browser!r}, encoding="utf-8") as fh:
        return {{"ipynb": json.load(fh)}}


_message.blocking_request = blocking_request
_colab._message = _message
_colab.output = types.ModuleType("google.colab.output")  # jax's debugger imports it when it sees Colab
google.colab = _colab
sys.modules.update({{"google.colab": _colab, "google.colab._message": _message, "google.colab.output": _colab.output}})
"""

# The student puts the notebook back as handed out (the saved file), runs every answer cell, then checks each:
# the stack matrix's own cell (scripts/stack_matrix.py), then its names cleared for the cells that follow.
_spec = importlib.util.spec_from_file_location("stack_matrix", ROOT / "scripts" / "stack_matrix.py")
_stack_matrix = sys.modules.setdefault("stack_matrix", importlib.util.module_from_spec(_spec))
if not hasattr(_stack_matrix, "UNTOUCH"):
    _spec.loader.exec_module(_stack_matrix)
UNTOUCH = _stack_matrix.UNTOUCH + "del _nb, _c, _ex, _fh\n"
# The English run's kernel: the oldest supported jax/flax/optax/numpy/matplotlib/IPython (with this venv's torch),
# so one kernel session is both the Colab run and the floor stack's (scripts/stack_matrix.py)
FLOOR = "ci-floor"

# The student edits a cell of the notebook (saved: Jupyter's file; or as the browser holds it: Colab's), then runs it.
EDIT = """\
import json
with open({path!r}, encoding="utf-8") as fh:
    _nb = json.load(fh)
_at = next(i for i, c in enumerate(_nb["cells"]) if c["metadata"].get("tapetrace") == {{"exercise": {ex!r}, "role": "answer"}})
if {add!r}:
    _nb["cells"].insert(_at + 1, {{"cell_type": "code", "metadata": {{}}, "execution_count": None, "outputs": [],
                                  "source": {source!r}}})
else:
    _nb["cells"][_at]["source"] = {source!r}
with open({path!r}, "w", encoding="utf-8") as fh:
    json.dump(_nb, fh)
if not {add!r}:
    exec({source!r}, globals())  # the edited cell, run
del _nb, _at, fh
"""


def _pick_mutant(exercises: list[str]) -> tuple[str, Path, set[str], dict[str, str]]:
    """A mutant that fails some (preferably not all) public checks of its exercise."""
    candidates = []
    for path in mutant_files():
        meta = mutant_meta(path)
        ex = meta["exercise"]
        if ex not in exercises:
            continue
        public = {c.name for c in builders.public_checks(ex)}
        fails = meta["fails"] & public
        if fails:
            candidates.append((fails == public, exercises.index(ex), path.name, ex, path, fails, meta["codes"]))
    if not candidates:
        pytest.skip("no mutant fails a public check")
    _, _, _, ex, path, fails, codes = min(candidates)
    return ex, path, fails, codes


def _outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        elif "data" in out:
            parts.append(str(out["data"].get("text/plain", "")))
    return "".join(parts)


def _pngs(cell) -> int:
    return sum(1 for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))


def _dump(cell) -> dict:
    text = _outputs(cell)
    assert MARK in text, text[-3000:]
    return json.loads(text.split(MARK, 1)[1].strip().splitlines()[0])


def _floor_python() -> tuple[Path, str]:
    """The English run's kernel interpreter: the floor stack's venv (tests/test_stacks.py builds and keeps it under
    ~/.cache/tapetrace/stacks/), or this venv's where it cannot be built (then why, for the floor's test to skip)."""
    try:
        return _stack_matrix.ensure(FLOOR), ""
    except _stack_matrix.Unavailable as err:
        return Path(sys.executable), f"the {FLOOR} stack's venv cannot be built here: {err}"


@pytest.fixture(scope="module")
def colab_run(tmp_path_factory):
    """``colab_run(lang)``: the notebook's one kernel session in that language (made on first use), as a dict:
    ``nb`` (its cells up to the end of the edits), ``untouched`` (the cells after), ``python`` (the kernel's
    interpreter), ``why_not_floor``, ``exercises``, the edited exercises and where the files lie."""
    done: dict[str, dict] = {}

    def get(lang: str) -> dict:
        if lang not in done:
            python, why = _floor_python() if lang == "en" else (Path(sys.executable), "")
            done[lang] = _run_notebook(tmp_path_factory.mktemp(f"colab-{lang}"), lang, python) | {
                "python": python, "why_not_floor": why}
        return done[lang]

    return get


def _kernel(python: Path, where: Path) -> str:
    """A kernel spec under ``where`` (put on JUPYTER_PATH) running ``python``; its name."""
    (where / "kernels" / "stack").mkdir(parents=True)
    (where / "kernels" / "stack" / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "stack", "language": "python"}))
    return "stack"


def _run_notebook(tmp_path: Path, lang: str, python: Path) -> dict:
    template_nb = builders.TEMPLATES[lang] / _notebook.NOTEBOOK
    src = json.loads(template_nb.read_text(encoding="utf-8"))
    assert src["metadata"]["tapetrace"]["lang"] == lang
    exercises = src["metadata"]["tapetrace"]["exercises"]
    mut_ex, mut_path, mut_fails, mut_codes = _pick_mutant(exercises)
    stub_ex = next(e for e in reversed(exercises) if e != mut_ex)
    filled = _notebook.fill_with(src, {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})

    folder, home, tmp = tmp_path / "colab", tmp_path / "home", tmp_path / "tmp"
    for d in (folder, home, tmp):
        d.mkdir()
    (folder / _notebook.NOTEBOOK).write_text(_notebook.dumps(filled), encoding="utf-8")
    shutil.copy(template_nb, tmp_path / "pristine.ipynb")  # kept outside: the folder holds the notebook alone

    nb = nbformat.reads(_notebook.dumps(filled), as_version=4)
    new = nbformat.v4.new_code_cell
    browser = tmp_path / "browser.ipynb"  # Colab: the notebook as the browser holds it (outside the folder)
    seen = browser if lang == "en" else folder / _notebook.NOTEBOOK  # Jupyter: the saved file
    nb.cells.insert(0, new(HIDE_REPO + (COLAB_STANDIN.format(browser=str(browser)) if lang == "en" else "")))
    n_filled = len(nb.cells)
    stub = _stubs.stub_source((SOLUTIONS / f"{stub_ex}.py").read_text(), stub_ex)
    stub_code = _notebook.code_cell_source(instructions_es.localize_stub(stub, stub_ex, lang))
    fragile_ex = next(e for e in exercises if e not in (mut_ex, stub_ex))
    nb.cells += [
        new(DUMP),
        new(EDIT.format(path=str(seen), ex=mut_ex, source=mut_path.read_text(), add=False)),  # pastes a mutant ...
        new(f'check("{mut_ex}")'),    # ... and re-runs its check
        new(EDIT.format(path=str(seen), ex=stub_ex, source=stub_code, add=False)),
        new(f'check("{stub_ex}")'),
        new(f'figure("{stub_ex[:4]}")'),  # an unfinished exercise's figure cell explains, never stops "Run all"
        # a cell added under an exercise, using a name nothing defines: fine in the session, not as graded
        new(EDIT.format(path=str(seen), ex=fragile_ex, source="print(my_scratch_value)\n", add=True)),
        new(f'check("{fragile_ex}")'),
        new('hint("ex05", 2)'),
        new(DUMP),
    ]
    browser.write_text(nbformat.writes(nb), encoding="utf-8")
    edits_end = len(nb.cells)
    # then the notebook put back untouched: every exercise's stub, and check() of each
    nb.cells += [new(UNTOUCH.format(pristine=str(tmp_path / "pristine.ipynb"), saved=str(seen),
                                    exercises=exercises)), new(DUMP)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "XDG_", "MPL", "JPY_"))}
    # the libraries' own caches (IPython's profile, torch.func's inductor dir, matplotlib's font cache) go
    # elsewhere, as on Colab
    env.update(HOME=str(home), TMPDIR=str(tmp), IPYTHONDIR=str(tmp_path / "ipython"),
               TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "torchinductor"), MPLCONFIGDIR=str(tmp_path / "mpl"),
               PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    if lang == "es":
        env["JPY_SESSION_NAME"] = str(folder / _notebook.NOTEBOOK)
    kernel_name, old_path = "python3", os.environ.get("JUPYTER_PATH")
    if python != Path(sys.executable):
        kernel_name = _kernel(python, tmp_path / "jupyter")
        os.environ["JUPYTER_PATH"] = str(tmp_path / "jupyter")  # the kernel spec is looked up in this process
    try:
        client = nbclient.NotebookClient(nb, timeout=900, kernel_name=kernel_name, allow_errors=True,
                                         resources={"metadata": {"path": str(folder)}})
        client.execute(env=env)
    finally:
        if old_path is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old_path

    errors = [(i, _outputs(c)) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    untouched = nb.cells[edits_end:]
    del nb.cells[edits_end:]  # below, cells are counted from the end of the edits
    return {"nb": nb, "untouched": untouched, "errors": errors, "exercises": exercises, "n_filled": n_filled,
            "mut": (mut_ex, mut_fails, mut_codes), "stub_ex": stub_ex, "fragile_ex": fragile_ex, "folder": folder,
            "home": home, "tmp": tmp}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "es"])
def test_notebook_alone_in_an_empty_folder(colab_run, lang):
    run = colab_run(lang)
    assert not run["errors"], run["errors"]
    nb, untouched, exercises, n_filled = run["nb"], run["untouched"], run["exercises"], run["n_filled"]
    (mut_ex, mut_fails, mut_codes), stub_ex, fragile_ex = run["mut"], run["stub_ex"], run["fragile_ex"]
    folder, home, tmp = run["folder"], run["home"], run["tmp"]
    first = _dump(nb.cells[n_filled])
    last = _dump(nb.cells[-1])
    words = WORDS[lang]
    setup = next(c for c in nb.cells if c.metadata.get("tapetrace", {}).get("role") == "setup")
    assert "UNSUPPORTED" not in _outputs(setup) and "NO SOPORTADAS" not in _outputs(setup), _outputs(setup)

    # solutions filled in: every public check passes, on the kernel's devices, from the zip only
    assert set(first["results"]) == set(exercises)
    for ex, res in first["results"].items():
        assert res["status"] == "passed", (ex, [t["message"] for t in res["tests"] if not t["passed"]])
    zip_path = str(folder / _notebook.RUNTIME_FILE)
    assert first["modules"] and all(f is None or f.startswith(zip_path) for f in first["modules"].values())
    assert first["hidden_importable"] is False
    for ex in exercises:
        check_cell = next(c for c in nb.cells if c.metadata.get("tapetrace", {}) == {"exercise": ex, "role": "check"})
        out = _outputs(check_cell)
        assert words["passed"] in out and words["reminder"] in out, out

    # every figure cell draws the student's result (one PNG or more); it may say in words what the figure
    # cannot show (whose model, untrained, diverged: student/figure_canvas.py notes), nothing else: no warning,
    # no log line, nothing on stderr
    figure_cells = [c for c in nb.cells if c.metadata.get("tapetrace", {}).get("role") == "figure"]
    assert len(figure_cells) == len(exercises)
    for cell in figure_cells:
        ex = cell.metadata["tapetrace"]["exercise"]
        assert _pngs(cell) >= 1, (ex, _outputs(cell)[-2000:])
        streams = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"]
        assert not any(o.get("name") == "stderr" for o in streams), (ex, _outputs(cell))
        said = "".join(o.get("text", "") for o in streams)
        assert not any(w in said for w in ("Warning", "Traceback", "Error", "DEBUG", "INFO")), (ex, said)

    # the mutant: exactly its public checks fail, with their messages, nothing else
    res = last["results"][mut_ex]
    failed = {t["name"] for t in res["tests"] if not t["passed"]}
    assert res["status"] == "incorrect" and failed == mut_fails, res
    for t in res["tests"]:
        if t["name"] in mut_codes and not t["passed"]:
            assert t["code"] == mut_codes[t["name"]], t
        if not t["passed"]:
            assert t["message"] and t["code"] not in ("INTERNAL_ERROR", "SNAPSHOT_MISMATCH"), t
            assert t["message"] in _outputs(nb.cells[-8]), "the failure message is shown to the student"
    assert words["incorrect"] in _outputs(nb.cells[-8])

    # the stub pasted back: not attempted, and its figure cell says what to do, in the notebook's language
    assert last["results"][stub_ex]["status"] == "not attempted"
    assert words["not_attempted"] in _outputs(nb.cells[-6])
    assert _outputs(nb.cells[-5]).strip() == figure_canvas.TEXT[lang]["not_done"].format(ex=stub_ex[:4])
    assert _pngs(nb.cells[-5]) == 0

    # the added cell cannot run as graded: the check says so, with the grader's words and the section's line
    res = last["results"][fragile_ex]
    assert res["status"] == "incorrect" and all(t["code"] == "LOAD_EXCEPTION" for t in res["tests"]), res
    shown = _outputs(nb.cells[-3])
    graded_words = {"en": f"as graded, {fragile_ex} does not load", "es": f"tal como se corrige, {fragile_ex} no se carga"}
    assert graded_words[lang] in shown and "my_scratch_value" in shown and words["incorrect"] in shown, shown
    assert "Note:" not in shown and "Nota:" not in shown  # it read the notebook: no fallback note

    # hint("ex05", 2) renders as Markdown
    shown = next(o for o in nb.cells[-2].outputs if "text/markdown" in o.get("data", {}))["data"]["text/markdown"]
    tier2 = hints.HINTS[lang]["ex05_jit_train_step"][1]
    assert shown.startswith(f"**{'Hint' if lang == 'en' else 'Pista'} 2/3") and " ".join(tier2.split()) in " ".join(
        shown.split())

    if lang == "es":  # what the student read: no English word outside code
        avoid, _ = glossary()
        student_cells = [c for c in nb.cells[1:n_filled] + nb.cells[n_filled + 1:-1] if c.cell_type == "code"]
        bad = {w for c in student_cells for w in prose_words(_outputs(c))} & (avoid | ENGLISH_WORDS)
        assert not bad, sorted(bad)

    # put back untouched (Spanish: the newest stack's run of tests/test_stacks.py, when the main venv is that
    # stack; English: the floor's): every exercise is not attempted
    results = _dump(untouched[-1])["results"]
    assert set(results) == set(exercises)
    for ex, res in results.items():
        assert res["status"] == "not attempted", (ex, [t["message"] for t in res["tests"]])

    # nothing written outside the notebook's folder (and there only the runtime zip)
    assert sorted(p.name for p in folder.iterdir()) == sorted([_notebook.NOTEBOOK, _notebook.RUNTIME_FILE])
    assert not any(home.rglob("*")), sorted(str(p) for p in home.rglob("*"))[:10]
    assert not any(tmp.rglob("*")), sorted(str(p) for p in tmp.rglob("*"))[:10]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "es"])
def test_check_py_for_students_working_locally(tmp_path, lang):
    """A student template copied elsewhere: `python check.py` checks the .py files with the notebook's checks."""
    template = builders.TEMPLATES[lang]
    exercises = json.loads((template / _notebook.NOTEBOOK).read_text(encoding="utf-8"))["metadata"]["tapetrace"][
        "exercises"]
    solved, untouched = exercises[0], exercises[1]
    folder = tmp_path / "mine"
    shutil.copytree(template, folder, ignore=shutil.ignore_patterns("es"))
    shutil.copy(SOLUTIONS / f"{solved}.py", folder / f"{solved}.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONDONTWRITEBYTECODE="1", TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "torchinductor"))
    proc = subprocess.run([sys.executable, "-I", str(folder / "check.py"), solved[:4], untouched[:4]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]  # one exercise not attempted: not every check passes
    out = proc.stdout
    title = "public checks" if lang == "en" else "comprobaciones públicas"
    assert f"{solved}: {title}" in out and WORDS[lang]["passed"] in out, out
    assert f"{untouched}: {title}" in out and WORDS[lang]["not_attempted"] in out, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "torchinductor"]  # zip next to check.py
    assert (folder / _notebook.RUNTIME_FILE).is_file()


@pytest.mark.slow
def test_the_english_notebook_on_the_floor_stack(colab_run):
    """The English run's kernel is the floor stack's venv (the lowest supported versions; built once under
    ~/.cache/tapetrace/stacks/): it holds exactly the floor's pins, the set-up cell flags nothing, the notebook
    filled with the solutions passes every check, put back untouched every exercise is not attempted. Without
    the registry the venv cannot be built: the Colab run goes on in this venv and this test skips, saying so."""
    run = colab_run("en")
    if run["why_not_floor"]:
        if not _stack_matrix.registry_reachable(FLOOR):
            pytest.skip(run["why_not_floor"])
        pytest.fail(run["why_not_floor"])
    have = _stack_matrix.installed(run["python"])
    for dist, version in _stack_matrix.STACKS[FLOOR].pins.items():
        assert have[dist].split("+")[0] == version, (dist, have)
    assert not run["errors"], run["errors"]
    setup = next(c for c in run["nb"].cells if c.metadata.get("tapetrace", {}).get("role") == "setup")
    assert "UNSUPPORTED" not in _outputs(setup), _outputs(setup)
    filled, untouched = _dump(run["nb"].cells[run["n_filled"]]), _dump(run["untouched"][-1])
    assert set(filled["results"]) == set(untouched["results"]) == set(run["exercises"])
    for ex in run["exercises"]:
        assert filled["results"][ex]["status"] == "passed", (ex, filled["results"][ex])
        assert untouched["results"][ex]["status"] == "not attempted", (ex, untouched["results"][ex])

