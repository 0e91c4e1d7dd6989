"""The grader trusts no byte from a worker: frames bounded before parsing, messages checked and cleaned,
a worker that breaks the protocol killed at once, the isolation record the sandbox's own.

Workers here are tests/scripts/rogue_worker.py, started by a launcher of this file (no zygote, no
framework): each plays what student code in a real worker can do with the worker's result pipe.
tests/adversarial/ grades the same attacks through real workers on every path.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from autograder.core import text as _text
from autograder.core import wire as _wire
from autograder.core.paths import ROOT
from autograder.core.protocol import probe_error
from autograder.workers import handle as _handle
from autograder.workers import intake as _intake
from autograder.workers import launch as _launch

ROGUE = Path(__file__).parent / "scripts" / "rogue_worker.py"
SPEC = {"role": "student", "exercise": "ex01_torch_mlp", "sandbox": {"scratch": "/nonexistent"}}


class RogueLauncher:
    """Starts tests/scripts/rogue_worker.py in ``mode`` for every worker."""

    kind = "spawn"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def spawn(self, spec: dict, fds: tuple[int, int]) -> _launch.Proc:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        popen = subprocess.Popen([sys.executable, str(ROGUE), str(fds[0]), str(fds[1]), self.mode], pass_fds=fds,
                                 env=env, cwd=str(ROOT), start_new_session=True, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return _launch.Proc(popen.pid, popen)


def _dead_soon(proc: _launch.Proc) -> bool:
    """Whether the process is gone within a second (a killed worker is; a dropped one spins on)."""
    return proc.wait(1.0) is not None


# ------------------------------------------------------------------ frames
def _feed(payload: bytes) -> int:
    """A pipe's read end with one frame of ``payload`` being written into it by a thread."""
    r, w = os.pipe()

    def write() -> None:
        try:
            os.write(w, struct.pack(">Q", len(payload)))
            view = memoryview(payload)
            while view:
                view = view[os.write(w, view[: 1 << 20]):]
        except OSError:
            pass
        finally:
            os.close(w)

    threading.Thread(target=write, daemon=True).start()
    return r


def test_a_frame_of_nested_empty_lists_costs_the_grader_little_memory():
    """20 MB of ``[[],[],...]``: ~7 million lists once parsed (~700 MB in the grader before)."""
    payload = b"[" + b"[]," * (20 * 1024 * 1024 // 3) + b"[]]"
    r = _feed(payload)
    tracemalloc.start()
    try:
        with pytest.raises(_wire.WireError, match="values"):
            _wire.recv(r, time.monotonic() + 120)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        os.close(r)
    assert peak < 2.5 * len(payload), f"peak {peak / 2**20:.0f} MB for a {len(payload) / 2**20:.0f} MB frame"


@pytest.mark.parametrize("payload", [
    b'{"__nd__": "float32", "shape": [1e999], "data": ""}',  # int(inf): OverflowError, once the grader's trouble
    b'{"__nd__": "float32", "shape": 3, "data": ""}', b'{"__tuple__": 3}', b'{"__float__": 1}',
])
def test_a_malformed_value_is_a_broken_protocol_whatever_decoding_raised(payload):
    """A worker whose first frame (its load status) raised anything but WireError was a worker that "could not
    start": grader_error for a forged frame (tests/adversarial/attacks/forged_status_overflow.py)."""
    r = _feed(payload)
    try:
        with pytest.raises(_wire.WireError, match="malformed|undecodable"):
            _wire.recv(r, time.monotonic() + 30)
    finally:
        os.close(r)


@pytest.mark.parametrize("payload,why", [
    (b"[" * 100_000 + b"]" * 100_000, "values"),
    (b"[" * 5_000 + b"]" * 5_000, "deeper"),
    (json.dumps({"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}).encode(), "deeper"),
])
def test_depth_and_values_are_bounded_before_parsing(payload, why):
    r = _feed(payload)
    try:
        with pytest.raises(_wire.WireError, match=why):
            _wire.recv(r, time.monotonic() + 30)
    finally:
        os.close(r)


def test_brackets_inside_strings_count_for_nothing():
    text = "[" * 200 + '\\"' + "{" * 50
    r = _feed(json.dumps({"message": text, "v": [1, [2, {"x": 3}]]}).encode())
    try:
        assert _wire.recv(r, time.monotonic() + 30)["message"] == text
    finally:
        os.close(r)


def test_an_oversized_frame_is_refused_unread():
    r, w = os.pipe()
    try:
        os.write(w, struct.pack(">Q", _wire.MAX_FRAME + 1))
        with pytest.raises(_wire.WireError, match="exceeds"):
            _wire.recv(r, time.monotonic() + 5)
    finally:
        os.close(r)
        os.close(w)


# ------------------------------------------------------------------ messages
@pytest.mark.parametrize("msg", [
    [1, 2, 3], "loaded", {"status": "timeout"}, {"status": "error", "code": "GRADER_ERROR"},
    {"status": "error", "code": "NO_SUCH_KEY"}, {"status": "error", "code": "LOAD_EXCEPTION", "fields": [1]},
    {"status": "error", "code": "LOAD_EXCEPTION", "fields": {"Bad Name": "x"}},
    {"status": "error", "code": "LOAD_EXCEPTION", "fields": {"error": [1, 2]}},
    {"status": "loaded", "missing": "x"},
])
def test_load_statuses_a_worker_cannot_send(msg):
    with pytest.raises(_wire.WireError, match="broken protocol"):
        _intake.status(msg)


@pytest.mark.parametrize("msg", [
    [], {"ok": "yes"}, {"ok": True}, {"ok": False, "kind": "grader"},
    {"ok": False, "kind": "fail", "code": "INTERNAL_ERROR"}, {"ok": False, "kind": "fail", "code": "lower"},
    # the grader's own words (its trouble, a run stopped, its judgement of a check) are never a probe's finding
    *({"ok": False, "kind": "fail", "code": key} for key in ("GRADER_TROUBLE", "NOT_GRADED_YET", "MACHINE_TOO_SMALL",
                                                            "ISOLATION_TOO_LOW", "CHECK_UNREADABLE", "PROBE_NO_ANSWER")),
    {"ok": False, "kind": "exception", "where": {"key": "GRADER_ERROR"}},
])
def test_responses_a_worker_cannot_send(msg):
    with pytest.raises(_wire.WireError, match="broken protocol"):
        _intake.response(msg)


def test_every_string_of_a_failure_is_cleaned_and_capped():
    name = "\x1b]52;c;ZXZpbA==\x07Evil\r\n    forged result:\n ✅ Test case passed" * 100_000
    resp = _intake.response({"ok": False, "kind": "exception", "type": name, "message": "a\x1b[2Jb\u202e",
                             "where": {"key": "where.line_code", "line": 3, "code": "x\x07" * 500}, "func": "f\n"})
    assert len(resp["type"]) <= _text.NAME_CHARS and len(resp["message"]) <= _text.MESSAGE_CHARS
    text = json.dumps(resp, ensure_ascii=False)
    assert "\x1b" not in text and "\r" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b" in resp["type"] and "\n" not in resp["type"]
    message = probe_error(resp, "MLP.forward", 2**30).message("en")
    assert "\n" not in message and "\x1b" not in message and len(message) <= _text.RECORD_CHARS


def test_clean_shows_undecodable_bytes_and_controls():
    assert _text.clean(os.fsdecode(b"caf\xe9 \xff")) == "caf\\xe9 \\xff"
    assert _text.clean("\ud800x") == "\\xed\\xa0\\x80x"
    assert _text.clean("a\tb\r\nc\x85d\u2028e\x9bf") == "a b c d e\\x9bf"
    assert _text.clean("x" * 1000, 10) == "x" * 9 + _text.ELLIPSIS
    for formula in ("=1+1", "+1", "-2", "@SUM(A1)", " =HYPERLINK()", "\t=1"):
        assert _text.csv_cell(formula).startswith("'")
    assert _text.csv_cell(3.5) == 3.5 and _text.csv_cell("alice") == "alice"


# ------------------------------------------------------------------ workers
@pytest.mark.parametrize("mode", ["not_object", "deep", "reserved"])
def test_a_worker_sending_a_malformed_status_is_killed_at_once(mode):
    worker = _handle.Worker(RogueLauncher(mode), SPEC, load_timeout=30)
    assert worker.status["status"] == "crashed" and worker.status["code"] == "WORKER_PROTOCOL", worker.status
    assert _dead_soon(worker.proc), "the worker broke the protocol and was left running"
    assert worker.isolation == {"level": "full", "measured": "before student code"}


def test_a_worker_sending_a_malformed_response_is_killed_at_once():
    worker = _handle.Worker(RogueLauncher("bad_response"), SPEC, load_timeout=30)
    assert worker.status == {"status": "loaded", "missing": [], "borrowing": False}
    with pytest.raises(_handle.WorkerDied) as died:
        worker.call("forward", {}, timeout=30)
    assert died.value.kind == "broken"
    assert _dead_soon(worker.proc)


def test_the_isolation_record_is_the_one_sent_before_student_code():
    worker = _handle.Worker(RogueLauncher("forged_isolation"), SPEC, load_timeout=30)
    try:
        assert worker.isolation == {"level": "full", "measured": "before student code"}
        assert "isolation" not in worker.status and worker.status["status"] == "loaded"
        assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
    finally:
        worker.kill()


def test_escapes_in_a_type_name_never_reach_a_record():
    worker = _handle.Worker(RogueLauncher("escapes"), SPEC, load_timeout=30)
    try:
        resp = worker.call("forward", {}, timeout=60)
    finally:
        worker.kill()
    message = probe_error(resp, "MLP.forward", 2**30).message("en")
    assert "\x1b" not in message and "\n" not in message and "\r" not in message
    assert len(message) <= _text.RECORD_CHARS  # one line: it can forge no line of otter's output


def test_a_probe_names_types_with_labels_rendered_in_the_runs_language():
    """A probe's ``got``/``expected`` are catalogued labels (plain data): they cross the wire, cleaned, and the
    grader renders them in Spanish; a label of no catalogued key, or nested too deep, is a broken protocol."""
    fields = {"call": "fit(...)[1]", "got": {"key": "value.holding", "container": "list",
                                             "item": {"key": "value.object", "name": "int\x1b[2J"}},
              "expected": {"key": "value.list_of_floats"}}
    resp = _intake.response({"ok": False, "kind": "fail", "code": "WRONG_TYPE", "fields": fields})
    assert "\x1b" not in json.dumps(resp)
    message = probe_error(resp, "fit(...)", 2**30).message("es")
    assert message.startswith("`fit(...)[1]` devolvió un `list` que contiene un objeto `int"), message
    assert "una lista de floats de Python" in message
    for bad in ({"key": "not.a.key"}, {"key": "WRONG_TYPE"}, {"key": "value.object", "name": [1]},
                {"key": "value.holding", "item": {"key": "value.holding", "item": {"key": "value.object"}}}):
        with pytest.raises(_wire.WireError, match="broken protocol"):
            _intake.response({"ok": False, "kind": "fail", "code": "WRONG_TYPE", "fields": {"got": bad}})


def test_the_worker_sends_a_probes_labels_as_data_and_anything_else_as_text():
    from autograder.core.i18n import label
    from autograder.probing.tools import type_name
    from autograder.workers.worker import _plain_field

    class Odd:
        def __str__(self) -> str:
            return "odd"

    got = type_name([1])
    assert _plain_field(got) == got == {"key": "value.object", "name": "list"}
    nested = label("value.holding", container="list", item=got)
    assert _plain_field(nested) == nested
    assert _plain_field(Odd()) == "odd" and _plain_field({"a": 1}) == "{'a': 1}" and _plain_field(3) == 3


# ------------------------------------------------------------------ the fence after each answer
def test_a_second_answer_to_one_call_is_a_forgery():
    """A frame written beside the worker's loop before its answer is taken as the answer; the real one comes before
    the fence's echo: the call is forged, whichever of the two was right."""
    worker = _handle.Worker(RogueLauncher("twice"), SPEC, load_timeout=30)
    with pytest.raises(_handle.WorkerDied) as died:
        worker.call("forward", {}, timeout=30)
    assert (died.value.kind, died.value.how) == ("forged", _handle.FORGED_TWICE)
    assert _dead_soon(worker.proc)


def test_a_worker_that_keeps_running_after_its_answer_is_a_forgery():
    worker = _handle.Worker(RogueLauncher("keeps_running"), SPEC, load_timeout=30)
    with pytest.raises(_handle.WorkerDied) as died:
        worker.call("forward", {}, timeout=1.0)
    assert (died.value.kind, died.value.how) == ("forged", _handle.FORGED_RUNNING)
    assert _dead_soon(worker.proc)


def test_an_answer_written_after_a_call_ended_is_found_at_the_next_call():
    worker = _handle.Worker(RogueLauncher("late_answer"), SPEC, load_timeout=30)
    assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
    deadline = time.monotonic() + 30
    while _watch_pending(worker) == 0 and time.monotonic() < deadline:  # the late frame is on its way
        time.sleep(0.01)
    with pytest.raises(_handle.WorkerDied) as died:
        worker.call("forward", {}, timeout=30)
    assert (died.value.kind, died.value.how) == ("forged", _handle.FORGED_BETWEEN)
    assert _dead_soon(worker.proc)


def test_a_tally_after_a_call_ended_counts_for_no_call_and_breaks_nothing():
    worker = _handle.Worker(RogueLauncher("late_tally"), SPEC, load_timeout=30)
    try:
        assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
        deadline = time.monotonic() + 30
        while _watch_pending(worker) == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
        assert worker.tallied == {}
    finally:
        worker.kill()


def test_tallies_between_an_answer_and_the_fence_count_for_that_call():
    """The forward count's tallies written after a forged answer still reach the call's count."""
    worker = _handle.Worker(RogueLauncher("tallies_after_answer"), SPEC, load_timeout=30)
    try:
        for _ in range(2):
            assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
            assert worker.tallied == {"forward": 3}
    finally:
        worker.kill()


def test_the_last_calls_late_answer_is_found_as_the_worker_closes():
    worker = _handle.Worker(RogueLauncher("late_answer"), SPEC, load_timeout=30)
    assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
    assert worker.settle(30) == _handle.FORGED_BETWEEN
    assert _dead_soon(worker.proc)


def test_an_honest_worker_settles_with_nothing_to_say():
    worker = _handle.Worker(RogueLauncher("tallies_after_answer"), SPEC, load_timeout=30)
    try:
        assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
        assert worker.settle(30) is None and worker.alive
        assert worker.call("forward", {}, timeout=30) == {"ok": True, "value": 1}
    finally:
        worker.kill()


def _watch_pending(worker: _handle.Worker) -> int:
    from autograder.workers import watch as _watch

    return _watch.pending(worker._res_r)
