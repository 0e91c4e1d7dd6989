"""``tapetrace similarity``: pairwise similarity of students' code per exercise, template code removed first.

Fingerprinting is copydetect's (winnowing over a token stream in which names, strings and comments are
normalised, as MOSS does): ``pip install 'tapetrace[similarity]'``. Per exercise:

1. each submission's **graded code** is read with the project's loader (autograder/submissions/loader.py) and
   reduced to what counts once "Run all" is over (:func:`counted_code`, from the grader's own order of what runs:
   :func:`autograder.submissions.execute.run_order`): the last definition of each of the exercise's contract
   names wherever it sits (a later cell, a cell above the section, a written file it imports), what they read,
   the rest of the section but what a later definition replaced; a folder's or zip's exercise file alike;
2. each is **normalised** (:func:`normalise`: docstrings, comments and ``from __future__`` lines out, formatting through
   ``ast.unparse``, top-level definitions in an order moving them does not change), and so is the template:
   code is compared, not its presentation (tests/similarity_bank: every usual disguise of a copy scores as a
   verbatim one);
3. the **template's** fingerprints (the stub in ``exercises/``, the student template's file and notebook
   section) are removed from every submission (copydetect's boilerplate), and so are passages more than
   ``max_share`` of the class wrote (MOSS's ``-m``: code everyone shares is not evidence);
4. candidate pairs are those sharing fingerprints (an inverted index, so 1,000 submissions do not mean
   500,000 full comparisons); each is compared with ``copydetect.compare_files``.

A submission that cannot be normalised or fingerprinted (code nested deeper than Python's parser goes) is
left out of its exercise with a note saying why; the rest are compared. Outputs in ``--out``:
``index.html``; ``<exercise>.html`` with the top pairs side by side, as the students wrote them, the lines
the matching spans came from marked; ``pairs.csv`` (pairs at or above ``--threshold``); ``export/<exercise>/`` with one file per
student and the template, in the form MOSS (``moss -l python -b template/...``) and JPlag (``-bc``) take.
"""

from __future__ import annotations

import ast
import bisect
import csv
import io
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from autograder.core import syntax as _syntax
from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT

NOISE = 25  # copydetect's default noise threshold: k-grams of 25 filtered characters
GUARANTEE = 30  # copydetect's default guarantee threshold: window = GUARANTEE - NOISE + 1
MIN_SHARED = 3  # candidate pairs share at least this many fingerprints


class SimilarityError(Exception):
    """Similarity cannot be computed (copydetect missing, nothing to compare)."""


def _copydetect() -> Any:
    try:
        import copydetect
        import copydetect.utils
    except ImportError:
        raise SimilarityError("copydetect is not installed: pip install 'tapetrace[similarity]'") from None
    copydetect.utils.hashed_kgrams = stable_kgrams  # the same report on every run (see stable_kgrams)
    return copydetect


def stable_kgrams(string: str, k: int) -> Any:
    """The hashes of every ``k``-gram of ``string``, the same in every process and run.

    copydetect hashes k-grams with Python's ``hash``, which is salted per process (``PYTHONHASHSEED``):
    winnowing then keeps other fingerprints on each run, and one pair's score moved by 0.1 between two runs
    on the same class. This replaces it: CRC-32 and Adler-32 of each k-gram's UTF-8 (C code, about as fast as
    ``hash``), side by side in one 64-bit integer.
    """
    import zlib

    import numpy as np

    whole = string.encode("utf-8", "surrogatepass")
    if len(whole) == len(string):  # ASCII (the tokenizer's output nearly always is): slice the bytes
        grams = [whole[o:o + k] for o in range(len(whole) - k + 1)]
    else:
        grams = [string[o:o + k].encode("utf-8", "surrogatepass") for o in range(len(string) - k + 1)]
    return np.array([(zlib.crc32(g) << 32) | zlib.adler32(g) for g in grams], dtype=np.uint64).view(np.int64)


@dataclass
class Pair:
    """Two submissions' similarity on one exercise (shares of each one's fingerprinted tokens)."""

    exercise: str
    a: str
    b: str
    sim_a: float
    sim_b: float
    tokens: int
    slices: tuple[Any, Any] | None = field(default=None, repr=False)

    @property
    def score(self) -> float:
        """The pair's rank: the mean of the two shares (a whole copy is 1; a short file inside a longer
        one, which a mutant or a variant of the same solution often is, is not)."""
        return (self.sim_a + self.sim_b) / 2


def graded_code(path: str, why: list[str] | None = None) -> dict[str, str]:
    """Each exercise's graded code in a submission (:func:`counted_code`), ``{}`` if unreadable.

    The loader made every text safe at intake (:func:`autograder.core.text_intake.normalise_source`: a lone
    surrogate or a NUL is U+FFFD): a notebook whose cell "Run all" cannot run is still compared, as written.
    ``why``: where the reason a submission could not be read is put.
    """
    from autograder.core.registry import contracts
    from autograder.submissions import loader as _loader

    try:
        sources = _loader.load(path).sources
    except Exception as err:  # noqa: BLE001 - an unreadable submission has nothing to compare (and is said so)
        if why is not None:
            why.append(_why(err))
        return {}
    names = contracts(sources)
    every = {name for these in names.values() for name in these}
    own = {ex: counted_code(src, names.get(ex, ()), every) for ex, src in sources.items() if src}
    return {ex: src for ex, src in own.items() if src.strip()}


# --------------------------------------------------------------------------- what was graded
SECTION_LABEL = "<the exercise's section>"
STRING_LABEL = "<a literal string run as code>"
MAX_DEPTH = 8  # ``%run`` and ``exec`` of a literal string followed this deep (a file that runs itself stops here)
# Names and attributes through which code reaches a module's names without naming them (``globals()[...]``,
# ``sys.modules[__name__]``, ``f.__globals__``, ``importlib.import_module(...)``): where the graded code uses one,
# which statements count cannot be read from the text, and every statement the grader runs is compared.
# ``get_ipython().run_line_magic`` too, but for a magic other than ``%run`` named by a literal (a no-op in a graded
# module: ``%matplotlib inline``); a ``%run`` of a written file in the section is read in its place.
OPAQUE_NAMES = frozenset({"globals", "vars", "locals", "eval", "exec", "compile", "__import__", "importlib", "runpy",
                          "sys", "inspect", "gc", "builtins", "__builtins__", "__name__"})
OPAQUE_ATTRS = frozenset({"__globals__", "__dict__", "__builtins__", "f_globals", "f_locals", "f_back",
                          "__closure__", "__code__", "modules", "user_ns", "user_global_ns"})
# builtins whose call does nothing a later statement could see (a definition calling only these can be dropped)
_PURE_BUILTINS = frozenset({"abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "frozenset", "int",
                            "isinstance", "issubclass", "len", "list", "max", "min", "pow", "range", "reversed",
                            "round", "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "object",
                            "staticmethod", "classmethod", "property", "super", "repr", "hash", "bytes"})
# methods that change the object they are called on: a function that calls one on a global name changes that name
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "remove",
                       "discard", "clear", "sort", "reverse", "appendleft", "extendleft", "__setitem__",
                       "__setattr__", "__delitem__"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass
class _Unit:
    """One top-level statement the grader runs, for :func:`counted_code`.

    Attributes:
        label: where it is (its cell's label, the section, a file a ``%run`` ran).
        text: its code as written.
        node: its syntax tree.
        own: the section's own (or a file the section ``%run``s, a string it ``exec``s): it runs whole, so what it
            does besides defining names counts whatever it binds.
        plain: one of the section's statements as it is written (nothing ``%run`` or ``exec`` brought in).
        binds: the names it binds or changes (``global NAME`` in a function it defines included).
        full: those it rebinds outright (an earlier binding of them no longer counts).
        reads: the global names it reads; ``now``: those read when it runs (the rest: when what it defines is
            called, so their last binding counts).
        opaque: it reaches names without naming them (:data:`OPAQUE_NAMES`, :data:`OPAQUE_ATTRS`).
        imports: the written files (module names) it imports.
        calls: what it calls when it runs (decorators included), each by the name its callee is reached from
            (None: not from a name); ``odd``: it awaits, yields or binds with ``:=``.
    """

    label: str
    text: str
    node: ast.stmt
    own: bool
    plain: bool = False
    binds: set[str] = field(default_factory=set)
    full: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    now: set[str] = field(default_factory=set)
    opaque: bool = False
    imports: set[str] = field(default_factory=set)
    calls: list[str | None] = field(default_factory=list)
    odd: bool = False


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # Python's lines (not str.splitlines': no U+2028, \f)


def _segment(lines: list[str], node: ast.stmt) -> str:
    """A top-level statement's text as written (its decorators included), from its source's lines as the parser
    counts them (:data:`_LINES`), its columns (UTF-8 bytes) cut where it starts and ends."""
    decorators = getattr(node, "decorator_list", [])
    start = min([(node.lineno, node.col_offset), *((d.lineno, max(0, d.col_offset - 1)) for d in decorators)])
    chunk = lines[start[0] - 1:node.end_lineno or node.lineno]
    if not chunk:
        return ""
    raw = [line.encode("utf-8", "surrogatepass") for line in chunk]
    if node.end_col_offset is not None:
        raw[-1] = raw[-1][:node.end_col_offset]
    raw[0] = raw[0][start[1]:]
    return b"".join(raw).decode("utf-8", "surrogatepass").rstrip("\r\n") + "\n"


def _walk_now(node: ast.AST) -> list[ast.AST]:
    """The nodes of a statement that run when it runs: not the bodies of the functions and lambdas it defines."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, _BODIES):  # their decorators, defaults and annotations run now; their bodies when called
            args = n.args
            todo += [*getattr(n, "decorator_list", []), *args.defaults, *(d for d in args.kw_defaults if d)]
            if not isinstance(n, ast.Lambda):
                todo += [a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                                args.kwarg) if a is not None and a.annotation is not None]
                todo += [n.returns] if n.returns is not None else []
            continue
        todo += list(ast.iter_child_nodes(n))
    return out


def _full(node: ast.stmt) -> set[str]:
    """The names a statement always rebinds outright."""
    if isinstance(node, _DEFS):
        return {node.name}
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name for a in node.names if a.name != "*"}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
        and node.value is not None else []
    out: set[str] = set()
    todo = list(targets)
    while todo:
        t = todo.pop()
        if isinstance(t, ast.Name):
            out.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            todo += t.elts
        elif isinstance(t, ast.Starred):
            todo.append(t.value)
    return out


def _callee(func: ast.AST) -> str | None:
    """The name a call's callee is reached from (``jax.random.split`` -> ``jax``); None: not from a name."""
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.func if isinstance(func, ast.Call) else func.value
    return func.id if isinstance(func, ast.Name) else None


def _scan(node: ast.AST, modules: set[str]) -> tuple[bool, set[str], set[str]]:
    """``(opaque, written files imported, names declared global)`` of code, in one walk. A magic run by a literal
    name other than ``run`` (``%matplotlib inline``: a no-op in a graded module) is not opaque."""
    opaque, imports, declared, harmless = False, set(), set(), set()
    for n in ast.walk(node):  # breadth first: a call before its callee
        if isinstance(n, ast.Name):
            opaque = opaque or n.id in OPAQUE_NAMES
        elif isinstance(n, ast.Attribute):
            opaque = opaque or n.attr in OPAQUE_ATTRS or n.attr == "run_line_magic" and id(n) not in harmless
        elif isinstance(n, ast.Call):
            if n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value != "run" \
                    and isinstance(n.args[0].value, str):
                harmless.add(id(n.func))
        elif isinstance(n, ast.Global):
            declared |= set(n.names)
        elif isinstance(n, ast.Import) and modules:
            imports |= {a.name.split(".")[0] for a in n.names} & modules
        elif isinstance(n, ast.ImportFrom) and modules and not n.level and n.module:
            imports |= {n.module.split(".")[0]} & modules
    return opaque, imports, declared


def _changed(node: ast.AST) -> set[str]:
    """The names whose object code changes in place (``_REG[k] = f``, ``_REG.append(f)``, ``setattr(_REG, ...)``,
    ``del _REG[k]``), anywhere in it: a function that does so changes a global of that name when it is called."""
    sites: list[ast.AST] = []
    for n in ast.walk(node):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            sites += [t for t in (n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target])
                      if isinstance(t, (ast.Attribute, ast.Subscript))]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
            # ``table.update(...)``; ``dict.update(table, ...)``: the first argument's
            sites.append(n.args[0] if _callee(n.func) in _PURE_BUILTINS and n.args else n.func)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr") \
                and n.args:
            sites.append(n.args[0])
    return {name for site in sites if (name := _callee(site)) is not None}


def _read(u: _Unit, modules: set[str]) -> None:
    """Fills in what a statement binds, reads, calls (:class:`_Unit`)."""
    from autograder.submissions.statements import statement_names

    try:
        binds, reads = statement_names(u.node, u.text)
    except (SyntaxError, ValueError):  # its text is newer Python than this one's (3.12's f-strings)
        binds, reads = statement_names(u.node)
    u.opaque, u.imports, declared = _scan(u.node, modules)
    # a definition binds its name, and (when called) a name declared ``global`` in it and a global whose object it
    # changes; ``self.x = ...`` in a method changes no global (statement_names, reading every target, counts it)
    u.reads = set(reads)
    u.binds = ({u.node.name} | (_changed(u.node) & u.reads) if isinstance(u.node, _DEFS) else set(binds)) | declared
    u.full = _full(u.node) & u.binds
    now = _walk_now(u.node)
    u.now = {n.id for n in now if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} & u.reads
    called = [n.func for n in now if isinstance(n, ast.Call)]
    called += [d.func if isinstance(d, ast.Call) else d for n in now if isinstance(n, _DEFS)
               for d in n.decorator_list]  # a decorator is called with what it decorates
    # a builtin is pure by its own name only (``dict.update(table, ...)`` changes ``table``)
    u.calls = [None if not isinstance(f, ast.Name) and _callee(f) in _PURE_BUILTINS else _callee(f) for f in called]
    u.odd = any(isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in now)


def _literal_code(node: ast.stmt, files: dict[str, str]) -> tuple[str, str] | None:
    """What a statement of the section runs in place: ``(label, code)`` of ``%run NAME.py`` (a written file) or of
    ``exec("...")``/``exec(compile("...", ...))`` with a literal string; None for any other statement."""
    from autograder.submissions import standins

    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call) or not value.args:
        return None
    func, first = value.func, value.args[0]
    if (isinstance(func, ast.Attribute) and func.attr == "run_line_magic" and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "get_ipython" and len(value.args) == 2
            and isinstance(first, ast.Constant) and first.value == "run"
            and isinstance(value.args[1], ast.Constant) and isinstance(value.args[1].value, str)):
        script = standins.run_script(value.args[1].value, files)
        return None if script is None else (standins.file_label(script), files[script])
    if isinstance(func, ast.Name) and func.id == "exec":
        if isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "compile" \
                and first.args:
            first = first.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return STRING_LABEL, first.value
    return None


def _strings_run(node: ast.AST) -> list[str]:
    """The literal strings code runs as code anywhere in it: ``exec("...")``, ``eval("...")``,
    ``compile("...", ...)``."""
    return [n.args[0].value for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in ("exec", "eval", "compile") and n.args and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)]


def _units(steps: list[Any], files: dict[str, str]) -> list[_Unit]:
    """The statements the grader runs, in its order, with what a ``%run`` of a written file or an ``exec`` of a
    literal string runs in their place (a literal string run as code anywhere else: after the statement)."""
    from autograder.submissions.fstrings import parse_source

    trees: dict[tuple[str, str], tuple[ast.Module, list[str]]] = {}
    out: list[_Unit] = []

    def parsed(code: str, label: str) -> list[ast.stmt] | None:
        try:
            return parse_source(code, label).body
        except (SyntaxError, ValueError):  # it fails there when it runs (the section's load error, or nothing)
            return None

    def expand(label: str, source: str, body: list[ast.stmt], own: bool, plain: bool, depth: int,
               lines: list[str] | None = None) -> None:
        lines = _LINES.findall(source) if lines is None else lines
        for node in body:
            inner = _literal_code(node, files) if depth < MAX_DEPTH else None
            inner_body = parsed(inner[1], inner[0]) if inner is not None else None
            if inner is not None and inner_body is not None:
                expand(inner[0], inner[1], inner_body, own, False, depth + 1)
                continue
            out.append(_Unit(label, _segment(lines, node), node, own, plain))
            for code in _strings_run(node) if depth < MAX_DEPTH else ():
                strung = parsed(code, STRING_LABEL)
                if strung is not None:
                    expand(STRING_LABEL, code, strung, True, False, depth + 1)

    for step in steps:
        key = (step.file, step.source)
        if key not in trees:
            trees[key] = (parse_source(step.source, step.file), _LINES.findall(step.source))
        tree, lines = trees[key]
        own = step.part == "section"
        expand(SECTION_LABEL if own else step.file, step.source, [tree.body[step.index]], own, own, 0, lines)
    return out


class _Index:
    """Who binds each name among ``units``, for :func:`_counted`, each question answered in time linear overall."""

    def __init__(self, units: list[_Unit]) -> None:
        self.units = units
        self.binders: dict[str, list[int]] = {}
        for k, u in enumerate(units):
            for name in u.binds:
                self.binders.setdefault(name, []).append(k)
        # per name, per binding statement: the place (among its binders) of the last one rebinding it outright
        self.starts: dict[str, list[int]] = {}
        for name, found in self.binders.items():
            starts, start = [], 0
            for i, k in enumerate(found):
                start = i if name in units[k].full else start
                starts.append(start)
            self.starts[name] = starts
        self.last_full = {name: max((k for k in found if name in units[k].full), default=-1)
                          for name, found in self.binders.items()}
        # names bound only by imports of modules the student did not write: calling through them changes nothing
        self.library = {name for name, found in self.binders.items()
                        if all(isinstance(units[k].node, (ast.Import, ast.ImportFrom)) and not units[k].imports
                               for k in found)}
        self._done: dict[tuple[str, int], int] = {}

    def resolve(self, name: str, before: int) -> list[int]:
        """The statements whose binding of ``name`` is the one seen just before statement ``before`` (the last one
        that rebinds it outright, and each one after it that changes it), less those an earlier call returned."""
        found = self.binders.get(name)
        if not found:
            return []
        p = bisect.bisect_left(found, before) - 1
        if p < 0:
            return []
        start = self.starts[name][p]
        lo = max(start, self._done.get((name, start), start - 1) + 1)
        if lo > p:
            return []
        self._done[(name, start)] = p
        return found[lo:p + 1]

    def replaced(self, k: int) -> bool:
        """Whether every name statement ``k`` binds is rebound outright by a later statement."""
        return all(self.last_full.get(name, -1) > k for name in self.units[k].binds)

    def has_effects(self, u: _Unit) -> bool:
        """Whether a statement may do more when it runs than bind its names: it is not a definition, an import of a
        module the student did not write or ``NAME = ...``, or it calls something other than a builtin of
        :data:`_PURE_BUILTINS` (by its name) or a module the student did not write (decorators and class bodies
        included)."""
        node = u.node
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return bool(u.imports) or not u.full or u.full != u.binds or _is_future(node)  # or a star import
        if not isinstance(node, (*_DEFS, ast.Assign, ast.AnnAssign)) or u.full != u.binds or u.odd:
            return True
        return any(name is None or name not in self.library and (name in self.binders or name not in _PURE_BUILTINS)
                   for name in u.calls)


def counted_code(text: str, contract: tuple[str, ...] | list[str] = (), others: Iterable[str] = ()) -> str:
    """The code of a graded module that counts once "Run all" is over: what similarity compares.

    The statements the grader runs (:func:`autograder.submissions.execute.run_order`: the context it chooses, the
    section, the later redefinitions), with what a ``%run`` of a written file or an ``exec`` of a literal string
    runs in their place, reduced to those that count: the last definition of each of the contract's
    names, every statement of the section but a definition that a later one replaced, every statement that does
    more than define names (a call of the student's own code, a decorator of theirs, a loop), and, transitively,
    what they read (a name read when a statement runs: its binding then; read in a function's body: its last
    binding), but for the other exercises' definitions of their contracts (``others``) that only the section's
    other statements read (compared under their own exercise). A definition replaced before anything used it
    (the template's stub under a later cell's answer, a copy under the student's own) does not count. A written
    file that a counted statement imports counts whole; a literal string run as code anywhere counts as code.
    Where the code reaches names without naming them (:data:`OPAQUE_NAMES`), every statement the grader runs
    counts, and every written file.

    Returns:
        The section as written when all of it counts and nothing else does (a plain file, an ordinary notebook);
        else the counted statements as written, in the order they run, each run of them under a comment naming
        its cell. The section as written when it does not parse (it does not load: nothing of it is graded);
        all the grader might run (:func:`_everything`) where the reading fails otherwise.
    """
    from autograder.submissions import cells, execute
    from autograder.submissions.standins import file_label

    section = cells.split_graded(text)[0]
    try:
        steps = execute.run_order(text, SECTION_LABEL, tuple(contract))
    except (SyntaxError, ValueError):  # the section does not load (nothing of it is graded): compared as written
        return section
    except Exception:  # noqa: BLE001 - code nested too deep for the parser...: all the grader might have run
        return _everything(text)
    try:
        files = {k: v for k, v in cells.written_files(text).items() if k.endswith(".py")}
        modules = {k[:-3] for k in files if k[:-3].isidentifier()}
        units = _units(steps, files)
        if not files and all(u.plain for u in units) and not _rebound(units):
            return section  # nothing replaced, nothing from elsewhere: all of it counts (the usual case, at once)
        for u in units:
            _read(u, modules)
        imported = _imported_files({m for u in units for m in u.imports}, files, modules)
        if any(u.opaque for u in units) or any(_scan_text(files[f"{m}.py"], modules)[0] for m in imported):
            kept, wanted = set(range(len(units))), set(files)
        else:
            kept = _counted(units, tuple(contract), frozenset(others) - set(contract))
            wanted = {f"{m}.py" for m in _imported_files({m for k in kept for m in units[k].imports}, files, modules)}
    except Exception:  # noqa: BLE001 - what no reading of it foresaw: all the grader might have run, never less
        return _everything(text)
    if not wanted and len(kept) == len(units) and all(u.plain for u in units):
        return section
    out, label = [], None
    for k in sorted(kept):
        if units[k].label != label:
            label = units[k].label
            out.append(f"# {label}\n")
        out.append(units[k].text)
    out += [f"# {file_label(name)}\n{files[name].rstrip()}\n" for name in sorted(wanted)]
    return "".join(out)


def _everything(text: str) -> str:
    """All a graded module's code the grader might run: its section, every context and later cell the trailer
    carries, every written file, each under a comment naming it."""
    from autograder.submissions import cells
    from autograder.submissions.standins import file_label

    section, context = cells.split_graded(text)
    out = [section]
    for cell in [*context, *cells.later_cells(text)]:
        out.append(f"# {cell.get('file')}\n{str(cell.get('source', '')).rstrip()}\n")
    out += [f"# {file_label(name)}\n{code.rstrip()}\n" for name, code in sorted(cells.written_files(text).items())]
    return "\n".join(out) if len(out) > 1 else section


def _rebound(units: list[_Unit]) -> bool:
    """Whether a name some statement rebinds outright is rebound outright by another one (text only)."""
    seen: set[str] = set()
    for u in units:
        names = _full(u.node)
        if names & seen:
            return True
        seen |= names
    return False


def _counted(units: list[_Unit], contract: tuple[str, ...], others: frozenset[str] = frozenset()) -> set[int]:
    """Which of ``units`` count (:func:`counted_code`): the last definitions of ``contract`` and what they read,
    transitively; the statements that do more than define names and the section's that were not replaced, and
    what they read, transitively, but for another exercise's own definitions of its contract (``others``) in the
    cells above (a section's demo that calls ex04's ``bce_loss`` does not bring ex04's code: it is compared under
    ex04)."""
    index = _Index(units)
    end = len(units)
    effects = [index.has_effects(u) for u in units]
    theirs = {k for k, u in enumerate(units) if not u.own and isinstance(u.node, _DEFS) and u.full <= others
              and u.full and not effects[k]}

    def follow(todo: list[int], kept: set[int], barred: set[int]) -> set[int]:
        while todo:
            k = todo.pop()
            if k in kept or k in barred:
                continue
            kept.add(k)
            u = units[k]
            todo += [j for name in u.now for j in index.resolve(name, k)]
            todo += [j for name in u.reads - u.now for j in index.resolve(name, end)]
        return kept

    graded = follow([k for name in contract for k in index.resolve(name, end)], set(), set())
    rest = [k for k, u in enumerate(units) if effects[k] or u.own and not index.replaced(k)]
    return follow(rest, graded, theirs)


def _imported_files(first: set[str], files: dict[str, str], modules: set[str]) -> set[str]:
    """The written files (module names) ``first``, and those they import in turn."""
    found: set[str] = set()
    todo = list(first)
    while todo:
        m = todo.pop()
        if m not in found:
            found.add(m)
            todo += list(_scan_text(files[f"{m}.py"], modules)[1])
    return found


def _scan_text(code: str, modules: set[str]) -> tuple[bool, set[str], set[str]]:
    """:func:`_scan` of a written file's code (nothing, where it does not parse: importing it fails)."""
    from autograder.submissions.fstrings import parse_source

    try:
        return _scan(parse_source(code), modules)
    except (SyntaxError, ValueError):
        return False, set(), set()


def template_code(exercise: str) -> list[str]:
    """The template's texts of an exercise: the stub, the student template's file and notebook section."""
    out = []
    for p in (EXERCISES_DIR / f"{exercise}.py", ROOT / "student_template" / f"{exercise}.py"):
        if p.is_file():
            out.append(p.read_text(encoding="utf-8"))
    for nb in sorted((ROOT / "student_template").glob("*.ipynb")):
        src = graded_code(str(nb)).get(exercise)
        if src:
            out.append(src)
    return out


@dataclass
class Normalised:
    """A submission's code as it is compared, and where each part of it came from.

    Attributes:
        text: what is fingerprinted (:func:`normalise`).
        source: the code as the student wrote it (what the pages show).
        spans: ``(start, end, first_line, last_line)``: the characters ``text[start:end]`` came from the
            1-based lines ``first_line..last_line`` of ``source``; outer statements before inner ones (the
            innermost one that holds a character says where it came from).
    """

    text: str
    source: str
    spans: list[tuple[int, int, int, int]] = field(default_factory=list, repr=False)

    @classmethod
    def as_written(cls, code: str) -> Normalised:
        """Code compared as it is (it does not parse): each line is its own origin."""
        spans, pos = [], 0
        for k, line in enumerate(re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", code), 1):
            spans.append((pos, pos + len(line), k, k))
            pos += len(line)
        return cls(code, code, spans)

    def source_lines(self, start: int, end: int) -> set[int]:
        """The lines of :attr:`source` the characters ``text[start:end]`` came from."""
        owner = self.__dict__.get("_owner")
        if owner is None:
            owner = [-1] * len(self.text)
            for k, (a, b, _f, _l) in enumerate(self.spans):  # outer first: inner ones overwrite
                owner[a:b] = [k] * (min(b, len(owner)) - a)
            self.__dict__["_owner"] = owner
        out: set[int] = set()
        for k in set(owner[max(0, start):end]) - {-1}:
            out.update(range(self.spans[k][2], self.spans[k][3] + 1))
        return out


class _Recorder(ast._Unparser):  # type: ignore[name-defined,misc]  # reason: the standard library's unparser (3.9+), absent from typeshed; noting where each statement's text goes
    def __init__(self, **options: Any) -> None:  # the unparser makes one of its own type per f-string field
        super().__init__(**options)
        self.length = 0
        self.spans: list[tuple[int, int, int, int]] = []

    def write(self, *text: str) -> None:
        self.length += sum(len(t) for t in text)
        super().write(*text)

    def traverse(self, node: Any) -> None:
        if not isinstance(node, ast.stmt) or not hasattr(node, "lineno"):
            super().traverse(node)
            return
        k = len(self.spans)
        self.spans.append((self.length, self.length, 0, 0))
        super().traverse(node)
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and hasattr(body[0], "lineno"):  # a compound statement: its header
            last = max(first, body[0].lineno - 1)
        else:
            last = node.end_lineno or node.lineno
        self.spans[k] = (self.spans[k][0], self.length, first, last)


def _is_text(stmt: ast.stmt) -> bool:
    """A statement that is only a string (a docstring, a string used as a comment): it does nothing."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _is_future(stmt: ast.stmt) -> bool:
    """A ``from __future__ import ...``: how the compiler reads the code, not code (a cell of the notebook may hold
    it, a context cell does not carry it)."""
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def _shape(node: ast.AST) -> str:
    """A definition's shape: its syntax tree's node types and constants, not its names."""
    return " ".join(type(n).__name__ + (repr(n.value) if isinstance(n, ast.Constant) else "") for n in ast.walk(node))


def normalise(code: str) -> Normalised:
    """``code`` as it is compared: what presentation changes set aside, where each part came from kept.

    Docstrings and every other statement that is only a string are dropped (the template hands out long
    ones; deleting them is no change to the code), and so are ``from __future__`` imports; comments and formatting go with a round trip through the
    syntax tree (``ast.unparse``: ``black`` or ``ast.unparse`` applied by a student changes nothing);
    statements other than definitions (imports, constants) stay first, in their order, and the top-level
    functions and classes follow sorted by their shape (:func:`_shape`), so that moving them around changes
    nothing either. Names need nothing here: the tokenizer reads every name as one token (``V``, ``F``,
    ``O``), so renamed locals are the same text. Code that does not parse is compared as written.

    Raises:
        RecursionError: the code nests deeper than Python's parser or unparser go (the caller skips it).
    """
    try:
        tree = cast(ast.Module, _syntax.parse(code))  # mode "exec": a Module
    except (SyntaxError, ValueError):
        return Normalised.as_written(code)
    for node in ast.walk(tree):
        for attr in ("body", "orelse", "finalbody"):
            body = getattr(node, attr, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [b for b in body if not _is_text(b) and not _is_future(b)]
                if not kept and not isinstance(node, ast.Module) and attr == "body":
                    kept = [ast.Pass()]
                setattr(node, attr, kept)
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    head = [n for n in tree.body if not isinstance(n, defs)]
    tree.body = head + sorted((n for n in tree.body if isinstance(n, defs)), key=_shape)
    rec = _Recorder()
    text = rec.visit(tree)
    return Normalised(text + "\n", code, rec.spans)


def canonical(code: str) -> str:
    """The text :func:`normalise` gives ``code`` (what is fingerprinted)."""
    return normalise(code).text


def _label(name: str) -> str:
    """A student's name for a note: one printable line (:func:`autograder.core.text.clean`)."""
    from autograder.core.text import NAME_CHARS, clean

    return clean(name, NAME_CHARS, strip=False)


def _why(err: BaseException) -> str:
    """An exception in a few words, for a note (its type names it; a message the student's code shaped is cut)."""
    from autograder.core.text import clean

    return clean(f"{type(err).__name__}: {err}", 160)


def _fingerprint(cd: Any, name: str, code: str, boilerplate: Any = None) -> Any:
    return cd.CodeFingerprint(f"{name}.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate,
                              fp=io.StringIO(code), language="python")


def _fingerprint_all(items: list[tuple[str, str]], boilerplate: Any) -> list[Any]:
    """Each item's fingerprint, or the reason (a str) it has none: one submission never stops the rest."""
    cd = _copydetect()
    out = []
    for name, code in items:
        try:
            out.append(_fingerprint(cd, name, code, boilerplate))
        except Exception as err:  # noqa: BLE001 - whatever one submission's code does to the tokenizer
            out.append(_why(err))
    return out


def fingerprints(codes: dict[str, str], boilerplate: Any, jobs: int = 1) -> list[Any]:
    """copydetect's fingerprints of ``codes`` (in sorted name order), in ``jobs`` processes (tokenizing is
    most of the time: pygments, about 10 ms a file); where one could not be made, the reason (a str)."""
    items = sorted(codes.items())
    if jobs <= 1 or len(items) < 64:
        return _fingerprint_all(items, boilerplate)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    size = math.ceil(len(items) / (jobs * 4))
    chunks = [items[k:k + size] for k in range(0, len(items), size)]
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return [fp for part in pool.map(_fingerprint_all, chunks, [boilerplate] * len(chunks)) for fp in part]


def default_jobs() -> int:
    """Processes for fingerprinting: the CPUs this process may use, at most 8."""
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def compare(exercise: str, codes: dict[str, str], templates: list[str], max_share: float = 0.1,
            min_shared: int = MIN_SHARED, jobs: int = 1, notes: list[str] | None = None) -> list[Pair]:
    """Every pair of ``codes`` (student -> graded code) that shares code beyond the template, best first.

    Args:
        exercise: the exercise (named in each pair).
        codes: student name -> code (:func:`canonical` form: what the pages show).
        templates: the template's texts (their fingerprints are removed first).
        max_share: a passage found in more than this share of the submissions (and more than 10 of them)
            is common code, not evidence.
        min_shared: fingerprints two submissions must share to be compared.
        jobs: processes for fingerprinting.
        notes: where a submission or a pair that could not be compared is said (and left out).
    """
    import numpy as np

    cd = _copydetect()
    from copydetect.utils import get_token_coverage

    said = notes if notes is not None else []
    boiler: set[int] = set()
    for k, t in enumerate(templates):
        try:
            boiler |= set(_fingerprint(cd, f"template{k}", canonical(t)).hashes)
        except Exception as err:  # noqa: BLE001 - a template that cannot be read removes nothing
            said.append(f"{exercise}: a template text could not be fingerprinted ({_why(err)})")
    bp = np.array(sorted(boiler), dtype=np.int64) if boiler else None
    made = fingerprints(codes, bp, jobs)
    names = [n for n, fp in zip(sorted(codes), made) if not isinstance(fp, str)]
    said += [f"{_label(n)}: {exercise} skipped ({fp})" for n, fp in zip(sorted(codes), made) if isinstance(fp, str)]
    fps = [fp for fp in made if not isinstance(fp, str)]
    owners: dict[int, list[int]] = {}
    for i, fp in enumerate(fps):
        for h in fp.hashes:
            owners.setdefault(h, []).append(i)
    cap = max(10, math.ceil(max_share * len(names)))
    common = {h for h, who in owners.items() if len(who) > cap}
    if common:
        for fp in fps:
            if fp.hashes & common:
                fp.hashes = fp.hashes - common
                fp.hash_idx = {h: v for h, v in fp.hash_idx.items() if h not in common}
                fp.token_coverage = get_token_coverage(fp.hash_idx, fp.k, len(fp.filtered_code))
    shared: Counter[tuple[int, int]] = Counter()
    for h, who in owners.items():
        if h in common or len(who) < 2:
            continue
        for x in range(len(who)):
            for y in range(x + 1, len(who)):
                shared[(who[x], who[y])] += 1
    pairs = []
    for (i, j), n in shared.items():
        if n < min_shared:
            continue
        try:
            tokens, (sa, sb), slices = cd.compare_files(fps[i], fps[j])
        except Exception as err:  # noqa: BLE001 - one pair never stops the rest
            said.append(f"{_label(names[i])} and {_label(names[j])}: {exercise} not compared ({_why(err)})")
            continue
        if tokens:
            pairs.append(Pair(exercise, names[i], names[j], float(sa), float(sb), int(tokens), slices))
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return pairs


def collect(submissions: list[str], exercises: list[str] | None = None) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Per exercise, student -> graded code; and notes (unreadable submissions, two of one name)."""
    from autograder.reports.gradebook import student_key

    per: dict[str, dict[str, str]] = {}
    notes = []
    seen: dict[str, str] = {}
    for path in submissions:
        name = student_key(path)
        if name in seen:
            name = f"{name}~{len([s for s in seen if s.split('~')[0] == name])}"
            notes.append(f"{path}: another submission is named {student_key(path)}; compared as {name}")
        seen[name] = path
        why: list[str] = []
        codes = graded_code(path, why)
        if not codes:
            notes.append(f"{_label(path)}: skipped, no exercise code could be read" + (f" ({why[0]})" if why else ""))
        for ex, src in codes.items():
            if exercises is None or ex in exercises:
                per.setdefault(ex, {})[name] = src
    return {ex: per[ex] for ex in EXERCISES if ex in per} | {ex: v for ex, v in per.items() if ex not in EXERCISES}, notes


_CSS = """body{font-family:system-ui,sans-serif;max-width:90rem;margin:1rem auto;padding:0 1rem;color:#1d2330}
h1,h2{overflow-wrap:anywhere} table{border-collapse:collapse;font-size:.9rem} th,td{padding:.25rem .5rem;
border-bottom:1px solid #eee;text-align:left;vertical-align:top} td.n,th.n{text-align:right;white-space:nowrap}
.wide{overflow-x:auto;max-width:100%} .side{display:flex;gap:1rem} .side pre{flex:1;overflow:auto;background:#f8f9fa;
padding:.5rem;font-size:.8rem;max-height:40rem;min-width:0} mark{background:#ffe066} .meta{color:#667;font-size:.9rem;
overflow-wrap:anywhere} @media (max-width:40rem){.side{flex-direction:column} .side pre{flex:none}}
"""


def _head(title: str) -> str:
    """A page's head (``title`` already HTML text): readable on a phone (the viewport) and on a screen."""
    from autograder.reports.feedback import VIEWPORT

    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">{VIEWPORT}<title>{title}</title>"
            f"<style>{_CSS}</style></head><body>")


def _marked(code: Normalised, slices: Any) -> str:
    """The student's code as written, each line a matched span came from marked."""
    from autograder.core.text import html_code

    lines: set[int] = set()
    if slices is not None and getattr(slices, "shape", (0, 0))[1]:
        for start, end in zip(slices[0], slices[1]):
            lines |= code.source_lines(int(start), int(end))
    out = []
    for k, line in enumerate(re.split(r"\r\n|\r|\n", code.source.rstrip("\r\n")), 1):  # the parser's lines
        text = html_code(line)
        out.append(f"<mark>{text}</mark>" if k in lines and line.strip() else text)
    return "\n".join(out)


def exercise_page(exercise: str, pairs: list[Pair], codes: dict[str, str], top: int = 20,
                  sources: dict[str, Normalised] | None = None) -> str:
    """One exercise's page: the top pairs, each side by side with the lines their matching spans came from marked.

    Args:
        exercise: the exercise.
        pairs: its pairs, best first.
        codes: student -> the compared text (:func:`canonical`).
        top: pairs shown side by side.
        sources: student -> :func:`normalise`'s result (the code as written, where the compared text came
            from); without it the compared text is shown.
    """
    from autograder.core.text import html_name
    from autograder.core.text import html_text as esc

    shown = sources or {n: Normalised.as_written(c) for n, c in codes.items()}
    out = [f"{_head(esc(exercise) + ' similarity')}<h1>{esc(exercise)}</h1>",
           f"<p class=\"meta\">{len(codes)} submissions, {len(pairs)} pairs sharing code beyond the template; "
           f"top {min(top, len(pairs))} shown. Compared: the code, not its presentation (docstrings, comments, "
           "formatting, names and the order of top-level definitions set aside; the template's code and code "
           "most of the class wrote left out). Shown: the code as written, the lines both wrote marked. Shares: "
           "of each one's code beyond the template.</p>",
           "<div class=\"wide\"><table><tr><th>#</th><th>a</th><th>b</th><th class=n>a's code shared</th>"
           "<th class=n>b's code shared</th><th class=n>tokens</th></tr>"]
    for k, p in enumerate(pairs[:top], 1):
        out.append(f"<tr><td><a href=\"#pair{k}\">{k}</a></td><td>{html_name(p.a)}</td><td>{html_name(p.b)}</td>"
                   f"<td class=n>{100 * p.sim_a:.0f}%</td><td class=n>{100 * p.sim_b:.0f}%</td>"
                   f"<td class=n>{p.tokens}</td></tr>")
    out.append("</table></div>")
    for k, p in enumerate(pairs[:top], 1):
        sa, sb = p.slices if p.slices is not None else (None, None)
        out.append(f"<h2 id=\"pair{k}\">{k}. {esc(p.a)} – {esc(p.b)} ({100 * p.score:.0f}%)</h2>"
                   f"<div class=\"side\"><pre>{_marked(shown[p.a], sa)}</pre>"
                   f"<pre>{_marked(shown[p.b], sb)}</pre></div>")
    out.append("</body></html>")
    return "\n".join(out)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._~-]+", "_", name)[:120] or "_"


def export(exercise: str, codes: dict[str, str], templates: list[str], folder: Path) -> None:
    """``folder/<exercise>/submissions/<student>.py`` and ``template/<exercise>.py``: MOSS's and JPlag's input
    (a student's file name: :func:`autograder.reports.feedback.safe_stem`, one file per student)."""
    top = folder / exercise
    (top / "submissions").mkdir(parents=True, exist_ok=True)
    (top / "template").mkdir(parents=True, exist_ok=True)
    from autograder.reports.feedback import safe_stem

    for name, code in codes.items():
        # a name that had to change gets a hash of the original: "a b" and "a_b" never share (overwrite) a file
        (top / "submissions" / f"{safe_stem(name)}.py").write_text(code, encoding="utf-8")
    if templates:
        (top / "template" / f"{exercise}.py").write_text(templates[0], encoding="utf-8")


EXPORT_README = """# Exports for MOSS and JPlag

One folder per exercise: `submissions/` holds each student's graded code (one file each), `template/`
the code every student was given.

    moss -l python -b EXERCISE/template/EXERCISE.py EXERCISE/submissions/*.py
    java -jar jplag.jar -l python3 -bc EXERCISE/template EXERCISE/submissions
"""


def pairs_csv(rows: list[Pair]) -> str:
    """``pairs.csv``: names through the text boundary (never a live formula), shares as numbers."""
    from autograder.core.text import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["exercise", "a", "b", "similarity", "a_shared", "b_shared", "tokens"])
    for p in rows:
        w.writerow([csv_cell(p.exercise), csv_cell(p.a), csv_cell(p.b), round(p.score, 4), round(p.sim_a, 4),
                    round(p.sim_b, 4), int(p.tokens)])
    return buf.getvalue()


def _exercise(ex: str, raw: dict[str, str], out: Path, threshold: float, top: int, max_share: float,
              jobs: int, notes: list[str]) -> tuple[list[Pair], dict[str, Any]]:
    """One exercise's page and export; its pairs at or above ``threshold`` and its line of the index."""
    templates = template_code(ex)
    sources: dict[str, Normalised] = {}
    for name, src in raw.items():
        try:
            src.encode("utf-8")  # every output writes it as UTF-8 (the loader's intake makes it so)
            sources[name] = normalise(src)
        except Exception as err:  # noqa: BLE001 - RecursionError, MemoryError...: one submission never stops the rest
            notes.append(f"{_label(name)}: {ex} skipped ({_why(err)})")
    raw = {name: raw[name] for name in sources}
    codes = {name: n.text for name, n in sources.items()}
    pairs = compare(ex, codes, templates, max_share=max_share, jobs=jobs, notes=notes)
    (out / f"{_safe(ex)}.html").write_text(exercise_page(ex, pairs, codes, top, sources), encoding="utf-8")
    export(ex, raw, templates, out / "export")
    above = [p for p in pairs if p.score >= threshold]
    return above, {"submissions": len(codes), "pairs": len(pairs), "above": len(above),
                   "top": pairs[0].score if pairs else 0.0}


def run(submissions: list[str], out: Path, threshold: float = 0.5, top: int = 20, max_share: float = 0.1,
        exercises: list[str] | None = None, jobs: int | None = None) -> dict[str, Any]:
    """Writes every output into ``out``; returns ``{"pairs": n_above, "exercises": {ex: n}, "notes": [...]}``.

    A submission that cannot be read, normalised or fingerprinted (code nested deeper than Python's parser
    goes, a tokenizer's failure) is left out of its exercise with a note saying why; the rest are compared.
    """
    from autograder.core.text import html_text

    _copydetect()
    per, notes = collect(submissions, exercises)
    if not per:
        raise SimilarityError("no exercise code in any submission")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[Pair] = []
    summary: dict[str, dict[str, Any]] = {}
    for ex, raw in per.items():
        try:
            above, summary[ex] = _exercise(ex, raw, out, threshold, top, max_share, jobs or default_jobs(), notes)
        except OSError:
            raise
        except Exception as err:  # noqa: BLE001 - one exercise never stops the others
            notes.append(f"{ex}: not compared ({_why(err)})")
            continue
        rows += above
    (out / "export").mkdir(parents=True, exist_ok=True)
    (out / "export" / "README.md").write_text(EXPORT_README, encoding="utf-8")
    (out / "pairs.csv").write_text(pairs_csv(rows), encoding="utf-8")
    index = [f"{_head('similarity')}<h1>Similarity</h1><p class=\"meta\">{len(submissions)} submissions; "
             f"template code removed; pairs at or above {100 * threshold:.0f}% in pairs.csv; MOSS/JPlag input in "
             "export/.</p><div class=\"wide\"><table><tr><th>exercise</th><th class=n>submissions</th>"
             f"<th class=n>pairs sharing code</th><th class=n>at or above {100 * threshold:.0f}%</th>"
             "<th class=n>top</th></tr>"]
    for ex, s in summary.items():
        index.append(f"<tr><td><a href=\"{html_text(_safe(ex))}.html\">{html_text(ex)}</a></td>"
                     f"<td class=n>{s['submissions']}</td><td class=n>{s['pairs']}</td><td class=n>{s['above']}</td>"
                     f"<td class=n>{100 * s['top']:.0f}%</td></tr>")
    index.append("</table></div>")
    index += [f"<p class=\"meta\">{html_text(n)}</p>" for n in notes]
    index.append("</body></html>")
    (out / "index.html").write_text("\n".join(index), encoding="utf-8")
    return {"pairs": len(rows), "exercises": summary, "notes": notes}
