"""otter-grader 7 bridge: an autograder zip in which nothing of a submission runs in otter's kernel.

The zip (what it holds, how it is built: :mod:`autograder.builders.otter_zip`) grades a submission with
an otter plugin, :class:`autograder.otter_plugin.TapetracePlugin`, whose hooks are here:

1. ``before_execution`` runs in otter's own process before the kernel sees anything. It moves
   every file of the submission folder but the submission itself out of the way (a zip's
   ``otter/`` or ``json.py`` would otherwise shadow modules in the kernel, whose working folder it
   is), grades the submission file with the zip's engine in a fresh process
   (``python -m autograder.builders.otter_grade``: the same sandboxed workers, timeouts and verdicts as
   ``tapetrace grade``), writes the result to a root-only file, and hands otter an **empty
   notebook**. So the kernel runs otter's own cells and the test files, never a student cell —
   whatever the notebook holds (cells above or instead of the set-up cell, edited or removed
   metadata, another kernel name, a notebook not made from the template, a ``.py``).
2. The test files' cases (in the kernel) read that result: a check's case passes when the engine
   passed it, else it raises ``AssertionError(the engine's student-safe message)``.
3. ``after_grading`` (otter's process again) runs the same test files there and replaces the
   kernel's results with those: the scores otter reports come from the engine's result and the
   zip's own test files only.

If the plugin did not run, every case fails ("not graded"): fail closed.

What goes out of the submission folder, and when: :mod:`autograder.builders.otter_folder`.

This module is loaded by path (by the plugin, in otter's process; by the test files, in the kernel):
its top level imports the standard library only; engine and otter imports happen inside functions.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Any

SETTINGS = "_otter_settings.json"
RESULT_ENV = "TAPETRACE_OTTER_RESULT"
PLUGIN = "autograder.otter_plugin.TapetracePlugin"
FOLDER = "_tapetrace_otter_folder"  # the name otter_folder.py is loaded under (run_otter.py uses it too)
_MEMO: dict[str, dict[str, Any]] = {}


def _base() -> str:
    """The folder holding this copy of the ``autograder`` package (and ``solutions/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # autograder/builders/


def submission_path(folder: str) -> str:
    """The submission in otter's submission folder: its one notebook, else its one .py file."""
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    if len(notebooks) == 1:
        return notebooks[0]
    if len(notebooks) > 1:
        raise FileNotFoundError("more than one notebook (.ipynb) in the submission")
    scripts = [p for p in sorted(glob.glob(os.path.join(folder, "*.py"))) if os.path.basename(p) != "__init__.py"]
    if len(scripts) == 1:
        return scripts[0]
    raise FileNotFoundError("no notebook (.ipynb) or single .py file in the submission")


def _read_settings(base: str) -> tuple[dict[str, Any], bytes]:
    with open(os.path.join(base, "autograder", SETTINGS), "rb") as fh:
        raw = fh.read()
    return json.loads(raw), raw


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        try:
            proc.wait(10)
            return
        except subprocess.TimeoutExpired:
            continue


def _grade_in_subprocess(base: str, submission: str, settings: dict[str, Any]) -> dict[str, Any]:
    out_dir = tempfile.mkdtemp(prefix="tapetrace-otter-")
    out = os.path.join(out_dir, "result.json")
    env = dict(os.environ, PYTHONPATH=base, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    cmd = [sys.executable, "-m", "autograder.builders.otter_grade", os.path.abspath(submission), "--out", out]
    limit = float(settings["total_timeout"])
    try:
        proc = subprocess.Popen(cmd, cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _stdout, stderr = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return {"error": f"the grader did not finish within {limit:g} s"}
        if stderr:  # the isolation line and any problem go to the autograder's log (instructors)
            print(stderr.decode("utf-8", "replace")[-4000:], file=sys.__stderr__)
        if proc.returncode != 0 or not os.path.isfile(out):
            return {"error": f"the grader failed (exit status {proc.returncode}); your instructor can see why "
                             "in the autograder's log"}
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def _folder() -> Any:
    """This copy's ``otter_folder.py``, loaded by path as this module is (the zip's own, never an installed one)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "otter_folder.py")
    module = sys.modules.get(FOLDER)
    if module is None or getattr(module, "__file__", None) != path:
        spec = importlib.util.spec_from_file_location(FOLDER, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[FOLDER] = module
    return module


def plugin_before_grading(plugin: Any, config: Any) -> None:
    """The plugin's ``before_grading``: the first moment otter hands the plugin control, before its runner
    reads anything of the submission folder but the notebook (PDF export, ``.OTTER_LOG``, the kernel).

    On Gradescope and in ``otter grade`` ``run_otter.py`` already left only the submission there; under
    ``otter run`` (which never runs ``run_otter.py``) a zip submission's other files are still there,
    and go now, with the copies of ``files/`` (engine, solutions) otter put beside them.

    Args:
        plugin: the :class:`autograder.otter_plugin.TapetracePlugin` (its ``submission_path``).
        config: otter's ``AutograderConfig`` (unused).
    """
    submission = os.path.abspath(plugin.submission_path)
    folder = _folder()
    folder.quarantine(submission, folder.work_dir(submission))


def plugin_before_execution(plugin: Any, notebook: Any) -> Any:
    """The plugin's ``before_execution``: grade the submission file here, hand otter an empty notebook.

    Args:
        plugin: the :class:`autograder.otter_plugin.TapetracePlugin` (its ``submission_path``).
        notebook: what otter would execute (ignored: nothing of it reaches the kernel).

    Returns:
        A notebook without cells, for the kernel named ``python3``.
    """
    import nbformat

    submission = os.path.abspath(plugin.submission_path)
    folder = _folder()
    work = folder.work_dir(submission)
    folder.quarantine(submission, work)
    base = _base()
    settings, _raw = _read_settings(base)
    res = _grade_in_subprocess(base, submission, settings)  # the engine's row (the contract's), or its refusal
    path = os.path.join(work, "result.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(res, fh)
    os.environ[RESULT_ENV] = path
    plugin.tapetrace_result = path
    level = (res.get("isolation") or {}).get("level", "unknown")
    name = os.path.basename(submission)
    if "error" in res:  # (the engine's refusal, or its own failure: nothing of the submission was graded)
        print(f"tapetrace: NOT graded {name} with the engine in {base} ({level} isolation): {res['error']}")
    else:
        print(f"tapetrace: graded {name} with the engine in {base} ({level} isolation)")
    return nbformat.v4.new_notebook(metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})


def plugin_after_grading(plugin: Any, results: Any) -> None:
    """The plugin's ``after_grading``: the zip's test files, run in otter's process on the engine's result,
    replace whatever the kernel reported."""
    from otter.test_files.exception_test import ExceptionTestFile

    agdir = os.path.dirname(os.path.dirname(os.path.abspath(plugin.submission_path)))
    files = {}
    for path in sorted(glob.glob(os.path.join(agdir, "source", "tests", "*.py"))):
        test_file = ExceptionTestFile.from_file(path)  # the zip's own files: exception format, no test code
        test_file.run({})
        files[test_file.name] = test_file
    results.results = files
    results._catastrophic_error = None
    _keep_extra_data(type(results))


EXTRA_DATA = "tapetrace"  # results.json's ``extra_data`` key: what the instructor needs from this run


def instructor_data(res: dict[str, Any]) -> dict[str, Any]:
    """What Gradescope keeps of a run for the instructor in results.json's ``extra_data`` (never shown to
    students, and nothing of the solutions): the box the engine found and its plan, the isolation,
    each exercise's status and, where the grader (not the student) lost it, why.

    Args:
        res: the engine's result for the submission (docs/grading-contract.md's submission row (``ResultRow``)), or its refusal.
    """
    out: dict[str, Any] = {k: res[k] for k in ("envelope", "isolation", "launcher", "precision", "total",
                                                "max_total") if k in res}
    if "error" in res:
        out["error"] = str(res["error"])
    exercises = res.get("exercises") or {}
    out["status"] = {ex: e.get("status") for ex, e in exercises.items()}
    reasons = {ex: e["grader_reason"] for ex, e in exercises.items() if e.get("grader_reason")}
    if reasons:
        out["grader_reason"] = reasons
    return out


def _keep_extra_data(results_cls: type) -> None:
    """otter's ``GradingResults.to_gradescope_dict`` (which writes results.json after the plugin ran) adds
    :func:`instructor_data` as ``extra_data``. Patched on the class, once, in otter's process: the
    results object otter pickles into results.pkl carries nothing of tapetrace."""
    original = results_cls.to_gradescope_dict
    if getattr(original, "_tapetrace", False):
        return

    def to_gradescope_dict(self: Any, ag_config: Any) -> dict[str, Any]:
        output = original(self, ag_config)
        try:
            output.setdefault("extra_data", {})[EXTRA_DATA] = instructor_data(results())
        except Exception as err:  # noqa: BLE001 - the grades stand whatever happens to the extra data
            output.setdefault("extra_data", {})[EXTRA_DATA] = {"error": f"{type(err).__name__}: {err}"}
        return output

    to_gradescope_dict._tapetrace = True  # type: ignore[attr-defined]
    results_cls.to_gradescope_dict = to_gradescope_dict


def results() -> dict[str, Any]:
    """The engine's result for this submission, written by the plugin (see the module docstring)."""
    path = os.environ.get(RESULT_ENV)
    if not path:
        return {"error": "the tapetrace otter plugin did not run (otter_config.json must name "
                         f"{PLUGIN}); nothing was graded"}
    if path not in _MEMO:
        try:
            with open(path, encoding="utf-8") as fh:
                _MEMO[path] = json.load(fh)
        except (OSError, ValueError) as err:
            return {"error": f"the grader's result is unreadable: {err}"}
    return _MEMO[path]


def otter_check(exercise: str, check: str) -> None:
    """One otter test case: passes when the engine passed ``check`` of ``exercise``.

    Raises:
        AssertionError: with the engine's student-safe message when it failed.
    """
    res = results()
    if "error" in res:  # the student's message (in the zip's language) when the engine wrote one
        raise AssertionError(res.get("message") or f"not graded: {res['error']}")
    ex = (res.get("exercises") or {}).get(exercise)
    if ex is None:
        raise AssertionError(f"{exercise} was not graded")
    for test in ex.get("tests", []):
        if test.get("name") == check:
            if test.get("passed"):
                return
            raise AssertionError(test.get("message") or ex.get("message") or "failed")
    raise AssertionError(f"{exercise}: the grader reported no result for {check}")
