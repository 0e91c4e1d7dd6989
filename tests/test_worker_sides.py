"""The two sides of ``autograder/workers/`` and the worker's stages (issue 55, item 3).

Each module of the package says on its docstring's first line where it runs: ``Grader side:`` (the grader's
process), ``Worker side:`` (a zygote or a worker, beside the student's code) or ``Both sides:`` (then its
docstring names each half); ``autograder/workers/README.md`` lists them the same way, and no worker-side module
imports a grader-side one. ``worker_main`` runs its named stages in the README's order, each stage's docstring
naming its threat first, and keeps the calibration reads and the command loop in its own frame (where
``autograder/workers/confirm.py`` measures them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autograder.core.paths import ROOT

PACKAGE = ROOT / "autograder" / "workers"
README = PACKAGE / "README.md"
SIDES = {"Grader side:": "grader", "Worker side:": "worker", "Both sides:": "both"}
BULLETS = {"grader": "- **Grader side**", "worker": "- **Worker side**", "both": "- **Both sides**"}


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PACKAGE.glob("*.py"))}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _docstring(path: Path) -> str:
    return ast.get_docstring(_tree(path), clean=True) or ""


def side(path: Path) -> str | None:
    """The side a module's docstring declares on its first line, else None."""
    first = _docstring(path).split("\n", 1)[0]
    return next((name for prefix, name in SIDES.items() if first.startswith(prefix)), None)


def _bullet(text: str, start: str) -> str:
    """The README's bullet that begins with ``start`` (up to the next bullet or blank line)."""
    lines = text.split("\n")
    (i,) = [n for n, line in enumerate(lines) if line.startswith(start)]
    out = [lines[i]]
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith("- "):
            break
        out.append(line)
    return " ".join(out)


def workers_imported(path: Path) -> set[str]:
    """The modules of ``autograder.workers`` that ``path`` imports, at any level (module or function)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names if a.name.startswith("autograder.workers.")}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "autograder.workers":
                found |= {a.name for a in node.names}
            elif node.module.startswith("autograder.workers."):
                found.add(node.module.split(".")[2])
    return found


@pytest.mark.parametrize("name", list(_modules()))
def test_every_module_of_workers_declares_its_side(name):
    path = _modules()[name]
    declared = side(path)
    assert declared is not None, f"{name}.py: its docstring's first line says none of {list(SIDES)}"
    if declared == "both" and name != "__init__":  # (the package's file: it holds no code of either side)
        doc = _docstring(path)
        assert "Grader side:" in doc and "Worker side:" in doc, f"{name}.py: both sides, but not which is which"


def test_the_readme_lists_each_module_under_its_own_side():
    text = README.read_text(encoding="utf-8")
    bullets = {s: _bullet(text, start) for s, start in BULLETS.items()}
    for name, path in _modules().items():
        listed = [s for s, bullet in bullets.items() if f"`{name}`" in bullet]
        assert listed == [side(path)], f"{name}: README lists it under {listed}, its docstring says {side(path)}"


def test_no_worker_side_module_imports_a_grader_side_one():
    sides = {name: side(path) for name, path in _modules().items()}
    for name, path in _modules().items():
        if sides[name] == "worker":
            grader = sorted(m for m in workers_imported(path) if sides.get(m) == "grader")
            assert not grader, f"{name}.py (worker side) imports grader-side {grader}"


def test_the_import_rule_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from autograder.workers import handle as _h\n    import autograder.workers.watch\n"
                     "from autograder.workers.launch import Proc\n", encoding="utf-8")
    assert workers_imported(probe) == {"handle", "watch", "launch"}


def _worker_main() -> ast.FunctionDef:
    (fn,) = [n for n in _tree(PACKAGE / "worker.py").body if isinstance(n, ast.FunctionDef) and n.name == "worker_main"]
    return fn


def _called(node: ast.AST) -> list[str]:
    """The plain names ``node`` calls, in source order."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    return [c.func.id for c in sorted(calls, key=lambda c: (c.lineno, c.col_offset))]


def test_worker_main_runs_its_stages_in_the_readme_order_each_naming_its_threat():
    defined = {n.name: n for n in _tree(PACKAGE / "worker.py").body
               if isinstance(n, ast.FunctionDef) and n.name.startswith("_stage_")}
    called = [c for c in _called(_worker_main()) if c.startswith("_stage_")]
    readme = re.findall(r"^\d+\. `(_stage_\w+)`", README.read_text(encoding="utf-8"), re.M)
    assert called == readme, f"worker_main calls {called}; the README lists {readme}"
    assert sorted(called) == sorted(defined), "a stage defined but not called, or called twice"
    for name, fn in defined.items():
        first = (ast.get_docstring(fn) or "").split("\n", 1)[0]
        assert first.startswith("Threat: "), f"{name}: its docstring's first line does not name its threat"


def test_the_calibration_and_the_loop_read_from_worker_mains_own_frame():
    """The calibration's first read and the loop's wait are ``readv`` calls of ``worker_main`` itself, at the
    same depth (``confirm`` compares the loop's stack pointer with the calibration's); the nested read is one
    ``operator.call`` below."""
    fn = _worker_main()
    nested = {id(n) for d in ast.walk(fn) if isinstance(d, (ast.FunctionDef, ast.Lambda)) and d is not fn
              for n in ast.walk(d)}
    calls = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Call) and id(n) not in nested),
                   key=lambda c: (c.lineno, c.col_offset))
    readv = [c for c in calls if ast.unparse(c.func) in ("os.readv", "readv")]
    assert [ast.unparse(c.func) for c in readv] == ["os.readv", "readv"], "calibration read, then the loop's"
    assert any(isinstance(n, ast.While) and any(c in readv for c in ast.walk(n)) for n in ast.walk(fn)), \
        "the loop's readv is in worker_main's own while loop"
    assert any(ast.unparse(c) == "operator.call(_calibration_read, cmd_fd)" for c in calls)
