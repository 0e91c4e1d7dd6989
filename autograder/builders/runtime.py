"""The notebook's public runtime: which engine modules ship in the set-up cell's zip, and that they stand alone.

``RUNTIME_MODULES`` / ``RUNTIME_PACKAGES`` name what is copied (each sub-package's ``__init__.py`` with its
modules: its re-exports import nothing until used); :func:`runtime_members` collects the files and checks
their closure: every ``autograder.*`` import resolves inside the runtime and nothing of ``hidden/``,
``solutions/`` or ``tests/`` ships. Deterministic zips (:func:`zip_bytes`).
"""

from __future__ import annotations

import ast
import io
import zipfile
from pathlib import Path

from autograder.builders import templates
from autograder.core.paths import ROOT, SOLUTIONS

PKG = ROOT / "autograder"


ZIP_DATE = (2026, 1, 1, 0, 0, 0)


# Engine modules the public runtime needs (besides the exercise packages, the packages below and the data).
# Paths under autograder/; each one's sub-package ships its ``__init__.py`` too (imports nothing on import).
RUNTIME_MODULES = ("core/protocol.py", "core/suite.py", "core/text.py", "core/text_intake.py", "core/compare.py",
                   "core/tolerances.py", "core/wire.py", "core/data.py", "core/syntax.py", "core/registry.py", "core/exercise.py", "core/i18n.py",
                   "workers/worker.py", "builders/public.py", "builders/public_snapshot.py", "builders/public_student.py",
                   "builders/public_graded.py", "builders/public_devices.py", "submissions/cells.py",
                   "submissions/ipython_cells.py",
                   "submissions/statements.py", "submissions/fstrings.py", "submissions/standins.py", "submissions/execute.py",
                   "probing/tools.py",
                   "probing/optax_family.py", "probing/torch_family.py")  # the optimizer families probes hand to a step


# Engine sub-packages shipped whole.
RUNTIME_PACKAGES = ("messages", "student")


# The exercise packages: autograder/exercises/<exercise>/, shipped whole for the exercises built (probes pruned).
EXERCISE_PACKAGES = "exercises"


# Imported by the student package only inside build-time functions (never in the notebook).
BUILD_TIME_IMPORTS = ("autograder.core.paths",)


SELF_STUDY_ARC = "autograder/student/_selfstudy.json"


FORBIDDEN_IMPORTS = ("autograder.hidden", "solutions", "tests")


# Programs the build writes (autograder/builders/templates/): the runtime's autograder/__init__.py, students' check.py.
RUNTIME_INIT = "runtime_init.py"


class BuildError(Exception):
    """The build cannot produce a correct template or zip (the message says why)."""


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
        # the worker's own start-up (sandbox) is imported lazily there and unused by run_probe
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
                                 "(see RUNTIME_MODULES in autograder/builders/runtime.py)")


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
