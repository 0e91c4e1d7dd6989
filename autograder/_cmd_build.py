"""``tapetrace build``: what students receive (``student_template/``) and the otter autograder zip (``dist/``).

Student side (committed, one folder per language; a test fails when either is stale):
    ``student_template/`` (English, ``--lang en``, the default) and ``student_template/es/``
    (Spanish, ``--lang es``): ``tapetrace.ipynb``, the exercises in order (instructions from
    the stub docstrings, the stub code, a check cell, a hints paragraph and a figure cell each)
    after a self-contained set-up cell carrying the *public runtime*: a zip of the public checks,
    probes, messages, datasets, the in-notebook runner (``_public.py``), the student package
    (``autograder/student``: hints, figures, Spanish texts) and a snapshot of the reference's
    probe results on the public checks' inputs (fixed public seed; the same in both languages).
    ``exNN_*.py`` stubs, ``check.py`` and a README for students working locally.
Instructor side (``dist/``, not committed):
    ``tapetrace-autograder.zip`` (``tapetrace-autograder-es.zip`` with ``--lang es``: messages in
    Spanish) for ``otter run`` / ``otter grade`` / Gradescope (see ``_otter``).
    ``self-study/`` (``self-study/es/``) with ``--self-study``: the template plus the reference
    solutions (``solution("exNN")``), for learners without an instructor; never a graded build.

The snapshot is recomputed (reference workers on CPU) only when its inputs changed: solutions,
public checks, probes, hidden suites' totals, the runtime's engine modules, the public seed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import io
import json
import math
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder import _notebook, templates
from autograder.core import wire as _wire
from autograder.core.i18n import LANGS, render, section
from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS
from autograder.core.registry import UnknownExercise, resolve

PKG = ROOT / "autograder"
TEMPLATE = ROOT / "student_template"
DIST = ROOT / "dist"
PUBLIC_SEED = 20260101
SNAPSHOT_ARC = "autograder/_snapshot.json"
ZIP_DATE = (2026, 1, 1, 0, 0, 0)
SNAPSHOT_FORMAT = 1

# Engine modules the public runtime needs (besides the exercise packages, the packages below and the data).
# Paths under autograder/; each one's sub-package ships its ``__init__.py`` too (imports nothing on import).
RUNTIME_MODULES = ("core/protocol.py", "core/suite.py", "core/text.py", "core/compare.py", "core/tolerances.py",
                   "core/wire.py", "core/data.py", "core/registry.py", "core/exercise.py", "core/i18n.py",
                   "workers/worker.py", "_public.py", "submissions/cells.py", "submissions/execute.py",
                   "probing/tools.py",
                   "probing/optax_family.py", "probing/torch_family.py")  # the optimizer families probes hand to a step
# Engine sub-packages shipped whole.
RUNTIME_PACKAGES = ("messages", "student")
# The exercise packages: autograder/exercises/<exercise>/, shipped whole for the exercises built (probes pruned).
EXERCISE_PACKAGES = "exercises"

# Imported by the student package only inside build-time functions (never in the notebook).
BUILD_TIME_IMPORTS = ("autograder.core.paths", "autograder._stubs")
SELF_STUDY_ARC = "autograder/student/_selfstudy.json"
TEMPLATES = {"en": TEMPLATE, "es": TEMPLATE / "es"}
SELF_STUDY = {"en": DIST / "self-study", "es": DIST / "self-study" / "es"}
# What the reference snapshot's keys and values depend on, beyond each exercise's solution, probes and
# public checks (and the hidden suite's total). Verdict code (compare, tolerances, _public) does not.
SNAPSHOT_INPUTS = ("core/protocol.py", "core/suite.py", "core/wire.py", "core/data.py", "probing/tools.py",
                   "data/datasets.npz")
FORBIDDEN_IMPORTS = ("autograder.hidden", "solutions", "tests")
# Programs the build writes (autograder/templates/): the runtime's autograder/__init__.py, students' check.py.
RUNTIME_INIT = "runtime_init.py"
CHECK_PY = "check.py"


def check_py(lang: str) -> str:
    """``check.py`` for students working locally, its texts in ``lang``."""
    text = dict(section("check_py")[lang])  # UI text: the "check_py." keys of autograder/messages/notebook.py
    doc = text.pop("doc")
    body = "{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in text.items()) + "}"
    return templates.render(CHECK_PY, doc=doc, text=body)


def student_readme(lang: str, self_study: bool = False, exercises: list[str] | None = None) -> str:
    """The README of student_template/ (or of a self-study build) in ``lang``, naming the exercises built
    (default: every exercise present)."""
    from autograder.student.instructions_es import NOTEBOOK_TEXT

    exercises = exercises or present()
    text = render("readme", lang, first=exercises[0], last=exercises[-1], count=len(exercises))
    if self_study:
        text += "\n" + NOTEBOOK_TEXT[lang]["intro_selfstudy_md"]
    return text


class BuildError(Exception):
    """The build cannot produce a correct template or zip (the message says why)."""


# --------------------------------------------------------------------------- inputs
def present() -> list[str]:
    """Exercises with a reference solution and public checks, in curriculum order."""
    out = []
    for ex in EXERCISES:
        if (SOLUTIONS / f"{ex}.py").exists() and (exercise_dir(ex) / "public.py").exists():
            for need in (exercise_dir(ex) / "probes.py", PKG / "hidden" / f"{ex}.py"):
                if not need.exists():
                    raise BuildError(f"{ex} has a solution and public checks but no {need.relative_to(ROOT)}")
            out.append(ex)
    return out


def exercise_dir(exercise: str) -> Path:
    """The exercise's package (everything of it that ships to students)."""
    return PKG / EXERCISE_PACKAGES / exercise


def runtime_members(exercises: list[str], self_study: bool = False) -> dict[str, bytes]:
    """The public runtime's files (zip member name -> bytes), without the snapshot.

    With ``self_study``, also the reference solutions (``autograder/student/_selfstudy.json``,
    read by ``solution("exNN")``): never in a graded build.
    """
    from autograder import __version__

    init = templates.render(RUNTIME_INIT, version=templates.string(__version__))
    members: dict[str, bytes] = {"autograder/__init__.py": init.encode()}
    for name in RUNTIME_MODULES:
        members[f"autograder/{name}"] = (PKG / name).read_bytes()
        if "/" in name:  # its sub-package's __init__ (lazy re-exports: importing it imports nothing)
            init = f"{name.rsplit('/', 1)[0]}/__init__.py"
            members[f"autograder/{init}"] = (PKG / init).read_bytes()
    members["autograder/data/datasets.npz"] = (PKG / "data" / "datasets.npz").read_bytes()
    for sub in RUNTIME_PACKAGES:
        for path in sorted((PKG / sub).glob("*.py")):
            members[f"autograder/{sub}/{path.name}"] = path.read_bytes()
        members.setdefault(f"autograder/{sub}/__init__.py", b"")
    members[f"autograder/{EXERCISE_PACKAGES}/__init__.py"] = (PKG / EXERCISE_PACKAGES / "__init__.py").read_bytes()
    for ex in exercises:  # the folder of each exercise built, and nothing of the others
        for path in sorted(exercise_dir(ex).glob("*.py")):
            data = path.read_bytes()
            if path.name == "probes.py":
                data = prune_probes(data.decode(), public_probe_names(ex)).encode()
            members[f"autograder/{EXERCISE_PACKAGES}/{ex}/{path.name}"] = data
    _check_closure(members)
    if self_study:
        from autograder.student.selfstudy import solutions_payload

        members[SELF_STUDY_ARC] = solutions_payload(SOLUTIONS, exercises)
    return members


def public_probe_names(exercise: str) -> set[str]:
    """Probe names the public checks can ask for: string constants of the public module naming a probe."""
    tree = ast.parse((exercise_dir(exercise) / "public.py").read_text())
    probes = ast.parse((exercise_dir(exercise) / "probes.py").read_text())
    defined = {n.name[len("probe_"):] for n in probes.body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("probe_")}
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)} & defined


def prune_probes(source: str, keep: set[str]) -> str:
    """A probe module with only the probes the public checks use, and what they need.

    Top-level functions and classes no kept probe (nor any other top-level statement) refers to,
    directly or through others, are dropped: hidden-only probes and the helpers behind them never
    reach students. Comments go (the module is re-rendered from its syntax tree).
    """
    tree = ast.parse(source)
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    defs = {n.name: n for n in tree.body if isinstance(n, kinds)}

    def refs(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & defs.keys()

    todo = {f"probe_{p}" for p in keep} & defs.keys()
    for node in tree.body:
        if not isinstance(node, kinds):
            todo |= refs(node)
    reachable: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in reachable:
            reachable.add(name)
            todo |= refs(defs[name]) - reachable
    tree.body = [n for n in tree.body if not isinstance(n, kinds) or n.name in reachable]
    return ast.unparse(tree) + "\n"


def _imports(tree: ast.AST, top_level_only: bool) -> list[tuple[str, list[str], int]]:
    """``(module, names imported from it, line)`` for each absolute import."""
    nodes = ast.iter_child_nodes(tree) if top_level_only else ast.walk(tree)
    found: list[tuple[str, list[str], int]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, [a.name for a in node.names], node.lineno))
    return found


def _check_closure(members: dict[str, bytes]) -> None:
    """Every ``autograder.*`` import of the runtime resolves inside it; nothing private is imported."""
    modules = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in members if n.endswith(".py")}
    for name, raw in members.items():
        if not name.endswith(".py"):
            continue
        tree = ast.parse(raw, filename=name)
        top = {(m, ln) for m, _, ln in _imports(tree, top_level_only=True)}
        # the worker's own start-up (sandbox) is imported lazily there and unused by _run_probe
        for mod, names, line in _imports(tree, top_level_only=name.endswith("/workers/worker.py")):
            if name.startswith("autograder/student/") and mod in BUILD_TIME_IMPORTS and (mod, line) not in top:
                continue  # inside a build-time function (instructions("..", "en"), solutions_payload)
            targets = [mod] + [f"{mod}.{n}" for n in names]
            for target in targets:
                if any(target == f or target.startswith(f + ".") for f in FORBIDDEN_IMPORTS):
                    raise BuildError(f"{name}:{line} imports {target}, which must never ship to students")
            if mod.split(".")[0] != "autograder":
                continue
            missing = [] if mod in modules else [mod]
            if mod == "autograder":
                missing += [f"autograder.{n}" for n in names if f"autograder.{n}" not in modules and n != "__version__"]
            if missing:
                raise BuildError(f"{name}:{line} imports {missing[0]}, which is not part of the public runtime "
                                 "(see RUNTIME_MODULES in autograder/_cmd_build.py)")


def zip_bytes(members: dict[str, bytes]) -> bytes:
    """A deterministic zip of the members (sorted, fixed dates)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, members[name], compresslevel=9)
    return buf.getvalue()


def zip_members(blob: bytes) -> dict[str, bytes]:
    """Inverse of :func:`zip_bytes`."""
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def public_checks(exercise: str) -> list[Any]:
    """The public checks of an exercise, validated against the hidden suite."""
    from autograder.engine.run import load_suite

    suite = importlib.import_module(f"autograder.{EXERCISE_PACKAGES}.{exercise}.public").suite
    checks = list(suite.checks)
    if not checks:
        raise BuildError(f"{exercise}: autograder/{EXERCISE_PACKAGES}/{exercise}/public.py has no checks")
    hidden_names = [c.name for c in load_suite(exercise).checks]
    for c in checks:
        if c.hidden:
            raise BuildError(f"{exercise}: public check {c.name} is registered with hidden=True")
        if c.needs:
            raise BuildError(f"{exercise}: public check {c.name} needs {c.needs}; public checks run on any device")
        if c.name not in hidden_names:
            raise BuildError(f"{exercise}: public check {c.name} is not in the hidden suite "
                             "(start it with the public checks)")
    return checks


def _totals(exercises: list[str]) -> dict[str, dict[str, Any]]:
    from autograder.engine.run import load_suite

    out = {}
    for ex in exercises:
        checks = public_checks(ex)
        out[ex] = {"checks": [c.name for c in checks], "public_points": float(sum(c.points for c in checks)),
                   "total_points": float(load_suite(ex).max_score)}
    return out


def snapshot_digest(exercises: list[str], seed: int) -> str:
    """Hash of everything the snapshot depends on."""
    h = hashlib.sha256(json.dumps({"format": SNAPSHOT_FORMAT, "seed": seed, "exercises": exercises,
                                   "totals": _totals(exercises)}, sort_keys=True).encode())
    paths = [PKG / n for n in SNAPSHOT_INPUTS]
    for ex in exercises:
        paths += [SOLUTIONS / f"{ex}.py", exercise_dir(ex) / "__init__.py", exercise_dir(ex) / "probes.py",
                  exercise_dir(ex) / "public.py"]
    for p in paths:
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


# --------------------------------------------------------------------------- the snapshot
def _nudge(tree: Any) -> Any:
    """The tree with every float moved by one ulp: a correct implementation on another device."""
    if isinstance(tree, dict):
        return {k: _nudge(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_nudge(v) for v in tree)
    if isinstance(tree, np.ndarray) and tree.dtype.kind == "f":
        return np.nextafter(tree, np.inf).astype(tree.dtype)
    if isinstance(tree, float) and math.isfinite(tree):
        return math.nextafter(tree, math.inf)
    return tree


def compute_snapshot(exercises: list[str], seed: int, timeout: float = 120.0, log: Any = None) -> dict[str, Any]:
    """Runs the public checks with the reference as the student and records the reference's values.

    Then replays them as the notebook does (reference from the snapshot, student = reference moved
    by one ulp): a check whose reference inputs depend on the student's outputs, or whose comparison
    is stricter than any device allows, fails the build instead of failing students.
    """
    from autograder import _public
    from autograder.core.protocol import reference_key
    from autograder.engine.run import GradingRun

    cpu = {"torch": "cpu", "jax": "cpu"}
    run = GradingRun(device="cpu", timeout=timeout, seed=seed)
    values: dict[str, Any] = {}
    try:
        for ex in exercises:
            checks = public_checks(ex)

            def student(probe: str, call: str, scale: float, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                return run.reference.call(_ex, probe, kwargs)

            def reference(probe: str, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                value = run.reference.call(_ex, probe, kwargs)
                values[reference_key(_ex, probe, kwargs)] = _wire.encode(value)
                return value

            tests = _public.run_checks(ex, checks, student=student, reference=reference, seed=seed, device=cpu)
            for t in tests:
                if not t["passed"]:
                    raise BuildError(f"{ex}: public check {t['name']} fails on the reference solution: {t['message']}")

            def nudged(probe: str, call: str, scale: float, kwargs: dict[str, Any], _ex: str = ex) -> Any:
                return _nudge(run.reference.call(_ex, probe, kwargs))

            replay = _public.run_checks(ex, checks, student=nudged,
                                        reference=_public.snapshot_reference(ex, values), seed=seed, device=cpu)
            for t in replay:
                if not t["passed"]:
                    raise BuildError(f"{ex}: public check {t['name']} fails when replayed from the snapshot with "
                                     f"the reference moved by one ulp ({t['message']}): its reference inputs must "
                                     "come from ctx.rng only and its comparison must allow device round-off")
            if log:
                log(f"  snapshot {ex}: {len(checks)} public checks")
    finally:
        run.close()
    import jax
    import torch

    return {
        "format": SNAPSHOT_FORMAT, "seed": seed, "digest": snapshot_digest(exercises, seed),
        "exercises": _totals(exercises), "values": values,
        "built_with": {"device": "cpu", "numpy": np.__version__, "torch": torch.__version__,
                       "jax": jax.__version__, "python": sys.version.split()[0]},
    }


def snapshot_bytes(snap: dict[str, Any]) -> bytes:
    """The snapshot as stored in the runtime zip."""
    return (json.dumps(snap, sort_keys=True, separators=(",", ":")) + "\n").encode()


# --------------------------------------------------------------------------- the template
def exercise_stub(exercise: str) -> str:
    """The stub in exercises/ (generated from the solution by `tapetrace stubs`)."""
    path = EXERCISES_DIR / f"{exercise}.py"
    if not path.exists():
        raise BuildError(f"{path.relative_to(ROOT)} is missing: run `tapetrace stubs`")
    return path.read_text()


def student_stub(exercise: str) -> str:
    """The .py stub a student gets (the exercises/ stub without its 'generated from' header)."""
    text = exercise_stub(exercise)
    return text.split("\n", 1)[1] if text.startswith("# Generated from") else text


def render_template(exercises: list[str], snap_raw: bytes, lang: str = "en",
                    self_study: bool = False) -> dict[str, bytes]:
    """Every file of a student template (relative path -> bytes) for a given snapshot.

    Args:
        exercises: the exercises, in order.
        snap_raw: the reference snapshot (as stored in the runtime zip).
        lang: ``"en"`` or ``"es"``: the notebook's texts, instructions, stub docstrings, README and
            check.py, and the language the set-up cell sets for checks, hints and figures.
        self_study: add the reference solutions (``solution("exNN")``): a self-study build.
    """
    from autograder.student.instructions_es import INSTRUCTIONS_ES, localize_stub

    if lang not in LANGS:
        raise BuildError(f"unknown language {lang!r}: expected one of {LANGS}")
    snap = json.loads(snap_raw)
    members = runtime_members(exercises, self_study)
    members[SNAPSHOT_ARC] = snap_raw
    runtime = zip_bytes(members)
    specs, stubs = [], {}
    for ex in exercises:
        try:
            stubs[ex] = localize_stub(student_stub(ex), ex, lang)
            doc = INSTRUCTIONS_ES[ex] if lang == "es" else ast.get_docstring(ast.parse(stubs[ex])) or ex
        except KeyError as err:
            raise BuildError(f"{ex}: no {lang} translation of docstring {err} (update "
                             f"autograder/exercises/{ex}/es.py; see docs/i18n_integration.md)") from None
        info = snap["exercises"][ex]
        specs.append({"name": ex, "doc": doc, "code": _notebook.code_cell_source(stubs[ex]),
                      "public_points": info["public_points"], "total_points": info["total_points"]})
    meta: dict[str, Any] = {"digest": snap["digest"], "exercises": exercises}
    nb = _notebook.build(specs, runtime, meta, lang=lang, self_study=self_study)
    files = {_notebook.NOTEBOOK: _notebook.dumps(nb).encode(), "check.py": check_py(lang).encode(),
             "README.md": student_readme(lang, self_study, exercises).encode()}
    for ex in exercises:
        files[f"{ex}.py"] = stubs[ex].encode()
    return files


def committed_snapshot(template: Path) -> bytes | None:
    """The snapshot inside the template's notebook, if there is a readable one."""
    try:
        nb = json.loads((template / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
        return zip_members(_notebook.runtime_of(nb)).get(SNAPSHOT_ARC)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None


def _same_members(have: dict[str, bytes], want: dict[str, bytes]) -> bool:
    """Same files; Python files compared by syntax tree (pruned probes are re-rendered by `ast.unparse`,
    whose layout may differ between Python versions)."""
    if set(have) != set(want):
        return False
    for name, data in want.items():
        if name.endswith(".py"):
            try:
                if ast.dump(ast.parse(have[name])) != ast.dump(ast.parse(data)):
                    return False
            except SyntaxError:
                return False
        elif have[name] != data:
            return False
    return True


def stale(template: Path | None = None, seed: int | None = None, lang: str = "en") -> list[str]:
    """What in ``template`` differs from what ``tapetrace build --lang LANG`` would write now ([] = up to date).

    Args:
        template: the folder (default: the committed one of ``lang``, see :data:`TEMPLATES`).
        seed: the public seed expected (default: the one the committed snapshot was built with).
        lang: the language of the build in that folder.
    """
    template = TEMPLATES[lang] if template is None else Path(template)
    exercises = present()
    raw = committed_snapshot(template)
    if raw is None:
        return [f"{_notebook.NOTEBOOK}: missing or unreadable"]
    snap = json.loads(raw)
    problems = []
    want_seed = snap.get("seed") if seed is None else seed
    if snap.get("seed") != want_seed or snap.get("digest") != snapshot_digest(exercises, want_seed):
        problems.append(f"{_notebook.NOTEBOOK}: the reference snapshot is out of date (solutions, public checks, "
                        "probes or the runtime changed)")
    expected = render_template(exercises, raw, lang)
    for name, data in expected.items():
        path = template / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif name == _notebook.NOTEBOOK:
            have = json.loads(path.read_text(encoding="utf-8"))
            want = json.loads(data)
            if _notebook.without_runtime(have) != _notebook.without_runtime(want):
                problems.append(f"{name}: cells or metadata differ")
            elif not _same_members(zip_members(_notebook.runtime_of(have)), zip_members(_notebook.runtime_of(want))):
                problems.append(f"{name}: the public runtime in the set-up cell differs")
        elif path.read_bytes() != data:
            problems.append(f"{name}: differs")
    extra = sorted(p.name for p in template.iterdir() if p.is_file() and p.name not in expected) \
        if template.is_dir() else []
    problems += [f"{name}: not produced by the build" for name in extra]
    return problems


def _reusable_snapshot(folders: list[Path], exercises: list[str], seed: int) -> bytes | None:
    """A snapshot already built for these inputs, from any of the folders (both languages share it)."""
    digest = snapshot_digest(exercises, seed)
    for folder in folders:
        raw = committed_snapshot(folder)
        if raw is not None:
            old = json.loads(raw)
            if old.get("seed") == seed and old.get("digest") == digest:
                return raw
    return None


def build_template(template: Path | None = None, seed: int = PUBLIC_SEED, refresh: bool = False,
                   log: Any = print, lang: str = "en", self_study: bool = False) -> list[Path]:
    """Writes a student template (default: student_template/ for English, student_template/es/ for Spanish,
    dist/self-study/[es/] for a self-study build); recomputes the snapshot only when its inputs changed
    (a snapshot is reused from the other language's template when it is current)."""
    if template is None:
        template = (SELF_STUDY if self_study else TEMPLATES)[lang]
    template = Path(template)
    exercises = present()
    if not exercises:
        raise BuildError("no exercise has both a solution and public checks")
    folders = list(dict.fromkeys([template, *TEMPLATES.values()]))
    raw = None if refresh else _reusable_snapshot(folders, exercises, seed)
    if raw is None:
        log(f"computing the reference snapshot for {len(exercises)} exercise(s) (public seed {seed})")
        raw = snapshot_bytes(compute_snapshot(exercises, seed, log=log))
    else:
        log("reusing the reference snapshot (its inputs did not change)")
    files = render_template(exercises, raw, lang, self_study)
    template.mkdir(parents=True, exist_ok=True)
    for p in template.iterdir():
        if p.is_file() and p.name not in files:
            p.unlink()
    written = []
    for name, data in files.items():
        path = template / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    return written


def zip_name(lang: str) -> str:
    """The autograder zip's file name: ``tapetrace-autograder.zip``, ``tapetrace-autograder-es.zip``."""
    from autograder import _otter

    return _otter.ZIP_NAME if lang == "en" else _otter.ZIP_NAME.replace(".zip", f"-{lang}.zip")


# --------------------------------------------------------------------------- command line
DESCRIPTION = ("Build the student template (notebook with public self-checks, hints and figures, .py stubs, "
               "check.py) and the otter-grader autograder zip in dist/, in English (default) or Spanish.")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``build`` and its options to the CLI's subparsers."""
    p = sub.add_parser("build", help="build student_template/ and the otter autograder zip", description=DESCRIPTION)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def _parser() -> argparse.ArgumentParser:
    from autograder.cli import _Parser

    return _add_arguments(_Parser(prog="tapetrace build", description=DESCRIPTION))


def _add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--check", action="store_true", help="only verify that the committed student templates are "
                   "up to date (both languages unless --lang is given; exit status 1 and a list of differences "
                   "when one is stale)")
    p.add_argument("--lang", default=None, choices=list(LANGS),
                   help="language of the build (default en): the notebook, stubs, check messages, hints and "
                   "figures, and the autograder's feedback. en writes student_template/ and "
                   "dist/tapetrace-autograder.zip; es writes student_template/es/ and dist/tapetrace-autograder-es.zip")
    p.add_argument("--self-study", action="store_true",
                   help="a self-study edition for learners without an instructor: the notebook also defines "
                   "solution(\"exNN\") (reference solutions inside); written to dist/self-study/ (dist/self-study/es/); "
                   "no autograder zip. Never hand it out for a graded course")
    p.add_argument("--only", choices=["template", "otter"], help="build only one of the two")
    p.add_argument("--template", default=None, metavar="DIR",
                   help="student template folder (default: see --lang and --self-study)")
    p.add_argument("--out", default=str(DIST), metavar="DIR", help="where the autograder zip goes (default dist/)")
    p.add_argument("--public-seed", type=int, default=PUBLIC_SEED, help="seed of the public checks' inputs")
    p.add_argument("--refresh-snapshot", action="store_true", help="recompute the reference snapshot anyway")
    g = p.add_argument_group("autograder zip (grading settings, as for `tapetrace grade`)")
    g.add_argument("--gpu-torch", action="store_true",
                   help="install PyPI's torch with its CUDA libraries (~3 GB of wheels) in the grading image; "
                   "default: a CPU-only torch from PyTorch's CPU wheel index (otter grade and Gradescope "
                   "give containers no GPU)")
    g.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="limit for loading an exercise and for each test's call (default 30)")
    g.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "tpu"])
    g.add_argument("--jobs", type=int, default=1, metavar="N", help="exercises graded in parallel")
    g.add_argument("--seed", type=int, default=None,
                   help="fixed grading seed (default: derived from each submission's bytes and a build salt)")
    g.add_argument("--python-version", default=f"{sys.version_info[0]}.{sys.version_info[1]}",
                   help="Python of the grading image (default: this interpreter's)")
    g.add_argument("--require-isolation", default="container", choices=["full", "container", "minimal"],
                   help="the weakest isolation of student code the zip grades under (default container: what "
                        "Docker's default privileges allow, as on Gradescope and in otter grade; full: Linux "
                        "namespaces; minimal: grade anyway). Below it every case fails with 'not graded'")
    g.add_argument("--hide-results", action="store_true",
                   help="Gradescope: keep per-exercise results hidden from students even after publishing")
    g.add_argument("--exercises", default=None, help=argparse.SUPPRESS)
    return p


def _check(args: argparse.Namespace) -> int:
    """``tapetrace build --check``: 0 when the committed template(s) are current, else 1 with the differences."""
    langs = [args.lang] if args.lang else list(LANGS)
    bad = 0
    for lang in langs:
        template = Path(args.template) if args.template else TEMPLATES[lang]
        where = f"{template.relative_to(ROOT)}/" if template.is_relative_to(ROOT) else str(template)
        problems = stale(template, args.public_seed, lang)
        for line in problems:
            print(f"stale: {where}{line}")
        if problems:
            bad = 1
            fix = "tapetrace build" + ("" if lang == "en" else f" --lang {lang} --only template")
            print(f"{where} is out of date: run `{fix}`", file=sys.stderr)
        else:
            print(f"{where} is up to date")
    return bad


def main(argv: list[str]) -> int:
    """``tapetrace build`` from its own arguments (tests, scripts)."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """``tapetrace build``: the template(s) and/or the otter zip; 2 with a one-line reason on a bad request."""
    lang = args.lang or "en"
    try:
        if args.check:
            return _check(args)
        if args.jobs < 1 or args.timeout <= 0:
            raise BuildError("--jobs must be >= 1 and --timeout positive")
        if args.self_study and args.only == "otter":
            raise BuildError("--self-study builds a notebook only (no autograder zip): drop --only otter")
        if args.only != "otter":
            template = Path(args.template) if args.template else None
            for path in build_template(template, args.public_seed, args.refresh_snapshot, lang=lang,
                                       self_study=args.self_study):
                print(f"wrote {path}")
        if args.only != "template" and not args.self_study:
            from autograder import _otter

            exercises = present()
            if args.exercises:
                try:
                    wanted = {resolve(x, exercises) for x in args.exercises.split(",")}
                    exercises = [e for e in exercises if e in wanted]
                except UnknownExercise as err:
                    raise BuildError(f"--exercises: {err}") from None
            out = _otter.build_zip(Path(args.out) / zip_name(lang), exercises, timeout=args.timeout,
                                   device=args.device, jobs=args.jobs, lang=lang, seed=args.seed,
                                   gpu_torch=args.gpu_torch, python_version=args.python_version,
                                   show_hidden=not args.hide_results, require_isolation=args.require_isolation)
            print(f"wrote {out} ({len(exercises)} exercise(s); grade with: otter run -a {out} NOTEBOOK.ipynb)")
    except BuildError as err:
        print(f"tapetrace build: {err}", file=sys.stderr)
        return 2
    return 0
