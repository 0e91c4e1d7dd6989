"""``tapetrace regrade``: grade again only what a change can have moved, and say what moved and why.

Each exercise of every result carries a fingerprint of what decides its verdicts
(autograder/core/verdict_fp.py). :func:`plan` compares an earlier run's fingerprints with this install's,
on this run's device, with the earlier seed: a (submission, exercise) pair is graded again when a part
moved (its suite, public checks, probes, reference, tolerances, engine, datasets, device), when it has no
fingerprint, when the grader could not grade it (``grader_error``/``ungraded``), or with ``--all``.
The new rows are merged into the earlier ones (autograder/engine/resume.py's ``merge``) and :func:`diff` lists,
per submission and exercise whose score or any check's verdict moved, the old and new score, the
checks that changed verdict, and why (the parts that moved). :func:`diff_csv` and :func:`diff_markdown`
write it for people; the JSON form feeds ``tapetrace report --regrade DIFF.json``.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from autograder.core import status as _status
from autograder.core import verdict_fp as _verdict_fp
from autograder.engine.resume import same_place


class RegradeRefused(Exception):
    """The earlier results cannot be regraded as asked (mixed seeds, an unknown submission)."""


@dataclass
class Plan:
    """What a regrade grades.

    Attributes:
        seed: the earlier run's seed (every pair is graded with it).
        exercises: the exercises of the earlier rows, in their order.
        paths: the submissions with something to grade again, in the earlier order.
        exercises_for: per such path, the exercises to grade again.
        reasons: per (path, exercise), why (``["suite changed"]``...).
        old: per path, the earlier row.
    """

    seed: int | None
    exercises: list[str]
    paths: list[str] = field(default_factory=list)
    exercises_for: dict[str, list[str]] = field(default_factory=dict)
    reasons: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    old: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def pairs(self) -> int:
        """How many (submission, exercise) pairs are graded again."""
        return sum(len(v) for v in self.exercises_for.values())


def _seed(rows: list[dict[str, Any]]) -> int | None:
    seeds = sorted({int(r["seed"]) for r in rows if r.get("seed") is not None})
    if len(seeds) > 1:
        raise RegradeRefused(f"the file mixes seeds ({', '.join(map(str, seeds))}); regrade each run's file alone")
    return seeds[0] if seeds else None


def plan(old_rows: list[dict[str, Any]], submissions: list[str] | None, device: dict[str, Any],
         public_only: bool = False, everything: bool = False, fingerprint: Any = None) -> Plan:
    """Decides which (submission, exercise) pairs to grade again.

    Args:
        old_rows: the earlier run's rows.
        submissions: the submissions to consider (their rows must be in ``old_rows``); None: every row's.
        device: this run's devices (``{"torch": ..., "jax": ...}``).
        public_only: whether this run grades the public checks only.
        everything: ``--all``: every pair, whatever its fingerprint.
        fingerprint: ``(exercise, device, seed, public_only) -> fingerprint`` (default
            :func:`autograder.core.verdict_fp.make`; tests pass another).

    Raises:
        RegradeRefused: mixed seeds, or a submission the earlier results do not hold.
    """
    make = fingerprint or _verdict_fp.make
    seed = _seed(old_rows)
    exercises = list(dict.fromkeys(ex for r in old_rows for ex in r.get("exercises", {})))
    by_place = {same_place(str(r["submission"])): r for r in old_rows}
    if submissions is None:
        chosen = [str(r["submission"]) for r in old_rows]
    else:
        chosen = []
        for p in dict.fromkeys(submissions):
            if same_place(p) not in by_place:
                raise RegradeRefused(f"{p} is not in the earlier results (grade it with tapetrace grade)")
            chosen.append(p)
    now = {ex: make(ex, device, seed, public_only) for ex in exercises}
    out = Plan(seed=seed, exercises=exercises)
    for p in chosen:
        old = by_place[same_place(p)]
        out.old[p] = old
        again = []
        for ex, e in old.get("exercises", {}).items():
            why = _verdict_fp.changed(e.get("fingerprint"), now[ex])
            if _status.is_graders(str(e.get("status"))):
                why = [*why, f"{e.get('status')} before"]
            if everything and not why:
                why = ["--all"]
            if why:
                again.append(ex)
                out.reasons[(p, ex)] = why
        if again:
            out.paths.append(p)
            out.exercises_for[p] = again
    return out


def _verdicts(e: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {str(t.get("name")): t for t in (e or {}).get("tests") or []}


def diff(the_plan: Plan, new_rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What moved: per (submission, exercise) graded again whose score, status or any verdict changed.

    Args:
        the_plan: the :class:`Plan` that was graded.
        new_rows: per path, the merged new row.

    Returns:
        ``{"tapetrace_regrade": 1, "seed", "regraded": pairs, "moved": [{"submission", "exercise",
        "old_score", "new_score", "max_score", "old_status", "new_status", "reasons", "checks":
        [{"name", "old", "new", "old_code", "new_code", "message"}]}], "unchanged": pairs - moved}``.
    """
    moved = []
    for p, exs in the_plan.exercises_for.items():
        old_row, new_row = the_plan.old[p], new_rows.get(p)
        if new_row is None:
            continue
        for ex in exs:
            o, n = old_row["exercises"].get(ex) or {}, new_row["exercises"].get(ex) or {}
            ov, nv = _verdicts(o), _verdicts(n)
            checks = []
            for name in dict.fromkeys([*ov, *nv]):
                a, b = ov.get(name, {}), nv.get(name, {})
                if bool(a.get("passed")) != bool(b.get("passed")) or (name in ov) != (name in nv):
                    checks.append({"name": name, "old": _word(a, name in ov), "new": _word(b, name in nv),
                                   "old_code": a.get("code", ""), "new_code": b.get("code", ""),
                                   "message": str(b.get("message") or a.get("message") or "")})
            os_, ns = float(o.get("score") or 0.0), float(n.get("score") or 0.0)
            if checks or abs(os_ - ns) > 1e-9 or o.get("status") != n.get("status"):
                moved.append({"submission": str(old_row["submission"]), "exercise": ex, "old_score": os_,
                              "new_score": ns, "max_score": float(n.get("max_score") or o.get("max_score") or 0.0),
                              "old_status": o.get("status"), "new_status": n.get("status"),
                              "reasons": the_plan.reasons.get((p, ex), []), "checks": checks})
    return {"tapetrace_regrade": 1, "seed": the_plan.seed, "regraded": the_plan.pairs, "moved": moved,
            "unchanged": the_plan.pairs - len(moved)}


def _word(t: dict[str, Any], present: bool) -> str:
    if not present:
        return "absent"
    return "passed" if t.get("passed") else "failed"


def _checks_words(m: dict[str, Any]) -> str:
    return "; ".join(f"{c['name']}: {c['old']} -> {c['new']}" + (f" ({c['new_code']})" if c["new_code"] else "")
                     for c in m["checks"])


def diff_csv(d: dict[str, Any]) -> str:
    """One row per (submission, exercise) that moved."""
    from autograder.core.text import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", "exercise", "old_score", "new_score", "delta", "max_score", "old_status", "new_status",
                "why", "checks_changed"])
    for m in d["moved"]:
        w.writerow([csv_cell(v) for v in (m["submission"], m["exercise"], f"{m['old_score']:g}", f"{m['new_score']:g}",
                                          f"{m['new_score'] - m['old_score']:+g}", f"{m['max_score']:g}",
                                          m["old_status"], m["new_status"], "; ".join(m["reasons"]),
                                          _checks_words(m))])
    return buf.getvalue()


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def diff_markdown(d: dict[str, Any]) -> str:
    """The diff as a Markdown table, with one line on how many pairs were graded again."""
    lines = [f"# Regrade (seed {d['seed']})", "",
             f"{d['regraded']} (submission, exercise) pair(s) graded again; {len(d['moved'])} moved, "
             f"{d['unchanged']} unchanged.", ""]
    if d["moved"]:
        lines += ["| submission | exercise | old → new | why | checks that changed verdict |",
                  "|---|---|---|---|---|"]
        for m in d["moved"]:
            lines.append(f"| {_md(m['submission'])} | {m['exercise']} | {m['old_score']:g} → {m['new_score']:g} "
                         f"/ {m['max_score']:g} | {_md('; '.join(m['reasons']))} | {_md(_checks_words(m))} |")
    return "\n".join(lines) + "\n"


def render_html(d: dict[str, Any]) -> str:
    """The report's "Regrade" section."""
    import html

    def esc(v: Any) -> str:
        return html.escape(str(v))

    out = [f"<section id=\"regrade\"><h2>Regrade</h2><p class=\"meta\">{d['regraded']} (submission, exercise) "
           f"pair(s) graded again with seed {esc(d['seed'])}: {len(d['moved'])} moved, {d['unchanged']} unchanged."
           "</p>"]
    if d["moved"]:
        out.append("<table class=\"regrade\"><tr><th>submission</th><th>exercise</th><th class=n>old → new</th>"
                   "<th>why</th><th>checks that changed verdict</th></tr>")
        for m in d["moved"]:
            cls = " low" if m["new_score"] < m["old_score"] else ""
            out.append(f"<tr><td>{esc(m['submission'])}</td><td>{esc(m['exercise'])}</td>"
                       f"<td class=\"n{cls}\">{m['old_score']:g} → {m['new_score']:g}</td>"
                       f"<td>{esc('; '.join(m['reasons']))}</td><td>{esc(_checks_words(m))}</td></tr>")
        out.append("</table>")
    out.append("</section>")
    return "\n".join(out)
