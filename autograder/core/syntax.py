"""Python source to a syntax tree in the grader's process, one parse at a time.

CPython 3.11 (and 3.12) build a tree's Python objects (``ast.parse``, ``compile(..., PyCF_ONLY_AST)``) with one
recursion counter per interpreter, not per thread: a parse that starts while another is half built (a second
grading thread, or pytest rewriting a module imported lazily in one) resets it, and the first then fails
with ``SystemError: AST constructor recursion depth mismatch`` — an exercise lost to the grader's own trouble
under ``--jobs 2`` (seen in ``make test``: a session's solutions and three exercises' cases at once). Every
parse of the grader goes through :func:`parse`, which holds one lock (re-entrant: a parse started by a
finalizer in the same thread still runs). Python 3.13 counts per thread; the lock then only orders parses.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)``, never beside another parse of this process's threads.

    Args:
        source: Python source text.
        filename: the name its errors give.
        mode: ``"exec"``, ``"eval"`` or ``"single"``.

    Returns:
        The tree (an ``ast.Module`` for ``"exec"``).

    Raises:
        SyntaxError, ValueError, RecursionError: as ``ast.parse`` does.
    """
    with _LOCK:
        return ast.parse(source, filename, mode)


def literal(text: str) -> object:
    """``ast.literal_eval(text)`` (a Python literal's value), its parse through :func:`parse`.

    Raises:
        ValueError, SyntaxError, RecursionError: as ``ast.literal_eval`` does.
    """
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))
