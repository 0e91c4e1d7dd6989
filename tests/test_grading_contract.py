"""docs/grading-contract.md is the code's own contract: its row tables are the row types
(``autograder/core/records.py``) field for field (required or not), its statuses, exit codes and isolation levels
are the code's, and the code cites the page, never a contract file the repository lacks."""

from __future__ import annotations

import re
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
