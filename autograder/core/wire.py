"""The wire between the grader and its workers: plain data only, never pickle.

A worker runs student code, so anything it sends is untrusted. Messages are
JSON objects; numpy arrays travel as ``{"__nd__": dtype, "shape": [...],
"data": base64}`` with a small whitelist of numeric dtypes, so decoding can
never execute code. Frames are length-prefixed and bounded before anything
is parsed: size (:data:`MAX_FRAME`), nesting depth (:data:`MAX_DEPTH`) and
number of values (:data:`MAX_VALUES`), so a hostile frame costs the grader at
most a few times its size in memory (a 48 MB frame of nested empty lists
once took it from 54 MB to 2.3 GB). What the values mean is checked where
they enter the grader (``autograder/workers/intake.py``).
"""

from __future__ import annotations

import binascii
import json
import json.encoder
import json.scanner
import os
import re
import select
import struct
import time
from collections.abc import Callable, Iterable, Sequence, Sized
from typing import Any

import numpy as np

# Bounds on one frame; beyond any of them the sender is a broken (or hostile) worker. A grading run of the
# solutions sends frames of at most 1.6 MB, nesting depth 7 and ~310 values (arrays are one string each).
MAX_FRAME = 32 * 1024 * 1024  # bytes
MAX_DEPTH = 32  # nested lists and objects
MAX_VALUES = 100_000  # JSON values in one frame (an upper bound: commas, brackets and braces outside strings)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
# The grader's fence after each answer (``autograder.workers.handle``): ``{FENCE: nonce}`` sent once an answer
# arrived, echoed by the worker's loop as it reads its next command. Frames between the answer and the echo belong to
# that call; an answer among them is a second answer (written by something other than the worker's loop).
FENCE = "tapetrace_fence"
_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
}


class WireError(Exception):
    """A frame could not be read or decoded (broken or hostile worker)."""


# What :func:`encode` and :func:`frame` use, bound here and held in default arguments: in a student's worker
# they run while no student code may (``autograder.workers.seal``), with references taken before any did
# (the student's code can rebind ``numpy.integer`` or ``json.dumps``, not a function's defaults).
_B64 = binascii.b2a_base64
_JSON = json.encoder.c_make_encoder(  # type: ignore[attr-defined]  # typeshed omits it: json's C encoder, _json's
    None, None, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
_INF = (float("inf"), float("-inf"))


def encode(obj: Any, _isinstance: Callable[[object, Any], bool] = isinstance, _int: type[int] = int,
           _float: type[float] = float, _bool: type[bool] = bool, _str: type[str] = str,
           _list: type[list[Any]] = list, _tuple: type[tuple[Any, ...]] = tuple, _dict: type[dict[Any, Any]] = dict,
           _repr: Callable[[object], str] = repr, _np_integer: type[np.integer[Any]] = np.integer,
           _np_floating: type[np.floating[Any]] = np.floating, _np_bool: type[np.bool_] = np.bool_,
           _ndarray: type[np.ndarray[Any, Any]] = np.ndarray,
           _contiguous: Callable[[Any], np.ndarray[Any, Any]] = np.ascontiguousarray,
           _b64: Callable[..., bytes] = _B64, _dtypes: frozenset[str] = frozenset(_DTYPES),
           _inf: tuple[float, float] = _INF, _type: Callable[[object], type] = type,
           _encode: Any = None) -> Any:
    """Turns a tree of numbers, strings, lists, dicts and ndarrays into JSON-able data.

    Args:
        obj: plain data; numpy scalars and arrays are allowed.

    Returns:
        A JSON-serialisable tree.
    """
    if obj is None or _isinstance(obj, (_bool, _str)):
        return obj
    if _isinstance(obj, (_int, _np_integer)) and not _isinstance(obj, _np_bool):
        return _int(obj)
    if _isinstance(obj, (_float, _np_floating)):
        f = _float(obj)
        if f != f or f in _inf:
            return {"__float__": _repr(f)}
        return f
    if _isinstance(obj, _np_bool):
        return _bool(obj)
    if _isinstance(obj, _ndarray):
        if obj.dtype.name not in _dtypes:
            raise TypeError(f"cannot send arrays of dtype {obj.dtype}")
        arr = _contiguous(obj)
        return {
            "__nd__": arr.dtype.name,
            "shape": _list(arr.shape),
            "data": _b64(arr.tobytes(), newline=False).decode("ascii"),
        }
    if _isinstance(obj, (_list, _tuple)):
        enc = [_encode(x) for x in obj]
        return {"__tuple__": enc} if _isinstance(obj, _tuple) else enc
    if _isinstance(obj, _dict):
        out = {}
        for k, v in obj.items():
            if not _isinstance(k, _str):
                raise TypeError(f"dict keys must be str, got {_type(k).__name__}")
            out[k] = _encode(v)
        return out
    raise TypeError(f"cannot send {_type(obj).__name__}")


# its recursion too goes through a default argument, not through the module's name ``encode`` (``_encode``, typed
# Any above: None until this line)
encode.__defaults__ = (*(encode.__defaults__ or ())[:-1], encode)


def frame(obj: Any, _encode: Callable[[Any], Any] = encode, _json: Callable[[Any, int], Iterable[str]] = _JSON,
          _join: Callable[[Iterable[str]], str] = "".join,
          _pack: Callable[[int], bytes] = struct.Struct(">Q").pack, _len: Callable[[Sized], int] = len) -> bytes:
    """One framed message: an 8-byte big-endian length, then ``obj`` (:func:`encode`) as compact JSON."""
    payload = _join(_json(_encode(obj), 0)).encode("utf-8")
    return _pack(_len(payload)) + payload


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity``: not in a frame (:func:`encode` sends ``{"__float__": ...}``)."""
    raise ValueError(f"{name} is not a value of this wire")


class _ScanContext:
    """What ``json``'s C scanner reads once, when it is made (its copies are read-only)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_no_constant)


# What reading a frame uses, bound here and held in default arguments like :func:`encode`'s: a worker's loop reads
# each command with them between two probes, where no student code may run (``autograder.workers.worker``); the
# student's code can rebind ``os.readv``, ``json.loads`` or ``numpy.frombuffer``, not a function's defaults. The
# scanner is json's C one (read-only), not ``json.loads``, whose decoder is a Python class a student could patch.
_SCAN = json.scanner.c_make_scanner(_ScanContext()) if json.scanner.c_make_scanner else (  # type: ignore[attr-defined]  # typeshed omits it (json's C scanner)
    json.scanner.make_scanner(_ScanContext()))  # type: ignore[arg-type]  # typeshed types the context as a scanner (its TODO: the duck type _ScanContext is)
_B64_OK = re.compile(rb"[A-Za-z0-9+/]*={0,2}").fullmatch  # base64.b64decode(validate=True)'s rule


def loads(payload: bytes | bytearray, _scan: Callable[[str, int], tuple[Any, int]] = _SCAN, _str: type[str] = str,
          _len: Callable[[Sized], int] = len) -> Any:
    """One JSON text (UTF-8) as Python data, as ``json.loads`` reads it, through bound C code only.

    Raises:
        ValueError: not one JSON value (``NaN`` and ``Infinity`` included).
    """
    text = _str(payload, "utf-8").strip(" \t\n\r")  # the whitespace JSON allows around a value
    try:
        obj, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("not a JSON value") from None
    if end != _len(text):
        raise ValueError("extra data after the JSON value")
    return obj


def decode(obj: Any, _frombuffer: Callable[..., np.ndarray[Any, Any]] = np.frombuffer,
           _dtype: type[np.dtype[Any]] = np.dtype, _a2b: Callable[[bytes], bytes] = binascii.a2b_base64,
           _b64_ok: Callable[[bytes], re.Match[bytes] | None] = _B64_OK,
           _b64_error: type[Exception] = binascii.Error, _dtypes: frozenset[str] = frozenset(_DTYPES),
           _isinstance: Callable[[object, Any], bool] = isinstance, _bool: type[bool] = bool, _int: type[int] = int,
           _float: type[float] = float, _str: type[str] = str, _list: type[list[Any]] = list,
           _dict: type[dict[Any, Any]] = dict, _tuple: type[tuple[Any, ...]] = tuple, _set: type[set[Any]] = set,
           _decode: Any = None) -> Any:
    """Inverse of :func:`encode`; raises :class:`WireError` on anything unexpected."""
    if obj is None or _isinstance(obj, (_bool, _int, _float, _str)):
        return obj
    if _isinstance(obj, _list):
        return [_decode(x) for x in obj]
    if _isinstance(obj, _dict):
        if "__nd__" in obj:
            dtype = obj["__nd__"]
            if dtype not in _dtypes or _set(obj) != {"__nd__", "shape", "data"}:
                raise WireError("malformed array")
            shape = _tuple([_int(s) for s in obj["shape"]])
            size = 1
            for s in shape:
                size *= s
            try:
                data = obj["data"].encode("ascii")
                if not _b64_ok(data):
                    raise ValueError("not base64")
                arr = _frombuffer(_a2b(data), dtype=_dtype(dtype))
            except (ValueError, TypeError, AttributeError, _b64_error):
                raise WireError("malformed array data") from None
            if arr.size != size:
                raise WireError("array size does not match its shape")
            return arr.reshape(shape).copy()
        if "__tuple__" in obj:
            return _tuple([_decode(x) for x in obj["__tuple__"]])
        if "__float__" in obj:
            text = obj["__float__"]
            if text not in ("nan", "inf", "-inf"):
                raise WireError("malformed float")
            return _float(text)
        return {_str(k): _decode(v) for k, v in obj.items()}
    raise WireError(f"unexpected {type(obj).__name__}")


decode.__defaults__ = (*(decode.__defaults__ or ())[:-1], decode)  # (as encode's: ``_decode`` is None until here)


def send(fd: int, obj: Any, deadline: float | None = None) -> None:
    """Writes one framed message to a file descriptor.

    Args:
        fd: the file descriptor to write (blocking, or non-blocking: then the write waits for room).
        obj: plain data (:func:`encode`).
        deadline: with a non-blocking ``fd``, the ``time.monotonic()`` value after which TimeoutError is
            raised if the peer has not made room (a worker that stops reading its pipe cannot hang the
            grader); None waits as long as it takes.

    Raises:
        TimeoutError: the frame could not be written before the deadline.
    """
    send_frame(fd, frame(obj), deadline)


def send_frame(fd: int, data: bytes, deadline: float | None = None, _write: Callable[[int, memoryview], int] = os.write,
               _select: Callable[..., tuple[list[Any], list[Any], list[Any]]] = select.select,
               _monotonic: Callable[[], float] = time.monotonic,
               _memoryview: type[memoryview] = memoryview) -> None:
    """Writes a frame :func:`frame` made (see :func:`send`). Its system calls are bound (see :func:`loads`):
    a worker's loop sends every answer with it, after the probe, where no student code may run."""
    view = _memoryview(data)
    while view:
        try:
            n = _write(fd, view)
        except BlockingIOError:
            left = None if deadline is None else deadline - _monotonic()
            if left is not None and (left <= 0 or not _select([], [fd], [], left)[1]):
                raise TimeoutError("the peer did not read before the deadline") from None
            if left is None:
                _select([], [fd], [])
            continue
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None = None,
                _readv: Callable[[int, Sequence[memoryview]], int] = os.readv,
                _select: Callable[..., tuple[list[Any], list[Any], list[Any]]] = select.select,
                _monotonic: Callable[[], float] = time.monotonic, _bytearray: type[bytearray] = bytearray,
                _memoryview: type[memoryview] = memoryview) -> bytearray:
    """Exactly ``n`` bytes, read into one buffer (a frame costs its size once, not twice)."""
    buf = _bytearray(n)
    view = _memoryview(buf)
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - _monotonic()
            if left <= 0 or not _select([fd], [], [], left)[0]:
                raise TimeoutError("no answer before the deadline")
        k = _readv(fd, [view[got:got + (1 << 20)]])
        if not k:
            raise EOFError("worker closed its channel")
        got += k
    view.release()
    return buf


def recv(fd: int, deadline: float | None = None) -> Any:
    """Reads one framed message.

    Args:
        fd: the file descriptor to read.
        deadline: ``time.monotonic()`` value after which TimeoutError is raised.

    Raises:
        EOFError: the peer closed the channel (it exited or crashed).
        TimeoutError: nothing complete arrived before the deadline.
        WireError: the frame is oversized or malformed.
    """
    return _rest(fd, bytes(_read_exact(fd, 8, deadline)), deadline)


def recv_rest(fd: int, head: bytes | bytearray, _bytes: type[bytes] = bytes, _len: Callable[[Sized], int] = len) -> Any:
    """Reads the rest of a frame whose first bytes (``head``: 1 to 8 of them) the caller read itself.

    A worker's loop waits for its commands in its own ``os.readv`` (``autograder.workers.worker``): a C call
    from the loop's frame, at a depth no hook on Python frames (PEP 523: Dynamo's) can change.

    Raises:
        EOFError, WireError: as :func:`recv`.
    """
    head = _bytes(head)
    if _len(head) < 8:
        head += _bytes(_read_exact(fd, 8 - _len(head)))
    return _rest(fd, head, None)


def _rest(fd: int, header: bytes, deadline: float | None,
          _unpack: Callable[[bytes], tuple[Any, ...]] = struct.Struct(">Q").unpack,
          _loads: Callable[[bytes | bytearray], Any] = loads, _decode: Callable[[Any], Any] = decode) -> Any:
    (size,) = _unpack(header)
    if size > MAX_FRAME:
        raise WireError(f"frame of {size} bytes exceeds the cap of {MAX_FRAME}")
    payload = _read_exact(fd, size, deadline)
    check_shape(payload)
    try:
        return _decode(_loads(payload))
    except (ValueError, TypeError, ArithmeticError, RecursionError) as err:  # ArithmeticError: a shape of 1e999
        raise WireError(f"undecodable frame: {str(err)[:200]}") from None


def check_shape(payload: bytes | bytearray, _frombuffer: Callable[..., np.ndarray[Any, Any]] = np.frombuffer,
                _uint8: type[np.uint8] = np.uint8, _int32: type[np.int32] = np.int32,
                _accumulate: Callable[..., np.ndarray[Any, Any]] = np.add.accumulate,
                _len: Callable[[Sized], int] = len, _int: type[int] = int,
                _max: Callable[[int, int], int] = max) -> None:
    """Refuses a JSON text whose nesting or number of values exceeds the bounds, without parsing it.

    Linear in the payload's size, with at most two copies of its non-string bytes: strings are cut out
    first (a bracket inside one counts for nothing), then the brackets and braces left give the depth.

    Raises:
        WireError: deeper than :data:`MAX_DEPTH` or more than :data:`MAX_VALUES` values.
    """
    bare = _STRING.sub(b'""', payload)
    values = bare.count(b",") + bare.count(b"[") + bare.count(b"{") + 1
    if values > MAX_VALUES:
        raise WireError(f"frame of more than {MAX_VALUES} values")
    brackets = bare.translate(None, _NOT_BRACKETS)
    del bare
    if _len(brackets) > 2 * MAX_DEPTH:
        steps = _frombuffer(brackets, dtype=_uint8)
        # '[' 0x5b and '{' 0x7b open, ']' 0x5d and '}' 0x7d close: bit 1 tells them apart (at most
        # 2 * MAX_VALUES of them: every opening one was counted above)
        depth = _accumulate((steps & 2).astype(_int32) - 1, dtype=_int32)
        deepest = _int(depth.max())
    else:
        deepest = level = 0
        for b in brackets:
            level += 1 if b in b"[{" else -1
            deepest = _max(deepest, level)
    if deepest > MAX_DEPTH:
        raise WireError(f"frame nested deeper than {MAX_DEPTH}")
