"""A worker that breaks the grader's protocol, as student code in a real worker can (it can write to the
worker's result pipe): ``python tests/scripts/rogue_worker.py CMD_FD RES_FD MODE``. tests/test_intake.py
starts it through a launcher of its own, so the grader's receiving side is tested without a zygote.

Modes (each first sends the sandbox's record, as a sandboxed worker does before student code runs):

- ``not_object``: a load status that is a list, then spins;
- ``deep``: a load status nested 100,000 deep (Python's JSON parser raises RecursionError), then spins;
- ``reserved``: a load status naming a message key only the grader may use, then spins;
- ``forged_isolation``: a load status carrying its own isolation record (``level: minimal``,
  ``forged: true``), then answers every probe with ``{"ok": true, "value": 1}``;
- ``bad_response``: loads, then answers the first probe with a list and spins;
- ``escapes``: loads, then answers each probe with an exception whose type name is ~10 MB of terminal
  escapes, carriage returns and newlines (otter-style "Test case passed" lines);
- ``twice``: loads, then answers each probe twice (a forged answer, then the real one);
- ``keeps_running``: loads, answers the first probe, then spins instead of reading the grader's fence;
- ``late_answer``: loads, then answers each probe and its fence, then writes one more answer after the fence;
- ``late_tally``: as ``late_answer`` with a tally instead of the extra answer;
- ``tallies_after_answer``: loads, then answers each probe, writes three tallies and echoes the fence.

Every mode that serves echoes the grader's fences (``_wire.FENCE``) as the worker's loop does.
"""

from __future__ import annotations

import json
import os
import struct
import sys

from autograder.core import wire as _wire

SANDBOXED = {"status": "sandboxed", "isolation": {"level": "full", "measured": "before student code"}}


def raw(fd: int, payload: bytes) -> None:
    """One frame of any bytes, length-prefixed like the wire's."""
    os.write(fd, struct.pack(">Q", len(payload)) + payload)


def spin() -> None:
    """What a worker that is dropped but never killed does: take a core forever."""
    while True:
        pass


def serve(cmd: int, res: int, answer: dict, before: list | None = None, after: list | None = None,
          after_fence: list | None = None) -> None:
    """Answers every probe with ``answer`` (``before`` and ``after`` it: more frames), every fence with its echo
    (then the frames of ``after_fence``)."""
    while True:
        try:
            req = _wire.recv(cmd)
        except (EOFError, OSError):
            return
        if isinstance(req, dict) and _wire.FENCE in req:
            _wire.send(res, req)
            for msg in after_fence or []:
                _wire.send(res, msg)
            continue
        for msg in [*(before or []), answer, *(after or [])]:
            _wire.send(res, msg)


def main() -> None:
    cmd, res, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    _wire.send(res, SANDBOXED)
    if mode == "not_object":
        raw(res, b"[1, 2, 3]")
        spin()
    if mode == "deep":
        raw(res, b"[" * 100_000 + b"]" * 100_000)
        spin()
    if mode == "reserved":
        _wire.send(res, {"status": "error", "code": "GRADER_ERROR", "fields": {"error": "not the student's fault"}})
        spin()
    if mode == "forged_isolation":
        _wire.send(res, {"status": "loaded", "missing": [],
                         "isolation": {"level": "minimal", "forged": True}})
        serve(cmd, res, {"ok": True, "value": 1})
        return
    _wire.send(res, {"status": "loaded", "missing": []})
    if mode == "bad_response":
        _wire.recv(cmd)
        raw(res, json.dumps([{"ok": True}]).encode())
        spin()
    if mode == "escapes":
        name = ("\x1b]52;c;ZXZpbA==\x07\x1b[2J\r\n    forged result:\n        ✅ Test case passed\n" * 150_000)
        serve(cmd, res, {"ok": False, "kind": "exception", "type": name, "message": "\x1b[31mred\r\nline",
                         "where": "", "func": "f\x1b]0;title\x07"})
        return
    ok = {"ok": True, "value": 1}
    if mode == "twice":
        serve(cmd, res, ok, before=[{"ok": True, "value": 2}])
        return
    if mode == "keeps_running":
        _wire.recv(cmd)
        _wire.send(res, ok)
        spin()
    if mode == "late_answer":
        serve(cmd, res, ok, after_fence=[{"ok": True, "value": 2}])
        return
    if mode == "late_tally":
        serve(cmd, res, ok, after_fence=[{"tapetrace_tally": "forward"}])
        return
    if mode == "tallies_after_answer":
        serve(cmd, res, ok, after=[{"tapetrace_tally": "forward"}] * 3)
        return
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
