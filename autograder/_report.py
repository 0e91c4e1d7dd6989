"""Outputs of ``tapetrace grade``: table, JSON, CSV, feedback files, progress."""

from __future__ import annotations

import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from autograder._paths import EXERCISES


def table(results: list[dict[str, Any]]) -> str:
    """A readable table: per submission, exercise, score, max, first failure message."""
    lines = []
    for res in results:
        lines.append(f"== {res['submission']}  total {res['total']:g} / {res['max_total']:g}"
                     f"  (device: torch {res['device'].get('torch')}, jax {res['device'].get('jax')};"
                     f" seed {res.get('seed')})")
        lines.append(f"   {'exercise':<24} {'score':>6} {'max':>5}  {'status':<8} message")
        for ex, e in res["exercises"].items():
            msg = e.get("message", "")
            if len(msg) > 110:
                msg = msg[:107] + "..."
            lines.append(f"   {ex:<24} {e['score']:>6g} {e['max_score']:>5g}  {e['status']:<8} {msg}")
    return "\n".join(lines)


def write_json(results: list[dict[str, Any]], path: str) -> None:
    """One object for one submission, a list for several (GRADING.md)."""
    data: Any = results[0] if len(results) == 1 else results
    tmp = f"{path}.tmp"
    Path(tmp).write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def write_csv(results: list[dict[str, Any]], path: str) -> None:
    """One row per submission: path, each exercise's score, total."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["submission", *EXERCISES, "total", "max_total"])
        for res in results:
            w.writerow([res["submission"], *[res["exercises"].get(ex, {}).get("score", "") for ex in EXERCISES],
                        res["total"], res["max_total"]])


def feedback_markdown(res: dict[str, Any]) -> str:
    """Per-student feedback: each exercise's tests with points and safe messages."""
    out = [f"# Feedback: {Path(res['submission']).name}", "",
           f"**Total: {res['total']:g} / {res['max_total']:g}**", ""]
    for ex, e in res["exercises"].items():
        out.append(f"## {ex} — {e['score']:g} / {e['max_score']:g} ({e['status']})")
        if e.get("message"):
            out.append(f"> {e['message']}")
        out.append("")
        for t in e["tests"]:
            mark = "✅" if t["passed"] else "❌"
            line = f"- {mark} `{t['name']}` {t['score']:g}/{t['max_score']:g}"
            if t.get("message") and not t["passed"]:
                line += f" — {t['message']}"
            out.append(line)
        out.append("")
    return "\n".join(out)


def write_feedback(results: list[dict[str, Any]], folder: str, lang: str = "en") -> None:
    """Writes ``<folder>/<submission name>.md`` per submission."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    for res in results:
        base = Path(res["submission"].rstrip("/")).name or "submission"
        name = base
        k = 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        (Path(folder) / f"{name}.md").write_text(feedback_markdown(res))


class Progress:
    """A progress bar with ETA on a terminal; plain lines otherwise."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled and total > 1
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.finished: list[dict[str, Any]] = []

    def update(self, res: dict[str, Any]) -> None:
        self.finished.append(res)
        if not self.enabled:
            return
        n = len(self.finished)
        elapsed = time.monotonic() - self.start
        eta = elapsed / n * (self.total - n)
        if self.tty:
            width = 30
            filled = int(width * n / self.total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {n}/{self.total}"
                             f"  {elapsed:5.0f}s elapsed, ETA {eta:5.0f}s ")
        else:
            sys.stderr.write(f"graded {n}/{self.total}: {res['submission']} "
                             f"{res['total']:g}/{res['max_total']:g} (ETA {eta:.0f}s)\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")
