"""docs/grading-contract.md is the code's own contract: its row tables are the row types
(``autograder/core/records.py``) field for field (required or not), its statuses, exit codes and isolation levels
are the code's, and the code cites the page, never a contract file the repository lacks; the code that holds rows
says so (``ResultRow``..., never a plain ``dict[str, Any]``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_type_hints

import pytest

from autograder.core import records, status
from autograder.core.paths import ROOT
from autograder.sandbox.isolate import LEVELS

PAGE = ROOT / "docs" / "grading-contract.md"
TYPES = [records.ResultRow, records.ExerciseRow, records.TestRow, records.IsolationRecord]


def sections(text: str) -> dict[str, str]:
    """Heading text -> the text under it (to the next heading of any level)."""
    parts = re.split(r"^#{2,4} (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def table(text: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table in ``text``, header and rule left out."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def section_of(name: str) -> str:
    found = [body for head, body in sections(PAGE.read_text(encoding="utf-8")).items() if f"(`{name}`)" in head]
    assert len(found) == 1, f"docs/grading-contract.md: one section's heading must name `{name}`"
    return found[0]


@pytest.mark.parametrize("kind", TYPES, ids=lambda t: t.__name__)
def test_every_field_of_a_row_type_is_in_its_table_and_back(kind):
    rows = table(section_of(kind.__name__))
    documented = {r[0].strip("`"): r[2] for r in rows}
    fields = set(get_type_hints(kind))
    assert set(documented) == fields, (f"{kind.__name__}: in the type only {sorted(fields - set(documented))}, "
                                       f"in the page only {sorted(set(documented) - fields)}")
    required = {f for f, mark in documented.items() if mark == "yes"}
    assert required == set(kind.__required_keys__), kind.__name__
    assert all(r[3] for r in rows), f"{kind.__name__}: every field says what it means"


def test_the_statuses_exit_codes_and_levels_are_the_codes():
    page = sections(PAGE.read_text(encoding="utf-8"))
    statuses = {r[0].strip("`"): r[1] for r in table(page["Statuses"])}
    assert list(statuses) == list(status.STATUSES)
    assert {s for s, whose in statuses.items() if whose == "grader"} == set(status.GRADER_STATUSES)
    codes = [r[0].strip("`") for r in table(page["Exit codes"])]
    assert codes == ["0", "2", str(status.EXIT_NOT_ALL_GRADED)]
    assert [r[0].strip("`") for r in table(page["Isolation levels"])] == list(LEVELS)
    assert "Notebook semantics (\"Run all\")" in page


def test_the_code_cites_the_page_not_a_missing_contract_file():
    cited = []
    for path in (ROOT / "autograder").rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "GRADING.md" in line:
                cited.append(f"{path.relative_to(ROOT)}:{n}")
    assert not (ROOT / "GRADING.md").exists()
    assert not cited, f"cite docs/grading-contract.md (the repository's own page) instead: {cited}"


# Names that hold a submission's row (or a list or map of them) wherever they appear in autograder/: a parameter,
# a variable or field annotated with one of them, and the return of a function that reads rows from a file.
ROW_NAMES = frozenset({"results", "rows", "row", "old_rows", "new_rows", "res", "result"})
ROW_READERS = frozenset({"read_json", "read_inputs", "load_rows", "read_results", "load_results"})
PLAIN = "dict[str, Any]"
# Where such a name holds something else, on purpose (file -> names):
NOT_ROWS = {
    # a separate process's answer per job (tests, device, note), not rows; and it ships in the notebook's
    # runtime, which imports nothing of core/records.py (autograder/builders/runtime.py)
    "autograder/builders/public_devices.py": {"results"},
    # the engine's row OR its refusal ({"error", "message", ...}) read back from JSON in otter's own process;
    # the module's top level imports the standard library only (it is loaded by path there)
    "autograder/builders/otter.py": {"res"},
}


def _probes(rel: str) -> bool:
    # exercises/*/probes.py: ``res``/``result`` are what a probe measured of the code under test, never rows
    return rel.startswith("autograder/exercises/") and rel.endswith("/probes.py")


def plain_row_annotations(root: Path) -> list[str]:
    """``file:line name: annotation`` for every row-holding name of ``root/autograder`` annotated as a plain dict."""
    found = []
    for path in sorted((root / "autograder").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if _probes(rel):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named: list[tuple[str, ast.expr | None]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                named += [(x.arg, x.annotation) for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                          if x is not None and x.arg in ROW_NAMES]
                if node.name in ROW_READERS:
                    named.append((f"{node.name}()", node.returns))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in ROW_NAMES:
                named.append((node.target.id, node.annotation))
            for name, ann in named:
                if ann is None or name in NOT_ROWS.get(rel, ()):
                    continue
                text = ast.unparse(ann)
                if PLAIN in text:
                    found.append(f"{rel}:{ann.lineno} {name}: {text}")
    return found


def test_code_that_holds_rows_names_their_type():
    found = plain_row_annotations(ROOT)
    assert not found, ("annotate a row as autograder.core.records' ResultRow / ReportRow / ExerciseRow / TestRow "
                       "(docs/grading-contract.md, \"Row schema\"), not a plain dict[str, Any]:\n" + "\n".join(found))


def test_the_row_annotation_guard_sees_what_it_must(tmp_path):
    pkg = tmp_path / "autograder" / "reports"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text("from typing import Any\n"
                              "def table(results: list[dict[str, Any]], row: 'dict[str, Any] | None') -> None: ...\n"
                              "def read_json(path: str) -> list[dict[str, Any]]: ...\n"
                              "def ok(results: list[ResultRow], meta: dict[str, Any]) -> dict[str, Any]: ...\n"
                              "class W:\n    rows: list[dict[str, Any]]\n", encoding="utf-8")
    probes = tmp_path / "autograder" / "exercises" / "ex01_x"
    probes.mkdir(parents=True)
    (probes / "probes.py").write_text("def p() -> None:\n    res: dict[str, Any] = {}\n", encoding="utf-8")
    found = plain_row_annotations(tmp_path)
    assert [f.split(" ")[0] + " " + f.split(" ")[1] for f in found] == [
        "autograder/reports/x.py:2 results:", "autograder/reports/x.py:2 row:", "autograder/reports/x.py:3 read_json():",
        "autograder/reports/x.py:6 rows:"]
