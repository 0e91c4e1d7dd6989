"""What ``tapetrace build`` checks before it reports success, as ``otter assign`` and nbgrader's generate step do.

The built artefacts are checked against each other (:func:`verify`):

- through the autograder zip as built (its own grading entry, ``otter run``, in a temporary folder): the
  notebook filled with the reference solutions scores every exercise's maximum, case by case, and the
  untouched template scores 0 (no case gives points for a stub);
- the public self-check (``check``) on the filled notebook, run top to bottom by a Jupyter kernel that cannot
  see this repository (only the runtime its set-up cell writes): every exercise's status is "passed" and no
  cell raises.

A problem is a :class:`Failure` naming the exercise and the check. The two graders are parameters
(:data:`ZipGrader`, :data:`SelfChecker`) so that the comparison can be tested without running them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.builders import notebook as _notebook
from autograder.core.paths import ROOT, SOLUTIONS

# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Failure:
    """One problem found: ``exercise`` (or ``"(notebook)"``), the ``check`` that found it, and what is wrong."""

    exercise: str
    check: str
    problem: str

    def line(self) -> str:
        """``exNN_name: check: problem`` (one line)."""
        return f"{self.exercise}: {self.check}: {self.problem}"


@dataclass(frozen=True)
class ZipResult:
    """One exercise graded through the zip: its score, maximum and ``{case: (passed, message)}``."""

    score: float
    max_score: float
    cases: dict[str, tuple[bool, str]]


@dataclass(frozen=True)
class SelfCheckResult:
    """One exercise's public self-check in the notebook: its status and ``{check: (passed, message)}``."""

    status: str
    checks: dict[str, tuple[bool, str]]


@dataclass(frozen=True)
class SelfCheckRun:
    """A self-check session: the results of each exercise checked and ``(exercise or None, error)`` of every
    cell that raised."""

    results: dict[str, SelfCheckResult]
    errors: list[tuple[str | None, str]]


# (zip, notebook JSON, an empty work folder) -> {exercise: result}; raises VerifyError when it cannot grade
ZipGrader = Callable[[Path, dict[str, Any], Path], dict[str, ZipResult]]
# (filled notebook JSON, the exercises to check, an empty work folder) -> the session
SelfChecker = Callable[[dict[str, Any], list[str], Path], SelfCheckRun]


class VerifyError(RuntimeError):
    """A grader could not run at all (otter run failed, no kernel): the whole verification fails."""


# --------------------------------------------------------------------------- messages (the build's CLI is English)
FILLED = "the solution notebook through the zip"
UNTOUCHED = "the untouched template through the zip"
SELF_CHECK = "public self-check on the solution notebook"
NO_RESULT = "no result for this exercise: is it in the zip (`--exercises`) and in the notebook?"
NOT_MAX = ("case {case} failed on the reference solution ({message}): the hidden check or the solution is wrong, "
           "or the grading limits are too tight for this machine (`--timeout`)")
BELOW_MAX = ("scored {score} of {max_score} with every case passing: the test file's points disagree with the "
             "suite; rebuild the zip")
ABOVE_ZERO = ("case {case} gave points to the untouched stub: a check that passes without any work "
              "(make it fail on NotImplementedError)")
NOT_PASSED = "status {status!r} on the reference solution: {details}"
CELL_ERROR = "a cell raised while the notebook ran top to bottom: {error}"
GRADER_TROUBLE = "could not grade: {error}"


def _first_line(text: str, width: int = 160) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


# --------------------------------------------------------------------------- the comparisons
def zip_failures(results: dict[str, ZipResult], exercises: list[str], *, filled: bool) -> list[Failure]:
    """What the zip's grades of the filled notebook (``filled``: every case passes, the maximum) or of the
    untouched template (no case passes, 0) show wrong, exercise by exercise."""
    check = FILLED if filled else UNTOUCHED
    out = []
    for ex in exercises:
        res = results.get(ex)
        if res is None:
            out.append(Failure(ex, check, NO_RESULT))
            continue
        if filled:
            bad = [Failure(ex, f"{check}, case {name}", NOT_MAX.format(case=name, message=_first_line(msg)))
                   for name, (passed, msg) in res.cases.items() if not passed]
            if not bad and res.score != res.max_score:
                bad = [Failure(ex, check, BELOW_MAX.format(score=res.score, max_score=res.max_score))]
        else:
            bad = [Failure(ex, f"{check}, case {name}", ABOVE_ZERO.format(case=name))
                   for name, (passed, _msg) in res.cases.items() if passed]
            if not bad and res.score != 0:
                bad = [Failure(ex, check, BELOW_MAX.format(score=res.score, max_score=res.max_score))]
        out += bad
    return out


def self_check_failures(run: SelfCheckRun, exercises: list[str]) -> list[Failure]:
    """What the self-check session shows wrong: an exercise not "passed" (naming its failing checks), a cell
    that raised."""
    out = [Failure(ex or "(notebook)", SELF_CHECK, CELL_ERROR.format(error=_first_line(err)))
           for ex, err in run.errors]
    for ex in exercises:
        res = run.results.get(ex)
        if res is None:
            out.append(Failure(ex, SELF_CHECK, NO_RESULT))
        elif res.status != "passed":
            failing = [(name, msg) for name, (passed, msg) in res.checks.items() if not passed]
            if not failing:
                out.append(Failure(ex, SELF_CHECK, NOT_PASSED.format(status=res.status, details="no check failed")))
            for name, msg in failing:
                out.append(Failure(ex, f"{SELF_CHECK}, check {name}",
                                   NOT_PASSED.format(status=res.status, details=_first_line(msg))))
    return out


def solution_notebook(nb: dict[str, Any]) -> dict[str, Any]:
    """The notebook with every exercise's answer cell holding its reference solution (``solutions/exNN.py``,
    as the tests fill it: :func:`autograder.builders.notebook.fill_with`)."""
    exercises = nb["metadata"][_notebook.META]["exercises"]
    return _notebook.fill_with(nb, {ex: (SOLUTIONS / f"{ex}.py").read_text(encoding="utf-8") for ex in exercises})


def verify(template_nb: dict[str, Any], filled_nb: dict[str, Any], exercises: list[str], work: Path, *,
           zip_path: Path | None = None, grade: ZipGrader | None = None,
           self_check: SelfChecker | None = None, log: Callable[[str], None] = print) -> list[Failure]:
    """Checks the built artefacts against each other; ``[]`` when they agree.

    Args:
        template_nb: the student notebook as built (untouched).
        filled_nb: the same notebook filled with the reference solutions.
        exercises: the exercises checked (the zip's, or every one in the notebook).
        work: an empty folder for the graders' files.
        zip_path: the autograder zip as built; None checks the self-check only.
        grade: how a notebook is graded through the zip (default :func:`otter_run`).
        self_check: how the filled notebook is self-checked (default :func:`notebook_self_check`).
        log: progress lines.
    """
    grade = grade or otter_run
    self_check = self_check or notebook_self_check
    failures: list[Failure] = []
    if zip_path is not None:
        for filled, nb, name in ((True, filled_nb, "filled"), (False, template_nb, "untouched")):
            log(f"verify: grading the {name} notebook through {zip_path.name} ({len(exercises)} exercise(s))")
            folder = work / f"otter-{name}"
            try:
                failures += zip_failures(grade(zip_path, nb, folder), exercises, filled=filled)
            except VerifyError as err:
                failures.append(Failure("(notebook)", FILLED if filled else UNTOUCHED,
                                        GRADER_TROUBLE.format(error=err)))
    log(f"verify: running the public self-check on the filled notebook ({len(exercises)} exercise(s))")
    try:
        failures += self_check_failures(self_check(filled_nb, exercises, work / "self-check"), exercises)
    except VerifyError as err:
        failures.append(Failure("(notebook)", SELF_CHECK, GRADER_TROUBLE.format(error=err)))
    return failures


# --------------------------------------------------------------------------- the real graders
def otter_run(zip_path: Path, nb: dict[str, Any], work: Path, limit: float = 3600.0) -> dict[str, ZipResult]:
    """Grades ``nb`` with the zip's own entry, ``otter run -a ZIP`` (no Docker), in ``work``, as an instructor
    would (and as tests/test_otter.py does); the results per exercise and case."""
    import dill

    work.mkdir(parents=True, exist_ok=True)
    sub, out, tmp = work / "submission.ipynb", work / "out", work / "tmp"
    sub.write_text(_notebook.dumps(nb), encoding="utf-8")
    out.mkdir()
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    try:
        proc = subprocess.run([sys.executable, "-m", "otter", "run", "--no-logo", "-p", "-a", str(zip_path),
                               "-o", str(out), str(sub)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        raise VerifyError(f"`otter run` took over {limit:.0f} s") from None
    if proc.returncode != 0 or not (work / "results.pkl").exists():
        tail = (proc.stdout[-1500:] + proc.stderr[-1500:]).strip().replace("\n", " | ")
        raise VerifyError(f"`otter run` exited {proc.returncode}: {tail}")
    with open(work / "results.pkl", "rb") as fh:
        graded = dill.load(fh)
    results = {}
    for name, tf in graded.results.items():
        cases = {r.test_case.name: (bool(r.passed), str(r.message or "")) for r in tf.test_case_results}
        results[name] = ZipResult(float(tf.score), float(tf.possible), cases)
    return results


# The kernel sees only the notebook's own runtime (the editable install's finder and this repository are
# removed from the import system first), as a student's Colab or Jupyter would.
HIDE_REPO = f"""\
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if os.path.abspath(str(p) or ".") != {str(ROOT)!r}]
"""
MARK = "TAPETRACE-VERIFY="
DUMP = f"""\
import json
from autograder.builders import public as _public
print({MARK!r} + json.dumps({{k: {{"status": v.status, "checks": {{t["name"]: [bool(t["passed"]), str(t.get("message") or "")]
                                                                   for t in v.tests}}}}
                             for k, v in _public.RESULTS.items()}}))
"""


def _session_notebook(filled_nb: dict[str, Any], exercises: list[str]) -> dict[str, Any]:
    """What the kernel runs: the filled notebook with the check cells of ``exercises`` only and no figure
    cells, behind :data:`HIDE_REPO`, then :data:`DUMP`."""
    cells = []
    for cell in filled_nb["cells"]:
        ex, role = _notebook.role_of(cell)
        if role == "figure" or (role == "check" and ex not in exercises):
            continue
        cells.append(cell)
    code = [{"cell_type": "code", "id": f"tapetrace-verify-{i}", "metadata": {}, "execution_count": None,
             "outputs": [], "source": src} for i, src in enumerate((HIDE_REPO, DUMP))]
    return dict(filled_nb, cells=[code[0], *cells, code[1]])


# a Unix socket's path holds at most 104 bytes (macOS; 108 on Linux): the kernel's IPC sockets are <folder>/k-<n>
SOCKET_PATH_MAX = 100


def kernel_manager(folder: Path) -> Any:
    """The verification kernel's manager: its channels on IPC sockets in ``folder`` (the build's owner-only
    temporary folder), which only this user can reach, as ipykernel itself advises; TCP on 127.0.0.1 (jupyter_client's
    default, which has ipykernel print ``Kernel is running over TCP without encryption`` mid-output) only where the
    system has no Unix sockets or ``folder``'s path is too long for one."""
    from jupyter_client.manager import KernelManager

    base = folder / "k"
    if os.name == "posix" and len(os.fsencode(base)) + 8 <= SOCKET_PATH_MAX:
        return KernelManager(kernel_name="python3", transport="ipc", ip=str(base))
    return KernelManager(kernel_name="python3")


def notebook_self_check(filled_nb: dict[str, Any], exercises: list[str], work: Path,
                        cell_timeout: int = 900) -> SelfCheckRun:
    """Runs the filled notebook's set-up, answer and check cells in a fresh Jupyter kernel (nbclient), alone in
    an empty folder with an empty HOME and TMPDIR (as tests/test_colab.py does); the self-check's results."""
    try:
        import nbclient
        import nbformat
    except ImportError as err:
        raise VerifyError(f"{err.name} is not installed (pip install -e '.[dev]'), or build with --no-verify") \
            from None
    folder, home, tmp = work / "notebook", work / "home", work / "tmp"
    for d in (folder, home, tmp):
        d.mkdir(parents=True)
    saved = folder / _notebook.NOTEBOOK  # what check() reads as the notebook (Jupyter's JPY_SESSION_NAME)
    saved.write_text(_notebook.dumps(filled_nb), encoding="utf-8")
    nb = nbformat.reads(_notebook.dumps(_session_notebook(filled_nb, exercises)), as_version=4)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "XDG_", "MPL", "JPY_"))}
    env.update(HOME=str(home), TMPDIR=str(tmp), IPYTHONDIR=str(work / "ipython"), MPLCONFIGDIR=str(work / "mpl"),
               TORCHINDUCTOR_CACHE_DIR=str(work / "torchinductor"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONNOUSERSITE="1", JPY_SESSION_NAME=str(saved))
    client = nbclient.NotebookClient(nb, km=kernel_manager(work), timeout=cell_timeout, allow_errors=True,
                                     resources={"metadata": {"path": str(folder)}})
    try:
        client.execute(env=env)
    except Exception as err:  # the kernel died or never started: nothing was checked
        raise VerifyError(f"the notebook's kernel failed: {type(err).__name__}: {_first_line(str(err))}") from None
    errors: list[tuple[str | None, str]] = []
    results: dict[str, SelfCheckResult] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                errors.append((_notebook.role_of(cell)[0], f"{o.get('ename')}: {o.get('evalue')}"))
            text = o.get("text", "") if o.get("output_type") == "stream" else ""
            for line in "".join(text).splitlines():
                if line.startswith(MARK):
                    for ex, res in json.loads(line[len(MARK):]).items():
                        results[ex] = SelfCheckResult(res["status"], {n: (p, m) for n, (p, m) in
                                                                      res["checks"].items()})
    return SelfCheckRun(results, errors)
