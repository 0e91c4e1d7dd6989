"""Grader side: where what a worker sends enters the grader: its shape checked, its text cleaned.

A student's worker runs the student's code, which can write anything to the worker's pipes
(``os.write`` on the result descriptor, a patched ``_wire.send``). :mod:`autograder.core.wire` bounds a
frame's size, depth and number of values before parsing it; this module then accepts only the
messages a worker really sends, with the fields the grader reads, and cleans every string in them
once (:func:`autograder.core.text.clean`): exception type names, messages, function names, catalogued
fields and labels. Anything else is a broken protocol (:class:`autograder.core.wire.WireError`): the grader kills
that worker at once and its exercise, or its test, scores 0 (``autograder/workers/handle.py``).

What is not checked here: a successful probe's ``value`` (plain data the checks judge, already
bounded by the wire) and the compile cache's requests (``autograder/workers/compile_cache.py``).
"""

from __future__ import annotations

import re
from typing import Any

from autograder.core.text import MESSAGE_CHARS, NAME_CHARS, clean
from autograder.core.wire import WireError

# what a worker says about its load (``timeout``/``crashed`` are the grader's own words, never a worker's)
LOAD_STATUSES = frozenset({"loaded", "missing", "error"})
LOAD_CODES = frozenset({"LOAD_SYNTAX", "LOAD_SURROGATE", "LOAD_NULL_CHAR", "LOAD_EXIT", "LOAD_MEMORY", "LOAD_EXCEPTION",
                        "LOAD_OTHER_EXERCISE", "MISSING_NAMES"})
KINDS = frozenset({"not_attempted", "fail", "memory", "exit", "exception", "internal"})
# catalogue keys that only the grader may choose (a probe's finding never is one of them)
RESERVED = frozenset({"GRADER_ERROR", "INTERNAL_ERROR", "UNREADABLE", "BUDGET_EXHAUSTED", "NOT_ON_DEVICE",
                      "MISSING_FILE", "REFUSED_FILE", "LOAD_TIMEOUT", "LOAD_CRASHED", "CALL_TIMEOUT",
                      "CALL_CRASHED", "WORKER_PROTOCOL", "EXERCISE_FORGED", "SCRATCH_FULL", "FILE_TOO_LARGE", "FILE_UNREADABLE",
                      "READ_TIMEOUT", "READ_MEMORY", "READ_FAILED", "GRADER_TROUBLE", "NOT_GRADED_YET",
                      "MACHINE_TOO_SMALL", "ISOLATION_TOO_LOW", "PROBE_NO_ANSWER", "CHECK_UNREADABLE"})
_KEY = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_FIELD = re.compile(r"[a-z_][a-z0-9_]{0,31}")
_NESTED_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}(\.[a-z0-9_]{1,32}){1,2}")  # a label's key: dotted, lower case
MAX_FIELDS = 16
MAX_NAMES = 64


def _fail(why: str) -> WireError:
    return WireError(f"broken protocol: {why}")


def _object(msg: Any, what: str) -> dict[str, Any]:
    if not isinstance(msg, dict):
        raise _fail(f"{what} is a {type(msg).__name__}, not an object")
    return msg


def _code(value: Any, allowed: frozenset[str] | None = None) -> str:
    """A catalogue key a worker may name (``allowed``: only these)."""
    from autograder.core.i18n import catalogue

    if not isinstance(value, str) or not _KEY.fullmatch(value) or value in RESERVED:
        raise _fail("not a message key a worker may send")
    if (allowed is not None and value not in allowed) or value not in catalogue("en"):
        raise _fail(f"unknown message key {value}")
    return value


def _where(value: Any) -> str | dict[str, Any]:
    """``where``: plain text, or the catalogued "at line N" (``{"key": "where.line_code", ...}``)."""
    if value is None or isinstance(value, str):
        return clean(value or "", MESSAGE_CHARS)
    return _label(value, "where")


def _label(value: Any, what: str, depth: int = 0) -> dict[str, Any]:
    """A catalogued text a probe puts into a message's field (:func:`autograder.core.i18n.label`):
    ``{"key": KEY, **fields}`` whose key is a dotted catalogue key (``where.line``, ``value.object``,
    ``ex05.call.fit_losses``), its fields scalars, texts (cleaned) or, one level down, another label."""
    from autograder.core.i18n import catalogue

    value = _object(value, what)
    key = value.get("key")
    if not isinstance(key, str) or not _NESTED_KEY.fullmatch(key) or key not in catalogue("en"):
        raise _fail(f"{what} names no catalogued text")
    if len(value) > MAX_FIELDS:
        raise _fail("too many fields")
    out: dict[str, Any] = {"key": key}
    for name, v in value.items():
        if name == "key":
            continue
        if not isinstance(name, str) or not _FIELD.fullmatch(name):
            raise _fail("a field name that is not an identifier")
        if isinstance(v, dict) and depth < 1:
            out[name] = _label(v, name, depth + 1)
        elif isinstance(v, bool) or v is None or isinstance(v, (int, float)):
            out[name] = v
        elif isinstance(v, str):
            out[name] = clean(v, NAME_CHARS if name == "code" else MESSAGE_CHARS)
        else:
            raise _fail(f"field {name} of {what} is a {type(v).__name__}")
    if key.startswith("where.") and "line" in out:  # "at line N": a line number, never text
        line = out["line"]
        out["line"] = line if isinstance(line, int) and not isinstance(line, bool) else 0
    return out


def _fields(value: Any) -> dict[str, Any]:
    """A message's fields: a few named scalars or texts (cleaned), or a nested ``where``."""
    if value is None:
        return {}
    value = _object(value, "fields")
    if len(value) > MAX_FIELDS:
        raise _fail("too many fields")
    out: dict[str, Any] = {}
    for name, v in value.items():
        if not isinstance(name, str) or not _FIELD.fullmatch(name):
            raise _fail("a field name that is not an identifier")
        if name == "where":
            out[name] = _where(v)
        elif isinstance(v, dict):
            out[name] = _label(v, name)
        elif isinstance(v, bool) or v is None:
            out[name] = v
        elif isinstance(v, (int, float)):
            out[name] = v
        elif isinstance(v, str):
            out[name] = clean(v, MESSAGE_CHARS)
        else:
            raise _fail(f"field {name} is a {type(v).__name__}")
    return out


def status(msg: Any) -> dict[str, Any]:
    """A student's or the reference's load status, checked and cleaned.

    Args:
        msg: the worker's first message (``_worker.worker_main``): ``{"status": "loaded", "missing": [...], "borrowing": bool}``,
            ``{"status": "missing"|"error", "code": KEY, "fields": {...}}``.

    Returns:
        A new dict with only those keys, every string cleaned.

    Raises:
        WireError: anything else.
    """
    msg = _object(msg, "the load status")
    st = msg.get("status")
    if st not in LOAD_STATUSES:
        raise _fail("unknown load status")
    # a loaded (or name-less) module's top-level statement stopped at its budget (``_exec.Cut.fields``): a note, or
    # the grader's timeout where a name was left undefined; only ever the student's own exercise's outcome
    cut = {"cut": _cut(msg["cut"])} if st in ("loaded", "missing") and msg.get("cut") is not None else {}
    if st == "loaded":
        missing = msg.get("missing") or []
        if not isinstance(missing, list) or len(missing) > MAX_NAMES:
            raise _fail("missing is not a short list")
        # borrowing: the worker asks the grader for every program it compiles (_compile_cache); a student's
        # code that turns it off only loses the checks counting programs (_observe)
        return {"status": "loaded", "missing": [clean(n, NAME_CHARS) for n in missing],
                "borrowing": msg.get("borrowing") is True, **cut}
    return {"status": st, "code": _code(msg.get("code"), LOAD_CODES), "fields": _fields(msg.get("fields")), **cut}


def _cut(value: Any) -> dict[str, Any]:
    """A cut's fields: ``where`` (``where.line``/``where.line_code``), ``seconds`` (a number), ``names`` (text)."""
    fields = _fields(value)
    where, seconds, names = fields.get("where"), fields.get("seconds"), fields.get("names")
    if set(fields) != {"where", "seconds", "names"} or not isinstance(where, dict) \
            or not str(where.get("key", "")).startswith("where.") \
            or isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not isinstance(names, str):
        raise _fail("a cut that is not where, seconds and names")
    return {"where": where, "seconds": float(seconds), "names": clean(names, MESSAGE_CHARS)}


def isolation(msg: Any, kind: str = "isolation") -> dict[str, Any]:
    """An isolation record sent before any student code ran: the isolation probe's (``kind`` ``isolation``)
    or a student's worker's first frame, right after its sandbox was applied (``sandboxed``).

    Returns:
        ``{"status": kind, "isolation": {...}}``.
    """
    msg = _object(msg, "the isolation record")
    if msg.get("status") != kind or not isinstance(msg.get("isolation"), dict):
        raise _fail(f"not a {kind} record")
    return {"status": kind, "isolation": dict(msg["isolation"])}


def chip(msg: Any) -> dict[str, Any]:
    """A ``--device tpu`` worker's first frame: whether it opened the chip, sent before any student code ran.

    Returns:
        ``{"status": "chip", "ok": bool, "seconds": float, "how": str}`` (``how``: the error's type and words, cut).

    Raises:
        WireError: not a chip record.
    """
    msg = _object(msg, "the chip record")
    if msg.get("status") != "chip" or not isinstance(msg.get("ok"), bool):
        raise _fail("not a chip record")
    seconds = msg.get("seconds")
    return {"status": "chip", "ok": msg["ok"],
            "seconds": float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else 0.0,
            "how": clean(str(msg.get("how") or ""), 300)}


def response(msg: Any) -> dict[str, Any]:
    """A probe's response, checked and cleaned (a successful one's ``value`` is kept as sent).

    Raises:
        WireError: not one of the responses ``_worker.run_probe`` gives.
    """
    msg = _object(msg, "a probe's response")
    ok = msg.get("ok")
    if ok is True:
        if "value" not in msg:
            raise _fail("a response without a value")
        return {"ok": True, "value": msg["value"]}
    if ok is not False:
        raise _fail("a response that is neither ok nor failed")
    kind = msg.get("kind")
    if kind not in KINDS:
        raise _fail("unknown failure kind")
    out: dict[str, Any] = {"ok": False, "kind": kind}
    if kind == "not_attempted":
        out["where"] = clean(msg.get("where") or "", NAME_CHARS)
    elif kind == "fail":
        out["code"] = _code(msg.get("code"))
        out["fields"] = _fields(msg.get("fields"))
    elif kind == "exception":
        out.update(type=clean(msg.get("type") or "Exception", NAME_CHARS), message=clean(msg.get("message") or ""),
                   where=_where(msg.get("where")), func=clean(msg.get("func") or "", NAME_CHARS))
    elif kind == "internal":
        out["message"] = clean(msg.get("message") or "")
    return out
