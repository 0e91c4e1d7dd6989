"""The wire between the grader and its workers: plain data only, never pickle.

A worker runs student code, so anything it sends is untrusted. Messages are
JSON objects; numpy arrays travel as ``{"__nd__": dtype, "shape": [...],
"data": base64}`` with a small whitelist of numeric dtypes, so decoding can
never execute code. Frames are length-prefixed and capped in size.
"""

from __future__ import annotations

import base64
import json
import os
import select
import struct
import time
from typing import Any

import numpy as np

MAX_FRAME = 256 * 1024 * 1024  # bytes; a larger frame is treated as a broken worker
_DTYPES = {
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128",
}


class WireError(Exception):
    """A frame could not be read or decoded (broken or hostile worker)."""


def encode(obj: Any) -> Any:
    """Turns a tree of numbers, strings, lists, dicts and ndarrays into JSON-able data.

    Args:
        obj: plain data; numpy scalars and arrays are allowed.

    Returns:
        A JSON-serialisable tree.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if f != f or f in (float("inf"), float("-inf")):
            return {"__float__": repr(f)}
        return f
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        if obj.dtype.name not in _DTYPES:
            raise TypeError(f"cannot send arrays of dtype {obj.dtype}")
        arr = np.ascontiguousarray(obj)
        return {
            "__nd__": arr.dtype.name,
            "shape": list(arr.shape),
            "data": base64.b64encode(arr.tobytes()).decode("ascii"),
        }
    if isinstance(obj, (list, tuple)):
        enc = [encode(x) for x in obj]
        return {"__tuple__": enc} if isinstance(obj, tuple) else enc
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"dict keys must be str, got {type(k).__name__}")
            out[k] = encode(v)
        return out
    raise TypeError(f"cannot send {type(obj).__name__}")


def decode(obj: Any) -> Any:
    """Inverse of :func:`encode`; raises :class:`WireError` on anything unexpected."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [decode(x) for x in obj]
    if isinstance(obj, dict):
        if "__nd__" in obj:
            dtype = obj["__nd__"]
            if dtype not in _DTYPES or set(obj) != {"__nd__", "shape", "data"}:
                raise WireError("malformed array")
            shape = tuple(int(s) for s in obj["shape"])
            try:
                raw = base64.b64decode(obj["data"], validate=True)
                arr = np.frombuffer(raw, dtype=np.dtype(dtype))
            except (ValueError, TypeError):
                raise WireError("malformed array data") from None
            if arr.size != int(np.prod(shape, dtype=np.int64)):
                raise WireError("array size does not match its shape")
            return arr.reshape(shape).copy()
        if "__tuple__" in obj:
            return tuple(decode(x) for x in obj["__tuple__"])
        if "__float__" in obj:
            text = obj["__float__"]
            if text not in ("nan", "inf", "-inf"):
                raise WireError("malformed float")
            return float(text)
        return {str(k): decode(v) for k, v in obj.items()}
    raise WireError(f"unexpected {type(obj).__name__}")


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
    payload = json.dumps(encode(obj), separators=(",", ":")).encode("utf-8")
    frame = struct.pack(">Q", len(payload)) + payload
    view = memoryview(frame)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and (left <= 0 or not select.select([], [fd], [], left)[1]):
                raise TimeoutError("the peer did not read before the deadline") from None
            if left is None:
                select.select([], [fd], [])
            continue
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None = None) -> bytes:
    chunks = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer before the deadline")
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("worker closed its channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


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
    (size,) = struct.unpack(">Q", _read_exact(fd, 8, deadline))
    if size > MAX_FRAME:
        raise WireError(f"frame of {size} bytes exceeds the cap")
    try:
        return decode(json.loads(_read_exact(fd, size, deadline)))
    except (ValueError, TypeError) as err:
        raise WireError(f"undecodable frame: {err}") from None
