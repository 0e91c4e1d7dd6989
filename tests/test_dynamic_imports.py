"""Imports by name, made visible: every ``import_module``/``__import__`` call of ``autograder/`` is either the
one import of an exercise's part (:func:`autograder.core.exercise.part`, re-exported as ``registry.part``) or
listed below with its reason; and every call of ``part`` names its part as a literal, from a layer that may
load that part (the layer contract of by-name edges, which ``lint-imports`` cannot see: docs/architecture.md).
"""

from __future__ import annotations

import ast
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from autograder.core import exercise as _exercise
from autograder.core import registry
from autograder.core.paths import ROOT

PKG = ROOT / "autograder"
LOADERS = frozenset({"import_module", "__import__"})
# The one function that imports an exercise's part by name.
ONE = ("autograder/core/exercise.py", "part")
PEP562 = "PEP 562 lazy re-export: a name of the package's fixed table, imported on first use"
# Other imports by name, (file, function) -> why. "*": any function of the file.
ALLOWED: dict[tuple[str, str], str] = {
    ("autograder/__init__.py", "__getattr__"): PEP562,
    ("autograder/builders/__init__.py", "__getattr__"): PEP562,
    ("autograder/cli/__init__.py", "__getattr__"): PEP562,
    ("autograder/core/__init__.py", "__getattr__"): PEP562,
    ("autograder/engine/__init__.py", "__getattr__"): PEP562,
    ("autograder/probing/__init__.py", "__getattr__"): PEP562,
    ("autograder/reports/__init__.py", "__getattr__"): PEP562,
    ("autograder/sandbox/__init__.py", "__getattr__"): PEP562,
    ("autograder/scaleout/__init__.py", "__getattr__"): PEP562,
    ("autograder/submissions/__init__.py", "__getattr__"): PEP562,
    ("autograder/workers/__init__.py", "__getattr__"): PEP562,
    ("autograder/cli/app.py", "build_parser"): "the subcommands' own modules (autograder.cli.<command>, COMMANDS); "
                                               "one missing from a partial installation becomes 'not available'",
    ("autograder/core/i18n.py", "_catalogue_tables"): "the engine's message modules (autograder/messages/*.py, "
                                                      "plain data below the core), found by pkgutil",
    ("autograder/submissions/execute.py", "_future_flags"): "the standard library's __future__ (the compiler flags "
                                                            "of a submission's `from __future__` lines)",
    ("autograder/submissions/standins.py", "ColabModule.__getattr__"): "google.colab's submodules, for the "
                                                                      "stand-in a submission imports",
    ("autograder/workers/warmup.py", "preload"): "optional libraries the zygote imports before forking",
    ("autograder/workers/fingerprint.py", "_check_imports"): "the libraries an admission checks it can import",
    ("autograder/workers/seal.py", "<module>"): "numpy's pickle reconstructor (numpy._core or numpy.core)",
}

# The layer contract of by-name edges: part -> the lowest layer whose modules may load it (pyproject.toml's
# layers, top first). Plain data (the package's META, messages, hints, Spanish texts: leaves, see
# test_data_parts_are_leaves) may be loaded from the core up; code parts only from above the exercises' layer;
# probes (run beside a student's code) from the workers up; hidden suites only by the hidden package itself,
# whose importers are all at the engine or above (test_hidden_suites_stay_on_the_graders_side).
FLOOR = {"": "autograder.core", "messages": "autograder.core", "hints": "autograder.core", "es": "autograder.core",
         "public": "autograder.hidden", "figure": "autograder.hidden", "probes": "autograder.workers",
         "hidden": "autograder.hidden"}
ONLY_FROM = {"hidden": ("autograder.hidden",)}
# (caller module, part) -> why a by-name edge against the layers is kept (reported, issue 55 item 5).
EXCEPTIONS = {
    ("autograder.student.figures", "figure"): "figure(exNN) draws with the exercise's figure.py, which imports "
                                              "the student package's panels: student -> exercises -> student",
}
DATA_PARTS = ("__init__", "messages", "hints", "es")


def _layers() -> list[tuple[str, ...]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c.get("id") == "layers"]
    return [tuple(p.strip() for p in layer.split("|")) for layer in contract["layers"]]


LAYERS = _layers()


def _layer(module: str) -> int | None:
    """Index of a module's layer (0: the top), None outside every layer."""
    for i, layer in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in layer):
            return i
    return None


def _index(package: str) -> int:
    found = _layer(package)
    assert found is not None, package
    return found


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _sources() -> dict[str, ast.Module]:
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
            for p in sorted(PKG.rglob("*.py"))}


SOURCES = _sources()


def _calls(tree: ast.AST, stack: tuple[str, ...] = ()):
    """``(enclosing qualname, call)`` for each call under ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _calls(node, (*stack, node.name))
            continue
        if isinstance(node, ast.Call):
            yield ".".join(stack) or "<module>", node
        yield from _calls(node, stack)


def _loader_calls(tree: ast.Module) -> list[tuple[str, int]]:
    """``(qualname, line)`` of each ``import_module``/``__import__`` call, aliases of them included."""
    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               for a in n.names if a.name in LOADERS}
    found = []
    for where, call in _calls(tree):
        f = call.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in LOADERS or (isinstance(f, ast.Name) and f.id in aliases):
            found.append((where, call.lineno))
    return found


def _part_calls(path: str, tree: ast.Module) -> list[tuple[int, ast.Call]]:
    """``(line, call)`` of each call of the one loader (``part``, as imported from the registry or the
    discovery module, or an attribute of either module)."""
    homes = {"autograder.core.registry", "autograder.core.exercise"}
    names, modules = set(), set()
    if path == ONE[0]:
        names.add(ONE[1])
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module in homes:
            names |= {a.asname or a.name for a in n.names if a.name == "part"}
        elif isinstance(n, ast.ImportFrom) and n.module == "autograder.core":
            modules |= {a.asname or a.name for a in n.names if a.name in ("registry", "exercise")}
        elif isinstance(n, ast.Import):
            modules |= {a.asname for a in n.names if a.name in homes and a.asname}
    found = []
    for _where, call in _calls(tree):
        f = call.func
        if (isinstance(f, ast.Name) and f.id in names) or (
                isinstance(f, ast.Attribute) and f.attr == "part" and isinstance(f.value, ast.Name)
                and f.value.id in modules):
            found.append((call.lineno, call))
    return found


def _part_of(call: ast.Call) -> str | None:
    """The part a call of ``part`` names: its literal, ``""`` when left out, None when not a literal."""
    arg = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "part_name"), None)
    if arg is None:
        return ""
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _edges() -> list[tuple[str, str, str]]:
    """``(caller module, part, file:line)`` of every by-name edge into an exercise."""
    out = []
    for path, tree in SOURCES.items():
        for line, call in _part_calls(path, tree):
            out.append((_module(ROOT / path), _part_of(call), f"{path}:{line}"))
    return out


def test_every_import_by_name_is_the_one_loader_or_listed():
    found = {(path, where): line for path, tree in SOURCES.items() for where, line in _loader_calls(tree)}
    unlisted = [f"{path}:{line} ({where})" for (path, where), line in found.items()
                if (path, where) != ONE and (path, where) not in ALLOWED and (path, "*") not in ALLOWED]
    assert not unlisted, ("imports by name outside registry.part and the allow-list: load an exercise's part with "
                          "autograder.core.registry.part(exercise, \"<part>\"), or list the call with its reason in "
                          f"ALLOWED: {unlisted}")
    seen = {key for key in found} | {(path, "*") for path, _ in found}
    stale = [key for key in ALLOWED if key not in seen]
    assert not stale, f"allow-listed imports by name that are gone (remove them from ALLOWED): {stale}"


def test_exactly_one_function_imports_an_exercises_part():
    tree = SOURCES[ONE[0]]
    assert [where for where, _ in _loader_calls(tree)] == [ONE[1]]
    assert registry.part is _exercise.part and registry.module_name is _exercise.module_name


def test_every_part_is_named_by_a_literal():
    edges = _edges()
    assert len(edges) >= 10, edges  # the walk finds the loader's calls (discover, i18n, builders, student, hidden)
    dynamic = [where for _, part, where in edges if part is None]
    assert not dynamic, f"registry.part's part must be a string literal (the layers' test reads it): {dynamic}"
    unknown = [(part, where) for _, part, where in edges if part is not None and part not in _exercise.PARTS]
    assert not unknown, unknown
    assert set(FLOOR) == set(_exercise.PARTS)


def test_by_name_edges_respect_the_layers():
    used = set()
    breaches = []
    for caller, part, where in _edges():
        if part is None:
            continue
        layer = _layer(caller)
        allowed = (layer is not None and layer <= _index(FLOOR[part])
                   and caller.startswith(ONLY_FROM.get(part, ("autograder",))))
        if (caller, part) in EXCEPTIONS:
            used.add((caller, part))
            assert not allowed, f"{caller} may load {part!r} by the layers now: drop its EXCEPTIONS entry"
            continue
        if not allowed:
            breaches.append(f"{where}: {caller} loads the {part!r} part of an exercise (lowest layer allowed: "
                            f"{FLOOR[part]}{', only from ' + str(ONLY_FROM[part]) if part in ONLY_FROM else ''})")
    assert not breaches, "by-name edges against the layers:\n" + "\n".join(breaches)
    assert used == set(EXCEPTIONS), f"stale EXCEPTIONS: {set(EXCEPTIONS) - used}"


@pytest.mark.parametrize("name", DATA_PARTS)
def test_data_parts_are_leaves(name):
    """What the core may load by name is plain data: an exercise's ``__init__``, messages, hints and Spanish texts
    import nothing but ``__future__`` and the discovery's names (so a by-name edge from below closes no cycle)."""
    allowed = {"__future__", "autograder.exercises", "autograder.core.exercise"}
    for ex in registry.EXERCISES:
        path = PKG / "exercises" / ex / f"{name}.py"
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert imported <= allowed, f"{path.relative_to(ROOT)} imports {sorted(imported - allowed)}: not plain data"


def test_hidden_suites_stay_on_the_graders_side():
    """The hidden suites load only through ``autograder.hidden`` (``load_suite``); no module of a layer below
    the engine (worker, sandbox, submissions, or anything under the hidden layer) imports that package."""
    engine = _index("autograder.engine")
    offenders = []
    for path, tree in SOURCES.items():
        module = _module(ROOT / path)
        layer = _layer(module)
        if layer is None or layer <= engine or module.startswith("autograder.hidden"):
            continue
        for n in ast.walk(tree):
            names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                     else [n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level else [])
            offenders += [f"{path}:{n.lineno}" for m in names if m == "autograder.hidden" or m.startswith("autograder.hidden.")]
    assert not offenders, offenders


def test_the_walk_sees_a_new_import_by_name():
    """The checks are live: an unlisted ``import_module`` and a ``part`` call with a computed part are found."""
    tree = ast.parse("import importlib\nfrom importlib import import_module as im\n"
                     "from autograder.core.registry import part\n"
                     "def f(ex, p):\n    importlib.import_module(ex)\n    im(ex)\n    return part(ex, p), part(ex)\n")
    assert [w for w, _ in _loader_calls(tree)] == ["f", "f"]
    assert [_part_of(c) for _, c in _part_calls("x.py", tree)] == [None, ""]


def test_part_refuses_unknown_parts_and_dotted_names():
    assert registry.part("ex01_torch_mlp", "hints").__name__ == "autograder.exercises.ex01_torch_mlp.hints"
    assert registry.module_name("ex01_torch_mlp", "hidden") == "autograder.hidden.ex01_torch_mlp"
    with pytest.raises(ValueError, match="unknown part"):
        registry.part("ex01_torch_mlp", "solution")
    with pytest.raises(ModuleNotFoundError):
        registry.part("ex01_torch_mlp.probes", "hints")
    assert Counter(_exercise.PARTS).most_common(1)[0][1] == 1
