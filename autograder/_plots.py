"""Instructor plots of a batch of results (matplotlib, Agg backend, PNG files).

Input is a list of result objects (GRADING.md's JSON; results merged from
otter have the same shape). Exercises and checks are taken from the data,
so the plots work for any subset of exercises and for otter assignments
whose questions are not tapetrace exercises.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

from autograder._paths import EXERCISES  # noqa: E402
from autograder._text import clean  # noqa: E402

DPI = 110
GREEN, RED, GREY, AMBER, BLUE = "#2f9e44", "#e03131", "#ced4da", "#f59f00", "#1c7ed6"


def exercise_order(results: Iterable[dict[str, Any]]) -> list[str]:
    """Exercises present in the results: tapetrace's order first, then others as found."""
    seen: list[str] = []
    for r in results:
        for ex in r["exercises"]:
            if ex not in seen:
                seen.append(ex)
    known = [ex for ex in EXERCISES if ex in seen]
    return known + [ex for ex in seen if ex not in EXERCISES]


def check_order(results: list[dict[str, Any]], exercise: str) -> list[str]:
    """Check names of one exercise in the order tests were reported."""
    names: list[str] = []
    for r in results:
        for t in r["exercises"].get(exercise, {}).get("tests", []):
            if t["name"] not in names:
                names.append(t["name"])
    return names


def _not_attempted(e: dict[str, Any]) -> bool:
    tests = e.get("tests") or []
    return e.get("status") == "missing" or (bool(tests) and all(t.get("code") in ("NOT_ATTEMPTED", "MISSING_FILE")
                                                                for t in tests))


def check_stats(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (exercise, check): attempts, passes, pass rate, hidden flag, commonest failure code."""
    rows = []
    for ex in exercise_order(results):
        for name in check_order(results, ex):
            n = passed = 0
            hidden = True
            codes: dict[str, int] = {}
            messages: dict[str, int] = {}
            for r in results:
                e = r["exercises"].get(ex)
                if not e:
                    continue
                for t in e.get("tests", []):
                    if t["name"] != name:
                        continue
                    n += 1
                    hidden = bool(t.get("hidden", True))
                    if t.get("passed"):
                        passed += 1
                    else:
                        code = t.get("code") or "FAILED"
                        codes[code] = codes.get(code, 0) + 1
                        msg = " ".join(str(t.get("message", "")).split())[:160]
                        messages[msg] = messages.get(msg, 0) + 1
            common = max(codes.items(), key=lambda kv: kv[1])[0] if codes else ""
            example = max(messages.items(), key=lambda kv: kv[1])[0] if messages else ""
            rows.append({"exercise": ex, "check": name, "n": n, "passed": passed,
                         "rate": passed / n if n else float("nan"), "hidden": hidden, "common_failure": common,
                         "example_message": example})
    return rows


def _percent(results: list[dict[str, Any]]) -> np.ndarray:
    vals = []
    for r in results:
        m = float(r.get("max_total") or 0)
        vals.append(100.0 * float(r["total"]) / m if m else 0.0)
    return np.array(vals, dtype=float)


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return path


def score_histogram(results: list[dict[str, Any]], path: Path) -> Path:
    """Histogram of total scores (% of the maximum), one colour per source."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    bins = np.linspace(0, 100, 21)
    sources = sorted({r.get("source", "tapetrace") for r in results})
    colors = {"tapetrace": BLUE, "otter": AMBER}
    data = [_percent([r for r in results if r.get("source", "tapetrace") == s]) for s in sources]
    ax.hist(data, bins=bins, label=[f"{s} (n={len(d)})" for s, d in zip(sources, data)],
            color=[colors.get(s, GREY) for s in sources], edgecolor="white", stacked=len(sources) > 1)
    allp = _percent(results)
    if len(allp):
        ax.axvline(float(np.mean(allp)), color="#343a40", lw=1.5, ls="--", label=f"mean {np.mean(allp):.1f}%")
        ax.axvline(float(np.median(allp)), color="#868e96", lw=1.5, ls=":", label=f"median {np.median(allp):.1f}%")
    ax.set_xlim(0, 100)
    ax.set_xlabel("total score (% of maximum)")
    ax.set_ylabel("submissions")
    ax.set_title(f"Score distribution ({len(results)} submissions)")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(frameon=False, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def exercise_means(results: list[dict[str, Any]], path: Path) -> Path:
    """Mean score per exercise (as % of its maximum) with the share not attempted."""
    exs = exercise_order(results)
    means, na, maxima = [], [], []
    for ex in exs:
        got = [(float(r["exercises"][ex]["score"]), float(r["exercises"][ex]["max_score"]))
               for r in results if ex in r["exercises"]]
        tot = sum(m for _, m in got)
        means.append(100.0 * sum(s for s, _ in got) / tot if tot else 0.0)
        maxima.append(got[0][1] if got else 0.0)
        att = [r["exercises"][ex] for r in results if ex in r["exercises"]]
        na.append(100.0 * sum(_not_attempted(e) for e in att) / len(att) if att else 0.0)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(exs) + 1.4))
    y = np.arange(len(exs))
    ax.barh(y, [100] * len(exs), color="#f1f3f5", height=0.7)
    bars = ax.barh(y, means, color=[GREEN if m >= 70 else AMBER if m >= 40 else RED for m in means], height=0.7)
    for yi, m, n_a, mx, bar in zip(y, means, na, maxima, bars):
        label = f"{m:.0f}%  (mean {m * mx / 100:.1f}/{mx:g})" + (f", {n_a:.0f}% not attempted" if n_a else "")
        ax.text(min(m, 100) + 1, yi, label, va="center", fontsize=8.5)
        del bar
    ax.set_yticks(y, [clean(ex, 40) for ex in exs])
    ax.invert_yaxis()
    ax.set_xlim(0, 135)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("mean score (% of the exercise's points)")
    ax.set_title("Mean score per exercise")
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def status_breakdown(results: list[dict[str, Any]], path: Path) -> Path:
    """Per exercise: share of full marks, partial, zero, not attempted, and could-not-run."""
    exs = exercise_order(results)
    cats = [("full marks", GREEN), ("partial", "#94d82d"), ("zero (attempted)", RED),
            ("not attempted / missing", GREY), ("error / timeout / crash", "#862e9c")]
    table = np.zeros((len(exs), len(cats)))
    for i, ex in enumerate(exs):
        for r in results:
            e = r["exercises"].get(ex)
            if e is None:
                continue
            s, m = float(e["score"]), float(e["max_score"])
            if e["status"] in ("error", "timeout", "crashed"):
                k = 4
            elif _not_attempted(e):
                k = 3
            elif m and s >= m:
                k = 0
            elif s > 0:
                k = 1
            else:
                k = 2
            table[i, k] += 1
    totals = table.sum(axis=1, keepdims=True)
    frac = np.divide(table, np.maximum(totals, 1)) * 100
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(exs) + 1.6))
    left = np.zeros(len(exs))
    for k, (label, color) in enumerate(cats):
        ax.barh(np.arange(len(exs)), frac[:, k], left=left, color=color, label=label, height=0.7)
        for i in range(len(exs)):
            if frac[i, k] >= 8:
                ax.text(left[i] + frac[i, k] / 2, i, f"{frac[i, k]:.0f}%", ha="center", va="center", fontsize=7.5,
                        color="white" if k in (0, 2, 4) else "#212529")
        left += frac[:, k]
    ax.set_yticks(np.arange(len(exs)), [clean(ex, 40) for ex in exs])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of submissions")
    ax.set_title("Outcome per exercise")
    ax.legend(ncol=3, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / len(exs)))
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def pass_rate_heatmap(results: list[dict[str, Any]], path: Path) -> Path:
    """Pass rate of every check: one row per exercise, one cell per check (named inside)."""
    stats = check_stats(results)
    exs = exercise_order(results)
    width = max([1, *(sum(1 for s in stats if s["exercise"] == ex) for ex in exs)])
    grid = np.full((len(exs), width), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for i, ex in enumerate(exs):
        for j, s in enumerate([s for s in stats if s["exercise"] == ex]):
            grid[i, j] = 100 * s["rate"]
            name = clean(s["check"], 21)
            labels[(i, j)] = f"{name}\n{'' if s['hidden'] else 'public · '}{100 * s['rate']:.0f}%"
    fig, ax = plt.subplots(figsize=(max(7.0, 1.9 * width + 2), 0.62 * len(exs) + 1.6))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#f8f9fa")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for (i, j), text in labels.items():
        v = grid[i, j]
        ax.text(j, i, text, ha="center", va="center", fontsize=6.8,
                color="white" if v < 25 or v > 85 else "#212529")
    ax.set_yticks(np.arange(len(exs)), [clean(ex, 40) for ex in exs])
    ax.set_xticks(np.arange(width), [f"check {k + 1}" for k in range(width)], fontsize=8)
    ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, len(exs), 1), minor=True)
    ax.grid(which="minor", color="white", lw=2)
    ax.tick_params(which="minor", length=0)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02, label="% of submissions passing")
    ax.set_title("Pass rate per test (which checks the class struggles with)")
    return _save(fig, path)


def student_check_matrix(results: list[dict[str, Any]], path: Path) -> Path:
    """Submissions (rows, best first) x checks (columns, grouped by exercise): pass/fail/not attempted."""
    exs = exercise_order(results)
    cols = [(ex, name) for ex in exs for name in check_order(results, ex)]
    order = sorted(range(len(results)), key=lambda i: -float(results[i]["total"]))
    grid = np.zeros((len(results), max(1, len(cols))))
    for row, i in enumerate(order):
        r = results[i]
        for c, (ex, name) in enumerate(cols):
            e = r["exercises"].get(ex)
            t = next((t for t in (e or {}).get("tests", []) if t["name"] == name), None)
            if t is None or t.get("code") in ("NOT_ATTEMPTED", "MISSING_FILE") or (e and e["status"] == "missing"):
                grid[row, c] = 0
            elif t.get("passed"):
                grid[row, c] = 2
            else:
                grid[row, c] = 1
    h = min(14.0, 0.16 * len(results) + 1.8)
    fig, ax = plt.subplots(figsize=(max(7.0, 0.22 * len(cols) + 2.5), h))
    ax.imshow(grid, cmap=ListedColormap([GREY, RED, GREEN]), vmin=0, vmax=2, aspect="auto",
              interpolation="nearest")
    start = 0
    ticks, names = [], []
    for ex in exs:
        k = len(check_order(results, ex))
        if start:
            ax.axvline(start - 0.5, color="white", lw=2)
        ticks.append(start + (k - 1) / 2)
        names.append(ex[:4] if ex[:2] == "ex" and ex[2:4].isdigit() else clean(ex, 10))
        start += k
    ax.set_xticks(ticks, names, fontsize=8)
    if len(results) <= 40:
        ax.set_yticks(np.arange(len(results)),
                      [clean(Path(str(results[i]["submission"]).rstrip("/")).name, 28) for i in order], fontsize=7)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(results)} submissions, best at the top")
    handles = [matplotlib.patches.Patch(color=c, label=lab)
               for c, lab in ((GREEN, "passed"), (RED, "failed"), (GREY, "not attempted / missing"))]
    ax.legend(handles=handles, ncol=3, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.06))
    ax.set_title("Every test of every submission")
    return _save(fig, path)


PLOTS = (
    ("score_histogram.png", score_histogram, "Score distribution"),
    ("exercise_means.png", exercise_means, "Mean score per exercise"),
    ("status_breakdown.png", status_breakdown, "Outcome per exercise"),
    ("pass_rate_heatmap.png", pass_rate_heatmap, "Pass rate per test"),
    ("student_check_matrix.png", student_check_matrix, "Every test of every submission"),
)


def render_all(results: list[dict[str, Any]], out: Path) -> list[tuple[str, str]]:
    """Writes every plot into ``out``; returns (file name, caption) pairs.

    Names in the plots come from the results (submissions, otter's questions): matplotlib's mathtext is
    off, so a ``$`` in one is a dollar sign (``$\\x$`` once stopped the whole report).
    """
    out.mkdir(parents=True, exist_ok=True)
    done = []
    with matplotlib.rc_context({"text.parse_math": False}):
        for name, fn, caption in PLOTS:
            fn(results, out / name)
            done.append((name, caption))
    return done
