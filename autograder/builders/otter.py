"""otter-grader 7 bridge: an autograder zip in which nothing of a submission runs in otter's kernel.

What the zip (``otter generate`` output, then adjusted here) holds:

- ``tests/<ex>.py``: one exception-format test file per exercise (``OK_FORMAT = False``), one
  ``test_case`` per check with that check's points (hidden unless it is one of the public checks).
  They hold no test code and no expected values, only a call to :func:`otter_check`, so nothing of
  the hidden tests can show in what students see.
- ``files/autograder/``: the engine, hidden suites, probes, messages and data, ``otter_plugin.py``
  and ``_otter_settings.json`` (timeout, device, jobs, exercises, seed salt, required isolation).
  A package directory: a top-level ``.py`` in ``files/`` would make otter refuse ``.py``
  submissions ("more than one Python file").
- ``files/solutions/``: the reference solutions (never shipped to students).
- ``otter_config.json`` (naming the plugin), ``environment.yml`` (the requirements),
  ``run_autograder``, ``run_otter.py`` (puts ``files/`` on ``sys.path`` so the plugin imports on
  Gradescope and in ``otter grade``'s image), ``setup.sh`` (lets an unprivileged user read the
  image's Python under ``/root``, so student workers can drop to one).

How a submission is graded (mechanism: an otter plugin, :class:`autograder.otter_plugin.TapetracePlugin`):

1. ``before_execution`` runs in otter's own process before the kernel sees anything. It moves
   every file of the submission folder but the submission itself out of the way (a zip's
   ``otter/`` or ``json.py`` would otherwise shadow modules in the kernel, whose working folder it
   is), grades the submission file with the zip's engine in a fresh process
   (``python -m autograder.builders.otter grade``: the same sandboxed workers, timeouts and verdicts as
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

This module is loaded by path (by the plugin, in otter's process; by the test files, in the kernel):
its top level imports the standard library only; engine and otter imports happen inside functions.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SETTINGS = "_otter_settings.json"
ZIP_NAME = "tapetrace-autograder.zip"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
RESULT_ENV = "TAPETRACE_OTTER_RESULT"
PLUGIN = "autograder.otter_plugin.TapetracePlugin"
WORK_DIR = "tapetrace"  # beside otter's source/submission/results folders; root-only
_MEMO: dict[str, dict[str, Any]] = {}


# =========================================================================== grading side
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
    cmd = [sys.executable, "-m", "autograder.builders.otter", "grade", os.path.abspath(submission), "--out", out]
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


def _quarantine(submission: str, work: str) -> None:
    """Moves everything of the submission folder but the submission, otter's ``tests/`` and its
    ``__init__.py`` out of it: the kernel runs there, and the folder is first on its import path.
    ``__init__.py`` is left empty (otter only appends to it: a submission's own would keep its code)."""
    folder = os.path.dirname(submission)
    keep = {os.path.basename(submission), "tests", "__init__.py"}
    aside = os.path.join(work, "quarantine")
    os.makedirs(aside, mode=0o700, exist_ok=True)
    for name in os.listdir(folder):
        if name not in keep:
            target = os.path.join(aside, name)
            if os.path.lexists(target):
                _remove(target)
            try:
                shutil.move(os.path.join(folder, name), target)
            except OSError:
                _remove(os.path.join(folder, name))
    init = os.path.join(folder, "__init__.py")
    if os.path.lexists(init):
        _remove(init)
        open(init, "w").close()


def _work_dir(submission: str) -> str:
    """The root-only folder beside otter's ``source``/``submission``/``results`` (quarantine, result)."""
    agdir = os.path.dirname(os.path.dirname(submission))
    work = os.path.join(agdir, WORK_DIR)
    os.makedirs(work, mode=0o700, exist_ok=True)
    os.chmod(work, 0o700)
    return work


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
    _quarantine(submission, _work_dir(submission))


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
    work = _work_dir(submission)
    _quarantine(submission, work)
    base = _base()
    settings, _raw = _read_settings(base)
    res = _grade_in_subprocess(base, submission, settings)
    res["engine_root"] = base
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
        res: the engine's result for the submission (GRADING.md's submission object), or its refusal.
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


def _without_outputs(submission: str) -> str:
    """A copy of a notebook without cell outputs (plots can outgrow the loader's size cap); else the path.

    The copy is a hidden file beside the submission: the engine then hides that whole folder from
    the student's workers. The notebook is read as the loader reads (never through a link).
    """
    from pathlib import Path

    from autograder.submissions import loader as _loader

    if not submission.endswith(".ipynb"):
        return submission
    try:
        nb = json.loads(_loader._read_text(Path(submission), _loader.MAX_NOTEBOOK_BYTES))
        for cell in nb.get("cells", []):
            if isinstance(cell, dict):
                cell.pop("attachments", None)
                if cell.get("cell_type") == "code":
                    cell["outputs"] = []
    except (OSError, ValueError, AttributeError, _loader.Refused, _loader.SubmissionError):
        return submission  # the engine reports what is wrong with it
    path = os.path.join(os.path.dirname(os.path.abspath(submission)), f".tapetrace-{os.path.basename(submission)}")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh)
    except OSError:
        return submission
    return path


def _lock_private(base: str) -> None:
    """The zip's private parts readable by root only (a student worker with its own uid cannot read them)."""
    for rel, mode in (("solutions", 0o700), (os.path.join("autograder", "hidden"), 0o700),
                      (os.path.join("autograder", SETTINGS), 0o600)):
        path = os.path.join(base, rel)
        if os.path.exists(path) and not os.path.islink(path):
            try:
                os.chmod(path, mode)
            except OSError:
                pass


# Seconds the engine gives itself on the otter path unless the zip's settings say ``deadline``: Gradescope's
# default limit is 10 minutes for everything (the image's start, otter, the engine), and a run it stops
# shows the student nothing.
OTTER_DEADLINE = 540.0


def grade_main(submission: str, out: str) -> int:
    """``python -m autograder.builders.otter grade SUBMISSION --out JSON``: the engine over the submission."""
    from autograder.core.i18n import render
    from autograder.core.paths import ROOT
    from autograder.engine import GradingRun
    from autograder.sandbox import isolate as _sandbox
    from autograder.workers import envelope as _envelope

    base = _base()
    settings, _raw = _read_settings(base)
    if os.geteuid() == 0:
        _lock_private(base)
    seed = settings.get("seed")
    if seed is None:
        with open(submission, "rb") as fh:
            blob = settings["salt"].encode() + fh.read()
        seed = int.from_bytes(hashlib.sha256(blob).digest()[:4], "big") % 2**31

    def _terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _terminate)
    import time

    started = time.monotonic()
    run = GradingRun(device=settings["device"], timeout=float(settings["timeout"]), seed=seed,
                     lang=settings["lang"])
    path = submission
    try:
        iso = run.measure_isolation()
        wanted = settings.get("require_isolation", "container")
        print(f"tapetrace: {_sandbox.describe(iso)}", file=sys.stderr)
        print(f"tapetrace: {run.envelope.describe()}", file=sys.stderr)
        if run.plan.refuse:  # the container cannot hold one exercise at a time: say so, grade nothing
            res = {"error": run.plan.refuse, "message": render("MACHINE_TOO_SMALL", settings["lang"]),
                   "envelope": _envelope.as_record(run.envelope), "isolation": iso}
            print(f"tapetrace: {run.plan.refuse}", file=sys.stderr)
        elif wanted != "minimal" and not _sandbox.level_at_least(iso, wanted):
            res = {"error": f"student code would run with {iso.get('level')} isolation here, below the {wanted} "
                            "level this autograder requires (`tapetrace build --require-isolation`)",
                   "message": render("ISOLATION_TOO_LOW", settings["lang"], level=iso.get("level"), wanted=wanted),
                   "isolation": iso}
        else:
            path = _without_outputs(submission)
            # the run ends before Gradescope's limit (otter then needs its share): what is not graded by
            # then is `ungraded` and shows as such, instead of a global timeout that shows nothing
            deadline = float(settings.get("deadline") or OTTER_DEADLINE)
            res = run.grade([path], only=list(settings["exercises"]), jobs=int(settings["jobs"]),
                            deadline=started + deadline)[0]
    finally:
        run.close()
        if path != submission:
            os.unlink(path)
    res["submission"] = submission
    res["engine_root"] = str(ROOT)
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(res, fh)
    os.replace(tmp, out)
    return 0


# =========================================================================== before otter's runner
# run_otter.py (Gradescope, otter grade) calls before_otter/after_otter before otter is imported; the
# plugin's before_grading strips the folder again under `otter run` (see plugin_before_grading).
METADATA = "submission_metadata.json"
MAX_SUBMISSION_BYTES = 100 * 1024 * 1024  # a file taken out of a zip submission (the loader's own cap)
PDF_REFUSED = ("tapetrace: this autograder makes no PDFs (otter grade --pdfs, or pdf/token in "
               "otter_config.json). otter would export them with pandoc and LaTeX over the submission's "
               "cells, as root and outside the sandbox that runs student code, where a LaTeX command in a "
               "Markdown cell can read the autograder's files. Grades are not affected. Grade without "
               "--pdfs; for a printable copy, export the notebooks yourself (jupyter nbconvert).")


def _remove(path: str) -> None:
    """Deletes a file, link or folder (a link itself, never what it points to)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def gradable_names(names: list[str]) -> list[str]:
    """What otter's Python runner looks for among a folder's top-level names (its ``glob`` skips names
    starting with a dot): the notebooks, else the ``.py`` files but ``__init__.py``."""
    visible = sorted(n for n in names if not n.startswith("."))
    notebooks = [n for n in visible if n.endswith(".ipynb")]
    return notebooks or [n for n in visible if n.endswith(".py") and n != "__init__.py"]


def _unzip_gradable(archive: str, folder: str) -> None:
    """Writes the zip's top-level gradable files (by :func:`gradable_names`) into ``folder``; nothing else of it."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = {i.filename: i for i in zf.infolist() if not i.is_dir() and "/" not in i.filename
                     and "\\" not in i.filename and i.filename not in ("", ".", "..")}
            for name in gradable_names(list(infos)):
                info = infos[name]
                if info.file_size > MAX_SUBMISSION_BYTES:
                    continue
                with zf.open(info) as src:
                    data = src.read(MAX_SUBMISSION_BYTES + 1)
                if len(data) <= MAX_SUBMISSION_BYTES:
                    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o644)
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, NotImplementedError):
        return  # nothing gradable comes out of it: otter reports "No gradable files found in submission"


def strip_submission(folder: str, unzip: bool = False, aside: str | None = None) -> list[str]:
    """Leaves in otter's submission folder only what otter's runner grades, before otter reads it.

    Everything else a submission brings (hidden files such as a ``.OTTER_LOG`` that otter would
    unpickle as root, folders, links, other files) is deleted. Several notebooks are all kept, so that
    otter refuses them with its own message ("More than one .ipynb file found in submission").

    Args:
        folder: ``AUTOGRADER/submission`` as Gradescope or ``otter grade`` filled it.
        unzip: a zip submission (``otter grade --ext zip``): its one ``*.zip`` gives its top-level
            notebook (else ``.py``) and nothing else; the zip goes too (into ``aside`` when given).
        aside: a private folder for that zip (``otter grade`` copies it back out of the container
            afterwards, and loses the row when it is gone; :func:`after_otter` puts it back).

    Returns:
        The names left, sorted.
    """
    names = os.listdir(folder)
    archives = [n for n in names if n.endswith(".zip") and not n.startswith(".") and _regular(os.path.join(folder, n))]
    if unzip and len(archives) == 1 and not gradable_names(names):
        _unzip_gradable(os.path.join(folder, archives[0]), folder)
        if aside is not None:
            os.makedirs(aside, mode=0o700, exist_ok=True)
            shutil.move(os.path.join(folder, archives[0]), os.path.join(aside, archives[0]))
        names = os.listdir(folder)
    keep = {n for n in gradable_names(names) if _regular(os.path.join(folder, n))}
    for name in names:
        if name not in keep:
            _remove(os.path.join(folder, name))
    return sorted(keep)


def ensure_metadata(path: str) -> bool:
    """Makes otter's ``submission_metadata.json`` a JSON object (``{}``) when it is missing, empty or not one.

    ``otter grade``'s Dockerfile ``touch``es an empty file, and otter's runner ``json.load``s it whenever
    ``otter_config.json`` names a plugin: every submission would fail with ``JSONDecodeError``.

    Returns:
        Whether the file was (re)written.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            if isinstance(json.load(fh), dict):
                return False
    except (OSError, ValueError):
        pass
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("{}\n")
    return True


def wants_pdf(config: dict[str, Any]) -> bool:
    """Whether an otter config asks its runner for PDFs (the condition otter's runner uses)."""
    return bool(config.get("pdf")) or config.get("token") is not None


def before_otter(agdir: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """``run_otter.py``, before otter is imported: metadata made valid, the submission folder stripped, PDFs off.

    Args:
        agdir: the autograder folder (``/autograder``) holding ``source/``, ``submission/``, ``results/``.

    Returns:
        ``(overrides, after)``: settings for otter's runner (``zips`` off once this unzipped the
        submission; ``pdf``/``token`` off), and what :func:`after_otter` restores for ``otter grade``,
        which copies the submission file and ``<name>.pdf`` back out of each container and loses the
        row when one is missing: ``notes`` (PDF paths that get the refusal) and ``restore`` (the zip
        submission, kept aside while otter runs).
    """
    ensure_metadata(os.path.join(agdir, METADATA))
    try:
        with open(os.path.join(agdir, "source", "otter_config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        config = {}
    config = config if isinstance(config, dict) else {}
    folder = os.path.join(agdir, "submission")
    overrides: dict[str, Any] = {}
    after: dict[str, list[str]] = {"notes": [], "restore": []}
    if wants_pdf(config):
        after["notes"] = [os.path.join(folder, n) for n in sorted(os.listdir(folder))
                          if n.endswith(".pdf") and not n.startswith(".")]
        overrides.update(pdf=False, token=None)
        print(PDF_REFUSED, file=sys.stderr)
    aside = os.path.join(agdir, WORK_DIR, "arrived")
    if config.get("zips"):
        overrides["zips"] = False
    strip_submission(folder, unzip=bool(config.get("zips")), aside=aside)
    if os.path.isdir(aside):
        after["restore"] = [os.path.join(folder, n) for n in sorted(os.listdir(aside))]
    return overrides, after


def after_otter(after: dict[str, list[str]]) -> None:
    """``run_otter.py``, after otter's runner: the zip submission is back where otter grade copies it from,
    and each PDF otter would copy out is a one-page refusal note."""
    for path in after.get("restore", []):
        src = os.path.join(os.path.dirname(os.path.dirname(path)), WORK_DIR, "arrived", os.path.basename(path))
        _remove(path)
        shutil.move(src, path)
    for path in after.get("notes", []):
        _remove(path)
        with open(path, "wb") as fh:
            fh.write(note_pdf(PDF_REFUSED))


def note_pdf(text: str, width: int = 88) -> bytes:
    """A one-page PDF (US letter, Helvetica 10 pt) holding ``text`` wrapped at ``width`` characters."""
    import textwrap

    lines = textwrap.wrap(text.encode("latin-1", "replace").decode("latin-1"), width)
    body = "".join("(" + re.sub(r"([\\()])", r"\\\1", line) + ") Tj T* " for line in lines)
    content = f"BT /F1 10 Tf 14 TL 54 738 Td {body}ET".encode("latin-1")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
               b"/Contents 5 0 R >>", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# =========================================================================== build side
TEST_FILE = "otter_test.py"  # autograder/builders/templates/: the file part, then a case part per check


def test_file_source(exercise: str, checks: list[tuple[str, float, bool]]) -> str:
    """One exercise's otter test file: a case per ``(check name, points, hidden)``.

    Public checks (the ones students run in their notebook) are public cases, so otter's "Public
    Tests" summary reports them truthfully right away; with only hidden cases it would say "All test
    cases passed!" for every exercise, whatever the scores.
    """
    from autograder.builders import templates

    text = templates.render(TEST_FILE, "file", exercise=templates.string(exercise))
    for name, points, hidden in checks:
        text += "\n\n" + templates.render(TEST_FILE, "case", exercise=templates.string(exercise),
                                          check=templates.string(name), points=repr(float(points)),
                                          hidden=repr(bool(hidden)), func=f"check_{name}")
    return text


def requirements(gpu_torch: bool = False) -> str:
    """requirements.txt for the grading image: the versions this build was made and tested with.

    Args:
        gpu_torch: PyPI's default Linux torch (with its CUDA libraries, ~3 GB of wheels) instead of the
            CPU-only ``+cpu`` build from PyTorch's CPU wheel index. Neither ``otter grade`` nor
            Gradescope gives a container a GPU: only a grader that passes one in needs it.
    """
    from importlib.metadata import PackageNotFoundError, version

    def ver(pkg: str) -> str | None:
        try:
            return version(pkg).split("+")[0]
        except PackageNotFoundError:
            return None

    lines = ["# Installed into the grading image (Gradescope / otter grade) by `tapetrace build`."]
    torch = ver("torch") or "2.13.0"
    if gpu_torch:
        lines += ["# --gpu-torch: PyPI's torch, with its CUDA libraries.", f"torch=={torch}"]
    else:
        lines += ["# a CPU-only torch from PyTorch's CPU wheel index (no CUDA libraries; --gpu-torch for those).",
                  f"--extra-index-url {CPU_TORCH_INDEX}", f"torch=={torch}+cpu"]
    # the engine's own needs, then what Colab preinstalls and graded notebooks may import (GRADING.md)
    for pkg in ("numpy", "jax", "jaxlib", "flax", "optax", "ipython", "tqdm", "pandas", "matplotlib",
                "scikit-learn", "seaborn"):
        v = ver(pkg)
        lines.append(f"{pkg}=={v}" if v else pkg)
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _copy_engine(target: Path, exercises: list[str]) -> None:
    """The engine package without caches, with only the given exercises' packages and hidden suites."""
    src = Path(__file__).resolve().parents[1]  # autograder/ (this module is autograder/builders/otter.py)
    from autograder.core.registry import EXERCISES

    known = set(EXERCISES)

    def wanted(rel: Path) -> bool:
        if rel.parts[0] == "exercises" and len(rel.parts) > 2:  # exercises/<exercise>/...
            return rel.parts[1] in exercises
        if rel.parts[0] == "hidden":  # hidden/<exercise>.py
            return rel.stem not in known or rel.stem in exercises
        if rel.parts[:3] == ("builders", "templates", "new"):  # the skeleton `tapetrace new` writes: nothing here runs it
            return False
        return True

    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix not in (".py", ".npz", ".json") or not wanted(rel):
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)


def build_zip(out: Path, exercises: list[str], *, timeout: float = 30.0, device: str = "auto", jobs: int = 1,
              lang: str = "en", seed: int | None = None, gpu_torch: bool = False,
              python_version: str | None = None, show_hidden: bool = True,
              require_isolation: str = "container") -> Path:
    """Writes the otter autograder zip.

    Args:
        out: the zip's path.
        exercises: the exercises it grades (each needs a hidden suite and a solution).
        timeout: the engine's per-call and load timeout (``tapetrace grade --timeout``).
        device: ``auto`` (CUDA / TPU when the grading machine has one), ``cpu``, ``cuda`` or ``tpu``.
        jobs: exercises graded in parallel.
        lang: language of the messages.
        seed: a fixed grading seed; default: derived from each submission's bytes and a per-build salt.
        gpu_torch: see :func:`requirements` (default: a CPU-only torch).
        python_version: Python of the grading image (default: the one running this build).
        show_hidden: let students see each exercise's results on Gradescope once grades are published.
        require_isolation: the weakest isolation of student code the zip grades under (``full``,
            ``container`` — Docker's default privileges — or ``minimal``); below it every case fails
            with "not graded" and the log says why.

    Returns:
        ``out``.
    """
    import secrets

    import otter.generate

    from autograder.core.paths import SOLUTIONS
    from autograder.hidden import load_suite

    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "exercises": list(exercises), "timeout": float(timeout), "device": device, "jobs": int(jobs),
        "lang": lang, "seed": seed, "salt": secrets.token_hex(16),
        "total_timeout": max(900.0, float(timeout) * (8 * len(exercises) + 10) + 300.0),
        "require_isolation": require_isolation,
    }
    with tempfile.TemporaryDirectory(prefix="tapetrace-build-") as tmp:
        stage = Path(tmp)
        _copy_engine(stage / "autograder", exercises)
        (stage / "autograder" / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n")
        (stage / "solutions").mkdir()
        for ex in exercises:
            shutil.copy2(SOLUTIONS / f"{ex}.py", stage / "solutions" / f"{ex}.py")
        (stage / "tests").mkdir()
        for ex in exercises:
            checks = [(c.name, c.points, c.hidden) for c in load_suite(ex).checks]
            (stage / "tests" / f"{ex}.py").write_text(test_file_source(ex, checks))
        (stage / "requirements.txt").write_text(requirements(gpu_torch))
        config = {"lang": "python", "show_hidden": bool(show_hidden), "show_stdout": False,
                  "print_summary": True, "plugins": [PLUGIN]}
        (stage / "otter_config.json").write_text(json.dumps(config, indent=2) + "\n")
        with _chdir(stage):
            otter.generate.main(tests_dir="tests", output_path=str(out), config="otter_config.json",
                                requirements="requirements.txt", no_environment=True,
                                files=["autograder", "solutions"],
                                python_version=python_version or f"{sys.version_info[0]}.{sys.version_info[1]}")
    _adjust_zip(out)
    return out


# autograder/builders/templates/: the zip's run_otter.py; appended to setup.sh
RUN_OTTER = "run_otter.py"
SETUP_TAIL = "otter_setup.sh"
# otter 7's setup.sh installs LaTeX and pandoc when `cat otter_config.json | jq -e '[.pdf, .token] | any'`
# succeeds, which it does in `otter grade`'s image where the file is added only after setup.sh (jq
# exits 0 on empty input), and a browser for PDFs always: the zip refuses PDFs (run_otter.py), so
# neither is installed.
PDF_TOOLS = re.compile(r"^# install PDF generation dependencies if enabled\nif .*?\n^fi\n", re.M | re.S)
PDF_BROWSER = re.compile(r"^mamba run -n \S+ bash -c \"playwright install-deps && playwright install chromium\"\n",
                         re.M)
NO_PDF_TOOLS = ("# tapetrace: no PDF tools (LaTeX, pandoc, a browser): this autograder refuses PDFs "
                "(see run_otter.py)\n")


def setup_script(otter_setup: str) -> str:
    """The zip's ``setup.sh``: otter's without the PDF tools, then ``otter_setup.sh``.

    Raises:
        RuntimeError: otter's script does not have the shape this build knows (another otter version).
    """
    from autograder.builders import templates

    text, tools = PDF_TOOLS.subn(NO_PDF_TOOLS, otter_setup)
    text, browser = PDF_BROWSER.subn("", text)
    if (tools, browser) != (1, 1):
        raise RuntimeError("otter's setup.sh has no PDF block or browser install where otter-grader 7.0.0 has them: "
                           "update autograder.builders.otter.PDF_TOOLS / PDF_BROWSER for this otter version")
    return text.rstrip("\n") + "\n\n" + templates.path(SETUP_TAIL).read_text(encoding="utf-8")


def _adjust_zip(path: Path) -> None:
    """The zip's ``run_otter.py`` becomes the template's; ``setup.sh`` becomes :func:`setup_script`'s."""
    from autograder.builders import templates

    run_otter = templates.path(RUN_OTTER).read_bytes()
    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in members:
            if info.filename == "run_otter.py":
                data = run_otter
            elif info.filename == "setup.sh":
                data = setup_script(data.decode("utf-8")).encode("utf-8")
            zf.writestr(info, data)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder.builders.otter grade SUBMISSION --out JSON`` (used by the test files)."""
    parser = argparse.ArgumentParser(prog="python -m autograder.builders.otter")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission with this package's settings")
    g.add_argument("submission")
    g.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    return grade_main(args.submission, args.out)


if __name__ == "__main__":
    sys.exit(main())
