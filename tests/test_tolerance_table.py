"""The tolerance table of docs/devices-and-tolerances.md is the one ``autograder/core/tolerances.py`` holds: every
kind, every backend, atol / rtol as written there (a tolerance changed in one place and not the other fails)."""

from __future__ import annotations

import re

from autograder.core.paths import ROOT
from autograder.core.tolerances import TOLERANCES, Tol

PAGE = ROOT / "docs" / "devices-and-tolerances.md"
# the page's columns after "what it compares": cpu, then cuda (torch) and gpu (JAX) in one column, then tpu
COLUMNS = (("cpu",), ("cuda", "gpu"), ("tpu",))
ROW = re.compile(r"^\| `(\w+)` \|[^|]*\|(.*)\|\s*$", re.M)


def documented(text: str) -> dict[str, dict[str, Tol]]:
    """``kind -> backend -> Tol`` from the page's table (its ``## Tolerances`` section)."""
    section = text.split("## Tolerances", 1)[1].split("\n## ", 1)[0]
    out: dict[str, dict[str, Tol]] = {}
    for kind, cells in ROW.findall(section):
        values = [c.strip() for c in cells.split("|")]
        assert len(values) == len(COLUMNS), f"{kind}: {values}"
        out[kind] = {}
        for backends, cell in zip(COLUMNS, values, strict=True):
            atol, rtol = (float(v) for v in cell.split("/"))
            out[kind].update({b: Tol(atol, rtol) for b in backends})
    return out


def test_the_page_shows_the_table_the_code_holds():
    assert documented(PAGE.read_text(encoding="utf-8")) == TOLERANCES, (
        "docs/devices-and-tolerances.md's table differs from autograder/core/tolerances.py: change both "
        "(docs/architecture.md, 'Where to change what': a tolerance)")


def test_a_changed_cell_is_seen():
    text = PAGE.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `forward` |"))
    changed = text.replace(row, row.replace("1e-5 / 1e-4", "2e-5 / 1e-4", 1))
    assert changed != text and documented(changed) != TOLERANCES
