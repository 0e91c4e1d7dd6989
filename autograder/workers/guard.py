"""Worker side: what a student's worker keeps out of the student's reach: the probes, and the ways into them.

The probes run in the same process as the student's code (they must call it), so nothing in that
process is out of reach of code determined enough to write raw memory. This module raises the bar
for everything short of that, and makes the common forgeries visible:

- :class:`Snapshot`: the identity of every name in the grader's own modules (the probes,
  ``autograder.probing.tools``, the wire...) and in ``builtins``, of ``sys.modules`` itself, of the
  code, defaults and closure cells of the grader's functions and the members of its classes, and
  of every callable, class and module of the other modules (JAX, PyTorch, numpy...), taken before
  any student code runs. The worker restores all of it after a notebook's *context* ran (what an
  earlier section defines cannot patch what the graded section's checks use) and compares the
  grader's part after the section and after every probe: any difference means student code
  changed the grader's measurements, and every probe from then on fails (``PROBE_TAMPERED``).
- :func:`install_audit_hook`: a CPython audit hook (it cannot be removed once added) that refuses,
  in a student's worker, the introspection that reaches the probes' private state: the garbage
  collector's object lists (``gc.get_objects``/``get_referrers``/``get_referents``), other
  threads' frames, trace and profile functions (which can rewrite a running probe's local
  variables; only the context's own time limit may set one), ctypes into CPython's own API,
  ``/proc/<pid>/mem``, replacing the code or defaults of a function that is not the student's,
  and further audit hooks.

What stays possible, and why the verdicts of structural checks do not rest on this module alone,
is in the README's security section.
"""

from __future__ import annotations

import operator
import os
import re
import sys
import sysconfig
import types
from collections.abc import Callable, Iterable
from itertools import compress, repeat
from typing import Any

_MISSING = object()
_is = operator.is_

# Audit events refused outright in a student's worker (see the module docstring).
REFUSED_EVENTS = frozenset({
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
    "sys.addaudithook", "sys.monitoring.register_callback", "ctypes.PyObj_FromPtr",
})
# ctypes stays usable (system calls through libc meet the sandbox's seccomp filter), but not into the
# interpreter: no symbol of CPython's own API (frames' locals, trace functions, raw objects).
_DLSYM_EVENTS = frozenset({"ctypes.dlsym", "ctypes.dlsym/handle"})
_TRACE_EVENTS = frozenset({"sys.settrace", "sys.setprofile"})
_CODE_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
_PROC_MEM = re.compile(r"/proc/[^/]+(/task/[^/]+)?/mem\Z")
# Data of other modules that the grader's measurements rely on: JAX's compilation cache, through which
# the grader sees every program a student's worker compiles (autograder.workers.compile_cache.Borrower).
WATCHED = (("jax._src.compilation_cache", "_cache"), ("jax._src.compilation_cache", "_cache_initialized"))
_REFUSED_IMPORTS = frozenset({"_testcapi", "_testinternalcapi", "_testbuffer", "_testmultiphase", "_xxtestfuzz",
                              "_cffi_backend", "cffi"})


class Refused(PermissionError, RuntimeError):
    """An operation a student's worker does not allow (raised by the audit hook).

    A ``PermissionError``, as the system's own refusals are (code that handles an ``OSError`` goes on),
    and a ``RuntimeError`` (what CPython expects of a hook that refuses another hook: it then stays silent).
    """


def grader_folder() -> str:
    """The grader package's folder, resolved, with a trailing separator."""
    from autograder.core.paths import ROOT

    return os.path.realpath(ROOT / "autograder") + os.sep


def protected_prefixes() -> tuple[str, ...]:
    """Folders whose code is not the student's: the grader's package, the interpreter and its libraries."""
    places = {grader_folder(), sys.prefix, sys.base_prefix, sys.exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            places.add(sysconfig.get_paths()[key])
        except KeyError:
            pass
    return tuple(sorted({os.path.realpath(p).rstrip(os.sep) + os.sep for p in places if p})) + ("<frozen ",)


def _is_grader(name: str) -> bool:
    return name == "autograder" or name.startswith("autograder.")


def _kept(value: Any) -> bool:
    """What of a library module is watched: behaviour (callables, classes, modules), not data."""
    return callable(value) or isinstance(value, types.ModuleType)


def _kept_entries(ns: dict[str, Any], _module: type = types.ModuleType) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """``(keys, values)`` of the entries of ``ns`` that :func:`_kept` keeps, in the dict's order.

    The same entries as ``[(k, v) for k, v in ns.items() if _kept(v)]``, with the same calls on each value
    (``callable``, then ``isinstance`` only where that is false), at C speed: a worker's snapshot walks
    ~135,000 entries of ~3,000 library modules, and this was most of its cost (~70 ms per worker).
    """
    keys = tuple(ns)
    values = tuple(ns.values())
    mask = list(map(callable, values))
    others = list(map(operator.not_, mask))
    modules = map(isinstance, compress(values, others), repeat(_module))  # the others only, in order
    for i in compress(compress(range(len(values)), others), modules):
        mask[i] = True
    return tuple(compress(keys, mask)), tuple(compress(values, mask))


class Snapshot:
    """The identity of what the probes rely on (see the module docstring), taken once.

    Args:
        grader: the grader package's folder (with a trailing separator): functions and classes
            defined there also get their code, defaults, cells and members watched.
        extra: ``(module, name)`` pairs watched although they hold data (:data:`WATCHED`).
        libraries: also keep every library module's callables now (what :meth:`restore` puts back after a
            notebook's context). False: :meth:`keep_libraries` takes them later, still before any student code,
            only where a context will run: a plain file has none, and walking ~135,000 entries of ~3,000 modules
            (then putting them back after an empty context) was most of a worker's start (~65 ms).
    """

    def __init__(self, grader: str, extra: Iterable[tuple[str, str]] = (), libraries: bool = True) -> None:
        self._grader = grader
        self._real: dict[str, str] = {}
        wanted: dict[str, set[str]] = {}
        for mod_name, attr in extra:
            wanted.setdefault(mod_name, set()).add(attr)
        self._modules: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[Any, ...]]] = []
        self._restored: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[Any, ...]]] = []
        self._functions: list[tuple[str, types.FunctionType, tuple[Any, ...]]] = []
        self._classes: list[tuple[str, type, tuple[str, ...], tuple[Any, ...]]] = []
        self._sys = vars(sys)
        self._sys_modules = sys.modules  # the dict itself: one the student's code puts in its place is never called
        if type(self._sys_modules) is not dict:
            raise TypeError("sys.modules is not a dict")
        mods = dict(sys.modules)
        self._sys_keys = tuple(mods)
        self._sys_values = tuple(mods.values())
        self._wanted = wanted
        seen_fn: set[int] = set()
        seen_cls: set[int] = set()
        for name, mod in mods.items():
            ns = getattr(mod, "__dict__", None)
            if type(ns) is not dict:  # only plain dicts: their get is dict.get, never a student's method
                continue
            whole = name == "builtins" or _is_grader(name)
            also = wanted.get(name, ())
            if not whole and not also:  # most modules (the libraries'): see keep_libraries
                continue
            items = [(k, v) for k, v in list(ns.items()) if whole or k in also]
            if items:
                self._modules.append((name, ns, tuple(k for k, _ in items), tuple(v for _, v in items)))
            if _is_grader(name):
                for k, v in items:
                    self._watch(f"{name}.{k}", v, seen_fn, seen_cls)
        if libraries:
            self.keep_libraries()

    def keep_libraries(self) -> None:
        """Keeps the callables of every other module snapshotted (a library's: its callables, classes and modules,
        see :func:`_kept_entries`), which :meth:`restore` puts back and :meth:`changes` never compares. Call it
        before any student code runs, once."""
        if self._restored:
            return
        for name, mod in zip(self._sys_keys, self._sys_values, strict=True):
            ns = getattr(mod, "__dict__", None)
            if type(ns) is not dict or name == "builtins" or _is_grader(name):
                continue
            also = self._wanted.get(name, ())
            if also:  # a module watched for some names: its other callables
                rest = [(k, v) for k, v in list(ns.items()) if k not in also and _kept(v)]
                keys, values = tuple(k for k, _ in rest), tuple(v for _, v in rest)
            else:
                keys, values = _kept_entries(ns)
            if keys:
                self._restored.append((name, ns, keys, values))

    def _grader_code(self, fn: types.FunctionType) -> bool:
        name = fn.__code__.co_filename
        where = self._real.get(name)
        if where is None:  # one realpath per file, not per function (a snapshot watches ~300 functions)
            where = self._real[name] = os.path.realpath(name)
        return where.startswith(self._grader)

    def _watch(self, label: str, value: Any, seen_fn: set[int], seen_cls: set[int]) -> None:
        if isinstance(value, types.FunctionType) and id(value) not in seen_fn and self._grader_code(value):
            seen_fn.add(id(value))
            self._functions.append((label, value, _function_state(value)))
        elif isinstance(value, type) and id(value) not in seen_cls and _is_grader(str(value.__module__)):
            seen_cls.add(id(value))
            members = list(vars(value).items())
            self._classes.append((label, value, tuple(k for k, _ in members), tuple(v for _, v in members)))
            for k, v in members:
                inner = v.__func__ if isinstance(v, (staticmethod, classmethod)) else v
                self._watch(f"{label}.{k}", inner, seen_fn, seen_cls)

    def changes(self, limit: int = 3) -> list[str]:
        """Names (``module.name``) whose object is no longer the one snapshotted, at most ``limit``.

        Compared: ``sys.modules`` (the dict itself, and its entries), the grader's modules, ``builtins``,
        the ``extra`` names, and the grader's functions and classes. Not the callables of other modules:
        libraries rebind some themselves (``torch.set_default_dtype`` rebinds ``torch.Storage``), and the
        probes hold what they call, bound at import; those are only put back by :meth:`restore`.
        """
        return self.checker()(limit)

    def checker(self) -> Callable[[int], list[str]]:
        """:meth:`changes` as a function that holds all it uses in its default arguments, taken now.

        Bound before any student code runs, it calls nothing the student's code can replace or reach (the
        audit hook refuses replacing a grader function's defaults): no attribute of this object, no
        global, no builtin looked up when it runs, no method of an object the student's code could have
        put in place (a ``sys.modules`` replaced by a dict subclass is reported, never called).
        """
        data = (self._sys, self._sys_modules, self._sys_keys, self._sys_values, tuple(self._modules),
                tuple(self._classes), tuple(self._functions))

        def check(limit: int = 3, _data: tuple[Any, ...] = data, _impl: Any = _changes) -> list[str]:
            return _impl(*_data, limit)

        return check

    def restore(self) -> None:
        """Puts back every snapshotted object (names deleted are added back; new names are left)."""
        current = sys.modules
        for k, v in zip(self._sys_keys, self._sys_values, strict=True):
            if current.get(k, _MISSING) is not v:
                current[k] = v
        for _name, ns, keys, values in (*self._modules, *self._restored):
            for k, v in zip(keys, values, strict=True):
                if ns.get(k, _MISSING) is not v:
                    ns[k] = v
        for _label, cls, keys, values in self._classes:
            members = vars(cls)
            for k, v in zip(keys, values, strict=True):
                if members.get(k, _MISSING) is not v:
                    try:
                        setattr(cls, k, v)
                    except (AttributeError, TypeError):
                        pass
        for _label, fn, state in self._functions:
            _restore_function(fn, state)


def _function_state(fn: types.FunctionType, _missing: object = _MISSING, _empty: type = ValueError,
                    ) -> tuple[Any, ...]:
    """A function's code, defaults, keyword defaults and the contents of its closure cells."""
    cells = fn.__closure__ or ()
    contents = []
    for cell in cells:
        try:
            contents.append(cell.cell_contents)
        except _empty:  # an empty cell
            contents.append(_missing)
    return (fn.__code__, fn.__defaults__, fn.__kwdefaults__, *cells, *contents)


def _restore_function(fn: types.FunctionType, state: tuple[Any, ...]) -> None:
    code, defaults, kwdefaults, *rest = state
    cells = rest[: len(rest) // 2]
    contents = rest[len(rest) // 2:]
    if fn.__code__ is not code:
        fn.__code__ = code
    if fn.__defaults__ is not defaults:
        fn.__defaults__ = defaults
    if fn.__kwdefaults__ is not kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    for cell, value in zip(cells, contents, strict=True):
        try:
            held = cell.cell_contents
        except ValueError:
            held = _MISSING
        if held is not value and value is not _MISSING:
            cell.cell_contents = value


def _changes(sys_ns: dict[str, Any], sys_modules: dict[str, Any], sys_keys: tuple[str, ...],
             sys_values: tuple[Any, ...], modules: tuple[Any, ...], classes: tuple[Any, ...], functions: tuple[Any, ...],
             limit: int = 3, _get: Any = dict.get, _is: Any = operator.is_, _all: Any = all, _map: Any = map,
             _repeat: Any = repeat, _zip: Any = zip, _len: Any = len, _missing: object = _MISSING,
             _vars: Any = type.__dict__["__dict__"].__get__, _state: Any = _function_state, _repr: Any = repr,
             ) -> list[str]:
    """:meth:`Snapshot.changes`, on the snapshot's data (:meth:`Snapshot.checker` binds it). Returns as soon
    as something differs: nothing after that may have been left as the snapshot had it."""
    if _get(sys_ns, "modules", _missing) is not sys_modules:
        return ["sys.modules"]
    if not _all(_map(_is, _map(_get, _repeat(sys_modules), sys_keys, _repeat(_missing)), sys_values)):
        return [f"sys.modules[{_repr(k)}]" for k, v in _zip(sys_keys, sys_values)
                if _get(sys_modules, k, _missing) is not v][:limit]
    out: list[str] = []
    for name, ns, keys, values in modules:
        if not _all(_map(_is, _map(_get, _repeat(ns), keys, _repeat(_missing)), values)):
            out += [f"{name}.{k}" for k, v in _zip(keys, values) if _get(ns, k, _missing) is not v]
    if out:  # the grader's own names or builtins: nothing below may be called through them
        return out[:limit]
    for label, cls, keys, values in classes:
        members = _vars(cls)
        if not _all(_map(_is, _map(members.get, keys, _repeat(_missing)), values)):
            out += [f"{label}.{k}" for k, v in _zip(keys, values) if members.get(k, _missing) is not v]
    for label, fn, before in functions:
        now = _state(fn)
        if _len(now) != _len(before) or not _all(_map(_is, now, before)):
            out.append(label)
    return out[:limit]


class Guard:
    """The audit hook's state: which code may set a trace or profile function, what is protected.

    Args:
        prefixes: folders whose code is not the student's (:func:`protected_prefixes`).
        tracers: code objects allowed to call ``sys.settrace``/``sys.setprofile`` (the context's
            time limit, :class:`autograder.submissions.execute.Deadline`), or to be the trace function in place
            when one is unset, each with the exact class its ``self`` must have (None: any).
    """

    def __init__(self, prefixes: tuple[str, ...], tracers: Iterable[tuple[types.CodeType, type | None]]) -> None:
        self.prefixes = prefixes
        self.tracers = {id(code): (code, owner) for code, owner in tracers}
        self.refusals = 0
        self._getframe = sys._getframe
        self._realpath = os.path.realpath
        self._grader = grader_folder()

    def _refuse(self, what: str, _refused: type = Refused) -> None:
        self.refusals += 1
        raise _refused(f"{what} is not available while tapetrace grades this code")

    def _not_students(self, fn: Any, _getattr: Any = getattr, _isinstance: Any = isinstance,
                      _code: type = types.CodeType) -> bool:
        code = _getattr(fn, "__code__", None)
        if not _isinstance(code, _code):
            return False
        name = code.co_filename
        if name.startswith("<frozen "):
            return True
        return self._realpath(name).startswith(self.prefixes)

    def _library_importing(self, fn: Any) -> bool:
        """Whether a library's own import is what changes ``fn`` (a library function, never the grader's):
        matplotlib's decorators, for one, set ``__kwdefaults__`` of its functions while it is imported
        (``import seaborn`` or ``import matplotlib.pyplot`` then failed). Walking out from the code that
        assigns, a library module's body (``<module>``) must come before any code of the student's."""
        if self._realpath(fn.__code__.co_filename).startswith(self._grader):
            return False  # the grader's functions: never (the snapshot watches them too)
        frame = self._getframe(2)  # 0: this method, 1: the hook, 2: the code that assigns
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith("<frozen "):
                if not self._realpath(name).startswith(self.prefixes):
                    return False  # the student's code, with no library import in between
                if frame.f_code.co_name == "<module>":
                    return True
            frame = frame.f_back
        return False

    def _allowed(self, code: types.CodeType, owner_self: Any, _id: Any = id, _type: type = type) -> bool:
        allowed = self.tracers.get(_id(code))
        if allowed is None or allowed[0] is not code:
            return False
        return allowed[1] is None or _type(owner_self) is allowed[1]

    def _tracer_allowed(self, _gettrace: Any = sys.gettrace, _getattr: Any = getattr, _allowed: Any = _allowed,
                        ) -> bool:
        # CPython also unsets a trace function that raised (the context's does, by design), with this
        # event: allowed while the function in place is one of the allowed code's own methods
        current = _gettrace()
        func = _getattr(current, "__func__", None)
        if func is not None and _allowed(self, func.__code__, _getattr(current, "__self__", None)):
            return True
        # frame 0: this method, 1: the hook, 2: the Python code that called sys.settrace/setprofile
        frame = self._getframe(2)
        return _allowed(self, frame.f_code, frame.f_locals.get("self"))

    # What the hook uses is held in its default arguments, taken when this class was made, before any
    # student code ran: rebinding a name of this module (REFUSED_EVENTS...), a builtin or a method of this
    # class does not change what it refuses.
    def hook(self, event: str, args: tuple[Any, ...], _refused: frozenset[str] = REFUSED_EVENTS,
             _dlsym: frozenset[str] = _DLSYM_EVENTS, _trace: frozenset[str] = _TRACE_EVENTS,
             _code_attrs: frozenset[str] = _CODE_ATTRS, _proc_mem: Any = _PROC_MEM.search,
             _imports: frozenset[str] = _REFUSED_IMPORTS, _isinstance: Any = isinstance, _len: Any = len,
             _function: type = types.FunctionType, _basename: Any = os.path.basename, _str: type = str,
             _bytes: type = bytes, _refuse: Any = _refuse, _tracer_allowed: Any = _tracer_allowed,
             _not_students: Any = _not_students, _library_importing: Any = _library_importing,
             _fsenc: str = sys.getfilesystemencoding()) -> None:
        """The audit hook (``sys.addaudithook``): returns, or raises :class:`Refused`."""
        if event in _refused:
            _refuse(self, event)
        elif event in _dlsym:
            name = args[-1] if args else None
            if _isinstance(name, _bytes):
                name = name.decode("latin-1")
            if not _isinstance(name, _str) or name.lstrip("_").startswith("Py"):
                _refuse(self, "ctypes access to the Python interpreter's C API")
        elif event in _trace:
            if not _tracer_allowed(self):
                _refuse(self, event)
        elif event == "object.__setattr__":
            if _len(args) >= 2 and args[1] in _code_attrs and _isinstance(args[0], _function) \
                    and _not_students(self, args[0]) and not _library_importing(self, args[0]):
                _refuse(self, f"replacing {args[1]} of a function that is not yours")
        elif event == "open":
            path = args[0] if args else None
            if _isinstance(path, (_str, _bytes)):
                # decoded here, not by os.fsdecode: its Python code looks ``isinstance`` up at each call, and a
                # student's code that rebound it made every later open() fail in this hook (the grader's too)
                text = path.decode(_fsenc, "surrogateescape") if _isinstance(path, _bytes) else path
                if text.endswith("mem") and (_proc_mem(self._realpath(text)) or _basename(text) == "mem"):
                    _refuse(self, "opening a process's memory")
        elif event == "import":
            if args and args[0] in _imports:
                _refuse(self, f"importing {args[0]}")


def install_audit_hook(tracers: Iterable[tuple[types.CodeType, type | None]] = ()) -> Guard:
    """Adds the student worker's audit hook to this process (for good: CPython never removes one).

    Args:
        tracers: code allowed to set trace/profile functions (see :class:`Guard`).

    Returns:
        The :class:`Guard` whose ``hook`` was installed.
    """
    guard = Guard(protected_prefixes(), tracers)
    sys.addaudithook(guard.hook)
    return guard


def context_tracers() -> list[tuple[types.CodeType, type | None]]:
    """The code of :class:`autograder.submissions.execute.Deadline` that sets and clears its tracer."""
    from autograder.submissions import execute as _exec

    deadline = _exec.Deadline
    return [(deadline._alarm.__code__, deadline), (deadline.disarm.__code__, deadline),
            (deadline._tracer.__code__, deadline)]


def tampered_response(changed: list[str]) -> dict[str, Any]:
    """The probe response of a worker whose grader code was changed (``_worker.run_probe``'s shape)."""
    what = ", ".join(changed)[:200] or "?"
    return {"ok": False, "kind": "fail", "code": "PROBE_TAMPERED", "fields": {"what": what}}


def probe_table(probes: Any) -> dict[str, Callable[..., Any]]:
    """``{name: probe function}`` of a probes module, read once, before student code runs."""
    return {k[len("probe_"):]: v for k, v in vars(probes).items() if k.startswith("probe_") and callable(v)}
