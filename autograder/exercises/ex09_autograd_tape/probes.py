"""Probes for ex09_autograd_tape: build backward graphs, call the student's walker; call manual_grads.

Graphs are built here from a (kind, seed) pair, so both sides see the same
structure: a random choice of ops from small pools, wired as a tree (each
node used once), a DAG (a shared subexpression, a node feeding both inputs
of one op, a leaf used twice) or tensors with no ``grad_fn`` at all. Every
graph holds a leaf that does not require grad (a ``None`` in
``next_functions``) and both of its branches are at least two nodes deep,
so breadth-first order, reversed children and missing de-duplication all
show.
"""

from __future__ import annotations

import _thread
import itertools
import random
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import torch

from autograder.core.i18n import label as text
from autograder.probing.tools import DEVICE, ProbeFail, get, instance_of, qualified_type, tally, to_float, type_name

# Bound at import, before student code can patch anything.
_randn = torch.randn
_no_grad = torch.no_grad
_Generator = torch.Generator
_Tensor = torch.Tensor
_exp, _tanh, _sin, _sigmoid, _relu, _neg = torch.exp, torch.tanh, torch.sin, torch.sigmoid, torch.relu, torch.neg
_add, _sub, _mul, _div = torch.add, torch.sub, torch.mul, torch.div
_sum, _mean = torch.sum, torch.mean
_saved_tensors_hooks = torch.autograd.graph.saved_tensors_hooks
_count = itertools.count
_ModuleType = types.ModuleType
_threads_alive = _thread._count  # Python threads besides the main one
_modules = sys.modules
_open = open


def _jax_loaded() -> bool:
    """Whether JAX was ever imported in this worker: its compiled library stays mapped (a module can be taken out
    of ``sys.modules``; a library cannot leave the address space). Unknown: True (it is then imported)."""
    if "jax" in _modules:
        return True
    try:
        with _open("/proc/self/maps", "rb") as fh:
            return b"jaxlib" in fh.read()
    except OSError:
        return True

_UNARY: list[Callable[[Any], Any]] = [_exp, _tanh, _sin, _sigmoid, _relu, _neg, lambda t: t ** 2]
_BINARY: list[Callable[[Any, Any], Any]] = [_add, _sub, _mul, _div]
_REDUCE: list[Callable[[Any], Any]] = [_sum, _mean]


def _leaves(seed: int) -> dict[str, Any]:
    """Three leaves that require grad (a, b, c) and one that does not (x), on the grading device."""
    gen = _Generator().manual_seed(int(seed))
    device = DEVICE["torch"]
    out = {}
    for name in ("a", "b", "c", "x"):
        t = _randn(4, generator=gen).to(device)
        out[name] = t.requires_grad_(name != "x")
    return out


def _pair(r: random.Random, p: Any, q: Any) -> tuple[Any, Any]:
    return (p, q) if r.random() < 0.5 else (q, p)


def _build(kind: str, seed: int, leaves: dict[str, Any] | None = None) -> tuple[list[Any], dict[str, Any]]:
    """The tensors to walk for one graph, and the leaves they were built from.

    Args:
        kind: ``"tree"``, ``"dag"`` or ``"nograd"``.
        seed: chooses the ops, the argument orders and the leaf values.
        leaves: reuse these leaves (a second forward pass over the same parameters).

    Returns:
        ``(roots, leaves)``.
    """
    r = random.Random(int(seed) * 7919 + {"tree": 1, "dag": 2, "nograd": 3}[kind])
    lv = leaves if leaves is not None else _leaves(seed)
    names = ["a", "b", "c"]
    r.shuffle(names)
    a, b, c = (lv[n] for n in names)
    x = lv["x"]
    u = r.sample(_UNARY, 3)
    bi = [r.choice(_BINARY) for _ in range(4)]
    red = r.choice(_REDUCE)
    if kind == "tree":
        left = u[0](bi[0](*_pair(r, a, x)))
        right = u[1](bi[1](*_pair(r, b, u[2](c))))
        return [red(bi[2](*_pair(r, left, right)))], lv
    if kind == "dag":
        h = bi[0](*_pair(r, a, x))
        k = u[0](u[2](h))
        v = bi[1](*_pair(r, h, u[1](b)))  # h is shared by k and v
        z = _mul(v, v)  # one node feeding both inputs of a mul
        q = bi[2](*_pair(r, k, z))
        return [red(bi[3](*_pair(r, q, a)))], lv  # leaf a used twice
    if kind == "nograd":
        with _no_grad():
            under_no_grad = red(bi[0](a, b))
        detached = red(u[0](c)).detach()
        return [a, x, under_no_grad, detached], lv
    raise ValueError(kind)


def _names(value: Any, call: str) -> list[str]:
    """The student's list of names, checked to be plain strings."""
    if type(value) is not list:
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(value), expected=instance_of("list[str]"))
    for item in value:
        if type(item) is not str:
            raise ProbeFail("WRONG_TYPE", call=call, got=text("value.holding", container="list", item=type_name(item)),
                            expected=text("value.a_use", code="list[str]", use="type(node).__name__"))
    return [str(s) for s in value]


def probe_graphs(mod: Any, graphs: list[list[Any]]) -> list[list[list[str]]]:
    """``backward_graph`` on fresh graphs: one list of name lists per ``(kind, seed)``."""
    fn = get(mod, "backward_graph")
    out = []
    for kind, seed in graphs:
        roots, _ = _build(str(kind), int(seed))
        out.append([_names(fn(t), "backward_graph(t)") for t in roots])
    return out


def probe_repeated(mod: Any, kind: str, seed: int) -> list[list[str]]:
    """Three calls in a row: a graph, the same graph again, a new graph over the same leaves."""
    fn = get(mod, "backward_graph")
    roots, leaves = _build(kind, seed)
    first = _names(fn(roots[0]), "backward_graph(t)")
    again = _names(fn(roots[0]), text("ex09.call.again"))
    rebuilt, _ = _build(kind, seed, leaves)
    new = _names(fn(rebuilt[0]), text("ex09.call.rebuilt"))
    return [first, again, new]


def probe_manual_grads(mod: Any, points: list[list[float]]) -> list[list[float]]:
    """``manual_grads`` at each point, as floats (0-d arrays/tensors accepted here)."""
    fn = get(mod, "manual_grads")
    out = []
    for w, x, b in points:
        res = fn(float(w), float(x), float(b))
        if not isinstance(res, (tuple, list)) or len(res) != 3:
            raise ProbeFail("WRONG_TYPE", call="manual_grads(w, x, b)", got=type_name(res),
                            expected=text("value.tuple_floats", n=3, code="(dL/dw, dL/dx, dL/db)"))
        out.append([to_float(v, "manual_grads(w, x, b)", strict=False) for v in res])
    return out


def probe_manual_types(mod: Any, point: list[float]) -> dict[str, Any]:
    """The types of what ``manual_grads`` returns."""
    res = get(mod, "manual_grads")(*(float(v) for v in point))
    items = list(res) if isinstance(res, (tuple, list)) else []
    return {"container": type_name(res), "is_tuple": type(res) is tuple, "length": len(items),
            "item_types": [qualified_type(v) for v in items],
            "all_float": bool(items) and all(isinstance(v, float) for v in items)}


def _tripwires(mod: Any, used: list[str], events: Any, with_jax: bool) -> list[tuple[Any, str, Any]]:
    """Wraps autodiff entry points so a call is recorded (then passed through): its label in ``used``, one
    more in ``events`` (an ``itertools.count``: unlike a list, nothing can empty it, short of a raw memory
    write) and one ``autodiff`` tally, counted in the grader's process (``tally``). JAX's only ``with_jax``
    (JAX loaded: importing it for a student who never did cost ~1.2 CPU-s of their check's time)."""
    def wrap(label: str, original: Any) -> Any:
        def tripwire(*args: Any, _tally: Any = tally, **kwargs: Any) -> Any:
            next(events)
            _tally("autodiff")
            used.append(label)
            return original(*args, **kwargs)

        return tripwire

    targets: list[tuple[Any, str, str]] = [
        (torch.Tensor, "backward", "Tensor.backward"),
        (torch.autograd, "backward", "torch.autograd.backward"),
        (torch.autograd, "grad", "torch.autograd.grad"),
    ]
    targets += [(torch.func, n, f"torch.func.{n}") for n in
                ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize")]
    targets += [(torch.autograd.functional, n, f"torch.autograd.functional.{n}") for n in
                ("jacobian", "hessian", "vjp", "jvp", "hvp", "vhp")]
    # torch's forward mode records nothing on the tape, and a dual tensor needs a dual level: every one is
    # entered through torch._C._enter_dual_level (under whatever name a module bound it: below)
    targets += [(torch._C, "_enter_dual_level", "torch.autograd.forward_ad")]
    if with_jax:
        import jax

        targets += [(jax, n, f"jax.{n}") for n in
                    ("grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "linearize")]
        targets += _jax_machinery()
    # a thread of its own: the saved-tensor hook watches this thread only (torch keeps it per thread)
    targets += [(threading, "_start_new_thread", "<thread>"), (_thread, "start_new_thread", "<thread>"),
                (_thread, "start_new", "<thread>")]
    patched: list[tuple[Any, str, Any]] = []
    originals: dict[int, str] = {}
    for owner, attr, label in targets:
        original = getattr(owner, attr, None)
        if original is None:
            continue
        originals[id(original)] = label
        patched.append((owner, attr, original))
        setattr(owner, attr, wrap(label, original))
    # the same functions under other names: the student's (`from jax import grad`) and any module's (torch's
    # forward_ad reaches _enter_dual_level through a name torch._functorch.predispatch took at import)
    modules = [mod, *(m for m in list(sys.modules.values()) if type(m) is _ModuleType and m is not mod)]
    for module in modules:
        for name, value in list(vars(module).items()):
            label = originals.get(id(value))
            if label is not None and not any(o is module and a == name for o, a, _ in patched):
                patched.append((module, name, value))
                setattr(module, name, wrap(label, value))
    return patched


def _jax_machinery() -> list[tuple[Any, str, str]]:
    """JAX's differentiation itself, whatever name reached it (``jax.jacobian``, ``jax._src.api.grad``, a
    ``custom_vjp``'s rule...): the ``__init__`` of every JVP and linearize trace, and of jet's Taylor-mode trace
    (imported here: a student importing it during the call would find it already watched)."""
    from jax._src.interpreters import ad

    classes = [getattr(ad, "JVPTrace", None), getattr(ad, "LinearizeTrace", None)]
    try:
        from jax.experimental import jet

        classes.append(getattr(jet, "JetTrace", None))
    except ImportError:
        pass
    return [(cls, "__init__", "<jax>") for cls in classes if isinstance(cls, type) and "__init__" in vars(cls)]


def probe_manual_tape(mod: Any, points: list[list[float]], _tally: Any = tally) -> dict[str, Any]:
    """Runs ``manual_grads`` with tripwires on autodiff: which entry points it used, if any.

    Besides wrapping the autodiff functions of torch and JAX, a saved-tensor hook
    notices any operation recorded on the tape (a tensor with requires_grad). That hook sees this thread
    only: a thread started during the call (``<thread>``), or alive before or after it, counts as autodiff
    the probe could not rule out (the exercise needs none). Each event is also tallied in the grader's
    process (``tally``): a raw memory write can rewind ``events``, not what the grader already counted.
    """
    fn = get(mod, "manual_grads")
    used: list[str] = []
    events = _count()

    def pack(t: Any, _tally: Any = tally) -> Any:
        next(events)
        _tally("autodiff")
        used.append("<tape>")  # a tensor with requires_grad=True: an operation recorded on the tape
        return t

    def watched(with_jax: bool) -> None:
        patched = _tripwires(mod, used, events, with_jax)
        try:
            with _saved_tensors_hooks(pack, lambda t: t):
                for w, x, b in points:
                    if _threads_alive():
                        next(events)
                        _tally("autodiff")
                        used.append("<thread>")
                    fn(float(w), float(x), float(b))
                    if _threads_alive():
                        next(events)
                        _tally("autodiff")
                        used.append("<thread>")
        except NotImplementedError:
            raise
        except Exception:
            if not used:  # some autodiff APIs refuse saved-tensor hooks: the tripwire already fired
                raise
        finally:
            for owner, attr, original in reversed(patched):
                setattr(owner, attr, original)

    jax_before = _jax_loaded()
    watched(jax_before)
    if not jax_before and _jax_loaded():  # JAX came in during the calls: again, its entry points watched too
        watched(True)
    if next(events) and not used:  # the labels were emptied (the list is reachable from its frame): not the count
        used.append("<erased>")
    return {"used": sorted(set(used))}
