"""Instructor plots of a batch of results (matplotlib, Agg backend, PNG files).

Input is a list of result objects (docs/grading-contract.md's rows; results merged from
otter have the same shape). Exercises and checks are taken from the data,
so the plots work for any subset of exercises and for otter assignments
whose questions are not tapetrace exercises.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from autograder.core.paths import EXERCISES  # noqa: E402
from autograder.core.records import ExerciseRow, ReportRow  # noqa: E402
from autograder.core.text import clean  # noqa: E402
from autograder.core.text import shorten as shorten  # noqa: E402 - the reports' name for it (mistakes, summary)

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType  # (matplotlib >= 3.8; the supported floor is 3.7.5)

DPI = 110
# Legible at a glance in the report page: no text under MIN_FONT_PT points (8 pt at 110 dpi: 12 px), and no
# figure wider than MAX_WIDTH_IN inches (~1050 px at 110 dpi), so the page (72rem wide) shows every plot at
# its own size, never scaled down (tests/test_report_browser.py measures both in a browser).
MIN_FONT_PT = 8.0
MAX_WIDTH_IN = 9.5
_RC: dict[RcKeyType, Any] = {"font.size": 9.5, "axes.titlesize": 11, "axes.labelsize": 9.5, "xtick.labelsize": 9, "ytick.labelsize": 9,
       "legend.fontsize": 9, "figure.titlesize": 12}
GREEN, RED, GREY, AMBER, BLUE = "#2f9e44", "#e03131", "#ced4da", "#f59f00", "#1c7ed6"


def exercise_order(results: Iterable[ReportRow]) -> list[str]:
    """Exercises present in the results: tapetrace's order first, then others as found."""
    seen: list[str] = []
    for r in results:
        for ex in r["exercises"]:
            if ex not in seen:
                seen.append(ex)
    known = [ex for ex in EXERCISES if ex in seen]
    return known + [ex for ex in seen if ex not in EXERCISES]


def check_order(results: list[ReportRow], exercise: str) -> list[str]:
    """Check names of one exercise in the order tests were reported."""
    names: list[str] = []
    for r in results:
        e = r["exercises"].get(exercise)
        for t in e.get("tests", []) if e else []:
            if t["name"] not in names:
                names.append(t["name"])
    return names


def wrap_name(name: str, width: int, hard: bool = False) -> str:
    """A check name on lines of at most ``width`` characters, broken after underscores (a part longer than
    ``width`` stays whole, unless ``hard``: then it is split every ``width`` characters, where a cell has
    no room for it)."""
    parts = [p + "_" for p in name.split("_")]
    parts[-1] = parts[-1][:-1]
    if hard:
        parts = [part[k:k + width] for part in parts for k in range(0, len(part), width)]
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def _not_attempted(e: ExerciseRow) -> bool:
    tests = e.get("tests") or []
    return e.get("status") == "missing" or (bool(tests) and all(t.get("code") in ("NOT_ATTEMPTED", "MISSING_FILE")
                                                                for t in tests))


def check_stats(results: list[ReportRow]) -> list[dict[str, Any]]:
    """Per (exercise, check): submissions, passes, pass rates, hidden flag, commonest failure and message.

    ``rate`` is over every submission; ``attempted`` counts the submissions whose checks ran on an
    attempt (the exercise ``graded``: not missing, not every check NOT_ATTEMPTED, and not an exercise
    that did not load — an import timeout or error says nothing about one check) and
    ``attempted_rate`` is the pass rate among them: what "hardest" means (a check nobody tried is not
    hard). The commonest failure and message are those of the attempts that failed; where every
    attempt passed there is none (``""``), and only a check nobody attempted shows why (e.g.
    NOT_ATTEMPTED). The message is whole (one line).
    """
    rows = []
    for ex in exercise_order(results):
        for name in check_order(results, ex):
            n = passed = attempted = 0
            hidden = True
            codes: dict[str, int] = {}
            messages: dict[str, int] = {}
            tried_codes: dict[str, int] = {}
            tried_messages: dict[str, int] = {}
            for r in results:
                e = r["exercises"].get(ex)
                if not e:
                    continue
                tried = e.get("status", "graded") == "graded" and not _not_attempted(e)
                for t in e.get("tests", []):
                    if t["name"] != name:
                        continue
                    n += 1
                    attempted += tried
                    hidden = bool(t.get("hidden", True))
                    if t.get("passed"):
                        passed += 1
                    else:
                        code = t.get("code") or "FAILED"
                        msg = " ".join(str(t.get("message", "")).split())
                        for table, key in ((codes, code), (messages, msg)) + (
                                ((tried_codes, code), (tried_messages, msg)) if tried else ()):
                            table[key] = table.get(key, 0) + 1
            codes, messages = (tried_codes, tried_messages) if attempted else (codes, messages)
            common = max(codes.items(), key=lambda kv: kv[1])[0] if codes else ""
            example = max(messages.items(), key=lambda kv: kv[1])[0] if messages else ""
            rows.append({"exercise": ex, "check": name, "n": n, "passed": passed,
                         "rate": passed / n if n else float("nan"), "attempted": attempted,
                         "attempted_rate": passed / attempted if attempted else float("nan"),  # passes are attempts
                         "hidden": hidden, "common_failure": common, "example_message": example})
    return rows


def hardest_first(stats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Checks by pass rate among the submissions that attempted them, lowest first; checks nobody
    attempted last (they are not hard: nobody tried)."""
    tried = [s for s in stats if s["attempted"]]
    untried = [s for s in stats if s["n"] and not s["attempted"]]
    return sorted(tried, key=lambda s: (s["attempted_rate"], -s["attempted"], s["exercise"])) + untried


def most_failed_first(stats: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The report's order of tests: ``(shown, all_passed)``.

    ``shown``: the checks some attempt failed, most failed attempts first (then the lower pass rate among
    attempts), then the checks nobody attempted (not failures of the check: nobody tried); ``all_passed``: the
    checks every attempt passed (folded away in the report), in the suites' order.
    """
    failed = [s for s in stats if s["attempted"] > s["passed"]]
    untried = [s for s in stats if s["n"] and not s["attempted"]]
    passed = [s for s in stats if s["attempted"] and s["attempted"] == s["passed"]]
    failed.sort(key=lambda s: (s["passed"] - s["attempted"], s["attempted_rate"], s["exercise"]))
    return failed + untried, passed


def _percent(results: list[ReportRow]) -> np.ndarray:
    vals = []
    for r in results:
        m = float(r.get("max_total") or 0)
        vals.append(100.0 * float(r["total"]) / m if m else 0.0)
    return np.array(vals, dtype=float)


def _save(fig: Any, path: Path) -> Path:
    for text in fig.findobj(matplotlib.text.Text):  # nothing smaller than MIN_FONT_PT, wherever it was set
        if text.get_fontsize() < MIN_FONT_PT:
            text.set_fontsize(MIN_FONT_PT)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return path


def score_histogram(results: list[ReportRow], path: Path) -> Path:
    """Histogram of total scores (% of the maximum), one colour per source."""
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    bins = np.linspace(0, 100, 21).tolist()
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
    locator = ax.yaxis.get_major_locator()  # AutoLocator, a MaxNLocator: whole numbers of submissions
    if isinstance(locator, MaxNLocator):
        locator.set_params(integer=True)
    ax.legend(frameon=False, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def exercise_means(results: list[ReportRow], path: Path) -> Path:
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
    for yi, m, n_a, mx, bar in zip(y.tolist(), means, na, maxima, bars):
        label = f"{m:.0f}%  (mean {m * mx / 100:.1f}/{mx:g})" + (f", {n_a:.0f}% not attempted" if n_a else "")
        ax.text(min(m, 100) + 1, yi, label, va="center", fontsize=9)
        del bar
    ax.set_yticks(y, [clean(ex, 40) for ex in exs])
    ax.invert_yaxis()
    ax.set_xlim(0, 135)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("mean score (% of the exercise's points)")
    ax.set_title("Mean score per exercise")
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def status_breakdown(results: list[ReportRow], path: Path) -> Path:
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
                ax.text(left[i] + frac[i, k] / 2, i, f"{frac[i, k]:.0f}%", ha="center", va="center", fontsize=MIN_FONT_PT,
                        color="white" if k in (0, 2, 4) else "#212529")
        left += frac[:, k]
    ax.set_yticks(np.arange(len(exs)), [clean(ex, 40) for ex in exs])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of submissions")
    ax.set_title("Outcome per exercise")
    ax.legend(ncol=3, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / len(exs)))
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path)


def _cells_fit(fig: Any, ax: Any) -> bool:
    """Whether every label of the heatmap lies inside its cell, as drawn."""
    renderer = fig.canvas.get_renderer()
    for text in ax.texts:
        x, y = text.get_position()
        corners = ax.transData.transform([[x - 0.5, y - 0.5], [x + 0.5, y + 0.5]])
        box = text.get_window_extent(renderer)
        if box.width > abs(corners[1, 0] - corners[0, 0]) - 2 or box.height > abs(corners[1, 1] - corners[0, 1]) - 2:
            return False
    return True


def pass_rate_heatmap(results: list[ReportRow], path: Path) -> Path:
    """Pass rate of every check: one row per exercise, one cell per check (named inside).

    Names are wrapped to the cell's width as drawn: narrower lines until every label fits its cell
    (the rows grow taller for the extra lines), never a smaller font.
    """
    stats = check_stats(results)
    exs = exercise_order(results)
    width = max([1, *(sum(1 for s in stats if s["exercise"] == ex) for ex in exs)])
    fig_width = min(MAX_WIDTH_IN, max(7.0, 1.9 * width + 2))
    chars = max(4, int((fig_width - 2.2) / width * 72 / (0.6 * MIN_FONT_PT)))  # per line, in one cell
    hard = False  # first whole words; then, where a word is wider than a cell, split inside it
    while True:
        fig, ax = _heatmap(stats, exs, width, fig_width, chars, hard)
        fig.canvas.draw()
        if (hard and chars <= 3) or _cells_fit(fig, ax):
            return _save(fig, path)
        plt.close(fig)
        longest = max((len(p) + 1 for s in stats for p in clean(s["check"], 0).split("_")), default=0)
        hard = hard or chars <= 4 or chars - 1 < longest
        chars -= 1


def _heatmap(stats: list[dict[str, Any]], exs: list[str], width: int, fig_width: float, chars: int,
             hard: bool) -> tuple[Any, Any]:
    """The heatmap's figure and axes, check names wrapped at ``chars`` characters a line (``hard``: see wrap_name)."""
    grid = np.full((len(exs), width), np.nan)
    labels: dict[tuple[int, int], str] = {}
    lines = 1
    public: dict[tuple[int, int], bool] = {}
    for i, ex in enumerate(exs):
        for j, s in enumerate([s for s in stats if s["exercise"] == ex]):
            rate = s["attempted_rate"]
            grid[i, j] = 100 * rate
            name = wrap_name(clean(s["check"], 0), chars, hard)
            pct = f"{100 * rate:.0f}%" if s["attempted"] else "–"
            labels[(i, j)] = f"{name}\n{pct}"
            public[(i, j)] = not s["hidden"]
            lines = max(lines, labels[(i, j)].count("\n") + 1)
    fig, ax = plt.subplots(figsize=(fig_width, (0.17 * lines + 0.12) * len(exs) + 1.6))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#f8f9fa")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for (i, j), text in labels.items():
        v = grid[i, j]
        ax.text(j, i, text, ha="center", va="center", fontsize=MIN_FONT_PT,
                fontweight="bold" if public[(i, j)] else "normal", color="white" if v < 25 or v > 85 else "#212529")
    ax.set_yticks(np.arange(len(exs)), [clean(ex, 40) for ex in exs])
    ax.set_xticks(np.arange(width), [f"check {k + 1}" for k in range(width)])
    ax.set_xticks(np.arange(-0.5, width, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, len(exs), 1), minor=True)
    ax.grid(which="minor", color="white", lw=2)
    ax.tick_params(which="minor", length=0)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02, label="% passing, of those who attempted")
    ax.set_title("Pass rate per test among attempts (bold: public checks)")
    return fig, ax


def student_check_matrix(results: list[ReportRow], path: Path) -> Path:
    """Submissions (rows, best first) x checks (columns, grouped by exercise): pass/fail/not attempted."""
    exs = exercise_order(results)
    cols = [(ex, name) for ex in exs for name in check_order(results, ex)]
    order = sorted(range(len(results)), key=lambda i: -float(results[i]["total"]))
    grid = np.zeros((len(results), max(1, len(cols))))
    for row, i in enumerate(order):
        r = results[i]
        for c, (ex, name) in enumerate(cols):
            e = r["exercises"].get(ex)
            t = next((t for t in (e.get("tests", []) if e else []) if t["name"] == name), None)
            if t is None or t.get("code") in ("NOT_ATTEMPTED", "MISSING_FILE") or (e and e["status"] == "missing"):
                grid[row, c] = 0
            elif t.get("passed"):
                grid[row, c] = 2
            else:
                grid[row, c] = 1
    h = min(14.0, 0.16 * len(results) + 1.8)
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH_IN, max(7.0, 0.22 * len(cols) + 2.5)), h))
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
    ax.set_xticks(ticks, names)
    if len(results) <= 40:
        h = max(h, 0.2 * len(results) + 1.8)
        fig.set_figheight(h)
        ax.set_yticks(np.arange(len(results)),
                      [clean(Path(str(results[i]["submission"]).rstrip("/")).name, 28) for i in order],
                      fontsize=MIN_FONT_PT)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(results)} submissions, best at the top")
    handles = [matplotlib.patches.Patch(color=c, label=lab)
               for c, lab in ((GREEN, "passed"), (RED, "failed"), (GREY, "not attempted / missing"))]
    ax.legend(handles=handles, ncol=3, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.06))
    ax.set_title("Every test of every submission")
    return _save(fig, path)


PLOTS = (
    ("score_histogram.png", score_histogram, "Score distribution"),
    ("exercise_means.png", exercise_means, "Mean score per exercise"),
    ("status_breakdown.png", status_breakdown, "Outcome per exercise"),
    ("pass_rate_heatmap.png", pass_rate_heatmap, "Pass rate per test"),
    ("student_check_matrix.png", student_check_matrix, "Every test of every submission"),
)


def render_all(results: list[ReportRow], out: Path) -> list[tuple[str, str]]:
    """Writes every plot into ``out``; returns (file name, caption) pairs.

    Names in the plots come from the results (submissions, otter's questions): matplotlib's mathtext is
    off, so a ``$`` in one is a dollar sign (``$\\x$`` once stopped the whole report).
    """
    out.mkdir(parents=True, exist_ok=True)
    done = []
    with plt.rc_context({**_RC, "text.parse_math": False}):
        for name, fn, caption in PLOTS:
            fn(results, out / name)
            done.append((name, caption))
    return done
