"""Runs a graded module (:mod:`autograder.submissions.cells`) the way "Run all" ran it: context, then section.

Used by the worker (``_worker._load``, in the sandbox) and by the notebook's self-check
(``_public``, in the student's kernel), so both see the same module:

1. **Stand-ins** first (:mod:`autograder.submissions.standins`): harmless ``get_ipython()``
   (magics, ``!cmd`` and ``obj?`` are no-ops; ``x = !cmd`` gives an empty list; ``%run NAME.py`` runs
   a file the notebook's ``%%writefile`` cells wrote, which ``import NAME`` also finds), ``display``,
   ``check``, ``hint``, ``figure`` and ``solution`` (no-ops). In a worker, ``google.colab`` is
   importable as a harmless stand-in when the real one is absent
   (:func:`autograder.submissions.standins.install_colab_standin`).
2. **The context**, statement by statement: only the statements the section needs, i.e. those
   binding a name the section (or the exercise's contract) reads, and, transitively, what they
   read. Each failure is swallowed and counted (``SystemExit`` included). A time budget bounds
   the whole: :data:`CONTEXT_BUDGET` seconds for all of it, an assignment or block at most
   :data:`STATEMENT_LIMIT` of them; a statement still running then is interrupted. Once the
   budget is spent, later statements run only if they are definitions or imports, within
   :data:`DEFINITIONS_GRACE` more seconds. A statement that swallows the interruption (a bare
   ``except:``) is interrupted again at every line it runs until it exits. The seconds are working
   seconds (:class:`_Clock`: CPU time and sleep, not time spent waiting for a CPU), so a busy
   machine runs the same statements as an idle one.
3. **The section**, statement by statement, strictly: its failure is the exercise's load error (the caller
   reports it). Its definitions and imports run as they are; its other top-level statements (a training
   loop, a print, an assignment) get :data:`TOP_LEVEL_SHARE` of the load's time limit, together, in working
   seconds. A statement still running then is interrupted (as in the context) and the section stops there:
   the exercise is graded on what it defined before that statement (:class:`Cut` says where, and which of
   the contract's names were left undefined: the caller's timeout then).
4. **The later redefinitions** (:func:`autograder.submissions.cells.later_cells`): statements below the
   section that rebind a name of the exercise's contract, with what they read from those cells, run like
   the context (failures swallowed, the same budget): "Run all" leaves the last definition. The context
   also runs what they read from above (an import the section itself never needed).

Context cells are compiled under their own file names (``<notebook cell 7: ex04_jax_mlp>``), so
line numbers in messages about the section stay the section's. :func:`run_order` lists the statements of 2-4 in
this order without running or compiling any (``tapetrace similarity`` compares what they leave).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import linecache
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autograder.submissions.cells import later_cells, refuse_unreadable, split_graded, written_files
from autograder.submissions.fstrings import parse_source
from autograder.submissions.standins import add_standins, install_written_files
from autograder.submissions.statements import needed, section_reads, statement_names

CONTEXT_BUDGET = 3.0
DEFINITIONS_GRACE = 2.0
# what a deadline may leave unspent when it ends a statement (:class:`Deadline`): a budget with no more left is
# spent, so the next statement is not started for a sliver of it
SLIVER = 1e-3
STATEMENT_LIMIT = 1.0  # one assignment or block of the context (a definition or import: the budget left)
# The share of a load's time limit (``--timeout``, working seconds) that a section's own top-level statements other
# than definitions and imports get, together, before the one still running is cut (a notebook that trains at its
# top level, as the seed notebooks do). The rest is the margin for the worker's start, the context, the definitions
# and the later redefinitions, so the cut comes before the grader's timeout. See docs/instructors/time-and-memory.md.
TOP_LEVEL_SHARE = 0.5
LOAD_TIMEOUT = 30.0  # the grader's default load limit (``tapetrace grade --timeout``)
_REPEAT = 0.02  # re-interrupt period once a statement overran
_SCHED_IDLE = 5  # a thread's policy (``/proc/.../stat`` field 41) that runs only when nothing else wants the CPU


# --------------------------------------------------------------------------- the context
class ContextTimeout(BaseException):
    """A context statement ran past the budget (BaseException: ``except Exception`` does not stop it)."""


@dataclass(frozen=True)
class Cut:
    """A top-level statement of the section stopped at its budget, and the section not run past it.

    Attributes:
        line: its first line in the section's source (1-based).
        code: that line's text, stripped (at most 120 characters).
        seconds: the budget it outlasted (working seconds).
        missing: the contract's names that only the cut statement or those after it bind, undefined once the
            load was over (the caller's timeout).
    """

    line: int
    code: str
    seconds: float
    missing: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        """Its message fields (``LOAD_CUT``, ``LOAD_CUT_MISSING``): ``where`` (a catalogued label), ``seconds``,
        ``names``."""
        where = {"key": "where.line_code", "line": self.line, "code": self.code} if self.code \
            else {"key": "where.line", "line": self.line}
        return {"where": where, "seconds": round(self.seconds, 1), "names": ", ".join(self.missing)}


def top_level_budget(load_timeout: float) -> float:
    """Working seconds a section's own top-level statements get together under a load limit of ``load_timeout``."""
    return max(0.0, float(load_timeout)) * TOP_LEVEL_SHARE


@dataclass
class ContextReport:
    """What running the context did: statements chosen, run, failed, interrupted, skipped; seconds. ``cut``: where
    the section itself was stopped (:class:`Cut`), None when it ran to its end."""

    chosen: int = 0
    ran: int = 0
    failed: int = 0
    interrupted: int = 0
    skipped: int = 0
    seconds: float = 0.0
    cut: Cut | None = None


def select(cells: list[dict[str, Any]], roots: set[str] | None) -> list[tuple[dict[str, Any], int, str]]:
    """The context statements the section needs, in notebook order: ``(cell, statement index, kind)``.

    Args:
        cells: context cells (see :func:`autograder.submissions.statements.context_cell`).
        roots: names the section and the contract read; None takes every kept statement.
    """
    stmts = [(c, int(i), str(kind), list(binds), list(reads)) for c in cells for i, kind, binds, reads in c["stmts"]]
    if roots is None:
        return [(c, i, k) for c, i, k, _b, _r in stmts]
    chosen = needed([(b, r) for _c, _i, _k, b, r in stmts], set(roots))
    return [(c, i, k) for n, (c, i, k, _b, _r) in enumerate(stmts) if n in chosen]


def _future_flags(names: list[str]) -> int:
    futures = importlib.import_module("__future__")
    flags = 0
    for name in names:
        feature = getattr(futures, name, None)
        if feature is not None:
            flags |= feature.compiler_flag
    return flags


def _autogroup_nice() -> int:
    """The nice value of this process's autogroup (``/proc/self/autogroup``; 0 where there is none)."""
    try:
        with open("/proc/self/autogroup", encoding="ascii") as fh:
            return int(fh.read().split()[2])
    except (OSError, IndexError, ValueError):
        return 0


# this process's priority before any of the notebook's code ran (the module is imported first): a cell that
# renices the whole process (``os.nice(19)``) must not move the base its threads are compared with
_BASE_NICE = os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0
_BASE_GROUP_NICE = _autogroup_nice()


def _waits() -> dict[str, int] | None:
    """Nanoseconds each thread of this process has waited for a CPU so far (run-queue delay, a CPU quota's
    throttling included: ``/proc/self/task/*/schedstat``), leaving out threads that lowered their own priority
    (``SCHED_IDLE``, a nice value above the process's before the notebook ran, or the whole process in an
    autogroup whose nice value was raised): they wait by their own choice, and a starved one must not excuse a
    sleep beside it. None where that cannot be read (then wall time counts)."""
    out: dict[str, int] = {}
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    if _autogroup_nice() > _BASE_GROUP_NICE:
        return out
    for t in tasks:
        try:
            fields = _stat(f"/proc/self/task/{t}/stat")
            if int(fields[16]) > _BASE_NICE or int(fields[38]) == _SCHED_IDLE:
                continue
            with open(f"/proc/self/task/{t}/schedstat", encoding="ascii") as fh:
                out[t] = int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return out


def _stat(path: str) -> list[str]:
    """The fields of a ``/proc/.../stat`` file after the command's name (the state first)."""
    with open(path, encoding="ascii", errors="replace") as fh:
        return fh.read().rpartition(")")[2].split()


def _cpu() -> float:
    """CPU seconds of this process (every thread, ended ones included) and of the children it reaped."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


class _Clock:
    """Working seconds of this process since it was made: CPU time (its children's it reaped included), plus
    time asleep with none of its threads running or waiting for a CPU. Time spent waiting behind other
    processes (a loaded machine, a container's CPU quota) does not count, so a budget in these seconds means
    the same on a busy machine as on an idle one (the grader measures its workers the same way:
    ``autograder/workers/watch.py``)."""

    def __init__(self) -> None:
        self.used = 0.0
        self._last = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, dict[str, int] | None]:
        return time.monotonic(), _cpu(), _waits()

    def elapsed(self) -> float:
        """Working seconds so far."""
        now = self._sample()
        wall, cpu = now[0] - self._last[0], max(0.0, now[1] - self._last[1])
        if now[2] is None or self._last[2] is None:
            self.used += wall
        else:
            before = self._last[2]
            waited = sum(max(0, w - before.get(t, 0)) for t, w in now[2].items()) / 1e9
            self.used += cpu + max(0.0, wall - cpu - waited)
        self._last = now
        return self.used


class Deadline:
    """Raises :class:`ContextTimeout` in the main thread once ``seconds`` working seconds (:class:`_Clock`)
    have passed, and again and again (at every line of Python run, once one was swallowed) until
    :meth:`disarm`. The timer is a wall-clock one; when it rings early in working seconds (the process
    waited for a CPU meanwhile) it is set again for what is left.

    Plain methods, no context manager: code of this module is never interrupted (the handler and
    the tracer leave its frames alone), so disarming always happens. A timer already set (the notebook's
    self-check bounds the whole load with one) is set again on disarming, less the wall time that passed.
    """

    def __init__(self, seconds: float, clock: _Clock | None = None) -> None:
        self.usable = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        self.fired = 0
        self.previous: Any = None
        self.outer = (0.0, 0.0)
        self.armed = time.monotonic()
        self.seconds = seconds
        self.clock = clock or _Clock()
        self.start = self.clock.elapsed()
        if self.usable:
            self.outer = signal.getitimer(signal.ITIMER_REAL)
            self.previous = signal.signal(signal.SIGALRM, self._alarm)
            signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3), _REPEAT)

    def _tracer(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == _HERE:
            return None
        if self.fired and event in ("line", "call") and not _waits_out(frame):
            raise ContextTimeout()
        return self._tracer

    def _alarm(self, _signum: int, frame: Any) -> None:
        if frame is None or frame.f_code.co_filename == _HERE:
            return  # the statement is over: nothing to interrupt
        if not self.fired:
            left = self.seconds - (self.clock.elapsed() - self.start)
            if left > SLIVER:  # the process waited for a CPU meanwhile: that time is not the statement's
                signal.setitimer(signal.ITIMER_REAL, left, _REPEAT)
                return
        if _waits_out(frame):  # a request to the grader half made: the repeating timer rings again in a moment
            return
        self.fired += 1
        if self.fired >= 2:  # the first one was swallowed: trace every frame still running
            sys.settrace(self._tracer)
            f = frame
            while f is not None and f.f_code.co_filename != _HERE:
                f.f_trace = self._tracer
                f.f_trace_lines = True
                f = f.f_back
        raise ContextTimeout()

    def disarm(self) -> None:
        if self.usable:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.settrace(None)
            signal.signal(signal.SIGALRM, self.previous)
            if self.outer[0] > 0:  # the timer that was running before: what is left of it (at least a tick)
                left = self.outer[0] - (time.monotonic() - self.armed)
                signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), self.outer[1])


_HERE = __file__
# Files whose frames an interruption waits out: a worker's request to the grader for a compiled program must not be
# left half made (its answer unread, the next request would read it: ``autograder.workers.compile_cache``, which the
# worker adds here). A student's code compiled under such a name only waits out its own cut: the load's timeout.
UNINTERRUPTED: set[str] = set()


def _waits_out(frame: Any) -> bool:
    """Whether ``frame`` or a frame that called it is in a file of :data:`UNINTERRUPTED`."""
    while frame is not None and UNINTERRUPTED:
        if frame.f_code.co_filename in UNINTERRUPTED:
            return True
        frame = frame.f_back
    return False


def remember_source(filename: str, source: str) -> None:
    """Source lines for tracebacks and ``inspect.getsource`` of code compiled from a string.

    Args:
        filename: The name the code was compiled under (``compile(source, filename, ...)``).
        source: Its text, kept in :mod:`linecache` under ``filename``.
    """
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)


def run_context(namespace: dict[str, Any], cells: list[dict[str, Any]], roots: set[str] | None, *,
                budget: float = CONTEXT_BUDGET, grace: float = DEFINITIONS_GRACE,
                interrupts: bool = False) -> ContextReport:
    """Runs the chosen context statements into ``namespace``; every failure is swallowed.

    Args:
        namespace: the graded module's ``__dict__``.
        cells: its context cells.
        roots: names the section and the contract read (None: all statements).
        budget: seconds for the whole context; afterwards only definitions and imports run.
        grace: extra seconds for those definitions and imports.
        interrupts: let a KeyboardInterrupt through (a student's Ctrl-C in the notebook).

    Returns:
        A :class:`ContextReport`.
    """
    report = ContextReport()
    chosen = select(cells, roots)
    report.chosen = len(chosen)
    trees: dict[int, ast.Module | None] = {}
    start = time.monotonic()
    clock = _Clock()  # the budget is in working seconds: load on the machine does not spend it
    for cell, index, kind in chosen:
        elapsed = clock.elapsed()
        left = budget - elapsed
        if left <= SLIVER:  # (the deadline ends a statement with up to this much left: the budget is spent)
            left = budget + grace - elapsed
            if kind == "other" or left <= SLIVER:
                report.skipped += 1
                continue
        if kind == "other":
            left = min(left, STATEMENT_LIMIT)
        key = id(cell)
        if key not in trees:
            try:
                trees[key] = parse_source(cell["source"], cell["file"])
                remember_source(cell["file"], cell["source"])
            except (SyntaxError, ValueError):
                trees[key] = None
        tree = trees[key]
        if tree is None or index >= len(tree.body):
            report.failed += 1
            continue
        try:
            code = compile(ast.Module(body=[tree.body[index]], type_ignores=[]), cell["file"], "exec",
                           flags=_future_flags(cell.get("future", [])), dont_inherit=True)
        except (SyntaxError, ValueError):
            report.failed += 1
            continue
        deadline = Deadline(left, clock)
        try:
            try:
                exec(code, namespace)  # noqa: S102 - the student's own notebook code, in its sandbox
            finally:
                deadline.disarm()
            report.ran += 1
        except ContextTimeout:
            report.interrupted += 1
        except KeyboardInterrupt:
            if interrupts:
                raise
            report.failed += 1
        except BaseException:  # noqa: BLE001 - SystemExit too: it ran in Run all, and failed there
            report.failed += 1
    report.seconds = round(time.monotonic() - start, 3)
    return report


# --------------------------------------------------------------------------- the whole module
@dataclass(frozen=True)
class Statement:
    """One top-level statement of the section, compiled alone (its lines stay the section's).

    Attributes:
        code: its code object.
        timed: not a definition or an import: it runs within the top-level budget (:data:`TOP_LEVEL_SHARE`).
        line: its first line.
        text: that line, stripped (at most 120 characters).
        binds: the module-level names it binds.
    """

    code: Any
    timed: bool
    line: int
    text: str
    binds: frozenset[str] = frozenset()


@dataclass
class Prepared:
    """A graded module ready to run: its section's code (whole, and statement by statement), its context and its
    later redefinitions."""

    section: str
    code: Any
    context: list[dict[str, Any]]
    roots: set[str] | None
    later: list[dict[str, Any]] = field(default_factory=list)
    contract: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)
    statements: list[Statement] = field(default_factory=list)
    doc: str | None = None


_UNTIMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _statements(tree: ast.Module, section: str, filename: str) -> tuple[list[Statement], str | None]:
    """The section's top-level statements, each compiled alone under the section's ``from __future__`` features;
    and its docstring (a module's ``__doc__``, which a statement compiled alone would not set)."""
    futures = [a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__" for a in n.names]
    flags = _future_flags(futures)
    lines = section.splitlines()
    out = []
    for node in tree.body:
        code = compile(ast.Module(body=[node], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True)
        text = lines[node.lineno - 1].strip()[:120] if 0 < node.lineno <= len(lines) else ""
        try:
            binds = frozenset(statement_names(node)[0])
        except (SyntaxError, ValueError):
            binds = frozenset()
        out.append(Statement(code, not isinstance(node, _UNTIMED), node.lineno, text, binds))
    return out, ast.get_docstring(tree, clean=False)


def prepare(text: str, filename: str, contract: tuple[str, ...] = ()) -> Prepared:
    """Splits and compiles a graded module's text.

    Args:
        text: the graded module (a section with its context trailer, or a plain ``.py``).
        filename: the file name the section's code gets (messages point at its lines).
        contract: the exercise's contract names (always wanted from the context).

    Raises:
        SyntaxError: the section does not compile (the exercise's load error); ``UnreadableCharacter``: it holds a
            character Python cannot read (a lone surrogate, NUL: recorded at intake, as "Run all" fails that cell).
    """
    refuse_unreadable(text, filename)
    section, context = split_graded(text)
    later = later_cells(text) if contract else []
    tree = parse_source(section, filename)  # Python 3.12's f-strings too, on an older grader
    code = compile(tree, filename, "exec", dont_inherit=True)
    statements, doc = _statements(tree, section, filename)
    roots = _context_roots(tree, section, context, later, contract)
    return Prepared(section, code, context, roots, later, set(contract), written_files(text), statements, doc)


def _context_roots(tree: ast.Module, section: str, context: list[dict[str, Any]], later: list[dict[str, Any]],
                   contract: tuple[str, ...]) -> set[str] | None:
    """The names the context is run for (:func:`select`): what the section, the contract and the later
    redefinitions read; None (every kept statement) where the section looks names up dynamically, or there is no
    context."""
    if not context:
        return None
    reads = section_reads(tree, section)
    needs = {name for cell, index, _kind in select(later, set(contract))
             for i, _k, _binds, names in cell["stmts"] if i == index for name in names}
    return None if reads is None else reads | set(contract) | needs


@dataclass(frozen=True)
class Step:
    """One top-level statement :func:`run` runs for a graded module.

    Attributes:
        part: ``"context"``, ``"section"`` or ``"later"`` (a redefinition below the section, or what it reads).
        file: the name its code is compiled under (a cell's label; the section's file name).
        source: the text it is a statement of (its cell's transformed source; the section's).
        index: its place among that text's top-level statements.
    """

    part: str
    file: str
    source: str
    index: int


def run_order(text: str, filename: str = "<section>", contract: tuple[str, ...] = ()) -> list[Step]:
    """The statements :func:`run` runs for a graded module, in its order: the context's chosen ones, the section's,
    the later redefinitions' chosen ones ("Run all" leaves the last definition of each name).

    Text only: nothing is compiled or run, and a section with a character Python cannot read is read as it is.
    What a statement does when it runs (``exec`` of a string, ``%run``) is not followed here, and the time budgets
    (which may skip a context statement, or cut the section short, on a slow run) are not applied.

    Args:
        text: the graded module (a section with its context trailer, or a plain ``.py``).
        filename: the section's file name.
        contract: the exercise's contract names (as :func:`prepare` is given them).

    Raises:
        SyntaxError, ValueError: the section does not parse (the exercise's load error: nothing of it runs).
    """
    section, context = split_graded(text)
    later = later_cells(text) if contract else []
    tree = parse_source(section, filename)
    roots = _context_roots(tree, section, context, later, contract)
    steps = [Step("context", str(c["file"]), str(c["source"]), i) for c, i, _kind in select(context, roots)]
    steps += [Step("section", filename, section, i) for i in range(len(tree.body))]
    steps += [Step("later", str(c["file"]), str(c["source"]), i) for c, i, _kind in select(later, set(contract))]
    return steps


def _cut(statements: list[Statement], n: int, budget: float) -> Cut:
    """The cut at statement ``n``: the names it and the statements after it bind are ``missing``."""
    st = statements[n]
    return Cut(st.line, st.text, budget, tuple(sorted({name for rest in statements[n:] for name in rest.binds})))


def run_section(prepared: Prepared, namespace: dict[str, Any], budget: float) -> Cut | None:
    """Runs the section statement by statement; its timed statements (:attr:`Statement.timed`) get ``budget``
    working seconds together, and the one still running then is interrupted: the section stops there.

    Its exceptions propagate (the exercise's load error), ``KeyboardInterrupt`` included.

    Returns:
        Where it was stopped (:class:`Cut`, ``missing``: the names it and the statements after it bind), or None
        when it ran to its end.
    """
    if prepared.doc is not None:
        namespace["__doc__"] = prepared.doc
    clock = _Clock()  # working seconds: load on the machine does not spend the budget
    spent = 0.0
    for n, st in enumerate(prepared.statements):
        if not st.timed:
            exec(st.code, namespace)  # noqa: S102 - the student's own code, in its sandbox
            continue
        left = budget - spent
        if left <= SLIVER:
            return _cut(prepared.statements, n, budget)
        begun = clock.elapsed()
        deadline = Deadline(left, clock)
        try:
            try:
                exec(st.code, namespace)  # noqa: S102
            finally:
                deadline.disarm()
        except ContextTimeout:
            return _cut(prepared.statements, n, budget)
        spent += clock.elapsed() - begun
        if deadline.fired:  # interrupted, and the statement swallowed it: it did not run to its end either
            return _cut(prepared.statements, n, budget)
    return None


def run(prepared: Prepared, namespace: dict[str, Any], *, interrupts: bool = False,
        budget: float = CONTEXT_BUDGET, section_guard: Callable[[], Any] | None = None,
        after_context: Callable[[], Any] | None = None, load_timeout: float = LOAD_TIMEOUT) -> ContextReport:
    """Stand-ins, the context (failures swallowed), the section (its exceptions propagate), the later redefinitions.

    Args:
        prepared: from :func:`prepare`.
        namespace: the module's ``__dict__``.
        interrupts: let KeyboardInterrupt through from the context.
        budget: the context's time budget.
        section_guard: a context manager factory wrapped around the section's run (a time limit).
        after_context: called between the context and the section (a student's worker puts back
            what the context changed of the grader's own code: ``autograder.workers.guard.Snapshot.restore``).
        load_timeout: the load's time limit; the section's top-level statements get
            :func:`top_level_budget` of it (:func:`run_section`).

    Returns:
        The context's :class:`ContextReport`, with the section's :class:`Cut` (its ``missing``: the contract's
        names still undefined at the end) where it was stopped.
    """
    add_standins(namespace, prepared.files)
    install_written_files(prepared.files)
    report = run_context(namespace, prepared.context, prepared.roots, budget=budget, interrupts=interrupts)
    if after_context is not None:
        after_context()
    with section_guard() if section_guard is not None else contextlib.nullcontext():
        cut = run_section(prepared, namespace, top_level_budget(load_timeout))
    if prepared.later:
        run_context(namespace, prepared.later, prepared.contract, budget=budget, interrupts=interrupts)
    if cut is not None:  # the contract's names left undefined because the section stopped there
        report.cut = Cut(cut.line, cut.code, cut.seconds,
                         tuple(n for n in cut.missing if n in prepared.contract and n not in namespace))
    return report
