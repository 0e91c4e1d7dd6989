"""Reading submissions under a time and memory budget, in a child process (never the grader's own).

:mod:`autograder.submissions.loader` turns a submission into source texts: it reads files and zips, parses JSON,
splits notebooks into cells and runs IPython's input transformer on them. Its parsing is linear in what
it reads, but a submission chooses what it holds: tens of thousands of cells, a notebook of nested
empty lists. So every read runs in a child process (``python -m autograder.submissions.loadguard``) with an
address-space cap, and the grader waits for it with a deadline: a submission that exceeds either is
*unreadable* (docs/grading-contract.md, "Statuses"), with a message saying which, and the rest of the batch is untouched (the
child is replaced for the next one). The grader's main thread only waits.

One child serves a whole batch (IPython is imported once); :class:`Reader` is its grader side.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from autograder.core import wire as _wire
from autograder.core.paths import ROOT
from autograder.submissions.loader import Submission, SubmissionError

READ_MEM_BYTES = 1536 * 1024**2  # beyond what the child has mapped once started; a 100 MB notebook needs ~0.5 GB


START_SECONDS = 300.0  # a hang guard for the child's start (imports), which is the grader's cost, not a submission's
READ_SECONDS_ENV = "TAPETRACE_READ_SECONDS"  # the reading budget in seconds, when set (instead of the rule below)


def read_seconds(timeout: float) -> float:
    """The time one submission's reading may take, for a run whose per-call limit is ``timeout``:
    ``max(20, 2 x timeout)`` seconds, or :data:`READ_SECONDS_ENV` where that names a positive number."""
    try:
        override = float(os.environ.get(READ_SECONDS_ENV, ""))
    except ValueError:
        override = 0.0
    return override if override > 0 else max(20.0, 2.0 * timeout)


class ReadBudgetExceeded(SubmissionError):
    """Reading the submission took too long or too much memory: the submission is ``unreadable``."""

    status = "unreadable"

    def __init__(self, key: str, **fields: Any) -> None:
        from autograder.core.i18n import render

        super().__init__(render(key, "en", **fields))
        self.key = key
        self.fields = fields


class ReaderTrouble(RuntimeError):
    """The reading child could not start: the grader's trouble (``grader_error`` rows), never the student's."""


class Reader:
    """Reads submissions in a child process, one at a time, each within the budget.

    Args:
        seconds: the most one submission's reading may take (wall clock).
        mem_bytes: the child's address space beyond what it has mapped once started.
    """

    def __init__(self, seconds: float, mem_bytes: int = READ_MEM_BYTES) -> None:
        self.seconds = float(seconds)
        self.mem_bytes = int(mem_bytes)
        self._proc: subprocess.Popen | None = None
        self._tmp = tempfile.mkdtemp(prefix="tapetrace-read-")  # zips unpack here; removed with the reader

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen:
        """A fresh child, once it has imported what reading needs: its start is never on a submission's budget.

        Raises:
            ReaderTrouble: it did not say it was ready within :data:`START_SECONDS`.
        """
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep), TMPDIR=self._tmp, PYTHONDONTWRITEBYTECODE="1")
        proc = subprocess.Popen([sys.executable, "-m", "autograder.submissions.loadguard", str(self.mem_bytes)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env)
        self._proc = proc
        try:
            ready = _wire.recv(proc.stdout.fileno(), time.monotonic() + START_SECONDS)  # type: ignore[union-attr]
        except (TimeoutError, EOFError, OSError, _wire.WireError) as err:
            self._kill()
            raise ReaderTrouble(f"the grader's reading process did not start ({type(err).__name__})") from None
        if ready != {"ready": True}:
            self._kill()
            raise ReaderTrouble("the grader's reading process did not start (unexpected first answer)")
        return proc

    def load(self, path: str) -> Submission:
        """One submission, as :func:`autograder.submissions.loader.load` reads it.

        Raises:
            SubmissionError: it cannot be read (:class:`ReadBudgetExceeded`: over the budget).
            ReaderTrouble: the reading child could not start (the grader's trouble).
        """
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + self.seconds
        try:
            _wire.send(proc.stdin.fileno(), {"path": path})
            resp = _wire.recv(proc.stdout.fileno(), deadline)
        except TimeoutError:
            self._kill()
            raise ReadBudgetExceeded("READ_TIMEOUT", seconds=self.seconds) from None
        except (EOFError, OSError, _wire.WireError):
            self._kill()
            raise ReadBudgetExceeded("READ_FAILED", cap=_size(self.mem_bytes)) from None
        if not isinstance(resp, dict):
            self._kill()
            raise ReadBudgetExceeded("READ_FAILED", cap=_size(self.mem_bytes))
        if resp.get("memory"):
            self._kill()  # it is close to its cap: a fresh one for the next submission
            raise ReadBudgetExceeded("READ_MEMORY", cap=_size(self.mem_bytes))
        if not resp.get("ok"):
            raise SubmissionError(str(resp.get("error", "unreadable")))
        sub = resp["sub"]
        refused = {ex: (str(v[0]), str(v[1])) for ex, v in (sub.get("refused") or {}).items()}
        return Submission(str(sub["path"]), dict(sub["sources"]), str(sub["form"]), refused)

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None
        for entry in os.listdir(self._tmp):  # what a killed read left (a zip half unpacked)
            shutil.rmtree(os.path.join(self._tmp, entry), ignore_errors=True)

    def close(self) -> None:
        """Stops the child and removes its temporary folder."""
        if self._proc is not None:
            try:
                self._proc.stdin.close()  # type: ignore[union-attr]
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        shutil.rmtree(self._tmp, ignore_errors=True)


def _size(n: int) -> str:
    return f"{n / 1024**3:.1f} GiB" if n >= 1024**3 else f"{n // 1024**2} MiB"


def load_bounded(path: str, timeout: float) -> Submission:
    """One submission read in a child under the budget of a run whose per-call limit is ``timeout``."""
    with Reader(read_seconds(timeout)) as reader:
        return reader.load(path)


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> None:
    """The child: ``python -m autograder.submissions.loadguard MEM_BYTES``; requests on stdin, answers on stdout."""
    from autograder.submissions import loader as _loader

    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing printed by a library can corrupt the answers
    cap = _vm_size() + int(sys.argv[1])
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass
    try:  # what every notebook's reading imports, before the first deadline runs
        from IPython.core import inputtransformer2  # noqa: F401
    except ImportError:
        pass
    _wire.send(out, {"ready": True})
    while True:
        try:
            req = _wire.recv(0)
        except (EOFError, OSError):
            return
        try:
            sub = _loader.load(str(req["path"]))
            resp: dict[str, Any] = {"ok": True, "sub": {"path": sub.path, "sources": sub.sources, "form": sub.form,
                                                        "refused": {k: list(v) for k, v in sub.refused.items()}}}
        except MemoryError:
            resp = {"ok": False, "memory": True}
        except _loader.SubmissionError as err:
            resp = {"ok": False, "error": str(err)}
        except Exception as err:  # noqa: BLE001 - as GradingRun.grade did in the grader's process
            resp = {"ok": False, "error": f"{type(err).__name__}: {err}"}
        try:
            _wire.send(out, resp)
        except MemoryError:
            _wire.send(out, {"ok": False, "memory": True})


if __name__ == "__main__":
    main()
