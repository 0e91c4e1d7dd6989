"""The class's common mistakes: failed checks grouped by catalogue key, and the named mistakes they match.

Per exercise, two views of the rows that were graded:

- **by message**: each (check, catalogue key) that failed (the test's ``code``), how many submissions,
  one example submission and its message, and the catalogued mutants whose headers say that check
  fails with that key (``# CODE check: KEY``; when none does, those whose ``# FAILS:`` names the check
  without a CODE line for it);
- **by mistake**: submissions whose failed checks are exactly a mutant's ``# FAILS:`` set (and whose keys
  agree with its ``# CODE`` lines): "31 submissions: ReLU after every layer, the last one too".

Not attempted checks (``NOT_ATTEMPTED``) and rows not graded are left out: they are not mistakes in code.
The mutants' headers come from the shipped catalogue (autograder/reports/mutants.py's ``shipped``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from autograder.core.records import ExerciseRow, ResultRow
from autograder.core.text import clean, csv_cell, html_text

SKIP_CODES = {"NOT_ATTEMPTED"}


def _failed(e: ExerciseRow) -> dict[str, str]:
    """check name -> code of the failed tests of a graded exercise row (not attempted ones left out)."""
    return {str(t.get("name")): str(t.get("code") or "") for t in e.get("tests") or []
            if not t.get("passed") and str(t.get("code") or "") not in SKIP_CODES}


def match_mutants(failed: dict[str, str], mutants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The mutants whose ``# FAILS:`` set is exactly ``failed``'s checks and whose ``# CODE`` keys agree.

    Several mutants can fail alike (a ReLU and a sigmoid after the last layer both give non-negative
    outputs): all are named, since the failures cannot tell them apart.
    """
    names = set(failed)
    return [m for m in mutants if set(m.get("fails") or []) == names
            and all(failed.get(c) == k for c, k in (m.get("codes") or {}).items())]


def _mutants_for(check: str, code: str, mutants: list[dict[str, Any]]) -> list[str]:
    """The mutants whose headers say ``check`` fails with ``code`` (``# CODE check: KEY``); when none says so,
    those that fail ``check`` (``# FAILS:``) without naming its key."""
    exact = [m["name"] for m in mutants if (m.get("codes") or {}).get(check) == code]
    return exact or [m["name"] for m in mutants if check in (m.get("fails") or []) and check not in (m.get("codes") or {})]


def common_mistakes(results: Sequence[ResultRow],
                    catalogue: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, dict[str, Any]]:
    """Per exercise: ``{"by_message": [...], "by_mistake": [...]}``, commonest first.

    Args:
        results: the rows.
        catalogue: per exercise, the mutants' headers (default: the shipped catalogue).

    Returns:
        ``by_message`` items: ``{"check", "code", "count", "example", "message", "mutants": [names]}``;
        ``by_mistake`` items: ``{"mutant", "why", "count", "example"}`` (mutants failing alike: their names
        joined by `` | ``, their descriptions by `` — or — ``).
    """
    if catalogue is None:
        from autograder.reports.mutants import shipped

        catalogue = shipped()
    by_msg: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    by_mut: dict[str, dict[str, dict[str, Any]]] = {}
    for r in sorted(results, key=lambda r: str(r.get("submission"))):
        for ex, e in (r.get("exercises") or {}).items():
            if not isinstance(e, dict) or e.get("status", "graded") != "graded":
                continue
            failed = _failed(e)
            if not failed:
                continue
            mutants = catalogue.get(ex, [])
            msgs = {str(t.get("name")): str(t.get("message") or "") for t in e.get("tests") or []}
            for check, code in failed.items():
                item = by_msg.setdefault(ex, {}).setdefault((check, code), {
                    "check": check, "code": code, "count": 0, "example": str(r.get("submission")),
                    "message": clean(msgs.get(check, ""), 400),
                    "mutants": _mutants_for(check, code, mutants)})
                item["count"] += 1
            found = match_mutants(failed, mutants)
            if found:
                key = " | ".join(m["name"] for m in found)
                item = by_mut.setdefault(ex, {}).setdefault(key, {
                    "mutant": key, "why": " — or — ".join(m.get("why", "") for m in found), "count": 0,
                    "example": str(r.get("submission"))})
                item["count"] += 1
    out = {}
    for ex in sorted(set(by_msg) | set(by_mut)):
        out[ex] = {"by_message": sorted(by_msg.get(ex, {}).values(), key=lambda i: (-i["count"], i["check"], i["code"])),
                   "by_mistake": sorted(by_mut.get(ex, {}).values(), key=lambda i: (-i["count"], i["mutant"]))}
    return out


def to_csv(mistakes: dict[str, dict[str, Any]]) -> str:
    """One row per (exercise, check, key) and per (exercise, mistake): ``kind`` says which."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["exercise", "kind", "check", "code", "mutant", "count", "example_submission", "message_or_mistake"])
    for ex, d in mistakes.items():
        for i in d["by_message"]:
            w.writerow([csv_cell(v) for v in (ex, "message", i["check"], i["code"], " ".join(i["mutants"]),
                                              i["count"], i["example"], i["message"])])
        for i in d["by_mistake"]:
            w.writerow([csv_cell(v) for v in (ex, "mistake", "", "", i["mutant"], i["count"], i["example"], i["why"])])
    return buf.getvalue()


def render_html(mistakes: dict[str, dict[str, Any]], top: int = 8) -> str:
    """The report's "Common mistakes" section: per exercise, the named mistakes, then the failures by key."""
    def esc(v: Any) -> str:  # a submission's name, a message quoting its code: text, never markup
        return html_text(v)

    out = ["<section id=\"mistakes\"><h2>Common mistakes</h2><p class=\"meta\">Failed checks grouped by the "
           "message's catalogue key, and the catalogued mistakes (tests/mutants) whose failures a submission's "
           "match exactly; not-attempted checks left out. Full list: mistakes.csv.</p>"]
    if not mistakes:
        out.append("<p>No failed check in the graded rows.</p>")
    for ex, d in mistakes.items():
        out.append(f"<h3>{esc(ex)}</h3>")
        if d["by_mistake"]:
            out.append("<table class=\"mistakes\"><tr><th>mistake</th><th class=n>submissions</th>"
                       "<th>example</th></tr>")
            for i in d["by_mistake"][:top]:
                out.append(f"<tr><td>{esc(i['why'])} <code>{esc(i['mutant'])}</code></td>"
                           f"<td class=n>{i['count']}</td><td>{esc(i['example'])}</td></tr>")
            out.append("</table>")
        out.append("<table class=\"mistakes msgs stack\"><tr><th>check</th><th>key</th><th class=n>submissions</th>"
                   "<th>matching mutants</th><th>example</th><th>its message</th></tr>")
        for i in d["by_message"][:top]:
            out.append(f"<tr><td><code>{esc(i['check'])}</code></td><td><code>{esc(i['code'])}</code></td>"
                       f"<td class=n>{i['count']}</td><td>{esc(', '.join(i['mutants']) or '–')}</td>"
                       f"<td>{esc(i['example'])}</td><td class=\"msg\">{esc(i['message'])}</td></tr>")  # whole: it wraps
        out.append("</table>")
    out.append("</section>")
    return "\n".join(out)
