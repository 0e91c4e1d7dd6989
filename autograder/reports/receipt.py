"""A run's receipt: one place that says what a batch of results is made of, and whether to trust it.

How many exercise rows are graded, timed out, crashed, were refused, are the grader's trouble; the
isolation levels, envelopes, devices, launchers and seeds the rows were graded under; the suite
fingerprints (autograder/core/verdict_fp.py) seen per exercise; each exercise's mutant kill rate (the share
of its catalogued mutants that lose points, shipped with the suite in
``autograder/hidden/mutant_kill_rates.json``, written by ``scripts/mutant_kill_rates.py``); and the
rows that look wrong (a row not graded that scores points, a score other than its tests' sum).

:func:`receipt` builds it from result rows; ``tapetrace grade --json OUT.json`` writes it beside the
results as ``OUT.receipt.json`` (the results file keeps docs/grading-contract.md's shape: one object or a list), and
``tapetrace report`` shows it at the top of its page and writes ``receipt.json``. ``tapetrace gradebook``
writes it beside its CSV with a ``late`` section: the late policy it applied, where the submission times came
from (and whether they are trustworthy), counts per state and the students not on time.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autograder.core.paths import ROOT
from autograder.core.records import ResultRow
from autograder.core.status import STATUSES
from autograder.core.text import html_text

KILL_RATES = ROOT / "autograder" / "hidden" / "mutant_kill_rates.json"
REFUSED_CODES = ("REFUSED_FILE",)


def kill_rates(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """Per exercise ``{"mutants": n, "killed": k, "rate": k / n}`` as shipped; ``{}`` when absent or unreadable."""
    try:
        data = json.loads((path or KILL_RATES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    exs = data.get("exercises") if isinstance(data, dict) else None
    if not isinstance(exs, dict):
        return {}
    return {ex: {k: v.get(k) for k in ("mutants", "killed", "rate")} for ex, v in exs.items() if isinstance(v, dict)}


def _envelope_words(env: Any) -> str:
    if not isinstance(env, dict):
        return "none recorded"
    mem = env.get("usable_memory")
    cpus = env.get("usable_cpus")
    plan = env.get("plan")
    plan = plan if isinstance(plan, dict) else {}
    kind = env.get("kind") or env.get("source") or ("container" if env.get("memory_bytes") or env.get("cpu_quota")
                                                    else "host")
    mem_s = f"{int(mem) / 2**30:.1f} GiB" if isinstance(mem, (int, float)) else "memory ?"
    return f"{kind}: {mem_s}, {cpus if cpus is not None else '?'} CPU(s), jobs {plan.get('jobs', '?')}"


def _isolation_words(iso: Any) -> str:
    if not isinstance(iso, dict) or not iso:
        return "none recorded"
    return str(iso.get("level", "minimal"))


def _anomalies(results: Sequence[ResultRow]) -> list[str]:
    """Rows that look wrong: a status other than graded with points, a score other than its tests' sum."""
    out = []
    for r in results:
        for ex, e in (r.get("exercises") or {}).items():
            if not isinstance(e, dict):
                continue
            score = float(e.get("score") or 0.0)
            if e.get("status", "graded") != "graded" and score > 0:
                out.append(f"{r.get('submission')} {ex}: status {e.get('status')} but scores {score:g}")
            tests = e.get("tests") or []
            if tests and abs(sum(float(t.get("score") or 0.0) for t in tests) - score) > 1e-6:
                out.append(f"{r.get('submission')} {ex}: score {score:g} is not its tests' sum")
            if any(t.get("passed") is False and float(t.get("score") or 0.0) > 0 for t in tests):
                out.append(f"{r.get('submission')} {ex}: a failed test scores points")
    return out


def receipt(results: Sequence[ResultRow], rates: dict[str, dict[str, Any]] | None = None,
            late: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The receipt of a batch of result rows (docs/grading-contract.md's rows).

    Args:
        results: the rows.
        rates: the mutant kill rates (default: the shipped file).
        late: the late policy a gradebook applied (``Book.late`` of autograder/reports/gradebook.py: the
            policy, where the times come from, counts per state, the students not on time), or None.
        overrides: the manual overrides applied (:func:`autograder.reports.overrides.audit`: the file, counts,
            one row per override with the autograder's score and the score after it, flags), or None.

    Returns:
        ``{"submissions", "rows", "statuses", "refused", "isolation", "envelopes", "devices", "launchers",
        "seeds", "suites", "mutant_kill_rates", "anomalies"}`` (and ``"late"`` when given): counts are of
        exercise rows, except ``isolation``/``envelopes``/``devices``/``launchers`` (of submissions) and
        ``late`` (of students); ``"overrides"`` when given. ``results`` are the autograder's rows (not
        overridden): the counts and anomalies are the autograder's, the overrides are listed beside them.
    """
    from autograder.core.verdict_fp import device_words

    statuses: Counter[str] = Counter({s: 0 for s in STATUSES})
    refused = 0
    suites: dict[str, Counter[str]] = {}
    for r in results:
        for ex, e in (r.get("exercises") or {}).items():
            if not isinstance(e, dict):
                continue
            statuses[str(e.get("status", "graded"))] += 1
            if any(t.get("code") in REFUSED_CODES for t in e.get("tests") or []):
                refused += 1
            fp = e.get("fingerprint")
            fp = fp if isinstance(fp, dict) else {}
            parts = fp.get("parts")
            suite = (parts or {}).get("suite") if isinstance(parts, dict) else None
            suites.setdefault(ex, Counter())[str(suite or "not recorded")] += 1
    rates = kill_rates() if rates is None else rates
    shown = sorted(suites) or sorted(rates)
    rec: dict[str, Any] = {
        "submissions": len(results),
        "rows": sum(statuses.values()),
        "statuses": dict(statuses),
        "refused": refused,
        "isolation": dict(Counter(_isolation_words(r.get("isolation")) for r in results)),
        "envelopes": dict(Counter(_envelope_words(r.get("envelope")) for r in results)),
        "devices": dict(Counter(device_words(r.get("device")) for r in results if r.get("device"))),
        "launchers": dict(Counter(str(r.get("launcher")) for r in results if r.get("launcher"))),
        "seeds": sorted({r["seed"] for r in results if r.get("seed") is not None}, key=str),
        "suites": {ex: dict(c) for ex, c in sorted(suites.items())},
        "mutant_kill_rates": {ex: rates[ex] for ex in shown if ex in rates},
        "anomalies": _anomalies(results),
    }
    if late is not None:
        rec["late"] = late
    if overrides is not None:
        rec["overrides"] = overrides
    return rec


def sidecar(json_path: str) -> str:
    """Where ``tapetrace grade --json OUT.json`` writes the receipt: ``OUT.receipt.json``."""
    p = Path(json_path)
    return str(p.with_name(p.stem + ".receipt.json" if p.suffix == ".json" else p.name + ".receipt.json"))


def write(rec: dict[str, Any], path: str | Path) -> None:
    """Writes a receipt as JSON (atomically)."""
    from autograder.reports.report import atomic_write

    atomic_write(path, json.dumps({"receipt": rec}, indent=2, sort_keys=False) + "\n")


def _counts(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in d.items()) or "none"


def render_html(rec: dict[str, Any]) -> str:
    """The receipt as an HTML section (the report's last one)."""
    esc = html_text

    st = rec["statuses"]
    trouble = st.get("grader_error", 0) + st.get("ungraded", 0)
    out = ["<section id=\"receipt\"><h2>Receipt</h2>",
           f"<p class=\"meta\">{rec['submissions']} submission(s), {rec['rows']} exercise row(s).</p>",
           "<table class=\"receipt\"><tr><th>rows</th>"
           + "".join(f"<th class=n>{esc(s)}</th>" for s in st) + "<th class=n>refused files</th></tr><tr><td>count</td>"]
    for s, n in st.items():
        cls = " low" if n and s != "graded" else ""
        out.append(f"<td class=\"n{cls}\">{n}</td>")
    out.append(f"<td class=\"n{' low' if rec['refused'] else ''}\">{rec['refused']}</td></tr></table>")
    if trouble:
        out.append(f"<p class=\"note\">{trouble} row(s) are the grader's trouble (grader_error, ungraded), not the "
                   "students': grade them again with <code>tapetrace grade ... --json OUT.json --resume</code>.</p>")
    for a in rec["anomalies"][:20]:
        out.append(f"<p class=\"note\">check this row: {esc(a)}</p>")
    facts = [("isolation", _counts(rec["isolation"])), ("envelopes", _counts(rec["envelopes"])),
             ("devices", _counts(rec["devices"])), ("launchers", _counts(rec["launchers"])),
             ("seeds", ", ".join(map(str, rec["seeds"])) or "none recorded")]
    out.append("<table class=\"receipt\">" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>"
                                                     for k, v in facts) + "</table>")
    out.append("<table class=\"receipt\"><tr><th>exercise</th><th>suite fingerprint (rows)</th>"
               "<th class=n>mutants killed</th><th class=n>kill rate</th></tr>")
    for ex in sorted(set(rec["suites"]) | set(rec["mutant_kill_rates"])):
        kr = rec["mutant_kill_rates"].get(ex) or {}
        rate = f"{100 * float(kr['rate']):.0f}%" if kr.get("rate") is not None else "–"
        killed = f"{kr.get('killed')}/{kr.get('mutants')}" if kr else "–"
        out.append(f"<tr><td>{esc(ex)}</td><td><code>{esc(_counts(rec['suites'].get(ex, {})))}</code></td>"
                   f"<td class=n>{esc(killed)}</td><td class=n>{esc(rate)}</td></tr>")
    out.append("</table>")
    if rec.get("late"):
        out.append(_late_html(rec["late"]))
    if rec.get("overrides"):
        out.append(_overrides_html(rec["overrides"]))
    out.append("</section>")
    return "\n".join(out)


def _late_html(late: dict[str, Any]) -> str:
    """The late policy the gradebook applied: the policy, the times' source, counts, the students not on time."""
    warn = "" if late.get("trusted", True) else " <strong>(not a trustworthy submission time)</strong>"
    out = ["<h3>Late policy</h3>", f"<p class=\"meta\">{html_text(late['policy'])}. Times: "
           f"{html_text(late['times'])}{warn}. Extensions applied: {int(late.get('extensions') or 0)}.</p>",
           "<table class=\"receipt\"><tr>" + "".join(f"<th class=n>{html_text(k)}</th>" for k in late["counts"])
           + "</tr><tr>" + "".join(f"<td class=n>{int(v)}</td>" for v in late["counts"].values()) + "</tr></table>"]
    rows = late.get("students") or []
    if rows:
        out.append("<table class=\"receipt\"><tr><th>student</th><th>late</th></tr>" + "".join(
            f"<tr><td>{html_text(s['student'])}</td><td>{html_text(s['words'])}</td></tr>" for s in rows[:200])
            + "</table>")
    return "\n".join(out)


def _overrides_html(aud: dict[str, Any]) -> str:
    """The manual overrides applied (autograder/reports/overrides.py): the audit section."""
    from autograder.reports.overrides import audit_html

    return audit_html(aud)
