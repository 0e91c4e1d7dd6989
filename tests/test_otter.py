"""otter-grader 7: `otter run` with the zip `tapetrace build` makes grades the student notebook correctly.

Each case runs the real `otter run` CLI (as an instructor would, no Docker) on a notebook made from
student_template/. The zip is built into a temporary folder with the same code as `tapetrace build`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MUTANTS, mutant_meta

from autograder.builders import notebook as _notebook
from autograder.builders import otter as _otter
from autograder.builders import otter_folder as _otter_folder
from autograder.builders import otter_grade as _otter_grade
from autograder.builders import otter_zip as _otter_zip
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite

dill = pytest.importorskip("dill")
pytest.importorskip("otter")

TEMPLATE_NB = ROOT / "student_template" / _notebook.NOTEBOOK
pytestmark = pytest.mark.slow


def _template() -> dict:
    return json.loads(TEMPLATE_NB.read_text(encoding="utf-8"))


def _exercises() -> list[str]:
    return _template()["metadata"]["tapetrace"]["exercises"]


def _solutions(exercises: list[str]) -> dict[str, str]:
    return {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises}


@pytest.fixture(scope="module")
def full_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ag") / _otter_zip.ZIP_NAME
    return _otter_zip.build_zip(out, _exercises(), timeout=60.0, jobs=2)


def otter_run(zip_path: Path, nb: dict, work: Path, limit: float = 1500.0) -> tuple[dict, dict]:
    """Runs `otter run -p` on a notebook; returns (results.json, {exercise: {case: (passed, points, message)}})."""
    work.mkdir(parents=True, exist_ok=True)
    sub = work / "submission.ipynb"
    sub.write_text(_notebook.dumps(nb), encoding="utf-8")
    out, tmp = work / "out", work / "tmp"
    out.mkdir()
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.run([sys.executable, "-m", "otter", "run", "--no-logo", "-p", "-a", str(zip_path),
                           "-o", str(out), str(sub)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=limit)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    with open(work / "results.pkl", "rb") as fh:
        graded = dill.load(fh)
    cases = {name: {r.test_case.name: (r.passed, r.test_case.points, r.message) for r in tf.test_case_results}
             for name, tf in graded.results.items()}
    graded_by = re.findall(r"tapetrace: graded \S+ with the engine in (\S+) \((\w+) isolation\)", proc.stdout)
    assert len(graded_by) == 1, proc.stdout[-3000:]  # the plugin graded once, in otter's process
    assert not graded_by[0][0].startswith(str(ROOT)), "graded from the zip's engine"
    return results, cases


def _scores(results: dict) -> dict[str, tuple[float, float]]:
    return {t["name"]: (t["score"], t["max_score"]) for t in results["tests"] if "score" in t}


def test_filled_notebook_scores_full_marks(full_zip, tmp_path):
    exercises = _exercises()
    results, cases = otter_run(full_zip, _notebook.fill_with(_template(), _solutions(exercises)), tmp_path)
    scores = _scores(results)
    assert list(scores) == exercises
    for ex in exercises:
        suite = load_suite(ex)
        assert scores[ex] == (suite.max_score, suite.max_score), (ex, cases[ex])
        assert {n: (p, pts) for n, (p, pts, _m) in cases[ex].items()} == {c.name: (True, c.points) for c in suite.checks}
    assert sum(s for s, _ in scores.values()) == 10.0 * len(exercises)


def test_untouched_notebook_scores_zero_not_attempted(habits_zip, tmp_path):
    """The whole template, untouched, through `otter run` with the habits zip (three PyTorch exercises and a JAX
    one): what an untouched answer takes through otter does not depend on the exercise (every stub's "not
    attempted" through `tapetrace grade`: tests/test_outcomes.py), and the full zip's run planned every
    framework's zygotes (Dynamo's warm-up included) to grade nothing."""
    zip_path, graded = habits_zip
    results, cases = otter_run(zip_path, _template(), tmp_path)
    assert list(_scores(results)) == graded
    for ex, (score, top) in _scores(results).items():
        assert score == 0 and top == load_suite(ex).max_score
        for name, (passed, _pts, message) in cases[ex].items():
            assert not passed and "not attempted" in message, (ex, name, message)
            assert "Traceback" not in message


@pytest.fixture(scope="module")
def habits_zip(tmp_path_factory) -> tuple[Path, list[str]]:
    """A zip of ex01-ex03 (PyTorch) and the last exercise (JAX) at a 15 s limit, and those exercises."""
    from test_notebook_habits import EX01, EX02, EX03

    graded = [EX01, EX02, EX03, _exercises()[-1]]
    # 15 working seconds: the endless cell of habits_run spins for all of them; the honest calls take well under 3 s
    return _otter_zip.build_zip(tmp_path_factory.mktemp("ag") / _otter_zip.ZIP_NAME, graded, timeout=15.0,
                                jobs=2), graded


@pytest.fixture(scope="module")
def habits_run(habits_zip, tmp_path_factory) -> tuple[list[str], dict, dict, dict]:
    """One `otter run` read by two tests: a notebook with the habits of tests/test_notebook_habits.py in ex01-ex03
    (a cell above the first exercise imports for everyone, IPython syntax (`!cmd`, `%magic`, `obj?`, `display`,
    `%%time`, `%%bash`), a scratch cell reusing ex01's MLP under ex02, the student's own heading, Colab's
    packages), one wrong answer (a mutant pasted into ex03), and the last exercise answered with a cell the
    student added under it (no tapetrace/otter metadata) that never ends.

    Returns (the exercises graded, the mutant's metadata, results.json, otter's cases)."""
    from test_notebook_habits import (
        EX01,
        EX02,
        EX03,
        cell,
        insert,
        markdown,
        mutant,
        notebook,
        position,
        solution,
        without_imports,
    )

    zip_path, graded = habits_zip
    endless = graded[-1]
    wrong, _lost = mutant(EX03, "no_relu_conv2")
    nb = notebook({
        EX01: "gpu = !nvidia-smi -L\n%matplotlib inline\n" + without_imports(solution(EX01)) + "\nnn.Linear?\n",
        EX02: "from tqdm.auto import tqdm\n" + without_imports(solution(EX02)),
        EX03: "%%time\n" + wrong,
        endless: solution(endless),
    })
    insert(nb, position(nb, None, "setup") + 1,
           cell("import torch\nfrom torch import nn, Tensor\nfrom collections.abc import Callable, Sequence\n"))
    insert(nb, position(nb, EX02, "answer") + 1,
           markdown("### compare with ex01\n\nMy MLP again, trained for a few steps:"),
           cell("net = MLP(2, [8], 1)\nx0 = torch.randn(32, 2)\nhist = fit(net, x0, (x0[:, :1] > 0).float(), "
                "epochs=5, lr=0.1)\ndisplay(hist[-1])\ncheck('ex02')\n"),
           cell("%%bash\necho scratch\n"))
    nb["cells"].insert(position(nb, endless, "answer") + 1, {
        "cell_type": "code", "id": "student-added", "metadata": {}, "execution_count": None, "outputs": [],
        "source": ["while True:\n", "    pass\n"]})
    results, cases = otter_run(zip_path, nb, tmp_path_factory.mktemp("run"), limit=900)
    return graded, mutant_meta(MUTANTS / EX03 / "no_relu_conv2.py"), results, cases


@pytest.mark.container  # opt-in: a second `otter run` (~28 s; docs/benchmarks.md "Opt-in tests")
def test_one_broken_and_one_endless_exercise_cost_only_themselves(habits_run):
    graded, meta, results, cases = habits_run
    broken, fails, endless, healthy = meta["exercise"], meta["fails"], graded[-1], graded[0]
    scores = _scores(results)
    assert list(scores) == graded

    suite = load_suite(broken)
    lost = sum(c.points for c in suite.checks if c.name in fails)
    assert fails and scores[broken] == (suite.max_score - lost, suite.max_score)
    assert {n for n, (p, _pts, _m) in cases[broken].items() if not p} == fails
    assert scores[healthy] == (load_suite(healthy).max_score,) * 2
    # an endless loop below the answer, at the section's top level, is cut at its budget and the exercise graded
    # on what its section defined before it (issue 57; tests/test_top_level_runs.py): its answer earns full marks
    assert scores[endless] == (load_suite(endless).max_score,) * 2
    shown = json.dumps(results)
    for check in suite.checks:  # students see messages and the bridge's call, never a check's code
        assert f"def {check.name}(" not in shown


@pytest.mark.container  # opt-in: a second `otter run` (~28 s; docs/benchmarks.md "Opt-in tests")
def test_student_habits_grade_as_under_tapetrace_grade(habits_run):
    """The notebook of ``habits_run`` through `otter run`: ex01 and ex02 get full marks, the wrong answer in ex03
    loses exactly its points."""
    from test_notebook_habits import EX01, EX02, EX03, mutant

    graded, _meta, results, cases = habits_run
    _wrong, lost = mutant(EX03, "no_relu_conv2")
    suites = {ex: load_suite(ex) for ex in graded}
    scores = _scores(results)
    assert {ex: scores[ex] for ex in (EX01, EX02, EX03)} == {
        EX01: (suites[EX01].max_score,) * 2, EX02: (suites[EX02].max_score,) * 2,
        EX03: (suites[EX03].max_score - lost, suites[EX03].max_score)}, cases


# --------------------------------------------------------------------------- the zip's run_otter.py (Gradescope,
# otter grade): otter's real runner, started the way their containers start it, without Docker
def lay_out(zip_path: Path, where: Path, files: dict[str, bytes], metadata: bytes = b"",
            config: dict | None = None) -> Path:
    """``/autograder`` as ``otter grade``'s image holds it when a container starts: ``source/`` (the zip),
    ``submission/`` (``files``), ``results/``, and the EMPTY ``submission_metadata.json`` its Dockerfile
    ``touch``es; ``config`` updates ``otter_config.json`` as ``otter grade``'s options do (``zips``, ``pdf``)."""
    import zipfile

    ag = where / "autograder"
    for sub in ("source", "submission", "results"):
        (ag / sub).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(ag / "source")
    if config:
        path = ag / "source" / "otter_config.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **config}))
    (ag / "submission_metadata.json").write_bytes(metadata)
    for name, data in files.items():
        (ag / "submission" / name).write_bytes(data)
    return ag


def run_otter_py(ag: Path, env: dict | None = None, limit: float = 1500.0) -> tuple[subprocess.CompletedProcess, dict]:
    """``python /autograder/source/run_otter.py`` (what the zip's ``run_autograder`` runs); its results.json."""
    proc = subprocess.run([sys.executable, str(ag / "source" / "run_otter.py")], cwd=ag, capture_output=True,
                          text=True, timeout=limit, env=dict(os.environ, **(env or {})))
    path = ag / "results" / "results.json"
    assert path.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads(path.read_text())


SMALL = ["ex01_torch_mlp", "ex09_autograd_tape"]


@pytest.fixture(scope="module")
def small_zip(tmp_path_factory) -> Path:
    return _otter_zip.build_zip(tmp_path_factory.mktemp("ag") / _otter_zip.ZIP_NAME, SMALL, timeout=30.0, jobs=2)


@pytest.fixture(scope="module")
def runner(small_zip, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, dict]:
    """One run_otter.py run in otter grade's image, read by three tests: ex01 answered with a forged answer
    written on the result pipe (tests/adversarial/attacks/forged_value_crashes_check.py), ex09 with its
    solution, and `otter grade --pdfs`'s config and placeholder <stem>.pdf."""
    attack = (ROOT / "tests" / "adversarial" / "attacks" / "forged_value_crashes_check.py").read_text()
    nb = _notebook.fill_with(_template(), {SMALL[0]: (SOLUTIONS / f"{SMALL[0]}.py").read_text() + "\n\n" + attack,
                                           SMALL[1]: (SOLUTIONS / f"{SMALL[1]}.py").read_text()})
    ag = lay_out(small_zip, tmp_path_factory.mktemp("runner"),
                 {"submission.ipynb": _notebook.dumps(nb).encode(), "submission.pdf": b""}, config={"pdf": True})
    proc, results = run_otter_py(ag)
    return ag, proc, results


def _runner_scores(results: dict) -> dict[str, tuple[float, float]]:
    """The run's scores, checked: ex09 (the solution) full, ex01 (the forged answer) none of its points."""
    scores = _scores(results)
    top = {ex: load_suite(ex).max_score for ex in SMALL}
    assert set(scores) == set(SMALL) and scores[SMALL[1]] == (top[SMALL[1]],) * 2, scores
    assert scores[SMALL[0]] == (0, top[SMALL[0]]), scores
    return scores


def test_runner_grades_with_the_empty_metadata_file_of_otter_grade_images(runner):
    """otter's runner json.loads submission_metadata.json when a plugin is named: run_otter.py makes it valid."""
    ag, proc, results = runner
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "tapetrace: graded submission.ipynb" in proc.stdout
    assert json.loads((ag / "submission_metadata.json").read_text()) == {}
    scores = _runner_scores(results)
    extra = results["extra_data"]["tapetrace"]  # the box and plan the engine graded in (issue 27), for the instructor
    assert extra["envelope"]["plan"]["jobs"] >= 1 and extra["envelope"]["cpus"] > 0, extra
    assert extra["isolation"]["level"] and set(extra["status"]) == set(SMALL)
    assert set(extra["status"].values()) == {"graded"}, extra
    assert extra["total"] == sum(s for s, _ in scores.values()) and "grader_reason" not in extra, extra
    assert "error" not in extra and "solution" not in json.dumps(extra).lower()


def test_pdfs_are_refused_and_grades_kept(runner):
    """`otter grade --pdfs`: otter's config asks for PDFs and a placeholder <stem>.pdf is copied in; the run
    grades as without it and the placeholder becomes a one-page note saying why (otter copies it out)."""
    pypdf = pytest.importorskip("pypdf")
    ag, proc, results = runner
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "this autograder makes no PDFs" in proc.stderr
    _runner_scores(results)  # the grades of the same notebook without PDFs (the other tests here)
    assert not any(t.get("name") == "PDF Generation Failed" for t in results["tests"])
    text = " ".join(page.extract_text() for page in pypdf.PdfReader(ag / "submission" / "submission.pdf").pages)
    assert "makes no PDFs" in " ".join(text.split()) and "--pdfs" in text


STUBS = {  # setup.sh's downloads and installers, recorded instead of run
    "apt-get": 'echo "apt-get $*" >> "$SETUP_LOG"',
    "dpkg": 'echo "dpkg $*" >> "$SETUP_LOG"',
    "mamba": 'echo "mamba $*" >> "$SETUP_LOG"',
    "uname": 'echo x86_64',
    "wget": 'echo "wget $*" >> "$SETUP_LOG"; while [ $# -gt 0 ]; do [ "$1" = -O ] && printf "#!/bin/sh\\n" > "$2"; '
            'shift; done',
}


@pytest.mark.parametrize("config", [None, {"pdf": True}], ids=["otter-grade-image", "pdf-in-config"])
def test_setup_sh_installs_no_pdf_tools(small_zip, tmp_path, config):
    """The zip's setup.sh, run with its installers recorded: neither in otter grade's image (where
    otter_config.json is added after setup.sh, and `cat missing | jq -e ...` exits 0) nor with PDFs
    asked for does it install LaTeX, pandoc or a browser; the rest of it runs."""
    import zipfile

    setup = zipfile.ZipFile(small_zip).read("setup.sh").decode()
    ag = tmp_path / "autograder"
    (ag / "source").mkdir(parents=True)
    (tmp_path / "root").mkdir()
    if config is not None:
        (ag / "source" / "otter_config.json").write_text(json.dumps(config))
    script = tmp_path / "setup.sh"
    script.write_text(setup.replace("/autograder/", f"{ag}/").replace("/root", str(tmp_path / "root")))
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, body in STUBS.items():
        (stubs / name).write_text(f"#!/bin/bash\n{body}\n")
        (stubs / name).chmod(0o755)
    log = tmp_path / "setup.log"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", SETUP_LOG=str(log)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    done = log.read_text()
    assert "mamba env create" in done and "Miniforge3" in done  # it ran to its end
    for tool in ("texlive", "pandoc", "playwright", "chromium"):
        assert tool not in done, done


def test_strip_submission_keeps_only_what_otter_grades(tmp_path):
    import zipfile

    sub = tmp_path / "submission"
    sub.mkdir()
    for name in ("a.ipynb", ".OTTER_LOG", "json.py", ".hidden.ipynb", "notes.pdf"):
        (sub / name).write_text("x")
    (sub / "otter").mkdir()
    (sub / "otter" / "__init__.py").write_text("x")
    (sub / "link.ipynb").symlink_to(sub / "a.ipynb")
    assert _otter_folder.strip_submission(str(sub)) == ["a.ipynb"]
    assert sorted(p.name for p in sub.iterdir()) == ["a.ipynb"]

    sub2 = tmp_path / "zipped"
    sub2.mkdir()
    with zipfile.ZipFile(sub2 / "s.zip", "w") as zf:
        zf.writestr("nb.ipynb", "{}")
        zf.writestr(".OTTER_LOG", "x")
        zf.writestr("deep/other.ipynb", "{}")
        zf.writestr("helper.py", "x")
    assert _otter_folder.strip_submission(str(sub2)) == []  # a zip is taken apart only when asked (--ext zip)
    with zipfile.ZipFile(tmp_path / "s.zip", "w") as zf:
        zf.writestr("nb.ipynb", "{}")
        zf.writestr(".OTTER_LOG", "x")
        zf.writestr("deep/other.ipynb", "{}")
    (sub2 / "s.zip").write_bytes((tmp_path / "s.zip").read_bytes())
    assert _otter_folder.strip_submission(str(sub2), unzip=True) == ["nb.ipynb"]
    assert sorted(p.name for p in sub2.iterdir()) == ["nb.ipynb"]


def test_before_otter_fixes_metadata_and_turns_pdfs_and_zips_off(tmp_path):
    ag = tmp_path / "autograder"
    (ag / "source").mkdir(parents=True)
    (ag / "submission").mkdir()
    (ag / "source" / "otter_config.json").write_text(json.dumps({"pdf": True, "zips": True}))
    (ag / "submission_metadata.json").write_text("")
    (ag / "submission" / "s.pdf").write_text("")
    (ag / "submission" / "s.zip").write_bytes(b"not a zip")
    overrides, after = _otter_folder.before_otter(str(ag))
    assert overrides == {"pdf": False, "token": None, "zips": False}
    assert after == {"notes": [str(ag / "submission" / "s.pdf")], "restore": [str(ag / "submission" / "s.zip")]}
    assert list((ag / "submission").iterdir()) == []
    _otter_folder.after_otter(after)  # otter grade copies both back out of the container
    assert (ag / "submission" / "s.zip").read_bytes() == b"not a zip"
    assert (ag / "submission" / "s.pdf").read_bytes().startswith(b"%PDF-")
    assert json.loads((ag / "submission_metadata.json").read_text()) == {}
    real = {"users": [{"email": "s@example.edu"}]}
    (ag / "submission_metadata.json").write_text(json.dumps(real))  # Gradescope's real metadata is kept
    (ag / "source" / "otter_config.json").write_text("{}")
    assert _otter_folder.before_otter(str(ag)) == ({}, {"notes": [], "restore": []})
    assert json.loads((ag / "submission_metadata.json").read_text()) == real


@pytest.mark.parametrize("why", ["too_small", "isolation"])
def test_a_refusal_tells_the_student_in_the_zips_language_and_the_log_says_why(why, tmp_path, monkeypatch, capsys):
    """The engine grades nothing (a container too small for one exercise, or isolation below the zip's
    require_isolation): each case shows the catalogued message in the zip's language, never blaming the
    student; the log has the reason and the setting to raise, and never says 'graded'."""
    from autograder.core.i18n import render
    from autograder.engine import GradingRun
    from autograder.workers import envelope as _envelope

    mib = 2**20
    box = _envelope.Envelope(memory_bytes=(256 if why == "too_small" else 8192) * mib,
                             machine_memory_bytes=16384 * mib, cpu_quota=0.5, cpus=2, cgroup="v2")
    monkeypatch.setattr(_envelope, "_CURRENT", box)
    settings = {"seed": 1, "salt": "s", "device": "cpu", "timeout": 30, "lang": "es", "jobs": 1,
                "exercises": ["ex01_torch_mlp"], "require_isolation": "full"}
    monkeypatch.setattr(_otter, "_read_settings", lambda base: (settings, b""))
    monkeypatch.setattr(_otter_grade, "_lock_private", lambda base: None)
    planned: list = []  # the exercises the run was made for (its zygotes import what they need)
    monkeypatch.setattr(GradingRun, "measure_isolation",
                        lambda self: planned.append(self.exercises) or {"level": "container"})
    monkeypatch.setattr(GradingRun, "grade", lambda *a, **k: pytest.fail("a refused run graded"))
    sub = tmp_path / "submission.ipynb"
    sub.write_text(_notebook.dumps(_template()), encoding="utf-8")
    out = tmp_path / "result.json"
    assert _otter_grade.grade_main(str(sub), str(out)) == 0
    res = json.loads(out.read_text())
    assert planned == [["ex01_torch_mlp"]]
    assert "exercises" not in res and res["isolation"] == {"level": "container"}
    if why == "too_small":
        assert "256 MiB" in res["error"] and "--memory" in res["error"]  # the setting to raise, for the log
        assert res["message"] == render("MACHINE_TOO_SMALL", "es")
    else:
        assert "--require-isolation" in res["error"]
        assert res["message"] == render("ISOLATION_TOO_LOW", "es", level="container", wanted="full")
    extra = _otter.instructor_data(res)  # results.json's extra_data: why nothing was graded, for the instructor
    assert extra["error"] == res["error"] and extra["status"] == {} and extra["isolation"] == {"level": "container"}
    assert ("envelope" in extra) == (why == "too_small")
    monkeypatch.setenv(_otter.RESULT_ENV, str(out))
    with pytest.raises(AssertionError) as failed:
        _otter.otter_check("ex01_torch_mlp", "forward_matches_reference")
    assert str(failed.value) == res["message"] and str(failed.value).startswith("sin corregir:")
    assert "no por tu código" in str(failed.value)


def _engine_settings(monkeypatch, require: str = "full") -> None:
    settings = {"seed": 1, "salt": "s", "device": "cpu", "timeout": 30, "lang": "es", "jobs": 1,
                "exercises": ["ex01_torch_mlp"], "require_isolation": require}
    monkeypatch.setattr(_otter, "_read_settings", lambda base: (settings, b""))
    monkeypatch.setattr(_otter_grade, "_lock_private", lambda base: None)


def _fake_grade(graded: list):
    """``GradingRun.grade`` handing one row of the contract to ``on_result`` (as a run does), none computed."""
    from test_report import fake_results

    def grade(self, paths, only=None, jobs=1, on_result=None, **kwargs):
        row = {**fake_results(1, seed=1)[0], "submission": paths[0]}
        graded.append(paths)
        if on_result is not None:
            on_result(row)
        return [row]

    return grade


def test_the_otter_result_is_the_contracts_row_and_nothing_else(tmp_path, monkeypatch):
    """What the zip's test files read is the engine's row (docs/grading-contract.md, ``ResultRow``): no field of its
    own (``engine_root``, which nothing read, was added by the engine's run and again by the plugin)."""
    from types import SimpleNamespace

    from autograder.core.records import ResultRow
    from autograder.engine import GradingRun

    fields = set(ResultRow.__required_keys__ | ResultRow.__optional_keys__)
    _engine_settings(monkeypatch)
    graded: list = []
    monkeypatch.setattr(GradingRun, "measure_isolation", lambda self: {"level": "full"})
    monkeypatch.setattr(GradingRun, "grade", _fake_grade(graded))
    sub = tmp_path / "work" / "submission.ipynb"
    sub.parent.mkdir()
    sub.write_text(_notebook.dumps(_template()), encoding="utf-8")
    out = tmp_path / "result.json"
    assert _otter_grade.grade_main(str(sub), str(out)) == 0
    res = json.loads(out.read_text())
    assert len(graded) == 1 and res["submission"] == str(sub)
    assert set(res) <= fields, set(res) - fields
    # the plugin's hook, in otter's process: what it hands the test files is the engine's result as it came
    monkeypatch.setenv(_otter.RESULT_ENV, "")
    monkeypatch.setattr(_otter, "_grade_in_subprocess", lambda base, submission, settings: dict(res))
    plugin = SimpleNamespace(submission_path=str(sub))
    _otter.plugin_before_execution(plugin, None)
    assert json.loads(Path(plugin.tapetrace_result).read_text()) == res


def test_the_otter_path_is_admitted_by_the_sessions_isolation_check(tmp_path, monkeypatch):
    """One isolation rule for every driver (engine/session.py's ``check_isolation``): a change there reaches the
    otter path, which refuses as it always did (the student's message in the zip's language, the record)."""
    from autograder.core.i18n import render
    from autograder.engine import GradingRun
    from autograder.engine import session as _session

    asked: list = []

    def check(run, wanted):
        asked.append(wanted)
        raise _session.IsolationRefused("refused by the session's rule (a test's)", isolation={"level": "container"},
                                        wanted=wanted)

    _engine_settings(monkeypatch)
    monkeypatch.setattr(_session, "check_isolation", check)
    monkeypatch.setattr(GradingRun, "measure_isolation", lambda self: {"level": "full"})
    monkeypatch.setattr(GradingRun, "grade", lambda *a, **k: pytest.fail("a refused run graded"))
    sub = tmp_path / "submission.ipynb"
    sub.write_text(_notebook.dumps(_template()), encoding="utf-8")
    out = tmp_path / "result.json"
    assert _otter_grade.grade_main(str(sub), str(out)) == 0
    res = json.loads(out.read_text())
    assert asked == ["full"] and "exercises" not in res and res["isolation"] == {"level": "container"}
    assert "--require-isolation" in res["error"]
    assert res["message"] == render("ISOLATION_TOO_LOW", "es", level="container", wanted="full")


def test_a_forged_answer_is_the_students_in_gradescopes_results(runner):
    """A forged answer written on the result pipe (tests/adversarial/attacks/forged_value_crashes_check.py): the
    student's 0 in a graded exercise (the grader's fence found it), never grader_error, nothing in extra_data's
    grader_reason."""
    _ag, proc, results = runner
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    extra = results["extra_data"]["tapetrace"]
    assert extra["status"][SMALL[0]] == "graded" and "grader_reason" not in extra, extra
    score, top = _scores(results)[SMALL[0]]
    assert score == 0 < top, results  # parameter_shapes_in_order's honest pass is voided with the rest
    assert "internal grader error" not in json.dumps(results)
