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
    Spanish) for ``otter run`` / ``otter grade`` / Gradescope (see :mod:`autograder.builders.otter`).
    ``solutions/tapetrace-solutions.ipynb`` (``-es`` with ``--lang es``): the student notebook filled with the
    reference solutions (never hand it out), which the build then checks the zip and the self-check with
    (:mod:`autograder.builders.verify`; ``--no-verify`` skips that).
    ``self-study/`` (``self-study/es/``) with ``--self-study``: the template plus the reference
    solutions (``solution("exNN")``), for learners without an instructor; never a graded build.

The snapshot is recomputed (reference workers on CPU) only when its inputs changed: solutions,
public checks, probes, hidden suites' totals, the runtime's engine modules, the public seed.
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any

from autograder.builders import notebook as _notebook
from autograder.builders import templates
from autograder.builders.runtime import PKG, BuildError, exercise_dir, runtime_members, zip_bytes, zip_members
from autograder.builders.snapshot import PUBLIC_SEED, SNAPSHOT_ARC, compute_snapshot, snapshot_bytes, snapshot_digest
from autograder.core.i18n import LANGS, render, section
from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS

TEMPLATE = ROOT / "student_template"


DIST = ROOT / "dist"


TEMPLATES = {"en": TEMPLATE, "es": TEMPLATE / "es"}


SELF_STUDY = {"en": DIST / "self-study", "es": DIST / "self-study" / "es"}


# the notebook filled with the reference solutions, beside the zip (dist/solutions/): as secret as solutions/
# (dist/ is among the places a student's worker never reads, autograder/core/build_record.py private_dirs)
SOLUTION_DIR = "solutions"


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


def template_folder(template: Path | str | None, lang: str, self_study: bool) -> Path:
    """Where a template build writes: ``template``, else the committed template of ``lang`` (:data:`TEMPLATES`), or
    the self-study edition's folder (:data:`SELF_STUDY`: the reference solutions inside)."""
    return Path(template) if template is not None else (SELF_STUDY if self_study else TEMPLATES)[lang]


def build_template(template: Path | None = None, seed: int = PUBLIC_SEED, refresh: bool = False,
                   log: Any = print, lang: str = "en", self_study: bool = False) -> list[Path]:
    """Writes a student template (default: student_template/ for English, student_template/es/ for Spanish,
    dist/self-study/[es/] for a self-study build); recomputes the snapshot only when its inputs changed
    (a snapshot is reused from the other language's template when it is current)."""
    template = template_folder(template, lang, self_study)
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


def solution_notebook_path(out: Path, lang: str) -> Path:
    """Where ``tapetrace build`` writes the solution notebook: ``OUT/solutions/tapetrace-solutions.ipynb``
    (``tapetrace-solutions-es.ipynb`` for ``--lang es``)."""
    name = "tapetrace-solutions.ipynb" if lang == "en" else f"tapetrace-solutions-{lang}.ipynb"
    return Path(out) / SOLUTION_DIR / name


def write_solution_notebook(template: Path, out: Path, lang: str) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Writes the student notebook of ``template`` filled with the reference solutions (for the instructor:
    never hand it out); returns its path, the untouched notebook and the filled one."""
    from autograder.builders.verify import solution_notebook

    try:
        nb = json.loads((Path(template) / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
        filled = solution_notebook(nb)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise BuildError(f"cannot fill {Path(template) / _notebook.NOTEBOOK} with the solutions: {err} "
                         "(build the template first)") from None
    path = solution_notebook_path(out, lang)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_notebook.dumps(filled), encoding="utf-8")
    return path, nb, filled


def zip_name(lang: str) -> str:
    """The autograder zip's file name: ``tapetrace-autograder.zip``, ``tapetrace-autograder-es.zip``."""
    from autograder.builders import otter_zip as _otter_zip

    return _otter_zip.ZIP_NAME if lang == "en" else _otter_zip.ZIP_NAME.replace(".zip", f"-{lang}.zip")
