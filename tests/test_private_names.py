"""A leading underscore means "private to its package": no module reaches into another package for one.

A *package* is a subpackage of ``autograder`` (``core``, ``engine``, ``student``, ...); each exercise folder
``autograder/exercises/exNN_*`` is a package of its own, and the top-level modules (``autograder/*.py``) form
one more. A cross-package use of a ``_`` name is any of:

* ``from <package>.<module> import _name`` (or a relative ``from ..<module> import _name`` that resolves
  into another package);
* ``import <package>._module`` / ``from <package> import _module``;
* ``name._attr`` where ``name`` was imported from another package (``from autograder.reports import report``
  then ``report._atomic_write(...)``; ``GradingRun._finish``).

Dunder names (``__version__``) are not private. The templates of ``tapetrace new``
(``autograder/builders/templates/new``) are checked as the files they become, so a generated exercise keeps
the rule too. Third-party privates (``torch._dynamo``) are out of scope.
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.cli.new import FILES

ROOT = Path(__file__).resolve().parents[1]
AUTOGRADER = ROOT / "autograder"
TEMPLATES = AUTOGRADER / "builders" / "templates" / "new"
# The exercise name a template's ``__NAME__`` stands for while it is checked.
TEMPLATE_NAME = "ex99_template"

# Cross-package ``_`` uses allowed, as "file: module.name": none (an entry no use needs any more fails
# ``test_allowlist_is_current``).
ALLOWED: frozenset[str] = frozenset()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def package_of(module: str) -> str | None:
    """The package of a dotted ``autograder`` module (``None`` outside ``autograder``)."""
    parts = module.split(".")
    if parts[0] != "autograder":
        return None
    if len(parts) >= 3 and parts[1] == "exercises" and parts[2].startswith("ex"):
        return "exercises." + parts[2]
    if len(parts) == 1:
        return "autograder"
    # A top-level module (autograder/otter_plugin.py) is part of the root package.
    if len(parts) == 2 and (AUTOGRADER / f"{parts[1]}.py").is_file():
        return "autograder"
    return parts[1]


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _private_parts(dotted: str) -> list[str]:
    return [p for p in dotted.split(".") if _is_private(p)]


def violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """The cross-package ``_`` uses in ``source``, the text of ``module``, as ``"line: what"`` strings."""
    own = package_of(module)
    tree = ast.parse(source)
    found: list[str] = []
    foreign: dict[str, str] = {}  # local name -> the dotted thing it is, from another package

    def note(node: ast.AST, what: str) -> None:
        found.append(f"{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module) if node.level else (node.module or "")
            pkg = package_of(base)
            if pkg is None:
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if package_of(full) == own:
                    continue
                if _private_parts(full):
                    note(node, full)
                foreign[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                pkg = package_of(alias.name)
                if pkg is None or pkg == own:
                    continue
                if _private_parts(alias.name):
                    note(node, alias.name)
                if alias.asname:
                    foreign[alias.asname] = alias.name
                else:
                    foreign[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            chain: list[str] = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in foreign:
                continue
            dotted = ".".join([foreign[value.id], *reversed(chain)])
            # ``autograder.x.y._z`` through a plain ``import autograder...``: the package is in the chain.
            head = dotted.split("._")[0] if "._" in dotted else dotted
            if package_of(head) != own:
                note(node, dotted)
    return sorted(set(found), key=lambda s: (int(s.split(":")[0]), s))


def _module_name(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _template_destinations() -> dict[Path, Path]:
    """Each ``tapetrace new`` template that becomes a module of ``autograder`` -> the file it becomes."""
    out: dict[Path, Path] = {}
    for template, destination in FILES:
        if not destination.startswith("autograder/"):
            continue
        for fw in ("torch", "jax"):
            src = TEMPLATES / template.format(fw=fw)
            out[src] = ROOT / destination.format(name=TEMPLATE_NAME)
    return out


def all_violations() -> list[str]:
    """Every cross-package ``_`` use in ``autograder/`` (templates as the files they become)."""
    found: list[str] = []
    templates = _template_destinations()
    for path in sorted(AUTOGRADER.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if path.is_relative_to(TEMPLATES):
            if path not in templates:
                continue
            module, is_package = _module_name(templates[path])
            source = path.read_text().replace("__NAME__", TEMPLATE_NAME)
        else:
            module, is_package = _module_name(path)
            source = path.read_text()
        found += [f"{rel}:{v.split(': ', 1)[0]}: {v.split(': ', 1)[1]}"
                  for v in violations(source, module, is_package=is_package)]
    return found


def _key(violation: str) -> str:
    path, _line, what = violation.split(":", 2)
    return f"{path}: {what.strip()}"


def test_no_cross_package_private_names() -> None:
    bad = [v for v in all_violations() if _key(v) not in ALLOWED]
    assert not bad, "cross-package use of `_` names (make them public, or keep them inside):\n" + "\n".join(bad)


def test_allowlist_is_current() -> None:
    keys = {_key(v) for v in all_violations()}
    assert ALLOWED <= keys, f"stale allowlist entries, remove them: {sorted(ALLOWED - keys)}"
    outside = [k for k in ALLOWED if not k.startswith(("autograder/engine/", "autograder/scaleout/",
                                                       "autograder/cli/grade.py"))]
    assert not outside, outside


def test_detector_catches_each_form() -> None:
    source = (
        "from autograder.student.figure_canvas import _new_figure, show\n"
        "from autograder.reports import report\n"
        "import autograder.core._secret\n"
        "import autograder.core.text as text\n"
        "from autograder.engine.run import GradingRun\n"
        "from ..ex02_other.public import _case\n"
        "from .public import _dims\n"
        "from autograder.cli.helpers import _own\n"
        "report._atomic_write('x', 'y')\n"
        "text._clean('x')\n"
        "GradingRun._finish(None)\n"
        "report.__name__\n"
        "autograder.core.suite._helper()\n"
    )
    got = violations(source, "autograder.exercises.ex01_demo.figure")
    assert got == [
        "1: autograder.student.figure_canvas._new_figure",
        "3: autograder.core._secret",
        "6: autograder.exercises.ex02_other.public._case",
        "8: autograder.cli.helpers._own",
        "9: autograder.reports.report._atomic_write",
        "10: autograder.core.text._clean",
        "11: autograder.engine.run.GradingRun._finish",
        "13: autograder.core.suite._helper",
    ]
    # The same package may use its own: ex01's figure reaching for ex01's public helper is fine.
    assert violations("from autograder.exercises.ex01_demo.public import _case\n",
                      "autograder.exercises.ex01_demo.figure") == []
    assert violations("from .figure_canvas import _t\n", "autograder.student.figure_training") == []


def test_a_new_exercise_keeps_the_rule(tmp_path: Path) -> None:
    """What ``tapetrace new`` renders (each framework's code) reaches into no other package's ``_`` names."""
    from autograder.cli import new as _new

    bad = []
    for frameworks in (("torch",), ("jax",)):
        for path, text in _new.plan(tmp_path, "ex97_row_norm", frameworks=frameworks).items():
            rel = path.relative_to(tmp_path)
            if rel.parts[0] != "autograder" or rel.suffix != ".py":
                continue
            module = ".".join(rel.with_suffix("").parts)
            is_package = module.endswith(".__init__")
            module = module.removesuffix(".__init__")
            bad += [f"{frameworks} {rel}:{v}" for v in violations(text, module, is_package=is_package)]
    assert not bad, bad
