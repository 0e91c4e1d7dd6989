"""The progress of ``tapetrace grade`` on the terminal: a bar with ETA on a terminal, plain lines otherwise.

Owns :class:`Progress` (fed from grading threads with each finished submission and, optionally, each
finished (submission, exercise), so the ETA moves before a whole submission is done) and
:func:`merge_callbacks` (one ``on_result`` callback calling several). Submission names are escaped for a
terminal (:func:`autograder.core.text.terminal`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from autograder.core.records import ResultRow
from autograder.core.text import terminal
from autograder.reports.report import _fmt

# Said at once, before the workers' start-up and the reference's first answers (a minute or two on a laptop):
# what the grader is doing, so a silent terminal never looks hung.
STARTING = ("tapetrace: grading {n} submission(s), {k} exercise(s) each: reading the submissions and starting the "
            "workers (importing torch and JAX), then the reference solution answers each exercise's probes once; "
            "a line follows per graded submission")
READY = "tapetrace: workers ready after {elapsed}: grading (each exercise's first submission waits for the reference)"
STARTING_PHASE = "starting workers"
READY_PHASE = "the reference answers the first submission"


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
        self.phase = STARTING_PHASE
        self.finished: list[ResultRow] = []
        self.tasks_total = max(1, total * max(1, tasks_per_item))
        self.tasks_done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.enabled:  # the first line at once: what the grader does before its first result
            self.stream.write(STARTING.format(n=total, k=max(1, tasks_per_item)) + "\n")
            if self.tty:
                self._draw()
            self.stream.flush()
        if self.enabled and self.tty:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def begin(self) -> None:
        """Grading starts now (after the workers' start-up): the ETA's rate counts from here."""
        with self._lock:
            self.rate_start = time.monotonic()
            self.phase = READY_PHASE if not self.finished else ""
            if self.enabled and not self.tty:
                self.stream.write(READY.format(elapsed=_clock(self.rate_start - self.start)) + "\n")
                self.stream.flush()

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

    def update(self, res: ResultRow) -> None:
        with self._lock:
            self.finished.append(res)
            self.phase = ""
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


def merge_callbacks(*fns: Callable[[ResultRow], None] | None) -> Callable[[ResultRow], None]:
    """One callback calling several (None entries skipped), in order."""
    real = [f for f in fns if f is not None]

    def call(res: ResultRow) -> None:
        for f in real:
            f(res)

    return call
