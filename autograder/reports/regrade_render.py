"""A regrade's diff for people: ``NEW.diff.csv``, ``NEW.diff.md``, the report's "Regrade" section and the lines
``tapetrace regrade`` prints.

The diff itself is the engine's data (:class:`autograder.engine.regrade.Diff`, also as read back from
``NEW.diff.json`` by ``tapetrace report --regrade``). Student text goes through autograder/core/text.py
(:func:`autograder.core.text.csv_cell`, :func:`autograder.core.text.markdown`,
:func:`autograder.core.text.html_text`); numbers stay numbers a spreadsheet reads.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from autograder.core.text import csv_cell, markdown
from autograder.core.text import html_text as esc
from autograder.engine.regrade import Diff, Moved


def summary_words(d: Diff) -> str:
    """``"0 moved, 8 unchanged (8 not graded again: nothing that decides them changed)"``.

    A diff written before ``kept`` was recorded reads as before (``unchanged`` of the pairs graded again).
    """
    kept = int(d.get("kept") or 0)
    tail = f" ({kept} not graded again: nothing that decides them changed)" if kept else ""
    return f"{len(d['moved'])} moved, {d['unchanged']} unchanged{tail}"


def changed_words(d: Diff) -> list[str]:
    """One line per check whose definition, points or tolerance changed: ``"ex09: check: points 1 → 2"``."""
    return [f"{ex}: {c['name']}: {c['what']}" for ex, items in (d.get("checks_changed") or {}).items() for c in items]


def _checks_words(m: Moved) -> str:
    return "; ".join(f"{c['name']}: {c['old']} -> {c['new']}" + (f" ({c['new_code']})" if c["new_code"] else "")
                     for c in m["checks"])


def _score(score: float, maximum: float) -> str:
    return f"{score:g}/{maximum:g}"


def _old_max(m: Moved) -> float:
    """The old maximum (a diff written before it was recorded: the new one)."""
    return float(m.get("old_max_score", m["max_score"]))


def _num(x: float) -> int | float:
    """A number as a spreadsheet reads it: 2 (not 2.0), 0.5, -1."""
    x = round(float(x), 6)
    return int(x) if x.is_integer() else x


def _md(text: Any) -> str:
    """The grader's own words (check names, catalogue keys) in a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def diff_csv(d: Diff) -> str:
    """One row per (submission, exercise) that moved: scores, maxima and the delta as numbers a spreadsheet
    reads; the student's text through :func:`autograder.core.text.csv_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", "exercise", "old_score", "new_score", "delta", "max_score", "old_max_score",
                "old_status", "new_status", "why", "checks_changed"])
    for m in d["moved"]:
        w.writerow([csv_cell(m["submission"]), csv_cell(m["exercise"]), _num(m["old_score"]), _num(m["new_score"]),
                    _num(m["new_score"] - m["old_score"]), _num(m["max_score"]), _num(_old_max(m)),
                    csv_cell(m["old_status"]), csv_cell(m["new_status"]), csv_cell("; ".join(m["reasons"])),
                    csv_cell(_checks_words(m))])
    return buf.getvalue()


def diff_markdown(d: Diff) -> str:
    """The diff in Markdown: the checks that changed, then every student whose score or maximum moved (the
    submission's name through :func:`autograder.core.text.markdown`)."""
    lines = [f"# Regrade (seed {d['seed']})", "",
             f"{d['regraded']} (submission, exercise) pair(s) graded again; {summary_words(d)}.", ""]
    named = changed_words(d)
    if named:
        lines += ["## Checks whose definition, points or tolerance changed", "", *[f"- {_md(w)}" for w in named], ""]
    if d["moved"]:
        lines += ["## Scores or maxima that moved", "",
                  "| submission | exercise | old → new | why | checks that changed verdict |",
                  "|---|---|---|---|---|"]
        for m in d["moved"]:
            lines.append(f"| {markdown(m['submission'])} | {_md(m['exercise'])} | "
                         f"{_score(m['old_score'], _old_max(m))} → {_score(m['new_score'], m['max_score'])} | "
                         f"{_md('; '.join(m['reasons']))} | {_md(_checks_words(m))} |")
    return "\n".join(lines) + "\n"


def render_html(d: Diff) -> str:
    """The report's "Regrade" section."""
    out = [f"<section id=\"regrade\"><h2>Regrade</h2><p class=\"meta\">{d['regraded']} (submission, exercise) "
           f"pair(s) graded again with seed {esc(d['seed'])}: {esc(summary_words(d))}."
           "</p>"]
    named = changed_words(d)
    if named:
        out.append("<p>Checks whose definition, points or tolerance changed:</p><ul>"
                   + "".join(f"<li>{esc(w)}</li>" for w in named) + "</ul>")
    if d["moved"]:
        out.append("<table class=\"regrade\"><tr><th>submission</th><th>exercise</th><th class=n>old → new</th>"
                   "<th>why</th><th>checks that changed verdict</th></tr>")
        for m in d["moved"]:
            cls = " low" if m["new_score"] < m["old_score"] else ""
            out.append(f"<tr><td>{esc(m['submission'])}</td><td>{esc(m['exercise'])}</td>"
                       f"<td class=\"n{cls}\">{_score(m['old_score'], _old_max(m))} → "
                       f"{_score(m['new_score'], m['max_score'])}</td>"
                       f"<td>{esc('; '.join(m['reasons']))}</td><td>{esc(_checks_words(m))}</td></tr>")
        out.append("</table>")
    out.append("</section>")
    return "\n".join(out)
