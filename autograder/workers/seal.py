"""Worker side: a probe's observation, frozen the moment the probe returns, and sent while no student code runs.

A probe runs in the student's process, and student code can run again after the probe returned and
before its answer is written: a Python signal handler (between any two bytecodes of the main thread),
a garbage-collector callback (at any allocation), another thread (whenever the GIL changes hands), an
object the grader's code calls into. Any of them could reach the answer (through a frame captured
while the probe called the student's code: its ``f_locals``) and rewrite it. So:

- the worker pickles the probe's return value to bytes in one C call (``pickle.dumps``), in the same
  expression as the probe call (``autograder.workers.worker._seal_probe``): it never sits in a variable that a frame exposes, and bytes cannot be
  changed. A probe returns plain data (numbers, strings, lists, dicts, numpy arrays): pickling it runs
  no Python code.
- :func:`hold` and :func:`release`: while the answer is read back (:func:`thaw`, which builds only plain data and numpy
  arrays, from references taken before any student code ran), checked and written as a frame, Python
  signal handlers are deferred (run after the window, in order), the garbage collector and its
  callbacks are off and the GIL is not handed to another thread (``sys.setswitchinterval``).

Every function and constant used here is bound at import, in the zygote, before any student code
runs, and held in default arguments (the audit hook refuses replacing a grader function's defaults).
"""

from __future__ import annotations

import _signal
import gc
import io
import pickle
import sys
from typing import Any

import numpy as np

from autograder.core import wire as _wire

# what a probe's answer may hold besides plain data: numpy arrays, scalars and dtypes
_ALLOWED: dict[tuple[str, str], Any] = {("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype}
for _mod in ("numpy._core.multiarray", "numpy.core.multiarray"):
    try:
        _m = __import__(_mod, fromlist=["_reconstruct"])
    except ImportError:
        continue
    _ALLOWED[(_mod, "_reconstruct")] = _m._reconstruct
    _ALLOWED[(_mod, "scalar")] = _m.scalar
_ALLOWED_ITEMS = tuple(_ALLOWED.items())
# a switch interval no probe's answer takes to write (seconds): no other thread runs meanwhile
_HELD = 1000.0


class Unsendable(TypeError):
    """A probe's answer held something other than plain data and numpy arrays."""


def _find_class(self: Any, module: str, name: str,
                _allowed: tuple[tuple[tuple[str, str], Any], ...] = _ALLOWED_ITEMS, _unsendable: type = Unsendable) -> Any:
    for key, value in _allowed:
        if key[0] == module and key[1] == name:
            return value
    raise _unsendable(f"{module}.{name}")


def thaw(blob: bytes, _type: type = type, _unpickler: type = pickle.Unpickler, _find: Any = _find_class,
         _bytesio: type = io.BytesIO) -> Any:
    """The value the worker's ``pickle.dumps`` made; only plain data and numpy arrays are built.

    The unpickler's class is made for this call: no other thread can have replaced one of its methods.

    Raises:
        Unsendable: the bytes name anything else.
    """
    try:
        return _type("_Thaw", (_unpickler,), {"find_class": _find})(_bytesio(blob)).load()
    except Unsendable:
        raise
    except Exception as err:  # noqa: BLE001 - a malformed pickle
        raise Unsendable(str(err)[:200]) from None


def _signals() -> tuple[int, ...]:
    """Every signal a handler can be read for (``_signal``'s own functions: ``signal``'s wrappers turn a
    handler into an enum member, which hashes and compares the student's object)."""
    out = []
    for sig in _signal.valid_signals():
        try:
            _signal.getsignal(int(sig))
        except (OSError, ValueError):
            continue
        out.append(int(sig))
    return tuple(out)


def _deferrer(deferred: list[int]) -> Any:
    def defer(signum: int, frame: Any, _append: Any = deferred.append) -> None:
        _append(signum)

    return defer


def hold(_getswitch: Any = sys.getswitchinterval, _setswitch: Any = sys.setswitchinterval, _held: float = _HELD,
         _isenabled: Any = gc.isenabled, _disable: Any = gc.disable, _callbacks: list[Any] = gc.callbacks,
         _valid: tuple[int, ...] = _signals(), _getsignal: Any = _signal.getsignal, _setsignal: Any = _signal.signal,
         _callable: Any = callable, _deferrer: Any = _deferrer, _tuple: type = tuple) -> tuple[Any, ...]:
    """Opens a window in which no student code runs (call in the main thread, where Python runs signal
    handlers): the GIL stays with this thread, the garbage collector and its callbacks are off, every
    Python signal handler is replaced by one that notes the signal. Close it with :func:`release`.

    Returns:
        What :func:`release` puts back.
    """
    interval = _getswitch()
    _setswitch(_held)
    enabled = _isenabled()
    _disable()
    callbacks = _callbacks[:]
    del _callbacks[:]
    deferred: list[int] = []
    defer = _deferrer(deferred)
    handlers = []
    for sig in _valid:
        handler = _getsignal(sig)
        if _callable(handler):
            handlers.append((sig, handler))
            _setsignal(sig, defer)
    return interval, enabled, _tuple(callbacks), _tuple(handlers), deferred


def release(held: tuple[Any, ...], _setswitch: Any = sys.setswitchinterval, _enable: Any = gc.enable,
            _callbacks: list[Any] = gc.callbacks, _setsignal: Any = _signal.signal,
            _raise: Any = _signal.raise_signal) -> None:
    """Closes :func:`hold`'s window: handlers, gc callbacks and the switch interval back, then the signals
    that arrived meanwhile raised again, in order (the student's handlers still see them)."""
    interval, enabled, callbacks, handlers, deferred = held
    for sig, handler in handlers:
        _setsignal(sig, handler)
    _callbacks[:] = callbacks
    if enabled:
        _enable()
    _setswitch(interval)
    for sig in deferred:
        _raise(sig)


def _unsendable(err: BaseException) -> dict[str, Any]:
    text = " ".join(str(err).split())[:300]
    return {"ok": False, "kind": "internal", "message": f"probe returned unsendable data: {text}"}


def answer(sealed: tuple[str, bytes], changes: Any, restore: Any, tampered: list[str], respond: Any,
           _hold: Any = hold, _release: Any = release, _thaw: Any = thaw, _frame: Any = _wire.frame,
           _unsendable: Any = _unsendable) -> tuple[bytes, list[str]]:
    """The frame a worker sends for a probe's sealed answer, and what it found tampered.

    Made while no student code can run (:func:`hold`): the grader's code is compared with its snapshot
    first, then the answer is read back and framed.

    Args:
        sealed: ``("value", pickled value)`` or ``("response", pickled response)``
            (``autograder.workers.worker._seal_probe``).
        changes: the snapshot's check (:meth:`autograder.workers.guard.Snapshot.checker`); None in a
            reference's worker.
        restore: puts the snapshot back (called when something changed).
        tampered: what an earlier check found changed (then every answer is ``respond(tampered)``).
        respond: the response of a tampered worker (:func:`autograder.workers.guard.tampered_response`).
    """
    held = _hold()
    try:
        if changes is not None and not tampered:
            tampered = changes()
        if tampered:  # what the student's code changed is put back before anything is framed
            restore()
            return _frame(respond(tampered)), tampered
        kind, blob = sealed
        try:
            value = _thaw(blob)
            return _frame({"ok": True, "value": value} if kind == "value" else value), tampered
        except (TypeError, Unsendable) as err:
            return _frame(_unsendable(err)), tampered
    finally:
        _release(held)
