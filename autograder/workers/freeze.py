"""Worker side: the probes' global names, frozen into their code before a student's code loads.

A probe calls the student's function, then its own helpers (``_unchanged``, ``jax_to_np``, ``label``...) by their
module-level names. The guard's snapshot sees a name rebound for good, but not a replacement the student's code
puts in place during its call that puts the original back the first time it runs: the probe reads a forged
answer and the snapshot, compared afterwards, finds everything as it was (``forge_ex04_self_restoring_helper``:
a forward that rewrites its params passed both purity checks). Here each ``LOAD_GLOBAL`` of the probes' code
that names a module, a class, a function or another callable (or a tuple of classes) becomes a ``LOAD_CONST`` of
the object the name holds now, builtins included, so a later rebinding of the name changes nothing the probe
calls. The code is rewritten in place of equal length (the rest of the instruction and its caches become
``NOP``), so jumps, the exception table and line numbers stay as they were; the functions get their new code
before the audit hook that refuses such changes is installed (:mod:`autograder.workers.guard`).

The same holds for a library's attributes the probes reach through a frozen name (``np.array_equal``,
``torch.nn.Linear``, ``torch.Tensor.detach``): a student's code could swap ``numpy.array_equal`` during its call for
a function that answers once and puts the original back (``forge_ex10_self_restoring_library_function``), and the
guard never compares libraries' callables. Each chain ``LOAD_GLOBAL`` + ``LOAD_ATTR``... whose objects are modules
or classes, ending at a freezable value, becomes one ``LOAD_CONST`` (with the call's ``NULL`` where the last load
was a method's), when no jump lands and no exception range starts or ends inside it. A module's attribute is read
from its ``__dict__`` (no lazy import runs), a class's where a class of its MRO defines it.

Left as they were: names some code of the module assigns (``global x; x = ...``) and attributes it assigns
through a global name (``np.x = ...``), names not defined yet, and other values (arrays, dicts, ``os.environ``:
their identity is what the probe reads, and a frozen name would not stop a mutation anyway).

Only Python 3.11–3.13 (whose ``LOAD_GLOBAL`` pushes the optional ``NULL`` first up to 3.12, after it from 3.13);
elsewhere :func:`freeze_module` changes nothing and says so.
"""

from __future__ import annotations

import builtins
import dis
import opcode
import sys
import types
from typing import Any

SUPPORTED = (3, 11) <= sys.version_info[:2] <= (3, 13)
_NULL_FIRST = sys.version_info[:2] < (3, 13)
_OP = opcode.opmap
_LOAD_GLOBAL, _LOAD_CONST, _NOP = _OP["LOAD_GLOBAL"], _OP["LOAD_CONST"], _OP["NOP"]
_PUSH_NULL, _EXTENDED_ARG = _OP.get("PUSH_NULL", -1), _OP["EXTENDED_ARG"]
_ASSIGNS = frozenset({_OP["STORE_GLOBAL"], _OP["DELETE_GLOBAL"]})
_LOAD_ATTR, _LOAD_METHOD = _OP["LOAD_ATTR"], _OP.get("LOAD_METHOD", -1)  # 3.11: LOAD_METHOD; 3.12+: LOAD_ATTR's bit 0
_ATTR_ASSIGNS = frozenset({_OP["STORE_ATTR"], _OP["DELETE_ATTR"]})
_ATTR_FLAG = sys.version_info[:2] >= (3, 12)
_CACHES = getattr(opcode, "_inline_cache_entries", {})  # 3.11/3.12: by opcode; 3.13: by name
_CACHE_UNITS = [(_CACHES.get(opcode.opname[op], 0) if isinstance(_CACHES, dict) else _CACHES[op])
                if SUPPORTED else 0 for op in range(256)]
_UNKNOWN = object()
_CALLABLE_KINDS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                   types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)


def _freezable(value: Any) -> bool:
    """A module, a class, a function or another callable object, or a tuple of classes (``except`` clauses)."""
    if isinstance(value, _CALLABLE_KINDS):
        return True
    if isinstance(value, tuple):
        return bool(value) and all(isinstance(v, type) for v in value)
    try:
        return callable(value) and not isinstance(value, (dict, list, set, bytearray)) and hash(value) is not None
    except TypeError:
        return False


def _codes(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in its constants (closures, comprehensions, lambdas)."""
    out = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out.extend(_codes(const))
    return out


def _instructions(code: types.CodeType) -> list[tuple[int, int, int, int]]:
    """``(start, end, opcode, oparg)`` of each instruction of ``code``: from its first ``EXTENDED_ARG`` to the end
    of its inline caches."""
    raw, out, i, ext, first = code.co_code, [], 0, 0, -1
    while i < len(raw):
        op, arg = raw[i], raw[i + 1] | ext
        if op == _EXTENDED_ARG:
            ext, first = arg << 8, i if first < 0 else first
            i += 2
            continue
        end = i + 2 * (1 + _CACHE_UNITS[op])
        out.append((first if first >= 0 else i, end, op, arg))
        ext, first, i = 0, -1, end
    return out


def assigned_names(codes: list[types.CodeType]) -> set[str]:
    """The global names some code of ``codes`` (and the code nested in them) assigns or deletes."""
    return {c.co_names[arg] for code in codes for c in _codes(code) for _, _, op, arg in _instructions(c)
            if op in _ASSIGNS}


def _attr(op: int, arg: int) -> tuple[int, bool] | None:
    """``(index into co_names, is a method's load)`` of an attribute load, else None."""
    if op == _LOAD_METHOD:
        return arg, True
    if op == _LOAD_ATTR:
        return (arg >> 1, bool(arg & 1)) if _ATTR_FLAG else (arg, False)
    return None


def assigned_paths(codes: list[types.CodeType]) -> set[tuple[str, ...]]:
    """``("np", "x")`` for each ``np.x = ...`` or ``del np.x`` (a global name, then attributes) in ``codes``."""
    found: set[tuple[str, ...]] = set()
    for code in codes:
        for c in _codes(code):
            path: tuple[str, ...] = ()
            for _, _, op, arg in _instructions(c):
                load = _attr(op, arg)
                if op == _LOAD_GLOBAL:
                    path = (c.co_names[arg >> 1],)
                elif op in _ATTR_ASSIGNS and path:
                    found.add((*path, c.co_names[arg]))
                    path = ()
                elif load is not None and path and not load[1]:
                    path = (*path, c.co_names[load[0]])
                else:
                    path = ()
    return found


def _attribute(owner: Any, name: str) -> Any:
    """``owner.name`` for a module (from its dict: no lazy import) or a class (where its MRO defines it), else
    :data:`_UNKNOWN`."""
    if isinstance(owner, types.ModuleType):
        ns = getattr(owner, "__dict__", None)
        return ns[name] if type(ns) is dict and name in ns else _UNKNOWN
    if isinstance(owner, type) and any(name in vars(k) for k in type.__dict__["__mro__"].__get__(owner)):
        try:
            return getattr(owner, name)
        except Exception:  # a descriptor that refuses the class
            return _UNKNOWN
    return _UNKNOWN


def _fixed_offsets(code: types.CodeType) -> tuple[set[int], set[int]]:
    """The offsets jumps and exception handlers land on, and those where an exception range starts or ends."""
    targets = {i.offset for i in dis.get_instructions(code) if i.is_jump_target}
    bounds: set[int] = set()
    for entry in dis._parse_exception_table(code):  # 3.11-3.13, as dis itself reads it
        bounds.update((entry.start, entry.end))
        targets.add(entry.target)
    return targets, bounds


def freeze_code(code: types.CodeType, namespace: dict[str, Any], keep: set[str] | frozenset[str] = frozenset(),
                keep_paths: set[tuple[str, ...]] | frozenset[tuple[str, ...]] = frozenset(),
                ) -> tuple[types.CodeType, int]:
    """``code`` with each ``LOAD_GLOBAL`` of a freezable value, and each chain of attribute loads from it through
    modules and classes, a ``LOAD_CONST`` of what it loads now (nested code too).

    Args:
        code: a function's code.
        namespace: the function's globals (its module's dict); builtins are read from :mod:`builtins`.
        keep: names to leave as lookups (assigned by the module's code).
        keep_paths: attribute paths to leave as lookups (``("np", "x")``: assigned by the module's code).

    Returns:
        ``(new code, how many loads were frozen)``.
    """
    consts = list(code.co_consts)
    frozen = 0
    for i, const in enumerate(consts):
        if isinstance(const, types.CodeType):
            consts[i], n = freeze_code(const, namespace, keep, keep_paths)
            frozen += n
    raw = bytearray(code.co_code)
    ins = _instructions(code)
    targets, bounds = _fixed_offsets(code) if any(op == _LOAD_GLOBAL for _, _, op, _ in ins) else (set(), set())
    fixed = sorted(targets | bounds)
    for at, (start, end, op, arg) in enumerate(ins):
        if op != _LOAD_GLOBAL:
            continue
        name = code.co_names[arg >> 1]
        if name in keep:
            continue
        if name in namespace:
            value = namespace[name]
        elif name in builtins.__dict__:
            value = builtins.__dict__[name]
        else:
            continue
        if not _freezable(value):
            continue
        # the attributes loaded from it, while each is a module's or a class's and nothing lands between
        path, stop, method, after = (name,), end, False, at + 1
        global_null = bool(arg & 1)
        # (3.11 and 3.12 call ``math.floor(x)`` as LOAD_GLOBAL with its NULL, then LOAD_ATTR: the NULL stays first;
        # 3.13 pushes a global's NULL after it, so no attribute load follows one)
        chains = _NULL_FIRST or not global_null
        while chains and not method and after < len(ins) and isinstance(value, (types.ModuleType, type)):
            a_start, a_end, a_op, a_arg = ins[after]
            load = _attr(a_op, a_arg)
            if load is None or (load[1] and global_null) or any(start < f < a_end for f in fixed):
                break
            attr = code.co_names[load[0]]
            got = _attribute(value, attr)
            if (*path, attr) in keep_paths or got is _UNKNOWN or not _freezable(got):
                break
            path, value, stop, method, after = (*path, attr), got, a_end, load[1], after + 1
        k = next((j for j, c in enumerate(consts) if c is value), None)
        if k is None:
            k = len(consts)
            consts.append(value)
        if k > 0xFFFF:
            continue
        load_const = ([_EXTENDED_ARG, k >> 8] if k > 0xFF else []) + [_LOAD_CONST, k & 0xFF]
        null = [_PUSH_NULL, 0] if global_null or method else []
        units = null + load_const if _NULL_FIRST else load_const + null
        if len(units) > stop - start:
            continue
        raw[start:stop] = bytes(units + [_NOP, 0] * ((stop - start - len(units)) // 2))
        frozen += len(path)
    if not frozen:
        return code, 0
    return code.replace(co_code=bytes(raw), co_consts=tuple(consts)), frozen


def _functions(module: types.ModuleType) -> list[types.FunctionType]:
    """The functions defined in ``module`` (their globals are its dict): at its top level, in its classes
    (methods, static and class methods, properties), and behind decorators (``__wrapped__``)."""
    ns = vars(module)
    seen: dict[int, types.FunctionType] = {}

    def add(obj: Any, depth: int = 0) -> None:
        if depth > 4:
            return
        if isinstance(obj, (staticmethod, classmethod)):
            add(obj.__func__, depth + 1)
        elif isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                add(f, depth + 1)
        elif isinstance(obj, types.FunctionType):
            if obj.__globals__ is ns and id(obj) not in seen:
                seen[id(obj)] = obj
            add(getattr(obj, "__wrapped__", None), depth + 1)
        elif isinstance(obj, type) and obj.__module__ == module.__name__ and depth == 0:
            for member in vars(obj).values():
                add(member, depth + 1)
        elif obj is not None and callable(obj) and not isinstance(obj, type):
            wrapped = getattr(obj, "__wrapped__", None)  # e.g. a jitted function: its Python function
            if isinstance(wrapped, types.FunctionType):
                add(wrapped, depth + 1)

    for value in list(ns.values()):
        add(value)
    return list(seen.values())


def freeze_module(module: types.ModuleType) -> int:
    """Freezes the global loads of every function of ``module`` in place; how many loads (0 where unsupported).

    The functions ``module`` lists in its ``UNFROZEN`` (a tuple) stay as written: what a tracer reads as bytecode
    (TorchDynamo takes no module or function as a constant)."""
    if not SUPPORTED:
        return 0
    left = {id(f) for f in vars(module).get("UNFROZEN", ())}
    functions = [f for f in _functions(module) if id(f) not in left]
    codes = [f.__code__ for f in functions]
    keep, keep_paths = assigned_names(codes), assigned_paths(codes)
    total = 0
    for fn in functions:
        code, n = freeze_code(fn.__code__, vars(module), keep, keep_paths)
        if n:
            fn.__code__ = code
            total += n
    return total
