"""The summary report (``tapetrace report``): grading results read by content (tapetrace JSON or otter's
``results.json``, Gradescope format), one PNG per plot, ``index.html`` embedding them, ``summary.csv`` and,
on request, one feedback file per submission.
"""

from __future__ import annotations

import html
import json
import os
import re
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from autograder.core.paths import EXERCISES
from autograder.core.records import ReportRow
from autograder.core.text import clean, csv_cell, html_name, html_text, terminal
from autograder.engine.regrade import Diff
from autograder.reports import report as _report
from autograder.reports.feedback import VIEWPORT

_SKIP_OTTER = {"public tests", "pdf generation failed", "autograder exception"}


class ReportError(Exception):
    """An input cannot be used (the message is one line)."""


# --------------------------------------------------------------------- otter
def _exercise_of(name: str) -> str | None:
    """The tapetrace exercise an otter test name refers to (``ex04_jax_mlp...``, ``ex04 ...``)."""
    low = name.lower()
    for ex in EXERCISES:
        if re.search(rf"(?<![a-z0-9]){ex}(?![a-z0-9])", low):
            return ex
    m = re.search(r"(?<![a-z0-9])(ex\d\d)(?!\d)", low)
    return next((ex for ex in EXERCISES if m and ex[:4] == m.group(1)), None)


def _suite_checks(exercise: str) -> list[tuple[str, float, bool]]:
    """(name, points, hidden) of an installed suite's checks; [] when unknown."""
    try:
        from autograder.hidden import load_suite

        return [(c.name, c.points, c.hidden) for c in load_suite(exercise).checks]
    except Exception:  # noqa: BLE001 - otter results may name exercises this install lacks
        return []


def _check_of(exercise: str, case: str, checks: list[tuple[str, float, bool]]) -> str | None:
    """Maps an otter case name to a check: by name inside it, or ``<exercise> - k`` by position."""
    low = case.lower()
    for name, _pts, _hid in sorted(checks, key=lambda c: -len(c[0])):
        if re.search(rf"(?<![a-z0-9_]){re.escape(name)}(?![a-z0-9_])", low):
            return name
    m = re.search(r"\s-\s(\d+)\s*$", case)
    if m and 1 <= int(m.group(1)) <= len(checks):
        return checks[int(m.group(1)) - 1][0]
    return None


_PASSED, _FAILED = "✅ Test case passed", "❌ Test case failed"


def _parse_cases(output: str, known: set[str] | None = None) -> list[tuple[str, bool, str]]:
    """(case name, passed, failure message) from otter's per-file summary text.

    Only otter's own lines decide: a case is a line ``    NAME result:`` followed by otter's verdict line
    (``✅ Test case passed`` / ``❌ Test case failed``) as the block's first line. A failure's message
    (the engine's, cleaned to one line where it entered its record) can add no line of its own, and
    a mark or a case name inside it counts for nothing. ``known``: the only case names accepted
    (an exercise's checks); a block naming any other makes the whole text unreadable (``[]``).
    """
    cases = []
    blocks = re.split(r"(?m)^ {4}(\S[^\n]*?) result:[ \t]*$", output)
    # blocks: [preamble, name1, body1, name2, body2, ...]
    for k in range(1, len(blocks) - 1, 2):
        name, body = blocks[k].strip(), blocks[k + 1]
        lines = [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
        if not lines or lines[0] not in (_PASSED, _FAILED) or (known is not None and name not in known):
            return []
        passed = lines[0] == _PASSED
        msg = ""
        if not passed:
            errs = [ln for ln in lines[1:] if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Fail\w*)\b:?", ln)]
            msg = errs[-1] if errs else (lines[-1] if len(lines) > 1 else "failed")
            msg = re.sub(r"^(AssertionError|Exception):\s*", "", msg)
        cases.append((name, passed, clean(msg, 400)))
    if len({c[0] for c in cases}) != len(cases):
        return []  # a case twice: not otter's summary
    return cases


def from_otter(data: dict[str, Any], submission: str) -> dict[str, Any]:
    """Turns one otter/Gradescope ``results.json`` into a tapetrace result object.

    Each otter test (one per question, or one per check when its name says which)
    becomes an exercise when its name names a tapetrace exercise, else an exercise
    named after the otter question. Per-case lines of the test's output become the
    exercise's tests, mapped to the suite's check names where possible.
    """
    exercises: dict[str, dict[str, Any]] = {}
    failed_run = None
    for t in data.get("tests") or []:
        if not isinstance(t, dict):
            continue
        tname = str(t.get("name", ""))
        if tname.strip().lower() == "autograder failed":
            failed_run = str(t.get("output", "the otter autograder failed"))
            continue
        if tname.strip().lower() in _SKIP_OTTER or "max_score" not in t:
            continue
        try:
            score, max_score = float(t.get("score") or 0.0), float(t["max_score"])
        except (TypeError, ValueError):
            continue
        ex = _exercise_of(tname) or tname
        checks = _suite_checks(ex) if ex in EXERCISES else []
        e = exercises.setdefault(ex, {"score": 0.0, "max_score": 0.0, "status": "graded", "message": "",
                                      "tests": [], "source": "otter"})
        e["score"] += score
        e["max_score"] += max_score
        output = str(t.get("output") or "")
        own = _check_of(ex, tname[len(ex):] if tname.startswith(ex) else tname, checks) if checks else None
        if own or (ex != tname and not re.search(r"result", output)):
            # one otter test per check
            name = own or tname
            e["tests"].append({"name": name, "score": score, "max_score": max_score,
                               "passed": score >= max_score, "hidden": t.get("visibility") != "visible",
                               "message": "" if score >= max_score else _first_line(output), "code": ""})
            continue
        cases = _cases(output, tname, checks, score, max_score)
        if cases:
            pts = {c: (p, h) for c, p, h in checks}
            for c, ok, msg in cases:
                p, hid = pts[c] if checks else (max_score / len(cases), True)
                e["tests"].append({"name": c, "score": p if ok else 0.0, "max_score": p, "passed": ok,
                                   "hidden": hid, "message": msg, "code": "" if ok else "OTTER_FAILED"})
        else:
            e["tests"].append({"name": tname, "score": score, "max_score": max_score,
                               "passed": score >= max_score, "hidden": t.get("visibility") != "visible",
                               "message": "" if score >= max_score else _first_line(output), "code": ""})
        if score < max_score and not e["message"]:
            e["message"] = next((x["message"] for x in e["tests"] if not x["passed"] and x["message"]), "")
    if failed_run is not None and not exercises:
        return {"submission": submission, "source": "otter", "total": 0.0, "max_total": 0.0, "exercises": {},
                "error": _first_line(failed_run)}
    total = sum(e["score"] for e in exercises.values())
    max_total = sum(e["max_score"] for e in exercises.values())
    return {"submission": submission, "source": "otter", "device": {}, "total": round(total, 6),
            "max_total": round(max_total, 6), "exercises": exercises}


def _cases(output: str, question: str, checks: list[tuple[str, float, bool]], score: float,
           max_score: float) -> list[tuple[str, bool, str]]:
    """The cases of one otter test, only where otter's summary and its scores agree; else ``[]``.

    For a tapetrace exercise the case names must be its checks, and the points of the cases that
    passed must add up to the score otter gave the test; for another assignment's question, otter's
    own case names (``q1 - 1``...) and an equal share of the points per case. Otherwise the test stays
    one row with otter's score (nothing in its text is believed).
    """
    if checks:
        points = {c: p for c, p, _h in checks}
        cases = _parse_cases(output, set(points))
        if not cases and score >= max_score and re.search(r"(?m)^\S.* results: All test cases passed!$", output):
            cases = [(c, True, "") for c, _p, _h in checks]
        got = sum(points[c] for c, ok, _m in cases if ok)
    else:
        cases = [c for c in _parse_cases(output) if re.fullmatch(rf"{re.escape(question)} - \d+", c[0])]
        got = max_score * sum(ok for _c, ok, _m in cases) / len(cases) if cases else 0.0
    return cases if cases and abs(got - score) < 1e-6 else []


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip() and not ln.strip().endswith("results:")]
    return clean(lines[-1]) if lines else ""


def _otter_name(path: Path) -> str:
    return path.parent.name if path.name == "results.json" and path.parent.name else path.stem


def read_inputs(paths: list[str]) -> tuple[list[ReportRow], list[str]]:
    """Reads every input (files or folders) into result objects; returns (results, notes)."""
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(path.rglob("results.json")) or sorted(path.glob("*.json"))
            if not found:
                raise ReportError(f"{p}: no results.json or *.json inside")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise ReportError(f"no such file or directory: {p}")
    results: list[ReportRow] = []
    notes: list[str] = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise ReportError(f"{f}: not readable JSON ({str(err).splitlines()[0]})") from None
        if isinstance(data, dict) and set(data) == {"receipt"}:
            continue  # a run's receipt beside its results (autograder/reports/receipt.py): the report makes its own
        items = data if isinstance(data, list) else [data]
        if items and all(isinstance(r, dict) and "submission" in r and "exercises" in r for r in items):
            for k, r in enumerate(items):
                why = _report.malformed(r)
                if why is not None:  # one damaged row never stops the report: left out, said why
                    notes.append(f"{f}: result {k + 1} ({terminal(r.get('submission'), 120)}) left out: {why}")
                    continue
                row = cast(ReportRow, dict(r))  # its shape checked by _report.malformed above
                row.setdefault("source", "tapetrace")
                results.append(row)
        elif isinstance(data, dict) and isinstance(data.get("tests"), list):
            otter = cast(ReportRow, from_otter(data, _otter_name(f)))  # a row made here, of ReportRow's shape
            if otter.get("error"):
                notes.append(f"otter could not grade {otter['submission']}: {otter['error']}")
            results.append(otter)
        else:
            raise ReportError(f"{f}: neither tapetrace results nor an otter results.json")
    if not results:
        raise ReportError("no results to report")
    return results, notes


# ---------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:72rem;margin:1.5rem auto;padding:0 1rem;
color:#1d2330} h1{margin-bottom:.2rem} h1,h2,h3,li{overflow-wrap:anywhere} .meta{color:#667;font-size:.9rem;
overflow-wrap:anywhere} .cards{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0} .card{background:#f8f9fa;
border-radius:8px;padding:.6rem 1rem;min-width:8rem} .card b{display:block;font-size:1.4rem;white-space:nowrap}
figure{margin:1.5rem 0} figure img{max-width:100%;height:auto;border:1px solid #eee;border-radius:6px}
figcaption{color:#555;font-size:.9rem;margin-top:.3rem} table{border-collapse:collapse;font-size:.88rem;width:100%}
th,td{padding:.25rem .5rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} td.tag{white-space:nowrap}
td.msg{min-width:14rem;overflow-wrap:anywhere} .low{color:#c92a2a;font-weight:600} .note{background:#fff4e6;
padding:.4rem .7rem;border-left:3px solid #f08c00;overflow-wrap:anywhere} details{margin:1rem 0}
summary{cursor:pointer;font-weight:600} .wide{overflow-x:auto;max-width:100%}
table.grid td,table.grid th{padding:.25rem .35rem}
section>table{display:block;overflow-x:auto;max-width:100%}
.nm,table.tests code{white-space:nowrap} table.tests code.long,table.tests th{white-space:normal}
td.ovr{background:#fff4e6} .mark{color:#d9480f;margin-left:.15rem}
@media (max-width:40rem){table.stack,table.stack tbody,table.stack tr{display:block}
table.stack tr:first-child{display:none} table.stack tr{border-bottom:1px solid #eee;padding:.35rem 0}
table.stack td{display:inline-block;border:0;padding:.1rem .4rem} table.stack td.msg{display:block;min-width:0}
table.tests td:nth-child(4)::before{content:"failed "} table.tests td:nth-child(5)::before{content:"passed "}
table.tests td:nth-child(6)::before{content:"rate "} table.tests td:nth-child(7)::before{content:"not attempted "}
table.msgs td:nth-child(3)::before{content:"submissions "} table.msgs td:nth-child(4)::before{content:"mutants "}
table.msgs td:nth-child(5)::before{content:"e.g. "}}
"""


def _short_exercise(name: str) -> str:
    """An exercise's column heading: ``exNN`` for a curriculum-style name (the whole name is its title)."""
    return name[:4] if name in EXERCISES or re.fullmatch(r"ex\d\d_\w+", name) else name


def _stats_cards(results: list[ReportRow]) -> list[tuple[str, str]]:
    pct = [100 * float(r["total"]) / float(r["max_total"]) if float(r.get("max_total") or 0) else 0.0
           for r in results]
    top = max(float(r.get("max_total") or 0) for r in results)
    tot = [float(r["total"]) for r in results]
    cards = [("submissions", str(len(results))),
             ("mean", f"{statistics.fmean(tot):.1f} / {top:g}"),
             ("median", f"{statistics.median(tot):.1f} / {top:g}"),
             ("full marks", f"{sum(p >= 99.999 for p in pct)}"),
             ("below 50%", f"{sum(p < 50 for p in pct)}")]
    srcs = sorted({r.get("source", "tapetrace") for r in results})
    if len(srcs) > 1:
        cards.append(("sources", ", ".join(f"{s} {sum(r.get('source', 'tapetrace') == s for r in results)}" for s in srcs)))
    return cards


def _agreement(results: list[ReportRow]) -> list[tuple[str, float, float]]:
    """Submissions graded by both tapetrace and otter: (name, tapetrace %, otter %)."""
    from autograder.reports.feedback import safe_stem

    by: dict[str, dict[str, ReportRow]] = {}
    for r in results:
        by.setdefault(safe_stem(str(r["submission"])), {})[r.get("source", "tapetrace")] = r
    out = []
    for name, d in sorted(by.items()):
        if "tapetrace" in d and "otter" in d:
            a, b = d["tapetrace"], d["otter"]
            pa = 100 * float(a["total"]) / float(a["max_total"]) if float(a.get("max_total") or 0) else 0.0
            pb = 100 * float(b["total"]) / float(b["max_total"]) if float(b.get("max_total") or 0) else 0.0
            out.append((name, pa, pb))
    return out


# The page's sections, top to bottom: what the instructor reads first comes first (issue 56). A section
# another module adds (``sections`` of :func:`render_html`) goes where its key is named here; a key not named
# here goes just before the receipt.
SECTION_ORDER: tuple[str, ...] = ("summary", "students", "audit", "agreement", "regrade", "tests", "mistakes",
                                  "plots", "receipt")
SUMMARY_PLOTS = ("score_histogram.png",)  # shown with the class summary; the other plots after the tests


def arrange(sections: dict[str, str]) -> list[str]:
    """The sections' HTML in :data:`SECTION_ORDER` (``css`` left out; keys not named there before the receipt)."""
    extra = [k for k in sections if k not in SECTION_ORDER and k != "css"]
    order = [*SECTION_ORDER[:-1], *extra, SECTION_ORDER[-1]]
    return [sections[k] for k in order if sections.get(k)]


def _esc(value: Any) -> str:
    return html.escape(clean(value, 0))


def _summary_section(results: list[ReportRow], plots: list[tuple[str, str]]) -> str:
    out = ["<section id=\"summary\"><h2>Class summary</h2><div class=\"cards\">"
           + "".join(f"<div class=\"card\">{_esc(k)}<b>{_esc(v)}</b></div>" for k, v in _stats_cards(results))
           + "</div>"]
    out += [_figure(name, caption) for name, caption in plots if name in SUMMARY_PLOTS]
    return "\n".join([*out, "</section>"])


def _figure(name: str, caption: str) -> str:
    return (f"<figure><img src=\"{_esc(name)}\" alt=\"{_esc(caption)}\"><figcaption>{_esc(caption)}"
            "</figcaption></figure>")


OVERRIDDEN_MARK = "✎"
OVERRIDDEN_TITLE = "overridden by hand: autograder {autograder:g}/{maximum:g} → {score:g}/{maximum:g}"
OVERRIDDEN_KEY = ("{mark} a score overridden by hand (its cell's tooltip gives the autograder's score; every override "
                  "is in the <a href=\"#overrides\">audit</a>, with the receipt)")


def autograder_score(e: Mapping[str, Any]) -> float | None:
    """The autograder's score of an exercise record that a manual override changed (its own or one of its tests',
    :func:`autograder.reports.overrides.apply`); None when no override changed it."""
    def moved(rec: Mapping[str, Any]) -> bool:
        return isinstance(rec.get("override"), dict) and bool(rec["override"].get("entries"))

    if moved(e):
        return float(e["override"]["autograder"])
    tests = [t for t in e.get("tests") or [] if isinstance(t, dict) and moved(t)]
    if not tests:
        return None
    return float(e["score"]) - sum(float(t["score"]) - float(t["override"]["autograder"]) for t in tests)


def _grid_cell(e: Mapping[str, Any] | None) -> str:
    """One exercise's cell of the submissions grid: its score (or status), marked where an override changed it."""
    if e is None:
        return "<td class=n>–</td>"
    graded = e.get("status") in (None, "graded")
    low = "" if graded else " low"
    val = f"{float(e['score']):g}" if graded else _esc(e["status"])
    auto = autograder_score(e)
    if auto is None:
        return f"<td class=\"n{low}\">{val}</td>"
    title = OVERRIDDEN_TITLE.format(autograder=auto, score=float(e["score"]), maximum=float(e.get("max_score") or 0))
    return (f"<td class=\"n ovr{low}\" title=\"{_esc(title)}\">{val}<span class=\"mark\">{OVERRIDDEN_MARK}</span>"
            "</td>")


def _students_section(results: list[ReportRow], feedback_links: dict[int, str] | None) -> str:
    from autograder.reports.plots import exercise_order

    exs = exercise_order(results)
    sources = len({r.get("source", "tapetrace") for r in results}) > 1  # the column only where sources differ
    out = [f"<section id=\"students\"><h2>Submissions</h2><details{' open' if len(results) <= 60 else ''}><summary>"
           f"All {len(results)} submissions</summary><div class=\"wide\"><table class=\"grid\"><tr><th>submission</th>"
           + ("<th>source</th>" if sources else "") + "<th class=n>total</th>"
           + "".join(f"<th class=n title=\"{_esc(ex)}\">{_esc(_short_exercise(ex))}</th>" for ex in exs) + "</tr>"]
    for i in sorted(range(len(results)), key=lambda k: str(results[k]["submission"])):
        r = results[i]
        name = html_name(str(r["submission"]))
        if feedback_links and i in feedback_links:
            name = f"<a href=\"{_esc(feedback_links[i])}\">{name}</a>"
        cells = [_grid_cell(r["exercises"].get(ex)) for ex in exs]
        source = f"<td class=tag>{_esc(str(r.get('source', 'tapetrace')))}</td>" if sources else ""
        out.append(f"<tr><td>{name}</td>{source}<td class=n>{float(r['total']):g} / {float(r['max_total']):g}</td>"
                   f"{''.join(cells)}</tr>")
    out.append("</table></div>")
    if any(autograder_score(e) is not None for r in results for e in r["exercises"].values()):
        out.append(f"<p class=\"meta\">{OVERRIDDEN_KEY.format(mark=OVERRIDDEN_MARK)}</p>")
    out.append("</details></section>")
    return "\n".join(out)


NAME_WHOLE = 32  # a test or exercise name up to this long is never broken in a table; a longer one wraps between parts


def _name(value: Any, code: bool = False) -> str:
    """A test's (``code``) or an exercise's name for a table cell: whole on one line up to :data:`NAME_WHOLE`
    characters (``forward_matches_reference`` never squeezed to three lines), a longer one with a break
    opportunity between its parts (:func:`autograder.core.text.html_name`)."""
    if len(clean(value, 0)) <= NAME_WHOLE:
        return f"<code>{html_text(value)}</code>" if code else f"<span class=\"nm\">{html_text(value)}</span>"
    return f"<code class=\"long\">{html_name(value)}</code>" if code else html_name(value)


def _tests_section(results: list[ReportRow]) -> str:
    from autograder.reports.plots import check_stats, most_failed_first

    shown, passed = most_failed_first(check_stats(results))
    out = ["<section id=\"tests\"><h2>Tests, most failed first</h2><p class=\"meta\">Ordered by how many "
           "submissions that attempted the exercise failed the test (a test nobody tried is not a failure: those "
           "come last; an exercise that did not load, such as an import timeout, is no attempt of its tests). "
           f"{len(passed)} test(s) every attempt passed are folded below.</p>"]
    if shown:
        out.append("<div class=\"wide\"><table class=\"tests stack\"><tr><th>exercise</th><th>test</th><th>kind</th>"
                   "<th class=n>failed</th>"
                   "<th class=n>passed / attempted</th><th class=n>rate</th><th class=n>not attempted</th>"
                   "<th>commonest failure</th><th>its commonest message</th></tr>")
        for s in shown:
            tried = s["attempted"]
            cls = " low" if tried and s["attempted_rate"] < 0.5 else ""
            rate = f"{100 * s['attempted_rate']:.0f}%" if tried else "–"
            out.append(f"<tr><td title=\"{_esc(s['exercise'])}\">{_name(_short_exercise(s['exercise']))}</td>"
                       f"<td>{_name(s['check'], code=True)}</td>"
                       f"<td class=tag>{'hidden' if s['hidden'] else 'public'}</td>"
                       f"<td class=n>{tried - s['passed'] if tried else '–'}</td><td class=n>{s['passed']}/{tried}</td>"
                       f"<td class=\"n{cls}\">{rate}</td><td class=n>{s['n'] - tried}</td>"
                       f"<td class=key>{html_name(s['common_failure']) or '–'}</td>"
                       f"<td class=\"msg\">{_esc(s['example_message'])}</td></tr>")  # whole: it wraps
        out.append("</table></div>")
    else:
        out.append("<p>No test failed an attempt.</p>")
    if passed:
        out.append(f"<details id=\"passed\"><summary>{len(passed)} test(s) every attempt passed</summary>"
                   "<div class=\"wide\"><table class=\"tests\"><tr><th>exercise</th><th>test</th><th>kind</th>"
                   "<th class=n>passed / attempted</th><th class=n>not attempted</th></tr>")
        for s in passed:
            out.append(f"<tr><td title=\"{_esc(s['exercise'])}\">{_name(_short_exercise(s['exercise']))}</td>"
                       f"<td>{_name(s['check'], code=True)}</td><td class=tag>{'hidden' if s['hidden'] else 'public'}</td>"
                       f"<td class=n>{s['passed']}/{s['attempted']}</td><td class=n>{s['n'] - s['attempted']}</td></tr>")
        out.append("</table></div></details>")
    return "\n".join([*out, "</section>"])


def _agreement_section(results: list[ReportRow]) -> str:
    agree = _agreement(results)
    if not agree:
        return ""
    same = sum(abs(a - b) < 0.01 for _n, a, b in agree)
    out = [f"<section id=\"agreement\"><h2>tapetrace vs otter</h2><p>{same} of {len(agree)} submissions graded by "
           "both get the same score (as % of the maximum).</p><div class=\"wide\"><table><tr><th>submission</th>"
           "<th class=n>tapetrace</th><th class=n>otter</th></tr>"]
    for n, a, b in agree:
        out.append(f"<tr><td>{html_name(n)}</td><td class=n>{a:.1f}%</td>"
                   f"<td class=\"n{' low' if abs(a - b) >= 0.01 else ''}\">{b:.1f}%</td></tr>")
    return "\n".join([*out, "</table></div></section>"])


def _plots_section(plots: list[tuple[str, str]]) -> str:
    rest = [_figure(name, caption) for name, caption in plots if name not in SUMMARY_PLOTS]
    return "\n".join(["<section id=\"plots\"><h2>Per exercise and per test</h2>", *rest, "</section>"]) if rest else ""


def render_html(results: list[ReportRow], plots: list[tuple[str, str]], title: str,
                notes: list[str], feedback_links: dict[int, str] | None = None,
                sections: dict[str, str] | None = None) -> str:
    """The report page, for the instructor first (:data:`SECTION_ORDER`): the class summary and score distribution,
    every submission, the tests by how many failed (those every attempt passed folded away), the other plots, and
    last the receipt and the suites' fingerprints.

    ``sections``: more sections' HTML by key (:data:`SECTION_ORDER` places them; autograder/reports/after.py:
    the receipt, a regrade's diff, the common mistakes), and their ``css``.
    """
    sections = dict(sections or {})
    seeds = sorted({str(r.get("seed")) for r in results if r.get("seed") is not None})
    devices = sorted({f"torch {r['device'].get('torch')}, jax {r['device'].get('jax')}"
                      for r in results if r.get("device")})
    out = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">{VIEWPORT}<title>{_esc(title)}</title>",
           f"<style>{_CSS}{sections.get('css', '')}</style></head><body><h1>{_esc(title)}</h1>",
           f"<div class=\"meta\">generated {_esc(time.strftime('%Y-%m-%d %H:%M'))}"
           + (f" · seed {_esc(', '.join(seeds))}" if seeds else "")
           + (f" · {_esc('; '.join(devices))}" if devices else "") + "</div>"]
    out += [f"<p class=\"note\">{_esc(n)}</p>" for n in notes]
    ours = {"summary": _summary_section(results, plots), "students": _students_section(results, feedback_links),
            "tests": _tests_section(results), "agreement": _agreement_section(results),
            "plots": _plots_section(plots)}
    out += arrange({**sections, **ours})
    out.append("</body></html>")
    return "\n".join(out)


def write_summary_csv(results: list[ReportRow], path: Path) -> None:
    """Pass rate per test as CSV (what the heatmap shows, for spreadsheets)."""
    import csv

    from autograder.reports.plots import check_stats

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["exercise", "test", "hidden", "submissions", "passed", "pass_rate", "commonest_failure",
                    "commonest_message", "attempted", "pass_rate_attempted"])
        for s in check_stats(results):  # the message whole (a spreadsheet cell wraps it), never cut
            w.writerow([csv_cell(v) for v in (s["exercise"], s["check"], s["hidden"], s["n"], s["passed"],
                                              f"{s['rate']:.4f}" if s["n"] else "", s["common_failure"],
                                              s["example_message"], s["attempted"],
                                              f"{s['attempted_rate']:.4f}" if s["attempted"] else "")])


def _overridden(results: list[ReportRow], overrides: Any, roster: dict[str, dict[str, str]] | None,
                regrade: Diff | None) -> tuple[list[ReportRow], list[ReportRow], Any]:
    """(the autograder's rows, the rows with the manual overrides applied, the overrides' audit or None)."""
    if overrides is None:
        return results, results, None
    from autograder.reports import overrides as _overrides

    adjusted, rows = _overrides.apply(results, overrides, roster, regrade)
    return results, adjusted, _overrides.audit(rows, overrides.path)


def build_report(results: list[ReportRow], out: Path, title: str = "tapetrace grading report",
                 notes: list[str] | None = None, feedback: str | None = None, feedback_format: str = "html",
                 lang: str = "en", regrade: Diff | None = None, overrides: Any = None,
                 roster: dict[str, dict[str, str]] | None = None) -> Path:
    """Writes the PNG plots, ``index.html``, ``summary.csv``, ``receipt.json``, ``mistakes.csv`` (and feedback
    files, and ``regrade.csv`` with a regrade's diff) into ``out``.

    ``overrides`` (:class:`autograder.reports.overrides.Overrides`, students named as ``roster`` names them)
    are applied to the scores the page and the feedback show; the receipt lists them (``overrides.csv``).
    """
    from autograder.reports import after as _after_report
    from autograder.reports import feedback as _feedback
    from autograder.reports import plots as _plots
    from autograder.reports import report as _report

    original, results, audit = _overridden(results, overrides, roster, regrade)
    out.mkdir(parents=True, exist_ok=True)
    graded = [r for r in results if r.get("exercises")]
    notes = list(notes or [])
    if len(graded) < len(results):
        notes.append(f"{len(results) - len(graded)} result(s) without any graded exercise are left out of the plots")
    if not graded:
        raise ReportError("none of the results has a graded exercise")
    plots = _plots.render_all(graded, out)
    links: dict[int, str] = {}
    if feedback:
        tt = [i for i, r in enumerate(graded) if r.get("source", "tapetrace") == "tapetrace"]
        written = _feedback.write_feedback([graded[i] for i in tt], feedback, lang=lang, fmt=feedback_format)
        per = 2 if feedback_format == "both" else 1
        for k, i in enumerate(tt):
            target = Path(written[k * per + per - 1]).resolve()
            try:
                links[i] = target.relative_to(out.resolve()).as_posix()
            except ValueError:
                links[i] = os.path.relpath(target, out.resolve())
    write_summary_csv(graded, out / "summary.csv")
    sections = _after_report.write(original, out, regrade, audit)
    page = out / "index.html"
    _report.atomic_write(page, render_html(graded, plots, title, notes, links, sections))
    return page
