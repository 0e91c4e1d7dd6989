"""The student's self-check: ``check("ex01")`` runs an exercise's public checks in this process.

This module ships to students inside the notebook's set-up cell (a zip put on
``sys.path`` by ``tapetrace build``'s set-up code) with the public checks
(``autograder/exercises/<exercise>/public.py``), the probes, the messages and a *snapshot*: the
reference solution's probe results on the public checks' inputs, recorded at
build time and keyed like the grader's reference cache
(:func:`autograder.core.protocol.reference_key`). No reference code ships.

A public check runs exactly as the grader runs it (same check function, same
probes through the worker's ``_run_probe``, same comparison and tolerances,
same per-check random inputs from the build's public seed), except that the
student's code is the notebook's globals in this process and ``ctx.reference``
reads the snapshot. A value the snapshot lacks means the notebook is out of
date: it is reported as such, never as a pass. While checking, TF32 is off
and JAX matmuls run at "highest" precision, on the student's own device
(torch on CUDA when present, JAX on its default backend).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import pkgutil
import re
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from autograder.core import i18n as _i18n
from autograder.core import registry as _registry
from autograder.core import wire as _wire
from autograder.core.i18n import render
from autograder.core.protocol import check_rng, probe_error, reference_key
from autograder.core.suite import Check, CheckFailure, Ctx, StudentProblem, run_check
from autograder.submissions import cells as _cells
from autograder.submissions import execute as _exec
from autograder.submissions import standins as _standins

SNAPSHOT = "_snapshot.json"
DEFAULT_TIMEOUT = 120.0
NOT_ATTEMPTED_CODES = ("NOT_ATTEMPTED", "MISSING_NAMES")
# Seconds the graded module's own section may take to load in a check (the grader's default load timeout).
LOAD_TIMEOUT = 30.0


class SnapshotMissing(CheckFailure):
    """The snapshot holds no reference value for a probe call (stale or edited notebook): never a pass."""

    def __init__(self, probe: str) -> None:
        super().__init__("SNAPSHOT_MISMATCH", probe=probe)
        self.probe = probe

    def message(self, lang: str) -> str:
        """The notebook's own words (what to rebuild or download), not a catalogued message."""
        return _text(lang, "snapshot", probe=self.probe)


class _CheckTimeout(BaseException):
    """Raised by the alarm inside a student call that runs too long (BaseException: not caught by ``except
    Exception`` in student code)."""


def _text(lang: str, key: str, **fields: Any) -> str:
    return render(f"public.{key}", lang, **fields)


set_language = _i18n.set_language  # the language of the checks (and of hints and figures): "en" or "es"


# --------------------------------------------------------------------------- snapshot and data
@cache
def snapshot() -> dict[str, Any]:
    """The build-time snapshot shipped in the runtime (seed, exercises, reference values)."""
    try:
        raw = pkgutil.get_data("autograder", SNAPSHOT)  # autograder/_snapshot.json, beside the package's __init__
    except OSError:
        raw = None
    if not raw:
        raise RuntimeError(_text(_i18n.get_language(), "no_snapshot"))
    return json.loads(raw)


def _use_packaged_data() -> None:
    """Inside a zip ``_data.DATA_FILE`` is no real file: read the .npz through the package loader."""
    from autograder.core import data as _data

    target = _data.DATA_FILE
    if isinstance(target, (str, os.PathLike)) and os.path.isfile(target):
        return
    if isinstance(target, io.BytesIO):
        return
    raw = pkgutil.get_data("autograder", "data/datasets.npz")
    _data.DATA_FILE = io.BytesIO(raw)
    _data._all.cache_clear()


# --------------------------------------------------------------------------- the student's side
class StudentFiles(str):
    """The "path" of the student's code for ``_worker._describe``: notebook cells and given files.

    The worker locates the student's line by comparing each traceback frame's
    file with its source path; notebook code comes from many cells, so this
    string subclass compares equal to any IPython cell file (``<ipython-input-…>``
    or ``…/ipykernel_<pid>/<n>.py``) and to the files given.
    """

    _CELL = re.compile(r"(<ipython-input-\d+-[0-9a-f]+>|ipykernel_\d+[/\\]\d+\.py)$")

    def __new__(cls, files: tuple[str, ...] = ()) -> StudentFiles:
        obj = super().__new__(cls, "<your notebook cells>")
        obj.files = frozenset(os.path.abspath(f) for f in files)
        return obj

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        return other in self.files or bool(self._CELL.search(other))

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


def as_module(namespace: Any) -> types.ModuleType:
    """The student's names as a module (probes look names up with ``getattr``)."""
    if isinstance(namespace, types.ModuleType):
        return namespace
    mod = types.ModuleType("__student__")
    mod.__dict__.update({k: v for k, v in dict(namespace).items() if not (k.startswith("__") and k.endswith("__"))})
    return mod


def _wire_copy(obj: Any) -> Any:
    """What the other side of the grader's wire would receive: plain data, copied, never shared."""
    return _wire.decode(json.loads(json.dumps(_wire.encode(obj))))


def _machine_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raises :class:`_CheckTimeout` in this thread after ``seconds`` (main thread on Unix only)."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and seconds > 0)
    if not usable:
        yield
        return

    def _alarm(_signum: int, _frame: Any) -> None:
        raise _CheckTimeout()

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def student_caller(probes: Any, mod: Any, path: str, timeout: float) -> Callable[..., Any]:
    """``ctx.student`` for in-process checks: the worker's ``_run_probe`` on the student's names."""
    from autograder.workers.worker import _run_probe

    mem = _machine_memory()

    def call(probe: str, call: str, scale: float, kwargs: dict[str, Any]) -> Any:
        limit = timeout * scale
        req = {"probe": probe, "kwargs": _wire_copy(kwargs)}
        try:
            with _time_limit(limit):
                resp = _run_probe(probes, mod, req, path)
        except _CheckTimeout:
            resp = {"ok": False, "kind": "exception", "type": _CheckTimeout.__name__}
        if resp.get("ok"):
            return _wire_copy(resp["value"])
        if resp.get("type") == "KeyboardInterrupt":
            raise KeyboardInterrupt
        if resp.get("type") == _CheckTimeout.__name__:
            raise StudentProblem("CALL_TIMEOUT", call=call, timeout=limit)
        raise probe_error(resp, call, mem)

    return call


def snapshot_reference(exercise: str, values: dict[str, Any]) -> Callable[[str, dict[str, Any]], Any]:
    """``ctx.reference`` backed by the snapshot; a missing key raises :class:`SnapshotMissing`."""

    def reference(probe: str, kwargs: dict[str, Any]) -> Any:
        key = reference_key(exercise, probe, kwargs)
        if key not in values:
            raise SnapshotMissing(probe)
        return _wire.decode(values[key])

    return reference


# --------------------------------------------------------------------------- the notebook as graded
def notebook_json(namespace: Any = None, timeout: float = 10.0) -> tuple[dict | None, str]:
    """The running notebook's JSON and where it came from (``"colab"``, ``"file"``), else ``(None, "")``.

    Colab: the live notebook from the browser (``google.colab._message``, unsaved edits included).
    Jupyter: the file named by ``JPY_SESSION_NAME``; VS Code: ``__vsc_ipynb_file__``.
    """
    colab = sys.modules.get("google.colab")
    if colab is not None and not isinstance(colab, _standins._ColabModule):
        try:
            from google.colab import _message

            resp = _message.blocking_request("get_ipynb", request="", timeout_sec=timeout)
            nb = resp.get("ipynb") if isinstance(resp, dict) else None
            if isinstance(nb, dict) and isinstance(nb.get("cells"), list):
                return nb, "colab"
        except Exception:  # noqa: BLE001 - the frontend did not answer: try the file
            pass
    names = dict(namespace) if isinstance(namespace, dict) else {}
    for path in (os.environ.get("JPY_SESSION_NAME", ""), str(names.get("__vsc_ipynb_file__", ""))):
        if path.endswith(".ipynb") and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    nb = json.load(fh)
            except (OSError, ValueError):
                continue
            if isinstance(nb, dict) and isinstance(nb.get("cells"), list):
                return nb, "file"
    return None, ""


def _squash(text: str) -> str:
    return " ".join(text.split())


def _ran_other_code(namespace: Any, names: list[str], notebook_code: str) -> bool:
    """Whether a contract function or class the session defined is not in the saved notebook (unsaved edits)."""
    import inspect

    code = _squash(notebook_code)
    for name in names:
        obj = dict(namespace).get(name) if isinstance(namespace, dict) else getattr(namespace, name, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or getattr(obj, "__module__", "") != "__main__":
            continue
        try:
            src = inspect.getsource(obj)
        except (OSError, TypeError):
            continue
        if _squash(src) not in code:
            return True
    return False


@dataclass
class GradedView:
    """What a check runs on: the graded module, or the session's names (``note`` says why)."""

    module: Any = None
    problem: str = ""  # a message: the section cannot stand as graded
    code: str = ""
    note: str = ""
    files: tuple[str, ...] = ()


def graded_module(exercise: str, source: str, names: tuple[str, ...], lang: str) -> GradedView:
    """Loads one exercise's graded module in a fresh module of this process, as the grader's worker does.

    Context first (its failures skipped, same budget), then the section: its failure is reported as
    the grader would report it.
    """
    from autograder.workers.worker import _student_frame, load_error

    filename = f"<{exercise} as graded>"
    mod = types.ModuleType(f"_tapetrace_graded_{exercise}")
    mod.__file__ = filename
    sys.modules[mod.__name__] = mod
    finder = _standins.install_colab_standin()
    out = io.StringIO()
    try:
        prepared = _exec.prepare(source, filename, names)
        _exec._remember(filename, prepared.section)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            _exec.run(prepared, mod.__dict__, interrupts=True, section_guard=lambda: _time_limit(LOAD_TIMEOUT))
    except KeyboardInterrupt:
        raise
    except _CheckTimeout:
        msg = render("LOAD_TIMEOUT", lang, timeout=LOAD_TIMEOUT)
        return GradedView(problem=_text(lang, "as_graded", exercise=exercise, message=msg), code="LOAD_TIMEOUT")
    except BaseException as err:  # noqa: BLE001 - whatever the student's section raises
        files = StudentFiles((filename,))
        st = load_error(err, files)
        fields = dict(st["fields"])
        if "error" in fields:  # Python's own words, as code
            fields["error"] = f"`{fields['error']}`"
        if "where" in fields:
            where = _student_frame(err.__traceback__, files)
            fields["where"] = _text(lang, "where", line=where[0], code=where[1][:120]) if where else ""
        msg = render(st["code"], lang, **fields)
        return GradedView(problem=_text(lang, "as_graded", exercise=exercise, message=msg.rstrip(".")),
                          code=st["code"])
    finally:
        _standins.remove_colab_standin(finder)
    return GradedView(module=mod, files=(filename,))


def graded_view(exercise: str, namespace: Any, names: tuple[str, ...], lang: str) -> GradedView:
    """The exercise as the grader will see it in this notebook, or the session's names with a note."""
    nb, where = notebook_json(namespace)
    if nb is None:
        return GradedView(module=as_module(namespace), note=_text(lang, "unread"))
    exercises = tuple(snapshot()["exercises"])
    try:
        cells = _cells.notebook_cells(nb, exercises)
        sources = _cells.graded_sources(cells, exercises)
    except ValueError:
        return GradedView(module=as_module(namespace), note=_text(lang, "unread"))
    source = sources.get(exercise)
    if where == "file":
        code = "\n".join([c.source for c in cells if c.kind == "code"]
                         + [_cells.split_graded(s)[0] for s in sources.values() if s])
        if _ran_other_code(namespace, list(names), code):
            return GradedView(module=as_module(namespace), note=_text(lang, "stale"))
    if source is None:
        return GradedView(problem=_text(lang, "no_section", exercise=exercise), code="MISSING_SECTION")
    return graded_module(exercise, source, names, lang)


# --------------------------------------------------------------------------- device and precision
def devices() -> dict[str, str]:
    """The student's devices: torch on CUDA when present, JAX on its default backend.

    Only frameworks already imported (by the exercise's probes) are asked.
    """
    out = {"torch": "cpu", "jax": "cpu"}
    if "torch" in sys.modules:
        try:
            out["torch"] = "cuda" if sys.modules["torch"].cuda.is_available() else "cpu"
        except Exception:  # noqa: BLE001 - a broken CUDA set-up means CPU
            out["torch"] = "cpu"
    if "jax" in sys.modules:
        try:
            out["jax"] = str(sys.modules["jax"].default_backend())
        except Exception:  # noqa: BLE001
            out["jax"] = "cpu"
    return out


@contextlib.contextmanager
def pinned_precision() -> Iterator[None]:
    """TF32 off for torch, JAX matmuls at "highest" (GRADING.md); restores the student's settings."""
    restore: list[Callable[[], None]] = []
    torch = sys.modules.get("torch")
    if torch is not None:
        matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
        saved = (matmul.allow_tf32, cudnn.allow_tf32, torch.get_float32_matmul_precision())

        def _torch_back(saved: tuple = saved) -> None:
            matmul.allow_tf32, cudnn.allow_tf32 = saved[0], saved[1]
            torch.set_float32_matmul_precision(saved[2])

        matmul.allow_tf32 = False
        cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        restore.append(_torch_back)
    jax = sys.modules.get("jax")
    if jax is not None:
        before = jax.config.jax_default_matmul_precision
        jax.config.update("jax_default_matmul_precision", "highest")
        restore.append(lambda: jax.config.update("jax_default_matmul_precision", before))
    try:
        yield
    finally:
        for undo in reversed(restore):
            undo()


# --------------------------------------------------------------------------- running checks
def run_checks(exercise: str, checks: list[Check], *, student: Callable[..., Any],
               reference: Callable[[str, dict[str, Any]], Any], seed: int, device: dict[str, str],
               lang: str = "en") -> list[dict[str, Any]]:
    """Runs checks like the grader does (same inputs per seed, same verdicts); one dict per check.

    Args:
        exercise: the exercise name.
        checks: the public checks, in order.
        student: ``(probe, call, timeout_scale, kwargs) -> value`` (raises StudentProblem).
        reference: ``(probe, kwargs) -> value`` (the snapshot, or a reference worker at build time).
        seed: the public seed.
        device: ``{"torch": ..., "jax": ...}`` (selects the tolerance table).
        lang: message language.
    """
    tests = []
    for chk in checks:
        ctx = Ctx(rng=check_rng(seed, exercise, chk.name), seed=seed, device=device,
                  student=lambda p, c, s, kw, _scale=chk.timeout_scale: student(p, c, s * _scale, kw),
                  reference=reference)
        res = run_check(chk, ctx, lang=lang)  # the grader's loop: a missing snapshot value fails too
        tests.append({"name": chk.name, "points": chk.points, "passed": res["passed"], "code": res["code"],
                      "message": res["message"]})
    return tests


@dataclass
class CheckResult:
    """One exercise's self-check: ``status`` is "not attempted", "incorrect" or "passed"."""

    exercise: str
    status: str
    tests: list[dict[str, Any]] = field(default_factory=list)
    public_points: float = 0.0
    total_points: float = 0.0
    device: dict[str, str] = field(default_factory=dict)
    note: str = ""
    report: str = ""

    def __repr__(self) -> str:
        passed = sum(1 for t in self.tests if t["passed"])
        return f"<{self.exercise}: {self.status}, {passed}/{len(self.tests)} public checks pass>"


RESULTS: dict[str, CheckResult] = {}


def _status(tests: list[dict[str, Any]]) -> str:
    if tests and all(t["passed"] for t in tests):
        return "passed"
    if tests and all(t["code"] in NOT_ATTEMPTED_CODES for t in tests):
        return "not attempted"
    return "incorrect"


def _reason(message: str, lang: str) -> str:
    """A not-attempted test's message without its own leading "not attempted:" (the report's line says it)."""
    head, sep, rest = message.partition(":")
    label = render("notebook.not_attempted", lang)
    return rest.strip() if sep and head.strip().lower() == label.lower() else message


def _report(res: CheckResult, lang: str) -> str:
    lines = [_text(lang, "title", exercise=res.exercise, torch=res.device.get("torch", "cpu"),
                   jax=res.device.get("jax", "cpu"))]
    if res.status == "not attempted":
        lines.append(_text(lang, "not_attempted", message=_reason(res.tests[0]["message"], lang).rstrip(".")))
    else:
        for t in res.tests:
            lines.append(_text(lang, "ok" if t["passed"] else "bad", name=t["name"], points=t["points"],
                               message=t["message"]))
        failed = sum(1 for t in res.tests if not t["passed"])
        lines.append(_text(lang, "passed", n=len(res.tests)) if not failed
                     else _text(lang, "incorrect_one" if failed == 1 else "incorrect", failed=failed, n=len(res.tests)))
    if res.note:
        lines.append(res.note)
    lines.append(_text(lang, "reminder", public=res.public_points, total=res.total_points))
    return "\n".join(lines)


def run(exercise: str | int, namespace: Any, *, lang: str | None = None, timeout: float = DEFAULT_TIMEOUT,
        files: tuple[str, ...] = (), graded: bool = False) -> CheckResult:
    """Runs one exercise's public checks against ``namespace`` (a module or a globals dict).

    Args:
        exercise: ``"ex01"``, ``1`` or the full name.
        namespace: the student's names (the notebook's globals, or a loaded exercise module).
        lang: ``"en"`` or ``"es"`` (default: :func:`set_language`'s choice).
        timeout: seconds one call of the student's code may take (times the check's scale).
        files: source files of the student's code, to point at lines in error messages.
        graded: check the exercise as the grader sees it: read the running notebook's cells and load
            the exercise's graded module (:func:`graded_view`); ``namespace`` (the notebook's
            globals) is used, with a note saying so, only where the notebook cannot be read.

    Returns:
        A :class:`CheckResult` (also kept in ``RESULTS``).
    """
    lang = _i18n.get_language(lang)
    snap = snapshot()
    ex = _registry.resolve(exercise, list(snap["exercises"]), lang)
    info = snap["exercises"][ex]
    _use_packaged_data()
    suite = importlib.import_module(f"autograder.exercises.{ex}.public").suite
    checks = [c for c in suite.checks if not c.hidden]
    probes = importlib.import_module(f"autograder.exercises.{ex}.probes")
    from autograder.probing import tools as _probing

    device = devices()
    _probing.DEVICE.update(device)
    names = list(importlib.import_module(f"autograder.exercises.{ex}").META.names)
    view = graded_view(ex, namespace, tuple(names), lang) if graded else GradedView(module=as_module(namespace))
    mod = view.module
    if view.problem:
        tests = [{"name": c.name, "points": c.points, "passed": False, "code": view.code, "message": view.problem}
                 for c in checks]
    elif names and not any(hasattr(mod, n) for n in names):
        msg = _text(lang, "missing", names=", ".join(f"`{n}`" for n in names))
        tests = [{"name": c.name, "points": c.points, "passed": False, "code": "MISSING_NAMES", "message": msg}
                 for c in checks]
    else:
        student = student_caller(probes, mod, StudentFiles(view.files or files), timeout)
        with pinned_precision():
            tests = run_checks(ex, checks, student=student, reference=snapshot_reference(ex, snap["values"]),
                               seed=int(snap["seed"]), device=device, lang=lang)
    res = CheckResult(ex, _status(tests), tests, float(info["public_points"]), float(info["total_points"]),
                      device, note=view.note)
    res.report = _report(res, lang)
    RESULTS[ex] = res
    return res


def check(exercise: str | int | None = None, namespace: Any = None, *, lang: str | None = None,
          timeout: float = DEFAULT_TIMEOUT) -> None:
    """Checks an exercise (or, without one, every exercise) and prints what passed and what to fix.

    Called from the notebook without ``namespace``, it checks each exercise as it will be graded:
    the code cells under its heading, after what the cells above define (GRADING.md, Submissions).

    Args:
        exercise: ``"ex01"``, ``1``, ``"ex01_torch_mlp"``; None checks them all.
        namespace: where the student's names live (default: the notebook, as graded).
        lang: ``"en"`` or ``"es"``.
        timeout: seconds one call of your code may take before it counts as a hang.
    """
    graded = namespace is None
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    todo = list(snapshot()["exercises"]) if exercise is None else [exercise]
    for i, ex in enumerate(todo):
        if i:
            print()
        print(run(ex, namespace, lang=lang, timeout=timeout, graded=graded).report)
