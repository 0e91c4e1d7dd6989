"""What a notebook statement binds and reads, and the context cells built from it (text only).

Owns the names side of a graded module's context (:mod:`autograder.submissions.cells`): the global names
code reads (:func:`free_globals`, :func:`section_reads`), what a top-level statement binds or modifies
(:func:`statement_names`), which of them a set of names needs (:func:`needed`), which statements of another
section are kept (:func:`kept`: imports, ``def``,
``class``, assignments, and ``if``/``try``/``with`` blocks without loops; of a later cell, :func:`rebinds_only`)
and one context cell's record
(:func:`context_cell`), which :mod:`autograder.submissions.execute` reads to run only what a section needs.
Nothing here runs student code (``ast`` and ``symtable`` are parsers).
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Callable
from typing import Any

from autograder.submissions.fstrings import parse_source

_DYNAMIC = frozenset({"globals", "vars", "eval", "exec", "locals"})


def free_globals(source: str) -> set[str]:
    """Global names the code reads: at module level, and from inside its functions and classes."""
    out: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        top = table.get_type() == "module"
        for sym in table.get_symbols():
            if sym.is_referenced() and (top or sym.is_global()):
                out.add(sym.get_name())
        for child in table.get_children():
            walk(child)

    walk(symtable.symtable(source, "<cell>", "exec"))
    return out


def _target_roots(node: ast.AST) -> set[str]:
    """``cfg["lr"] = ...``, ``model.fc = ...``: the root name is modified."""
    roots = set()
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    for t in targets:
        for sub in ast.walk(t):
            if isinstance(sub, (ast.Attribute, ast.Subscript)):
                base = sub.value
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if isinstance(base, ast.Name):
                    roots.add(base.id)
    return roots


def statement_names(node: ast.stmt, source: str | None = None) -> tuple[list[str], list[str]]:
    """``(names it binds or modifies at module level, global names it reads)``; ``"*"``: a star import.

    ``source``: the statement's own text at column 0, where the caller has it (else it is unparsed from ``node``).
    """
    if source is None:
        source = ast.unparse(node)
    binds: set[str] = set()
    table = symtable.symtable(source, "<stmt>", "exec")
    for sym in table.get_symbols():
        if sym.is_assigned() or sym.is_imported():
            binds.add(sym.get_name())
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and any(a.name == "*" for a in sub.names):
            binds.add("*")
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            binds |= _target_roots(sub)
    return sorted(binds), sorted(free_globals(source))


_TOP_KINDS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
              ast.AnnAssign, ast.AugAssign)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _no_loops(stmts: list[ast.stmt]) -> bool:
    """A block's statements (outside any def/class in it) hold no loop."""
    for st in stmts:
        if isinstance(st, _LOOPS):
            return False
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            if not _no_loops(getattr(st, field, None) or []):
                return False
        for handler in getattr(st, "handlers", None) or []:
            if not _no_loops(handler.body):
                return False
    return True


def kept(node: ast.stmt) -> bool:
    """Whether a top-level statement of another section is part of the context (see module docstring)."""
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        return False
    if isinstance(node, _TOP_KINDS):
        return True
    return isinstance(node, _BLOCKS) and _no_loops([node])


def _kind(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "def"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "import"
    return "other"


def rebinds_only(node: ast.stmt) -> bool:
    """Whether a statement only (re)binds names: ``def``, ``class``, an import, ``NAME = ...`` (no attribute or
    item of an existing object is modified, no block): what a later cell's redefinition may do."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import)):
        return True
    if isinstance(node, ast.ImportFrom):
        return node.module != "__future__" and all(a.name != "*" for a in node.names)
    if isinstance(node, ast.Assign):
        return all(isinstance(t, ast.Name) for t in node.targets)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None


def signature(node: ast.stmt) -> tuple[str, ...] | None:
    """What a redefinition must keep of a ``def`` or ``class``: its kind and parameter names (a class's
    ``__init__``'s); None for any other statement."""
    def params(args: ast.arguments) -> tuple[str, ...]:
        out = [a.arg for a in (*args.posonlyargs, *args.args)] + [f"*{args.vararg.arg}" if args.vararg else "*"]
        return (*out, *(a.arg for a in args.kwonlyargs), f"**{args.kwarg.arg}" if args.kwarg else "")

    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ("def", *params(node.args))
    if isinstance(node, ast.ClassDef):
        init = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"]
        return ("class", *(params(init[-1].args) if init else ()))
    return None


def signatures(source: str) -> dict[str, tuple[str, ...]]:
    """The :func:`signature` of each top-level ``def``/``class`` of a source (the last one of a name)."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return {}
    return {node.name: sig for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and (sig := signature(node)) is not None}


def context_cell(source: str, label: str, only: Callable[[ast.stmt], bool] = kept) -> dict[str, Any] | None:
    """One context cell: its source, future features and kept statements; None when nothing is kept.

    Args:
        source: the cell's transformed source.
        label: the file name its code is compiled under.
        only: which top-level statements are kept (:func:`kept`; :func:`rebinds_only` for later cells).
    """
    try:
        tree = parse_source(source)  # Python 3.12's f-strings too, on an older grader
    except (SyntaxError, ValueError):
        return None  # it raises where it is; it defines nothing for later cells
    futures = sorted({a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"
                      for a in n.names})
    stmts = []
    for i, node in enumerate(tree.body):
        if only(node):
            try:
                binds, reads = statement_names(node)
            except (SyntaxError, ValueError):
                continue
            if binds:
                stmts.append([i, _kind(node), binds, reads])
    if not stmts:
        return None
    return {"file": label, "source": source, "future": futures, "stmts": stmts}


def section_reads(tree: ast.Module, source: str) -> set[str] | None:
    """Global names a section reads; None when it looks names up dynamically (``globals()``, ``eval``)."""
    try:
        names = free_globals(source)
    except (SyntaxError, ValueError):
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return None if names & _DYNAMIC else names


def needed(stmts: list[tuple[list[str], list[str]]], roots: set[str]) -> set[int]:
    """Which statements (each ``(binds, reads)``) bind a name of ``roots`` or, transitively, a name a chosen one
    reads; a star import (``"*"`` among its binds) is always chosen. In time linear in the names listed."""
    binders: dict[str, list[int]] = {}
    for n, (binds, _reads) in enumerate(stmts):
        for name in binds:
            binders.setdefault(name, []).append(n)
    todo, seen, chosen = [*roots, "*"], {*roots, "*"}, set()
    while todo:
        for n in binders.get(todo.pop(), []):
            if n not in chosen:
                chosen.add(n)
                fresh = [name for name in stmts[n][1] if name not in seen]
                seen.update(fresh)
                todo += fresh
    return chosen
