"""Programs read in the grader's process, from the text a probe sent (never from the worker's verdict).

A structural check (is this function vectorised? does it branch with ``lax.cond``? does it call back
into Python?) asks its probe for the StableHLO text JAX lowered for the student's function
(``jax.jit(f).lower(*args).as_text()``; the probe also compiles that same lowering and runs it, so
the program read here is the one whose outputs were compared with the reference). This module
reads that text here, in the grader: the counts, loops, branches and host callbacks the verdict
uses are computed from the program itself, not reported by code running beside the student's.

Host callbacks (``jax.pure_callback``, ``io_callback``, ``jax.debug.callback``/``print``, host
send/receive) leave the compiled program and run Python: for a check about what the program does,
a callback is a loop the grader cannot see into, and is reported as one.

Reading is linear in the text: one anchored pattern per line, no backtracking across lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A probe's program text above this size is not read (an honest program of these exercises is a few KB;
# a loop unrolled over the batch a few tens of KB).
MAX_TEXT = 4_000_000

# One operation per line: optional results ("%0 = ", "%1:2 = "), then a dialect.op name, quoted or not,
# or the func dialect's short "call". Names are read with str methods and one bounded pattern.
_NAME = re.compile(r'[a-z_][a-z0-9_.]{0,100}')
_TARGET = re.compile(r'custom_call\s{0,8}@([\w.$\-]{1,200})|call_target_name\s{0,8}=\s{0,8}"([^"]{0,200})"')
_NOT_OPS = frozenset({"func.func", "builtin.module", "sdy.mesh"})
_HOST_OPS = frozenset({"send", "recv", "infeed", "outfeed"})
_COLLECTIVES = frozenset({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute",
                          "collective_broadcast"})


class ProgramTooLarge(ValueError):
    """The text is longer than :data:`MAX_TEXT`."""


@dataclass
class Program:
    """What a StableHLO module does, as read from its text.

    Attributes:
        ops: operations, counted in every function and region (calls count once per call site).
        loops: ``while`` operations (``lax.scan``, ``lax.map``, ``fori_loop``, ``while_loop``).
        branches: ``case``/``if`` operations (``lax.cond``, ``lax.switch``).
        callbacks: host callbacks: custom-call targets that call back into Python, host transfers.
        collectives: cross-device operations (``all_reduce``...), by name.
    """

    ops: int = 0
    loops: int = 0
    branches: int = 0
    callbacks: list[str] = field(default_factory=list)
    collectives: list[str] = field(default_factory=list)


def _is_callback_target(name: str) -> bool:
    low = name.lower()
    return "callback" in low or "host_callback" in low or low.startswith(("xla_python_", "xla_ffi_python_"))


def _op_name(line: str) -> str | None:
    """The operation a line of MLIR starts (``stablehlo.add``, ``call``...), or None."""
    if line.startswith("%"):
        eq = line.find(" = ", 0, 400)
        if eq < 0:
            return None
        line = line[eq + 3:].lstrip()
    if line.startswith('"'):
        line = line[1:]
    m = _NAME.match(line)
    if m is None:
        return None
    name = m.group(0)
    end = m.end()
    if end < len(line) and (line[end].isalnum() or line[end] in "._"):
        return None  # longer than any operation's name
    if name == "call":
        return name
    if "." not in name or name.endswith(".") or ".." in name:
        return None
    return name


def read_stablehlo(text: str) -> Program:
    """Reads a StableHLO (or MHLO) module's text.

    Args:
        text: ``Lowered.as_text()`` of a jitted function.

    Returns:
        Its :class:`Program`.

    Raises:
        ProgramTooLarge: the text is longer than :data:`MAX_TEXT` characters.
        TypeError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"a program text must be a str, not {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ProgramTooLarge(f"{len(text)} characters")
    prog = Program()
    for raw in text.splitlines():
        line = raw.lstrip()
        if not line or line[0] in "}/)":
            continue
        name = _op_name(line)
        if name is None or name in _NOT_OPS:
            continue
        prog.ops += 1
        op = name.rsplit(".", 1)[-1]
        if op == "while":
            prog.loops += 1
        elif op in ("case", "if"):
            prog.branches += 1
        elif op in _HOST_OPS:
            prog.callbacks.append(op)
        elif op in _COLLECTIVES:
            prog.collectives.append(op)
        elif op == "custom_call":
            t = _TARGET.search(line)
            target = (t.group(1) or t.group(2)) if t else ""
            if _is_callback_target(target):
                prog.callbacks.append(target)
    return prog
