"""The report's sections for after the grades: the receipt (last), a regrade's diff, the common mistakes.

``tapetrace report`` (autograder/cli/report.py) calls :func:`write` once: it writes ``receipt.json``,
``mistakes.csv`` (and ``regrade.csv`` when given a regrade diff) into the report folder and returns the
HTML of the sections, keyed by name (``receipt``, ``regrade``, ``mistakes``): where each goes on the page is
``SECTION_ORDER`` in autograder/reports/summary.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from autograder.core.records import ResultRow
from autograder.engine.regrade import Diff

CSS = """
section{margin:1.2rem 0} table.receipt{width:auto;margin:.4rem 0} table.receipt th{font-weight:600}
h3{margin:1rem 0 .3rem}
"""


def read_regrade(path: str) -> Diff:
    """A regrade diff (``tapetrace regrade``'s ``NEW.diff.json``).

    Raises:
        ValueError: the file is not one.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("tapetrace_regrade") != 1 or not isinstance(data.get("moved"), list):
        raise ValueError(f"{path} is not a regrade diff (tapetrace regrade's NEW.diff.json)")
    return cast(Diff, data)  # its marker and its list of moved pairs checked above


def write(results: Sequence[ResultRow], out: Path, regrade: Diff | None = None,
          overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """Writes the sections' files into ``out``; returns ``{"receipt": html, "regrade": html, "mistakes": html,
    "css": css}`` (``regrade`` empty without a diff).

    ``results`` are the autograder's rows; ``overrides`` the manual overrides' audit
    (:func:`autograder.reports.overrides.audit`), listed in the receipt and written to ``overrides.csv``.
    """
    from autograder.reports import mistakes as _mistakes
    from autograder.reports import receipt as _receipt
    from autograder.reports import regrade_render as _regrade_render
    from autograder.reports.report import atomic_write

    tapetrace = [r for r in results if r.get("source", "tapetrace") == "tapetrace"]
    rec = _receipt.receipt(results, overrides=overrides)
    _receipt.write(rec, out / "receipt.json")
    if overrides is not None:
        from autograder.reports.overrides import audit_csv

        atomic_write(out / "overrides.csv", audit_csv(overrides))
    regrade_html = ""
    if regrade is not None:
        atomic_write(out / "regrade.csv", _regrade_render.diff_csv(regrade))
        regrade_html = _regrade_render.render_html(regrade)
    mistakes = _mistakes.common_mistakes(tapetrace)
    atomic_write(out / "mistakes.csv", _mistakes.to_csv(mistakes))
    return {"receipt": _receipt.render_html(rec), "regrade": regrade_html, "mistakes": _mistakes.render_html(mistakes),
            "css": CSS}
