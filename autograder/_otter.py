"""otter-grader 7 bridge: an autograder zip whose test files hand the notebook to the tapetrace engine.

What the zip (``otter generate`` output) holds:

- ``tests/<ex>.py``: one exception-format test file per exercise (``OK_FORMAT = False``), one
  ``test_case`` per check with that check's points (hidden unless it is one of the public checks).
  They hold no test code and no expected values, only a call to :func:`otter_check`, so nothing of
  the hidden tests can show in what students see.
- ``files/autograder/``: the engine, hidden suites, probes, messages and data, and
  ``_otter_settings.json`` (timeout, device, jobs, exercises). A package directory: a top-level
  ``.py`` in ``files/`` would make otter refuse ``.py`` submissions ("more than one Python file").
- ``files/solutions/``: the reference solutions (never shipped to students).
- ``otter_config.json``, ``environment.yml`` (the requirements), ``run_autograder``, ``setup.sh``.

How a notebook is graded: otter executes it in a kernel, but its answer and check cells are marked
otter-ignore and its set-up cell stops any later cell from running there (see ``_notebook``), so
no student code runs in otter's process tree. Then otter runs the test files. The first case
starts ``python -m autograder._otter grade NOTEBOOK`` in a fresh process from the zip's pristine
copy of the engine: it grades every exercise exactly like ``tapetrace grade`` (sandboxed workers,
per-exercise isolation and timeouts, reference on the same device) and the result is cached in a
temp file keyed by the notebook's hash; every other case only reads it. A failed case raises
``AssertionError(student-safe message)``.

This module is loaded by the test files by path, inside otter's kernel: its top level imports the
standard library only; engine and otter imports happen inside functions.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SETTINGS = "_otter_settings.json"
CACHE_DIR = "tapetrace-otter"
ZIP_NAME = "tapetrace-autograder.zip"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
_MEMO: dict[str, dict[str, Any]] = {}


# =========================================================================== grading side
def _base() -> str:
    """The folder holding this copy of the ``autograder`` package (and ``solutions/``)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    cmd = [sys.executable, "-m", "autograder._otter", "grade", os.path.abspath(submission), "--out", out]
    limit = float(settings["total_timeout"])
    try:
        proc = subprocess.Popen(cmd, cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            _stdout, stderr = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return {"error": f"the grader did not finish within {limit:g} s"}
        if proc.returncode != 0 or not os.path.isfile(out):
            # Details go to the autograder's log (instructors), not to the student-facing message.
            print(stderr.decode("utf-8", "replace")[-4000:], file=sys.__stderr__)
            return {"error": f"the grader failed (exit status {proc.returncode}); your instructor can see why "
                             "in the autograder's log"}
        with open(out, encoding="utf-8") as fh:
            return json.load(fh)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def results(folder: str | None = None) -> dict[str, Any]:
    """The engine's result for the submission in ``folder`` (default: the current one), graded once.

    Cached in memory and in ``$TMPDIR/tapetrace-otter/<sha256 of settings + submission>.json``.
    """
    base = _base()
    settings, raw = _read_settings(base)
    try:
        sub = submission_path(folder or os.getcwd())
    except FileNotFoundError as err:
        return {"error": str(err)}
    with open(sub, "rb") as fh:
        digest = hashlib.sha256(raw + b"\0" + fh.read()).hexdigest()
    if digest in _MEMO:
        return _MEMO[digest]
    cache = os.path.join(tempfile.gettempdir(), CACHE_DIR, f"{digest}.json")
    res: dict[str, Any] | None = None
    if os.path.isfile(cache):
        try:
            with open(cache, encoding="utf-8") as fh:
                res = json.load(fh)
        except (OSError, ValueError):
            res = None
    if res is None:
        res = _grade_in_subprocess(base, sub, settings)
        if "error" not in res:
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(res, fh)
            os.replace(tmp, cache)
    _MEMO[digest] = res
    return res


def otter_check(exercise: str, check: str) -> None:
    """One otter test case: passes when the engine passed ``check`` of ``exercise``.

    Raises:
        AssertionError: with the engine's student-safe message when it failed.
    """
    res = results()
    if "error" in res:
        raise AssertionError(f"not graded: {res['error']}")
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
    the student's workers (it also holds otter's copies of files/, i.e. solutions and hidden suites).
    """
    if not submission.endswith(".ipynb"):
        return submission
    try:
        with open(submission, encoding="utf-8") as fh:
            nb = json.load(fh)
        for cell in nb.get("cells", []):
            if isinstance(cell, dict):
                cell.pop("attachments", None)
                if cell.get("cell_type") == "code":
                    cell["outputs"] = []
    except (OSError, ValueError, AttributeError):
        return submission  # the engine reports what is wrong with it
    path = os.path.join(os.path.dirname(os.path.abspath(submission)), f".tapetrace-{os.path.basename(submission)}")
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(nb, fh)
    except OSError:
        return submission
    return path


def grade_main(submission: str, out: str) -> int:
    """``python -m autograder._otter grade SUBMISSION --out JSON``: the engine over the submission."""
    from autograder._engine import GradingRun
    from autograder._paths import ROOT

    settings, _raw = _read_settings(_base())
    seed = settings.get("seed")
    if seed is None:
        with open(submission, "rb") as fh:
            blob = settings["salt"].encode() + fh.read()
        seed = int.from_bytes(hashlib.sha256(blob).digest()[:4], "big") % 2**31

    def _terminate(_signum: int, _frame: Any) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, _terminate)
    run = GradingRun(device=settings["device"], timeout=float(settings["timeout"]), seed=seed,
                     lang=settings["lang"])
    path = submission
    try:
        path = _without_outputs(submission)
        res = run.grade([path], only=list(settings["exercises"]), jobs=int(settings["jobs"]))[0]
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


# =========================================================================== build side
TEST_FILE = '''\
"""otter-grader test file for {exercise} (generated by `tapetrace build`).

It holds no test code and no expected values: the tapetrace engine shipped in this autograder
(files/autograder) grades the submission once, in its own sandboxed processes with per-exercise
time limits, and each case below reports one of its checks.
"""

import importlib.util as _ilu
import os as _os
import sys as _sys

from otter.test_files import test_case

OK_FORMAT = False

name = "{exercise}"


def _bridge():
    here = _os.getcwd()
    for base in (_os.path.join(here, _os.pardir, "source", "files"), here):
        path = _os.path.abspath(_os.path.join(base, "autograder", "_otter.py"))
        if _os.path.isfile(path):
            module = _sys.modules.get("_tapetrace_otter_bridge")
            if module is None or getattr(module, "__file__", None) != path:
                spec = _ilu.spec_from_file_location("_tapetrace_otter_bridge", path)
                module = _ilu.module_from_spec(spec)
                spec.loader.exec_module(module)
                _sys.modules["_tapetrace_otter_bridge"] = module  # one engine run per kernel, even on errors
            return module
    raise AssertionError("the tapetrace engine is missing from the autograder (files/autograder)")
'''

TEST_CASE = '''

@test_case(name="{check}", points={points!r}, hidden={hidden!r})
def {func}():
    _bridge().otter_check("{exercise}", "{check}")
'''


def test_file_source(exercise: str, checks: list[tuple[str, float, bool]]) -> str:
    """One exercise's otter test file: a case per ``(check name, points, hidden)``.

    Public checks (the ones students run in their notebook) are public cases, so otter's "Public
    Tests" summary reports them truthfully right away; with only hidden cases it would say "All test
    cases passed!" for every exercise, whatever the scores.
    """
    text = TEST_FILE.format(exercise=exercise)
    for name, points, hidden in checks:
        text += TEST_CASE.format(exercise=exercise, check=name, points=float(points), hidden=bool(hidden),
                                 func=f"check_{name}")
    return text


def requirements(cpu_torch: bool) -> str:
    """requirements.txt for the grading image: the versions this build was made and tested with.

    Args:
        cpu_torch: add PyTorch's CPU wheel index and pin the ``+cpu`` build, so the image installs a
            CPU-only torch instead of the multi-GB CUDA wheels PyPI serves on Linux.
    """
    from importlib.metadata import PackageNotFoundError, version

    def ver(pkg: str) -> str | None:
        try:
            return version(pkg).split("+")[0]
        except PackageNotFoundError:
            return None

    lines = ["# Installed into the grading image (Gradescope / otter grade) by `tapetrace build`."]
    torch = ver("torch") or "2.13.0"
    if cpu_torch:
        lines += ["# --cpu-torch: a CPU-only torch from PyTorch's CPU wheel index (no CUDA libraries).",
                  f"--extra-index-url {CPU_TORCH_INDEX}", f"torch=={torch}+cpu"]
    else:
        lines.append(f"torch=={torch}")
    for pkg in ("numpy", "jax", "jaxlib", "flax", "optax"):
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
    """The engine package without caches, with only the given exercises' suites, probes and messages."""
    src = Path(__file__).resolve().parent
    known = {ex for ex in _exercise_names()}

    def wanted(path: Path) -> bool:
        stem = path.stem
        return stem not in known or stem in exercises

    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix not in (".py", ".npz", ".json") or not wanted(path):
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)


def _exercise_names() -> tuple[str, ...]:
    from autograder._paths import EXERCISES

    return EXERCISES


def build_zip(out: Path, exercises: list[str], *, timeout: float = 30.0, device: str = "auto", jobs: int = 1,
              lang: str = "en", seed: int | None = None, cpu_torch: bool = False,
              python_version: str | None = None, show_hidden: bool = True) -> Path:
    """Writes the otter autograder zip.

    Args:
        out: the zip's path.
        exercises: the exercises it grades (each needs a hidden suite and a solution).
        timeout: the engine's per-call and load timeout (``tapetrace grade --timeout``).
        device: ``auto`` (CUDA / TPU when the grading machine has one), ``cpu``, ``cuda`` or ``tpu``.
        jobs: exercises graded in parallel.
        lang: language of the messages.
        seed: a fixed grading seed; default: derived from each submission's bytes and a per-build salt.
        cpu_torch: see :func:`requirements`.
        python_version: Python of the grading image (default: the one running this build).
        show_hidden: let students see each exercise's results on Gradescope once grades are published.

    Returns:
        ``out``.
    """
    import secrets

    import otter.generate

    from autograder._engine import load_suite
    from autograder._paths import SOLUTIONS

    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "exercises": list(exercises), "timeout": float(timeout), "device": device, "jobs": int(jobs),
        "lang": lang, "seed": seed, "salt": secrets.token_hex(16),
        "total_timeout": max(900.0, float(timeout) * (8 * len(exercises) + 10) + 300.0),
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
        (stage / "requirements.txt").write_text(requirements(cpu_torch))
        config = {"lang": "python", "show_hidden": bool(show_hidden), "show_stdout": False,
                  "print_summary": True}
        (stage / "otter_config.json").write_text(json.dumps(config, indent=2) + "\n")
        with _chdir(stage):
            otter.generate.main(tests_dir="tests", output_path=str(out), config="otter_config.json",
                                requirements="requirements.txt", no_environment=True,
                                files=["autograder", "solutions"],
                                python_version=python_version or f"{sys.version_info[0]}.{sys.version_info[1]}")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder._otter grade SUBMISSION --out JSON`` (used by the test files)."""
    parser = argparse.ArgumentParser(prog="python -m autograder._otter")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade one submission with this package's settings")
    g.add_argument("submission")
    g.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    return grade_main(args.submission, args.out)


if __name__ == "__main__":
    sys.exit(main())
