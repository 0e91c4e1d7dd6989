"""The student's self-check: ``check("ex01")`` runs an exercise's public checks in this process.

This module ships to students inside the notebook's set-up cell (a zip put on
``sys.path`` by ``tapetrace build``'s set-up code) with the public checks
(``autograder/exercises/<exercise>/public.py``), the probes, the messages and a *snapshot*: the
reference solution's probe results on the public checks' inputs, recorded at
build time and keyed like the grader's reference cache
(:func:`autograder.core.protocol.reference_key`). No reference code ships.

A public check runs exactly as the grader runs it (same check function, same
probes through the worker's ``run_probe``, same comparison and tolerances,
same per-check random inputs from the build's public seed), except that the
student's code is the notebook's globals in this process and ``ctx.reference``
reads the snapshot. A value the snapshot lacks means the notebook is out of
date: it is reported as such, never as a pass. While checking, TF32 is off
and JAX matmuls run at "highest" precision, on the student's own device
(torch on CUDA when present, JAX on its default backend).

Its parts: the snapshot and ``ctx.reference`` (:mod:`autograder.builders.public_snapshot`), the
student's side of a call, their devices and the pinned precision
(:mod:`autograder.builders.public_student`), the exercise as graded in the running notebook
(:mod:`autograder.builders.public_graded`); here: running the checks and reporting them.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autograder.builders import public_devices as _apart
from autograder.builders.public_graded import GradedView, graded_module, graded_view
from autograder.builders.public_snapshot import _use_packaged_data, snapshot, snapshot_reference
from autograder.builders.public_student import StudentFiles, as_module, devices, pinned_precision, student_caller
from autograder.core import i18n as _i18n
from autograder.core import registry as _registry
from autograder.core.i18n import render
from autograder.core.protocol import check_rng
from autograder.core.suite import INTERNAL_ERROR, Check, Ctx, run_check
from autograder.student import checked as _checked
from autograder.student import stack as _stack

DEFAULT_TIMEOUT = 120.0
NOT_ATTEMPTED_CODES = ("NOT_ATTEMPTED", "MISSING_NAMES")


def _text(lang: str, key: str, **fields: Any) -> str:
    return render(f"public.{key}", lang, **fields)


set_language = _i18n.set_language  # the language of the checks (and of hints and figures): "en" or "es"


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
    """One exercise's self-check: ``status`` is "not attempted", "incorrect", "passed", "unsupported versions"
    (the session's libraries are outside the supported ranges: no verdict on the code), "grader trouble"
    (a check could not run for a reason of the checks' own, never the student's) or "one device" (checks that
    need several devices passed on one, where they cannot see the mistakes they look for: no pass)."""

    exercise: str
    status: str
    tests: list[dict[str, Any]] = field(default_factory=list)
    public_points: float = 0.0
    total_points: float = 0.0
    device: dict[str, str] = field(default_factory=dict)
    note: str = ""
    report: str = ""
    file: str = ""  # the .py file checked (python check.py), not a notebook's cells: the advice names it
    one_device: str = ""  # why checks that need several devices ran on one here (then no pass is reported)

    def __repr__(self) -> str:
        passed = sum(1 for t in self.tests if t["passed"])
        return f"<{self.exercise}: {self.status}, {passed}/{len(self.tests)} public checks pass>"


RESULTS: dict[str, CheckResult] = {}


# a library the checks import -> the distributions whose versions decide them (numpy: always)
_DISTS = {"torch": ("torch",), "jax": ("jax", "jaxlib"), "flax": ("flax",), "optax": ("optax",), "numpy": ("numpy",)}


def libraries(exercise: str) -> tuple[str, ...]:
    """The distributions an exercise's public checks use (its probes' and checks' imports, numpy always): a
    library outside its range holds back these checks only (every one of ``stack.CHECKED`` where unknown)."""
    import ast

    found = {"numpy"}
    for part in ("probes", "public"):
        name = _registry.module_name(exercise, part)
        try:
            spec = importlib.util.find_spec(name)
            getter = getattr(spec.loader, "get_source", None) if spec is not None else None
            if getter is not None:  # the runtime's zip
                source = getter(name)
            else:  # a file (under pytest, whose import hook has no get_source)
                with open(str(spec.origin if spec is not None else ""), encoding="utf-8") as fh:
                    source = fh.read()
            tree = ast.parse(source or "")
        except (ImportError, ValueError, SyntaxError, OSError):
            source = None
        if not source:
            return _stack.CHECKED
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                found.update(_DISTS.get(top, ()))
    return tuple(d for d in _stack.CHECKED if d in found)


def _status(tests: list[dict[str, Any]], one_device: str = "", dists: tuple[str, ...] | None = None) -> str:
    if _stack.unsupported(dists):
        return "unsupported versions"
    if any(t["code"] == INTERNAL_ERROR for t in tests):
        return "grader trouble"
    if tests and all(t["passed"] for t in tests):
        return "one device" if one_device else "passed"
    if tests and all(t["code"] in NOT_ATTEMPTED_CODES for t in tests):
        return "not attempted"
    return "incorrect"


def _reason(message: str, lang: str) -> str:
    """A not-attempted test's message without its own leading "not attempted:" (the report's line says it)."""
    head, sep, rest = message.partition(":")
    label = render("notebook.not_attempted", lang)
    return rest.strip() if sep and head.strip().lower() == label.lower() else message


def _file_name(files: tuple[str, ...]) -> str:
    """The checked .py file as the student names it (its base name)."""
    return files[0].replace("\\", "/").rsplit("/", 1)[-1]


def _report(res: CheckResult, lang: str, reminder: bool = True) -> str:
    lines = [_text(lang, "title", exercise=res.exercise, torch=res.device.get("torch", "cpu"),
                   jax=res.device.get("jax", "cpu"))]
    if res.status == "unsupported versions":
        found = _stack.unsupported(libraries(res.exercise)) or _stack.unsupported()
        listed = ", ".join(f"{p.dist} {p.have or '-'}" for p in found)
        where = _stack.where()
        command = _stack.fix_command(found, where)
        key = "unsupported" + _stack.fix_key(where) if command else "unsupported_python"
        lines.append(_text(lang, key, problems=listed, command=command))
        return "\n".join(lines)
    if res.status == "not attempted":
        message = _reason(res.tests[0]["message"], lang).rstrip(".")
        lines.append(_text(lang, "not_attempted_file", message=message, file=res.file, exercise=res.exercise[:4])
                     if res.file else _text(lang, "not_attempted", message=message))
    else:
        for t in res.tests:
            lines.append(_text(lang, "ok" if t["passed"] else "bad", name=t["name"], points=t["points"],
                               message=t["message"]))
        failed = sum(1 for t in res.tests if not t["passed"])
        if res.status == "grader trouble":
            lines.append(_text(lang, "grader_trouble", n=sum(1 for t in res.tests if t["code"] == INTERNAL_ERROR)))
        elif res.status == "one device":
            lines.append(res.one_device)
        elif not failed:
            lines.append(_text(lang, "passed", n=len(res.tests)))
        else:
            key = ("incorrect_one" if failed == 1 else "incorrect") + ("_file" if res.file else "")
            lines.append(_text(lang, key, failed=failed, n=len(res.tests), file=res.file, exercise=res.exercise[:4]))
    if res.note:
        lines.append(res.note)
    if reminder:
        lines.append(_text(lang, "reminder", public=res.public_points, total=res.total_points))
    return "\n".join(lines)


def run(exercise: str | int, namespace: Any, *, lang: str | None = None, timeout: float = DEFAULT_TIMEOUT,
        files: tuple[str, ...] = (), graded: bool = False, loaded: GradedView | None = None) -> CheckResult:
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
        loaded: the student's code as loaded already, or why it does not load (:func:`run_file`).

    Returns:
        A :class:`CheckResult` (also kept in ``RESULTS``).
    """
    lang = _i18n.get_language(lang)
    snap = snapshot()
    ex = _registry.resolve(exercise, list(snap["exercises"]), lang)
    info = snap["exercises"][ex]
    _use_packaged_data()
    device = devices()
    try:  # the checks' own modules: one that cannot load on these libraries is the grader's trouble
        checks = [c for c in _registry.part(ex, "public").suite.checks if not c.hidden]
        probes = _registry.part(ex, "probes")
        from autograder.probing import tools as _probing

        _probing.DEVICE.update(device)
    except Exception as err:  # noqa: BLE001 - reported, never the student's
        error = render(INTERNAL_ERROR, lang, error=f"{type(err).__name__}: {err}")
        tests = [{"name": ex, "points": 0.0, "passed": False, "code": INTERNAL_ERROR, "message": error}]
        return _finish(CheckResult(ex, _status(tests, dists=libraries(ex)), tests, float(info["public_points"]),
                                   float(info["total_points"]), device), lang)
    meta = _registry.part(ex).META
    names = list(meta.names)
    if loaded is not None:
        view = loaded
    else:
        view = graded_view(ex, namespace, tuple(names), lang) if graded else GradedView(module=as_module(namespace))
    mod = view.module
    notes, one_device = [view.note], ""
    if view.problem:
        tests = [{"name": c.name, "points": c.points, "passed": False, "code": view.code, "message": view.problem}
                 for c in checks]
    elif names and not any(hasattr(mod, n) for n in names):
        listed = ", ".join(f"`{n}`" for n in names)
        msg = (_text(lang, "missing_file", names=listed, file=_file_name(files)) if files and not graded
               else _text(lang, "missing", names=listed))
        tests = [{"name": c.name, "points": c.points, "passed": False, "code": "MISSING_NAMES", "message": msg}
                 for c in checks]
    else:
        # fewer devices here than the checks need (ex13 on one TPU chip, one GPU, JAX started early): run apart
        short = _apart.shortfall(int(meta.cpu_devices or 0))
        apart = _run_apart(ex, view, files, graded, short, lang, timeout) if short else None
        if short and apart and apart.results:  # checked in a separate process, on the grader's devices
            tests, device = apart.results[0]["tests"], dict(apart.results[0]["device"])
            notes += [apart.results[0]["note"], _text(lang, "apart", need=short.need, have=short.have,
                                                      platform=short.platform)]
        else:
            tests = _check_here(ex, checks, probes, mod, view.files or files, timeout, snap, device, lang)
            if short and apart and short.have < 2:  # a mesh of one device: data-parallel mistakes go unseen
                one_device = _text(lang, "one_device", n=len(tests), need=short.need, platform=short.platform,
                                   why=apart.why, exercise=ex[:4])
    res = CheckResult(ex, _status(tests, one_device, libraries(ex)), tests, float(info["public_points"]),
                      float(info["total_points"]), device, note="\n".join(n for n in notes if n),
                      file=_file_name(files) if files and not graded else "", one_device=one_device)
    _finish(res, lang)
    _checked.record(ex, sum(1 for t in tests if not t["passed"]), len(tests))
    return res


def run_file(exercise: str | int, path: str, *, lang: str | None = None,
             timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """``python check.py``'s check of one exercise file: the file loaded as a module here, then :func:`run`.

    A file that does not load (a syntax error, an exception at its top level) is INCORRECT, every check failing
    with Python's words and the line, and the advice names the file, as the notebook's check reports code that
    does not load: never a traceback without an outcome.
    """
    lang = _i18n.get_language(lang)
    ex = _registry.resolve(exercise, list(snapshot()["exercises"]), lang)
    spec = importlib.util.spec_from_file_location(ex, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[ex] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:  # noqa: BLE001 - whatever the student's file raises while it loads
        code, message = _file_problem(err, path, lang)
        return run(ex, module, lang=lang, timeout=timeout, files=(path,), loaded=GradedView(problem=message, code=code))
    return run(ex, module, lang=lang, timeout=timeout, files=(path,))


def _file_problem(err: BaseException, path: str, lang: str) -> tuple[str, str]:
    """Why an exercise file does not load: its catalogue key and message (as the grader words it, the line named)."""
    from autograder.workers.worker import load_error

    st = load_error(err, os.path.abspath(path))
    fields = dict(st["fields"])
    if "error" in fields:  # Python's own words, as code
        fields["error"] = f"`{fields['error']}`"
    if "older" in fields:  # the student's own Python runs the file: no older grader to blame
        fields["older"] = ""
    message = render(st["code"], lang, **fields).rstrip(".")
    return st["code"], _text(lang, "file_load", file=_file_name((path,)), message=message)


def _check_here(ex: str, checks: list[Check], probes: Any, mod: Any, files: tuple[str, ...], timeout: float,
                snap: dict[str, Any], device: dict[str, str], lang: str) -> list[dict[str, Any]]:
    """The public checks on the student's module, in this process (one dict per check)."""
    student = student_caller(probes, mod, StudentFiles(files), timeout)
    with pinned_precision():
        return run_checks(ex, checks, student=student, reference=snapshot_reference(ex, snap["values"]),
                          seed=int(snap["seed"]), device=device, lang=lang)


def _run_apart(ex: str, view: GradedView, files: tuple[str, ...], graded: bool, short: _apart.Shortfall,
               lang: str, timeout: float) -> _apart.Apart:
    """The checks of ``ex`` in a separate process with the devices they need (:mod:`public_devices`), on the
    student's code as text: the graded module read from the notebook, or the file given; none: why not."""
    if graded and view.source:
        job = _apart.Job(ex, source=view.source)
    elif files and not graded:
        job = _apart.Job(ex, file=os.path.abspath(files[0]))
    else:
        return _apart.Apart(why=_text(lang, "apart_no_source"))
    return _apart.run_apart([job], need=short.need, lang=lang, timeout=timeout, wall=max(600.0, 10 * timeout))


def judge_apart(job: _apart.Job, *, lang: str, timeout: float) -> dict[str, Any]:
    """In the separate process of :mod:`public_devices`: one job's public checks, in this process.

    Returns:
        ``{"tests": [...], "device": {...}, "note": str}`` (the student's module loaded here as the job gives it).
    """
    snap = snapshot()
    ex = job.exercise
    _use_packaged_data()
    device = devices()
    checks = [c for c in _registry.part(ex, "public").suite.checks if not c.hidden]
    probes = _registry.part(ex, "probes")
    from autograder.probing import tools as _probing

    _probing.DEVICE.update(device)
    names = tuple(_registry.part(ex).META.names)
    if job.source:
        view = graded_module(ex, job.source, names, lang)
    else:
        spec = importlib.util.spec_from_file_location(ex, job.file)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {job.file}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[ex] = module
        spec.loader.exec_module(module)
        view = GradedView(module=module, files=(job.file,))
    if view.problem:
        tests = [{"name": c.name, "points": c.points, "passed": False, "code": view.code, "message": view.problem}
                 for c in checks]
    else:
        tests = _check_here(ex, checks, probes, view.module, view.files, timeout, snap, device, lang)
    return {"tests": tests, "device": device, "note": view.note}


def serve_apart(payload: dict[str, Any]) -> None:
    """The separate process of :func:`public_devices.run_apart`: checks each job of ``payload`` (:func:`judge_apart`)
    and writes one ``public_devices.MARK`` line of JSON on stdout.

    What the student's code prints goes to stderr (the caller keeps stdout for the answer).
    """
    out = sys.stdout
    sys.stdout = sys.stderr
    try:
        from autograder.student import compat
        from autograder.student.devices import ensure_host_devices

        need = int(payload["need"])
        ensure_host_devices(need)
        compat.add_missing()  # as the set-up cell does: the APIs a supported older version lacks
        import jax

        if jax.device_count() < need:
            raise RuntimeError(f"JAX started with {jax.device_count()} CPU device(s), not {need}")
        set_language(payload["lang"])
        results = [judge_apart(_apart.Job(**job), lang=payload["lang"], timeout=float(payload["timeout"]))
                   for job in payload["jobs"]]
        said: dict[str, Any] = {"results": results}
    except BaseException as err:  # noqa: BLE001 - the caller checks in its own process instead
        said = {"why": f"{type(err).__name__}: {err}"[:300]}
    out.write(_apart.MARK + json.dumps(said) + "\n")
    out.flush()


def _finish(res: CheckResult, lang: str) -> CheckResult:
    res.report = _report(res, lang)
    RESULTS[res.exercise] = res
    return res


def check(exercise: str | int | None = None, namespace: Any = None, *, lang: str | None = None,
          timeout: float = DEFAULT_TIMEOUT) -> None:
    """Checks an exercise (or, without one, every exercise) and prints what passed and what to fix.

    Called from the notebook without ``namespace``, it checks each exercise as it will be graded:
    the code cells under its heading, after what the cells above define (docs/grading-contract.md, "Submissions").

    Args:
        exercise: ``"ex01"``, ``1``, ``"ex01_torch_mlp"``; None checks them all.
        namespace: where the student's names live (default: the notebook, as graded).
        lang: ``"en"`` or ``"es"``.
        timeout: seconds one call of your code may take before it counts as a hang.
    """
    graded = namespace is None
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    if exercise is not None:
        try:  # a name that is no exercise: one line naming it and the choices, not a traceback
            _registry.resolve(exercise, list(snapshot()["exercises"]), _i18n.get_language(lang))
        except _registry.UnknownExercise as err:
            print(err)
            return
        print(run(exercise, namespace, lang=lang, timeout=timeout, graded=graded).report)
        return
    lang = _i18n.get_language(lang)
    results = []
    for i, ex in enumerate(snapshot()["exercises"]):  # each exercise's lines, then one total and one reminder
        if i:
            print()
        results.append(run(ex, namespace, lang=lang, timeout=timeout, graded=graded))
        print(_report(results[-1], lang, reminder=False))
    print()
    print(all_summary(results, lang))


def report_lines(res: CheckResult, lang: str | None = None) -> str:
    """One exercise's report without the points reminder: for a run of several (see :func:`all_summary`)."""
    return _report(res, _i18n.get_language(lang), reminder=False)


def all_summary(results: list[CheckResult], lang: str | None = None) -> str:
    """The closing line of a run of several exercises: how many pass, and the points reminder once."""
    return _text(_i18n.get_language(lang), "all", passed=sum(r.status == "passed" for r in results), n=len(results),
                 public=sum(r.public_points for r in results), total=sum(r.total_points for r in results))
