"""The catalogue of mutants (realistic mistakes, ``tests/mutants/<exercise>/*.py``) and their kill rates.

Each mutant file starts with header lines: ``# MUTANT: what the mistake is``, ``# FAILS: check, check``
(the checks it must fail, proved by tests/test_outcomes.py, which also proves it loses points) and
optional ``# CODE check: KEY`` (the message catalogue key that check reports). :func:`catalogue` reads
them; :func:`kill_rates` turns them into the shipped data file ``autograder/hidden/mutant_kill_rates.json``
(``scripts/mutant_kill_rates.py`` writes it, tests/test_after_receipt.py checks it for drift). The file
also carries each mutant's headers, so the report's common mistakes (autograder/reports/mistakes.py) can name
the mistake a student's failures match where the tests folder is not installed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from autograder.core.paths import ROOT

MUTANTS_DIR = ROOT / "tests" / "mutants"


def read_headers(path: Path) -> dict[str, Any] | None:
    """``{"name", "why", "fails": [...], "codes": {...}}`` of a mutant file; None for a ``# VALID:`` one."""
    meta: dict[str, Any] = {"name": path.stem, "why": "", "fails": [], "codes": {}}
    for line in path.read_text(encoding="utf-8").splitlines()[:15]:
        if m := re.match(r"#\s*MUTANT:\s*(.+)", line):
            meta["why"] = m.group(1).strip()
        elif m := re.match(r"#\s*FAILS:\s*(.+)", line):
            meta["fails"] = sorted({s.strip() for s in m.group(1).split(",") if s.strip()})
        elif m := re.match(r"#\s*CODE\s+(\w+):\s*(\w+)", line):
            meta["codes"][m.group(1)] = m.group(2)
    return meta if meta["why"] else None


def catalogue(folder: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every exercise's mutants, by file name order."""
    top = folder or MUTANTS_DIR
    out: dict[str, list[dict[str, Any]]] = {}
    for sub in sorted(p for p in top.glob("ex*") if p.is_dir()):
        metas = [m for f in sorted(sub.glob("*.py")) if (m := read_headers(f)) is not None]
        if metas:
            out[sub.name] = metas
    return out


def kill_rates(cat: dict[str, list[dict[str, Any]]], killed: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """The data file's content: per exercise, mutants, killed, rate, survivors and the catalogue.

    Args:
        cat: :func:`catalogue`.
        killed: per exercise, the mutants that lost points when graded; None: from the headers (a mutant
            with a ``# FAILS:`` line loses points: tests/test_outcomes.py proves it of every one).
    """
    exs = {}
    for ex, metas in sorted(cat.items()):
        dead = {m["name"] for m in metas if m["fails"]} if killed is None else set(killed.get(ex, set()))
        n = len(metas)
        exs[ex] = {"mutants": n, "killed": len(dead), "rate": round(len(dead) / n, 4) if n else None,
                   "survivors": sorted(m["name"] for m in metas if m["name"] not in dead),
                   "catalogue": metas}
    return {"method": "headers" if killed is None else "graded",
            "about": "share of each exercise's catalogued mutants (tests/mutants) that lose points; "
                     "written by scripts/mutant_kill_rates.py", "exercises": exs}


def dumps(data: dict[str, Any]) -> str:
    """The data file's text (stable, so drift shows in a diff)."""
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def shipped(path: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """The shipped catalogue (per exercise, the mutants' headers); ``{}`` when the file is absent."""
    from autograder.reports.receipt import KILL_RATES

    try:
        data = json.loads((path or KILL_RATES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {ex: list(v.get("catalogue") or []) for ex, v in (data.get("exercises") or {}).items()}
