"""The wire (plain data only) and the one comparison helper."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from autograder.core import wire as _wire
from autograder.core.compare import first_difference
from autograder.core.tolerances import TOLERANCES, Tol, tolerance


def test_roundtrip_plain_trees():
    tree = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": [1, 2.5, True, None, "s"],
            "c": (np.int64(3), np.float32(0.5)), "d": float("nan"), "e": np.zeros((0, 4), np.int32)}
    back = _wire.decode(json.loads(json.dumps(_wire.encode(tree))))
    assert back["a"].dtype == np.float32 and np.array_equal(back["a"], tree["a"])
    assert back["b"] == [1, 2.5, True, None, "s"]
    assert back["c"] == (3, 0.5) and isinstance(back["c"], tuple)
    assert np.isnan(back["d"]) and back["e"].shape == (0, 4)


@pytest.mark.parametrize("bad", [object(), np.array([object()]), {1: 2}, lambda: 0])
def test_encode_refuses_non_plain(bad):
    with pytest.raises(TypeError):
        _wire.encode(bad)


@pytest.mark.parametrize("msg", [
    {"__nd__": "object", "shape": [1], "data": ""},
    {"__nd__": "float32", "shape": [3], "data": "AAAA"},
    {"__float__": "__import__('os')"},
])
def test_decode_refuses_malformed(msg):
    with pytest.raises(_wire.WireError):
        _wire.decode(msg)


def test_frames_over_a_pipe_and_deadline():
    r, w = os.pipe()
    try:
        _wire.send(w, {"x": np.ones(3)})
        assert np.array_equal(_wire.recv(r, deadline=None)["x"], np.ones(3))
        import time
        with pytest.raises(TimeoutError):
            _wire.recv(r, deadline=time.monotonic() + 0.05)
        os.write(w, (2**40).to_bytes(8, "big"))
        with pytest.raises(_wire.WireError):
            _wire.recv(r)
    finally:
        os.close(r)
        os.close(w)


# What the wire once looked up when it ran: a student's code rebinds any of these in its worker, whose loop then
# read each command and sent each answer through the student's function (os.write rewrote an answer's frame:
# tests/adversarial/attacks/forge_ex05_patched_os_write_rewrites_answers.py, 10/10 before).
REBINDABLE = [("os", "write"), ("os", "read"), ("os", "readv"), ("select", "select"), ("time", "monotonic"),
              ("struct", "unpack"), ("struct", "pack"), ("json", "loads"), ("json", "dumps"),
              ("base64", "b64decode"), ("base64", "b64encode"), ("binascii", "a2b_base64"),
              ("numpy", "frombuffer"), ("numpy", "prod"), ("numpy", "cumsum"), ("numpy", "dtype"), ("numpy", "int64")]


def test_frames_go_through_no_function_a_student_can_rebind(monkeypatch):
    """Sent and read back (with a deadline, and as a worker's loop reads a command: its own readv, then the
    rest) while every one of them raises: nothing of the student's is called, the tree comes back whole."""
    import importlib
    import json.decoder
    import socket
    import time

    calls = []

    def rebound(name):
        def student(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"the wire called the student's {name}")
        return student

    tree = {"x": np.arange(70, dtype=np.float32).reshape(7, 10), "t": (1, "b"), "n": float("nan"),
            "deep": [[[{"k": [1, 2]}]]] * 40}  # more brackets than the quick depth count takes
    readv, deadline = os.readv, time.monotonic() + 60
    a, b = socket.socketpair()
    try:
        for module, name in REBINDABLE:
            monkeypatch.setattr(importlib.import_module(module), name, rebound(f"{module}.{name}"))
        for method in ("decode", "raw_decode"):
            monkeypatch.setattr(json.decoder.JSONDecoder, method, rebound(f"JSONDecoder.{method}"))
        _wire.send(a.fileno(), tree, deadline)
        back = _wire.recv(b.fileno(), deadline)
        _wire.send(a.fileno(), tree)
        head = bytearray(8)
        loop = _wire.recv_rest(b.fileno(), head[:readv(b.fileno(), [head])])
    finally:
        monkeypatch.undo()
        a.close()
        b.close()
    assert calls == []
    for got in (back, loop):
        assert np.array_equal(got["x"], tree["x"]) and got["t"] == (1, "b") and np.isnan(got["n"])
        assert got["deep"] == tree["deep"]


BUILTINS_CHECK = """
import builtins, json, os, socket, sys
import numpy as np
from autograder.core import wire
calls = []
def rebound(name):
    def student(*args, **kwargs):
        calls.append(name)
        raise AssertionError(name)
    return student
NAMES = ("len", "bytes", "bytearray", "memoryview", "isinstance", "int", "float", "str", "list", "dict", "tuple",
         "set", "max")
tree = {"x": np.arange(6, dtype=np.float32), "t": (1, "b"), "n": float("nan"), "deep": [[[{"k": [1]}]]] * 40}
saved = {name: getattr(builtins, name) for name in NAMES}
readv, head = os.readv, bytearray(8)
a, b = socket.socketpair()
try:
    for name in NAMES:
        setattr(builtins, name, rebound(name))
    wire.send(a.fileno(), tree)
    back = wire.recv_rest(b.fileno(), head[:readv(b.fileno(), [head])])
except AssertionError:
    back = None
finally:
    for name, fn in saved.items():
        setattr(builtins, name, fn)
ok = back is not None and back["t"] == (1, "b") and np.array_equal(back["x"], tree["x"]) and back["deep"] == tree["deep"]
print(json.dumps({"calls": calls, "ok": bool(ok)}))
"""


def test_a_workers_loop_reads_and_writes_frames_with_no_builtin_a_student_can_rebind():
    """The same with ``builtins`` rebound (in a process of its own: other threads of this one use them). The
    worker's snapshot would find a rebound builtin at the next answer, but the loop read the command first."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", BUILTINS_CHECK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"calls": [], "ok": True}


TOL = Tol(1e-6, 1e-5)


def test_structure_before_values():
    assert "missing keys ['b']" in first_difference({"a": 1.0}, {"a": 1.0, "b": 2.0}, TOL)
    assert "expected 3 items, got 2" in first_difference([1.0, 2.0], [1.0, 2.0, 3.0], TOL)
    assert "expected a dict, got a sequence" in first_difference([1.0], {"a": 1.0}, TOL)


def test_shape_then_dtype():
    msg = first_difference(np.zeros((3, 2), np.float32), np.zeros((2, 3), np.float32), TOL)
    assert msg == "output: expected shape (2, 3), got (3, 2)"
    assert "expected dtype float32, got float64" in first_difference(np.zeros(2), np.zeros(2, np.float32), TOL)


def test_values_message_has_errors_not_expected_values():
    want = np.array([1.2345678, 2.0, 3.0], np.float32)
    got = want.copy()
    got[1] += 0.5
    msg = first_difference(got, want, TOL, "logits")
    assert "1 of 3 values off" in msg and "max abs error 0.5" in msg and "index (1,)" in msg
    assert "1.234" not in msg and "2.5" not in msg  # never the values themselves


def test_nan_never_passes_and_ints_exact():
    assert "non-finite" in first_difference(np.array([np.nan]), np.array([1.0]), TOL)
    assert "non-finite" in first_difference(np.array([np.nan]), np.array([np.nan]), TOL)
    assert first_difference(np.array([np.inf]), np.array([np.inf]), TOL) is None
    assert "differ" in first_difference(np.array([1, 2]), np.array([1, 3]), TOL)
    assert first_difference(1.0 + 1e-9, 1.0, TOL) is None
    assert first_difference(np.float64(2.0).item(), 2.0, TOL) is None


def test_tolerance_table_is_complete_and_ordered():
    for kind in TOLERANCES:
        for backend in ("cpu", "cuda", "gpu", "tpu"):
            t = tolerance(kind, backend)
            assert t.atol >= tolerance(kind, "cpu").atol
    assert tolerance("exact").atol < tolerance("forward").atol < tolerance("steps").atol
