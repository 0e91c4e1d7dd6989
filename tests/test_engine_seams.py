"""The engine's seams (issue 38): rows made in one module, one exercise's grading blind to its run, no cycle.

Read by AST only (nothing is imported, nothing graded):

- the Dask client (autograder/scaleout/cluster.py) makes its rows with :mod:`autograder.engine.rows`, never
  with a ``GradingRun`` method called unbound on itself (no ``type: ignore`` to silence that);
- one exercise's grading (autograder/engine/exercise.py) does not import the run (not even for type hints):
  it gets an ``ExerciseHost``;
- the engine's modules import one another without a cycle (imports under ``TYPE_CHECKING`` and inside
  functions count);
- ``tapetrace grade``'s ``run`` keeps to options, their checks, exit codes and printing (the resume,
  checkpoint and progress wiring is the session's: autograder/engine/session.py).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "autograder" / "engine"
CLUSTER = ROOT / "autograder" / "scaleout" / "cluster.py"
MAX_RUN_LINES = 70


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _comments(path: Path) -> list[str]:
    toks = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [t.string for t in toks if t.type == tokenize.COMMENT]


def _imported(path: Path, package: str) -> set[str]:
    """Every module of ``package`` that ``path`` imports, anywhere in it (top level, functions, TYPE_CHECKING)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from autograder.engine import rows` names a module; `from autograder.engine.run import X` its module
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        found.update(n for n in names if n.startswith(package + "."))
    return found


def _engine_graph() -> dict[str, set[str]]:
    modules = {f"autograder.engine.{p.stem}" for p in ENGINE.glob("*.py") if p.stem != "__init__"}
    return {f"autograder.engine.{p.stem}": _imported(p, "autograder.engine") & modules - {f"autograder.engine.{p.stem}"}
            for p in ENGINE.glob("*.py") if p.stem != "__init__"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_cluster_makes_its_rows_with_the_shared_module():
    tree = _tree(CLUSTER)
    ignores = [c for c in _comments(CLUSTER) if "type: ignore" in c]
    assert not ignores, f"cluster.py silences the type checker: {ignores}"
    unbound = sorted({f"GradingRun.{n.attr}" for n in ast.walk(tree)
                      if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "GradingRun"})
    assert not unbound, f"cluster.py calls the local run's methods on itself: {unbound}"
    assert {"autograder.engine.rows", "autograder.engine.assembly"} <= _imported(CLUSTER, "autograder.engine")
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "_rows"}
    assert {"graders_row", "early_row"} <= used, used  # the early row: one rule for every driver (rows.early_row)
    assert not {"empty_row", "finish_row"} & used, "a row is begun and finished by the RowAssembly"
    assert "RowAssembly" in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert not [u for u in used if u.startswith("_")], used


def test_one_exercises_grading_does_not_see_the_run():
    imported = _imported(ENGINE / "exercise.py", "autograder.engine")
    assert not {m for m in imported if m.startswith("autograder.engine.run")}, imported
    assert "GradingRun" not in {n.id for n in ast.walk(_tree(ENGINE / "exercise.py")) if isinstance(n, ast.Name)}


def test_the_reference_bank_does_not_import_the_run():
    imported = _imported(ENGINE / "reference.py", "autograder.engine")
    assert not {m for m in imported if m.startswith("autograder.engine.run")}, imported


def test_no_import_cycle_among_the_engines_modules():
    graph = _engine_graph()
    assert graph["autograder.engine.run"] >= {"autograder.engine.exercise", "autograder.engine.rows"}  # it sees
    assert _cycle(graph) is None, f"an import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_grade_commands_run_is_short():
    tree = _tree(ROOT / "autograder" / "cli" / "grade.py")
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    lines = (run.end_lineno or run.lineno) - run.lineno + 1
    assert lines <= MAX_RUN_LINES, f"cli/grade.py:run is {lines} lines (the session's wiring belongs in engine/session.py)"


def test_no_engine_or_scaleout_module_is_over_400_lines():
    for folder in (ENGINE, CLUSTER.parent, ROOT / "autograder" / "cli"):
        for path in folder.glob("*.py"):
            n = len(path.read_text(encoding="utf-8").splitlines())
            assert n <= 400, f"{path.relative_to(ROOT)}: {n} lines"


def test_the_sessions_wiring_merges_a_resumed_row_and_tells_the_progress():
    """``session.grade_batch``: options reach the run, a resumed submission's earlier row is handed to the run
    (its ``RowAssembly`` merges it: tests/test_assembly.py), the progress begins after the note, hears of each
    task and row, and is closed."""
    from autograder.engine import resume as _resume
    from autograder.engine import session as _session

    calls: list[tuple] = []
    made: dict = {}

    class Run:
        def __init__(self, **options):
            made.update(options)

        def measure_isolation(self):
            return {"level": "minimal"}

        def grade(self, paths, only, jobs, on_result, on_task, exercises_for, **extra):
            calls.append(("grade", tuple(paths), jobs, exercises_for, extra))
            on_task(0, "ex01")
            on_result({"submission": paths[0], "total": 3.0, "exercises": {"ex01": {"score": 1.0, "max_score": 2.0}}})

        def close(self):
            calls.append(("close",))

    class Progress:
        def begin(self):
            calls.append(("begin",))

        def update(self, res):
            calls.append(("update", res["total"] if "total" in res else None))

        def task_done(self, *args):
            calls.append(("task", args))

        def close(self):
            calls.append(("progress closed",))

    old = {"submission": "s", "seed": 3, "exercises": {"ex01": {"score": 0.0, "max_score": 2.0, "status": "ungraded"},
                                                       "ex02": {"score": 2.0, "max_score": 2.0}}}
    resumed = _resume.Plan(before=[], paths=["s"], exercises_for={"s": ["ex01"]}, partial={"s": old}, seed=3)
    added: list[dict] = []
    with _session.Interrupts() as interrupts:
        outcome = _session.grade_batch(Run, ["s"], ["ex01", "ex02"], interrupts=interrupts, add=added.append,
                                       progress=Progress(), resumed=resumed, jobs=2, on_note=lambda n: calls.append(
                                           ("note", n.split(";")[0] != "")), seed=3, lang="es")
    assert outcome == _session.Outcome()
    assert made == {"seed": 3, "lang": "es"}
    assert [r["total"] for r in added] == [3.0]
    assert calls == [("note", True), ("begin",), ("grade", ("s",), 2, {"s": ["ex01"]}, {"resumed": {"s": old}}),
                     ("task", (0, "ex01")), ("update", 3.0), ("progress closed",), ("close",)]
