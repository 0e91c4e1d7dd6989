"""One parse at a time in the grader's process (autograder/core/syntax.py): on CPython 3.11/3.12 a parse begun
while another is half built resets the counter the first one checks, and the first fails with SystemError
(``make test`` lost a session's solutions and three exercises' cases to it, two grading threads at once)."""

from __future__ import annotations

import ast
import gc
import inspect
import sys
import threading

import pytest

from autograder.core import syntax
from autograder.engine import rows
from autograder.engine.run import GradingRun

BIG = "\n".join(f"def f{i}(a, b):\n    return [a + b * {i} for _ in range(3)]" for i in range(1500))


def _race(parse) -> tuple[BaseException | None, BaseException | None]:
    """Thread A parses BIG; the first collection during it (a gc callback, in A) lets thread B parse a line and
    waits up to 1 s for it. Returns what A and B raised (None: nothing)."""
    go, done = threading.Event(), threading.Event()
    raised: dict[str, BaseException | None] = {"a": None, "b": None}

    def other() -> None:
        go.wait(10)
        try:
            parse("x = 1\n")
        except BaseException as err:  # noqa: BLE001 - reported to the test
            raised["b"] = err
        done.set()

    def on_gc(phase: str, _info: dict) -> None:
        if phase == "start" and threading.current_thread() is main and not go.is_set():
            go.set()
            done.wait(1.0)  # releases the GIL: B runs now, unless a lock holds it back

    main = threading.current_thread()
    b = threading.Thread(target=other)
    b.start()
    old = gc.get_threshold()
    gc.callbacks.append(on_gc)
    gc.set_threshold(50)
    try:
        parse(BIG)
    except BaseException as err:  # noqa: BLE001 - reported to the test
        raised["a"] = err
    finally:
        gc.callbacks.remove(on_gc)
        gc.set_threshold(*old)
        go.set()
        b.join(10)
    return raised["a"], raised["b"]


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13 counts a parse's depth per thread")
def test_two_plain_parses_at_once_fail_here():
    """The premise: without the lock, the parse half built when another runs fails (this Python's bug)."""
    a, _b = _race(ast.parse)
    assert isinstance(a, SystemError) and "recursion depth mismatch" in str(a), a


def test_the_graders_parse_waits_for_the_one_half_built():
    a, b = _race(syntax.parse)
    assert a is None and b is None, (a, b)


def test_literal_is_literal_eval():
    assert syntax.literal(' "a\\tb"') == "a\tb"
    with pytest.raises(ValueError):
        syntax.literal("f(1)")


def test_suites_are_imported_before_the_grading_threads_start(monkeypatch):
    """``GradingRun.grade`` imports every hidden suite it will grade in its own thread before its pool starts
    (under pytest each import is an ``ast.parse`` of the assertion rewriter, outside the lock); a suite that does
    not import is left to its exercise's grading."""
    source = inspect.getsource(GradingRun.grade)
    assert 0 < source.index("_rows.preload_suites(") < source.index("ThreadPoolExecutor(")
    seen: list[str] = []
    monkeypatch.setattr(rows.hidden, "load_suite", lambda ex: seen.append(ex) or (_ for _ in ()).throw(KeyError(ex)))
    rows.preload_suites({"ex09_autograd_tape", "ex01_torch_mlp"})
    assert seen == ["ex01_torch_mlp", "ex09_autograd_tape"]
