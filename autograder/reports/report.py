"""Outputs of ``tapetrace grade``: table, JSON, CSV, feedback files, progress.

Everything here reads the result objects of GRADING.md (one per submission)
and never grades. The records' text was cleaned where it entered them
(``autograder/core/text.py``); a submission's path is the instructor's identifier
and stays as given in the JSON. Each output escapes for its medium: the table
and the progress line for a terminal (:func:`autograder.core.text.terminal`), CSV
cells never start a formula (:func:`autograder.core.text.csv_cell`), Markdown and
HTML escape markup, and feedback file names are safe and one per submission.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from autograder.core.i18n import section
from autograder.core.paths import EXERCISES
from autograder.core.text import clean, csv_cell, terminal, to_bytes

# The feedback's fixed words and the statuses' names, by language (UI text: autograder/messages/report.py).
LABELS: dict[str, dict[str, str]] = section("report")
STATUS_WORDS: dict[str, dict[str, str]] = section("status")


def _fmt(x: Any) -> str:
    try:
        return f"{float(x):g}"
    except (TypeError, ValueError):
        return str(x)


def terminal_text(text: Any) -> str:
    """``text`` safe to print on a terminal: every control or unprintable character becomes ``?``."""
    return "".join(ch if ch.isprintable() else "?" for ch in str(text))


def _atomic_write(path: str | os.PathLike, text: str) -> None:
    """Writes via a temporary file and a rename: readers never see half a file."""
    path = str(path)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    os.replace(tmp, path)


# ----------------------------------------------------------------------- table
def table(results: list[dict[str, Any]]) -> str:
    """A readable table: per submission, exercise, score, max, first failure message."""
    lines = []
    for res in results:
        dev = res.get("device") or {}
        lines.append(f"== {terminal(res['submission'])}  total {_fmt(res['total'])} / {_fmt(res['max_total'])}"
                     f"  (device: torch {dev.get('torch')}, jax {dev.get('jax')};"
                     f" seed {res.get('seed')})")
        lines.append(f"   {'exercise':<24} {'score':>6} {'max':>5}  {'status':<8} message")
        for ex, e in res["exercises"].items():
            msg = terminal(e.get("message", ""))
            if len(msg) > 110:
                msg = msg[:107] + "..."
            lines.append(f"   {terminal(ex):<24} {_fmt(e['score']):>6} {_fmt(e['max_score']):>5}  "
                         f"{terminal(e['status']):<8} {msg}")
    return "\n".join(lines)


def compact_table(results: list[dict[str, Any]]) -> str:
    """One line per submission (for large batches): total, then each exercise's score."""
    exercises = [ex for ex in EXERCISES if any(ex in r["exercises"] for r in results)]
    width = max([10, *(len(terminal(r["submission"])) for r in results)])
    width = min(width, 60)
    head = f"{'submission':<{width}} {'total':>7}  " + " ".join(f"{ex[:4]:>5}" for ex in exercises)
    lines = [head]
    for r in results:
        name = terminal(r["submission"])
        if len(name) > width:
            name = "..." + name[-(width - 3):]
        cells = []
        for ex in exercises:
            e = r["exercises"].get(ex)
            cells.append(f"{'-' if e is None else _fmt(e['score']):>5}" if e is None or e["status"] == "graded"
                         else f"{terminal(e['status'])[:5]:>5}")
        lines.append(f"{name:<{width}} {_fmt(r['total']):>7}  " + " ".join(cells))
    return "\n".join(lines)


def summary_line(results: list[dict[str, Any]], seconds: float | None = None) -> str:
    """One line for the end of a batch: count, mean total, statuses, time."""
    n = len(results)
    if not n:
        return "graded 0 submissions"
    mean = sum(float(r["total"]) for r in results) / n
    top = max(float(r["max_total"]) for r in results)
    statuses: dict[str, int] = {}
    for r in results:
        for e in r["exercises"].values():
            statuses[e["status"]] = statuses.get(e["status"], 0) + 1
    st = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
    rate = f"; {seconds:.0f} s, {3600 * n / seconds:.0f} submissions/hour" if seconds else ""
    return f"graded {n} submission{'s' if n != 1 else ''}: mean {mean:.1f} / {top:g} (exercises: {st}){rate}"


# ------------------------------------------------------------------ JSON, CSV
def write_json(results: list[dict[str, Any]], path: str) -> None:
    """One object for one submission, a list for several (GRADING.md)."""
    data: Any = results[0] if len(results) == 1 else results
    _atomic_write(path, json.dumps(data, indent=2))


def read_json(path: str) -> list[dict[str, Any]]:
    """Reads what :func:`write_json` wrote (an object or a list) as a list.

    Raises:
        ValueError: the file is not valid JSON or holds no result objects.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and isinstance(data.get("tapetrace_part"), dict):
        data = data.get("results")  # one shard's part (autograder/scaleout/shard.py): its results
    items = data if isinstance(data, list) else [data]
    if not all(isinstance(r, dict) and "submission" in r and "exercises" in r for r in items):
        raise ValueError(f"{path} does not hold tapetrace results")
    return items


def write_csv(results: list[dict[str, Any]], path: str) -> None:
    """One row per submission: path, each exercise's score, total (and max_total)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["submission", *EXERCISES, "total", "max_total"])
    for res in results:
        w.writerow([csv_cell(res["submission"]),
                    *[csv_cell(res["exercises"].get(ex, {}).get("score", "")) for ex in EXERCISES],
                    csv_cell(res["total"]), csv_cell(res["max_total"])])
    _atomic_write(path, buf.getvalue())


class Checkpoint:
    """Rewrites the JSON output while a batch runs, so an interrupted run loses nothing.

    Writes at most every ``every`` seconds (and on :meth:`flush`); ``--resume``
    then skips what the file already holds.
    """

    def __init__(self, path: str | None, before: list[dict[str, Any]], order: list[str],
                 every: float = 2.0, writer: Callable[[list[dict[str, Any]], str], None] | None = None,
                 write_empty: bool = False) -> None:
        self.path = path
        self.writer = writer or write_json  # a shard writes its part (autograder/scaleout/shard.py)
        self.write_empty = write_empty
        self.before = list(before)
        self.rank = {p: i for i, p in enumerate(order)}
        self.every = every
        self.new: list[dict[str, Any]] = []
        self._last = 0.0
        self.warned = False
        self._lock = threading.Lock()

    def add(self, res: dict[str, Any]) -> None:
        with self._lock:
            self.new.append(res)
            if self.path and time.monotonic() - self._last >= self.every:
                self._write()

    def results(self) -> list[dict[str, Any]]:
        """Earlier results, then the new ones in the order the submissions were given."""
        with self._lock:
            return self.before + sorted(self.new, key=lambda r: self.rank.get(r["submission"], 1 << 30))

    def flush(self) -> None:
        with self._lock:
            if self.path:
                self._write()

    def _write(self) -> None:
        data = self.before + sorted(self.new, key=lambda r: self.rank.get(r["submission"], 1 << 30))
        self._last = time.monotonic()
        if not data and not self.write_empty:
            return
        try:
            self.writer(data, self.path)
        except OSError as err:  # a full disk must not stop the grading; the final write retries
            if not self.warned:
                self.warned = True
                print(f"tapetrace: warning: cannot update {self.path}: {err}", file=sys.stderr)


# -------------------------------------------------------------------- feedback
_WORD = re.compile(r"\w+", re.ASCII)  # a check or exercise name as the suites write them: shown as it is


def _md(text: Any) -> str:
    """Markdown-safe text: cleaned, HTML special characters escaped, markup characters neutralised."""
    return _md_escape(clean(text, 0))


def _md_escape(text: str) -> str:
    return re.sub(r"([\\*_\[\]|`#~$])", r"\\\1", html.escape(text, quote=False))


def _md_inline_code(text: str) -> str:
    """Keeps the catalogue's `code` spans but escapes everything around and inside them."""
    out = []
    for i, part in enumerate(clean(text, 0).split("`")):
        if i % 2 and part:
            out.append("<code>" + html.escape(part, quote=False).replace("|", "&#124;") + "</code>")
        else:
            out.append(_md_escape(part))
    return "".join(out).strip()


def _md_code(text: Any) -> str:
    """Text inside a ``<code>`` span of a Markdown table: cleaned, HTML-escaped, no cell break."""
    return html.escape(clean(text, 0), quote=False).replace("|", "&#124;")


def _status_word(status: str, lang: str) -> str:
    return STATUS_WORDS.get(lang, {}).get(status, status)


def feedback_markdown(res: dict[str, Any], lang: str = "en") -> str:
    """Per-student feedback: each exercise's tests with points and safe messages."""
    lab = LABELS.get(lang, LABELS["en"])
    out = [f"# {lab['feedback']}: {_md(Path(str(res['submission'])).name)}", "",
           f"**{lab['total']}: {_fmt(res['total'])} / {_fmt(res['max_total'])}**", ""]
    if not res["exercises"]:
        out.append(lab["no_exercises"])
    for ex, e in res["exercises"].items():
        heading = ex if _WORD.fullmatch(str(ex)) else _md(ex)
        out.append(f"## {heading} — {_fmt(e['score'])} / {_fmt(e['max_score'])} "
                   f"({_md(_status_word(e['status'], lang))})")
        out.append("")
        if e.get("message"):
            out.append(f"> {_md_inline_code(e['message'])}")
            out.append("")
        out.append(f"| | {lab['test']} | {lab['points']} | |")
        out.append("|---|---|---|---|")
        for t in e["tests"]:
            mark = "✅" if t["passed"] else "❌"
            kind = lab["hidden"] if t.get("hidden") else lab["public"]
            msg = _md_inline_code(t["message"]) if t.get("message") and not t["passed"] else ""
            name = f"`{t['name']}`" if _WORD.fullmatch(str(t["name"])) else f"<code>{_md_code(t['name'])}</code>"
            out.append(f"| {mark} | {name} ({kind}) | {_fmt(t['score'])} / {_fmt(t['max_score'])} | {msg} |")
        out.append("")
    return "\n".join(out)


_FEEDBACK_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d2330;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin:1.6rem 0 .4rem;display:flex;gap:.6rem;
align-items:baseline} .total{font-size:1.2rem;font-weight:600} .meta{color:#667;font-size:.85rem}
.score{margin-left:auto;font-variant-numeric:tabular-nums} .bar{height:6px;background:#e6e8ef;border-radius:3px}
.bar>span{display:block;height:6px;border-radius:3px;background:#2f9e44} .status{font-size:.8rem;color:#667}
table{border-collapse:collapse;width:100%;font-size:.92rem} td,th{padding:.3rem .5rem;border-bottom:1px solid #eee;
text-align:left;vertical-align:top} td.pts{white-space:nowrap;font-variant-numeric:tabular-nums}
tr.fail td:first-child{color:#c92a2a} tr.pass td:first-child{color:#2f9e44} .note{background:#fff4e6;
border-left:3px solid #f08c00;padding:.4rem .7rem;margin:.3rem 0 .6rem} code{background:#f1f3f5;padding:0 .2rem;
border-radius:3px} .kind{color:#889;font-size:.8rem}
"""


def _html_msg(text: str) -> str:
    out = []
    for i, part in enumerate(clean(text, 0).split("`")):
        out.append(f"<code>{html.escape(part)}</code>" if i % 2 and part else html.escape(part))
    return "".join(out)


def feedback_html(res: dict[str, Any], lang: str = "en") -> str:
    """The same feedback as :func:`feedback_markdown`, as a standalone HTML page."""
    lab = LABELS.get(lang, LABELS["en"])
    def esc(value: Any) -> str:
        return html.escape(clean(value, 0))

    name = esc(Path(str(res["submission"])).name)
    dev = res.get("device") or {}
    parts = [f"<!DOCTYPE html><html lang=\"{esc(lang)}\"><head><meta charset=\"utf-8\">",
             f"<title>{lab['feedback']}: {name}</title><style>{_FEEDBACK_CSS}</style></head><body>",
             f"<h1>{lab['feedback']}: {name}</h1>",
             f"<div class=\"total\">{lab['total']}: {_fmt(res['total'])} / {_fmt(res['max_total'])}</div>",
             f"<div class=\"meta\">{lab['device']}: torch {esc(str(dev.get('torch', '?')))}, "
             f"jax {esc(str(dev.get('jax', '?')))}</div>"]
    if not res["exercises"]:
        parts.append(f"<p>{lab['no_exercises']}</p>")
    for ex, e in res["exercises"].items():
        frac = float(e["score"]) / float(e["max_score"]) if float(e["max_score"] or 0) else 0.0
        parts.append(f"<h2 id=\"{esc(ex)}\">{esc(ex)} <span class=\"status\">{esc(_status_word(e['status'], lang))}"
                     f"</span><span class=\"score\">{_fmt(e['score'])} / {_fmt(e['max_score'])}</span></h2>")
        parts.append(f"<div class=\"bar\"><span style=\"width:{100 * frac:.0f}%\"></span></div>")
        if e.get("message"):
            parts.append(f"<div class=\"note\">{_html_msg(e['message'])}</div>")
        parts.append("<table>")
        for t in e["tests"]:
            ok = bool(t["passed"])
            kind = lab["hidden"] if t.get("hidden") else lab["public"]
            msg = _html_msg(t["message"]) if t.get("message") and not ok else ""
            parts.append(f"<tr class=\"{'pass' if ok else 'fail'}\"><td>{'✔' if ok else '✘'}</td>"
                         f"<td><code>{esc(str(t['name']))}</code> <span class=\"kind\">{kind}</span></td>"
                         f"<td class=\"pts\">{_fmt(t['score'])} / {_fmt(t['max_score'])}</td><td>{msg}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def safe_stem(submission: str) -> str:
    """A file name for a submission's feedback: its base name, harmless characters only.

    A name that had to change (spaces, other scripts, bytes that are not UTF-8, a leading ``-``, too
    long) gets a short hash of the original: ``" alice"`` and ``"alice"`` never share a file.
    """
    base = Path(str(submission).rstrip("/\\")).name or "submission"
    for suffix in (".ipynb", ".zip", ".py"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._-") or "submission"
    if stem != base or len(stem) > 100:
        stem = f"{stem[:100]}-{hashlib.sha256(to_bytes(base)).hexdigest()[:8]}"
    return stem


def write_feedback(results: list[dict[str, Any]], folder: str, lang: str = "en", fmt: str = "md") -> list[Path]:
    """Writes one feedback file per submission: ``<folder>/<name>.md`` and/or ``.html``.

    Args:
        results: result objects.
        folder: output directory (created).
        lang: ``en`` or ``es`` for the headings (messages are in the grading language).
        fmt: ``md``, ``html`` or ``both``.

    Returns:
        The paths written.
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    written = []
    for res in results:
        base = safe_stem(res["submission"])
        name, k = base, 2
        while name.lower() in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name.lower())
        if fmt in ("md", "both"):
            p = Path(folder) / f"{name}.md"
            _atomic_write(p, feedback_markdown(res, lang))
            written.append(p)
        if fmt in ("html", "both"):
            p = Path(folder) / f"{name}.html"
            _atomic_write(p, feedback_html(res, lang))
            written.append(p)
    return written


# -------------------------------------------------------------------- progress
def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A progress bar with ETA on a terminal; plain lines otherwise.

    ``update`` is called from grading threads with each finished submission;
    ``task_done`` (optional) with each finished (submission, exercise) so the
    ETA moves before a whole submission is done. On a terminal a ticker thread
    redraws the bar every second so elapsed time never looks frozen.
    """

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None,
                 tasks_per_item: int = 1, tty: bool | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = self.stream.isatty() if tty is None else tty
        self.start = time.monotonic()  # elapsed counts from here (includes starting the workers)
        self.rate_start = self.start  # the ETA's rate counts from begin()
        self.phase = "starting workers"
        self.finished: list[dict[str, Any]] = []
        self.tasks_total = max(1, total * max(1, tasks_per_item))
        self.tasks_done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.enabled and self.tty:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def begin(self) -> None:
        """Grading starts now (after the workers' start-up): the ETA's rate counts from here."""
        with self._lock:
            self.rate_start = time.monotonic()
            self.phase = ""

    def eta(self) -> float | None:
        """Seconds left, from the rate of finished tasks; None before the first one."""
        done = self.tasks_done if self.tasks_done else len(self.finished)
        total = self.tasks_total if self.tasks_done else self.total
        if not done:
            return None
        return (time.monotonic() - self.rate_start) / done * max(0, total - done)

    def task_done(self, *_args: Any) -> None:
        with self._lock:
            self.tasks_done += 1

    def update(self, res: dict[str, Any]) -> None:
        with self._lock:
            self.finished.append(res)
            if not self.enabled:
                return
            if self.tty:
                self._draw()
            else:
                n = len(self.finished)
                eta = self.eta()
                self.stream.write(f"graded {n}/{self.total}: {terminal(res['submission'])} "
                                  f"{_fmt(res['total'])}/{_fmt(res['max_total'])}"
                                  f" ({_clock(time.monotonic() - self.start)} elapsed"
                                  f"{', ETA ' + _clock(eta) if eta is not None else ''})\n")
                self.stream.flush()

    def _draw(self) -> None:
        n = len(self.finished)
        width = 28
        frac = self.tasks_done / self.tasks_total if self.tasks_done else n / max(1, self.total)
        filled = int(width * min(1.0, frac))
        eta = self.eta()
        tail = f"  ({self.phase})" if self.phase else ""
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {n}/{self.total}"
                          f"  {_clock(time.monotonic() - self.start)} elapsed"
                          f"  ETA {_clock(eta) if eta is not None else '--:--'}{tail} \x1b[K")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2)
        with self._lock:
            if self.enabled and self.tty:
                self._draw()
                self.stream.write("\n")
                self.stream.flush()


def merge_callbacks(*fns: Callable[[dict[str, Any]], None] | None) -> Callable[[dict[str, Any]], None]:
    """One callback calling several (None entries skipped), in order."""
    real = [f for f in fns if f is not None]

    def call(res: dict[str, Any]) -> None:
        for f in real:
            f(res)

    return call
