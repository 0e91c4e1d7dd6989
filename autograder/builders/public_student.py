"""The student's side of an in-process check: their names and calls, under the grader's conditions.

In the notebook the student's code is the kernel's globals (or the exercise's graded module), not a
sandboxed worker: :func:`student_caller` is ``ctx.student`` there, the worker's ``run_probe`` on those
names under a per-call time limit (an alarm), with arguments and results copied as the grader's wire
copies them; :class:`StudentFiles` points error messages at the student's cells; :func:`devices` and
:func:`pinned_precision` are the student's devices and the grader's matmul precision (TF32 off, JAX at
"highest") while checking. Ships in the notebook's runtime.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from autograder.core import wire as _wire
from autograder.core.protocol import probe_error
from autograder.core.suite import StudentProblem


class _CheckTimeout(BaseException):
    """Raised by the alarm inside a student call that runs too long (BaseException: not caught by ``except
    Exception`` in student code)."""


class StudentFiles(str):
    """The "path" of the student's code for ``_worker._describe``: notebook cells and given files.

    The worker locates the student's line by comparing each traceback frame's
    file with its source path; notebook code comes from many cells, so this
    string subclass compares equal to any IPython cell file (``<ipython-input-…>``
    or ``…/ipykernel_<pid>/<n>.py``) and to the files given.
    """

    _CELL = re.compile(r"(<ipython-input-\d+-[0-9a-f]+>|ipykernel_\d+[/\\]\d+\.py)$")

    def __new__(cls, files: tuple[str, ...] = ()) -> StudentFiles:
        obj = super().__new__(cls, "<your notebook cells>")
        obj.files = frozenset(os.path.abspath(f) for f in files)
        return obj

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            return NotImplemented
        return other in self.files or bool(self._CELL.search(other))

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = str.__hash__


def as_module(namespace: Any) -> types.ModuleType:
    """The student's names as a module (probes look names up with ``getattr``)."""
    if isinstance(namespace, types.ModuleType):
        return namespace
    mod = types.ModuleType("__student__")
    mod.__dict__.update({k: v for k, v in dict(namespace).items() if not (k.startswith("__") and k.endswith("__"))})
    return mod


def _wire_copy(obj: Any) -> Any:
    """What the other side of the grader's wire would receive: plain data, copied, never shared."""
    return _wire.decode(json.loads(json.dumps(_wire.encode(obj))))


def _machine_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raises :class:`_CheckTimeout` in this thread after ``seconds`` (main thread on Unix only)."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and seconds > 0)
    if not usable:
        yield
        return

    def _alarm(_signum: int, _frame: Any) -> None:
        raise _CheckTimeout()

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def student_caller(probes: Any, mod: Any, path: str, timeout: float) -> Callable[..., Any]:
    """``ctx.student`` for in-process checks: the worker's ``run_probe`` on the student's names."""
    from autograder.workers.worker import run_probe

    mem = _machine_memory()

    def call(probe: str, call: str, scale: float, kwargs: dict[str, Any]) -> Any:
        limit = timeout * scale
        req = {"probe": probe, "kwargs": _wire_copy(kwargs)}
        try:
            with _time_limit(limit):
                resp = run_probe(probes, mod, req, path)
        except _CheckTimeout:
            resp = {"ok": False, "kind": "exception", "type": _CheckTimeout.__name__}
        if resp.get("ok"):
            return _wire_copy(resp["value"])
        if resp.get("type") == "KeyboardInterrupt":
            raise KeyboardInterrupt
        if resp.get("type") == _CheckTimeout.__name__:
            raise StudentProblem("CALL_TIMEOUT", call=call, timeout=limit)
        raise probe_error(resp, call, mem)

    return call


def devices() -> dict[str, str]:
    """The student's devices: torch on CUDA when present, JAX on its default backend.

    Only frameworks already imported (by the exercise's probes) are asked.
    """
    out = {"torch": "cpu", "jax": "cpu"}
    if "torch" in sys.modules:
        try:
            out["torch"] = "cuda" if sys.modules["torch"].cuda.is_available() else "cpu"
        except Exception:  # noqa: BLE001 - a broken CUDA set-up means CPU
            out["torch"] = "cpu"
    if "jax" in sys.modules:
        try:
            out["jax"] = str(sys.modules["jax"].default_backend())
        except Exception:  # noqa: BLE001
            out["jax"] = "cpu"
    return out


# JAX options the checks' verdicts depend on, pinned while checking: matmul precision (docs/devices-and-tolerances.md), and the
# random bits a key gives (``jax.random`` draws; the default changed in JAX 0.5.0), as the snapshot recorded them
JAX_PINNED = {"jax_default_matmul_precision": "highest", "jax_threefry_partitionable": True}


@contextlib.contextmanager
def pinned_precision() -> Iterator[None]:
    """TF32 off for torch, JAX matmuls at "highest" (docs/devices-and-tolerances.md), JAX's random bits pinned (``JAX_PINNED``);
    restores the student's settings."""
    restore: list[Callable[[], None]] = []
    torch = sys.modules.get("torch")
    if torch is not None:
        matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
        saved = (matmul.allow_tf32, cudnn.allow_tf32, torch.get_float32_matmul_precision())

        def _torch_back(saved: tuple = saved) -> None:
            matmul.allow_tf32, cudnn.allow_tf32 = saved[0], saved[1]
            torch.set_float32_matmul_precision(saved[2])

        matmul.allow_tf32 = False
        cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        restore.append(_torch_back)
    jax = sys.modules.get("jax")
    if jax is not None:
        for option, value in JAX_PINNED.items():
            if not hasattr(jax.config, option):  # a JAX that no longer has the option behaves as pinned
                continue
            before = getattr(jax.config, option)
            jax.config.update(option, value)
            restore.append(lambda option=option, before=before: jax.config.update(option, before))
    try:
        yield
    finally:
        for undo in reversed(restore):
            undo()

