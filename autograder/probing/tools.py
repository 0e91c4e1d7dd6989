"""Helpers shared by probes (code that runs inside a worker, beside student code).

Probes measure, they never judge: they call the student's (or reference's)
code on inputs the grader sent and return plain numpy data. Conversions here
are strict about types, so an object with a lying ``__eq__`` never leaves the
worker; only arrays and numbers do. Every function a probe relies on is bound
at import time, before the student module is loaded.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from autograder.core.i18n import label
from autograder.core.suite import CheckFailure
from autograder.core.wire import frame as _frame

_np_asarray = np.asarray
_np_array = np.array

# Set by the worker before the student module loads.
DEVICE: dict[str, str] = {"torch": "cpu", "jax": "cpu"}

# Tallies: events a probe counts (a model's forward, an autodiff call) are counted in the grader's process,
# not in the worker's memory (docs/security.md, "Structural checks"). A worker keeps its result pipe on
# RESULT_FD (``autograder.workers.worker``, before any student code runs) and its environment names it
# (TALLY_ENV, ``autograder.workers.launch.tallying_env``); every :func:`tally` writes one frame there at
# once, which the grader counts (``autograder.workers.handle.Worker.tallied``). Elsewhere (the notebook's
# own checks) nothing is sent.
RESULT_FD = 1000
TALLY_ENV = "TAPETRACE_RESULT_FD"
TALLY = "tapetrace_tally"
# a worker whose tally cannot be written (its result pipe closed or replaced by its own code) exits so:
# the call crashes, the student's failure (never a count the grader did not see)
TALLY_EXIT = 86


def _tally_fd() -> int:
    try:
        return int(os.environ.get(TALLY_ENV, "-1"))
    except ValueError:
        return -1


def tally(name: str, _fd: int = _tally_fd(), _write: Any = os.write, _frame: Any = _frame,
          _exit: Any = os._exit, _oserror: type = OSError, _exit_code: int = TALLY_EXIT, _tally: str = TALLY) -> None:
    """Counts one event ``name`` in the grader's process: one frame on the worker's result pipe, written now.

    Bound at import (the descriptor read from the worker's environment, in the zygote, before any student
    code runs) and held in default arguments: a raw memory write into a counter of the worker can no longer
    rewind what the grader already read. A frame this small is written whole (below ``PIPE_BUF``).
    """
    if _fd < 0:
        return
    try:
        _write(_fd, _frame({_tally: name}))
    except _oserror:
        _exit(_exit_code)


def is_tally(msg: Any) -> bool:
    """Whether a worker's message is one :func:`tally` (and is nothing else)."""
    return (isinstance(msg, dict) and len(msg) == 1 and isinstance(msg.get(TALLY), str)
            and 0 < len(msg[TALLY]) <= 40)


class ProbeFail(CheckFailure):
    """A probe found a problem it can name (wrong type, missing name, ...).

    Raised inside the worker; it crosses the wire as ``{"kind": "fail", "code", "fields"}`` and
    comes back to the check as a :class:`~autograder.core.suite.StudentProblem` with the same key.
    """

    @property
    def code(self) -> str:
        """The message key (the wire's name for :attr:`key`)."""
        return self.key


def get(mod: Any, name: str) -> Any:
    """Looks up a contract name in the loaded module, or fails with MISSING_NAME."""
    try:
        return getattr(mod, name)
    except AttributeError:
        raise ProbeFail("MISSING_NAME", name=name) from None


def qualified_type(x: Any) -> str:
    """The name of an object's type, as code (``list``, ``torch.Tensor``, ``mymodule.Net``)."""
    t = type(x)
    mod = t.__module__
    return t.__qualname__ if mod in ("builtins", "__main__") else f"{mod}.{t.__qualname__}"


def type_name(x: Any) -> dict[str, Any]:
    """Student-safe description of an object's type: a catalogued label ("a `list`", "un objeto `list`")
    the grader renders in the run's language (:func:`autograder.core.i18n.label`)."""
    if isinstance(x, np.ndarray):
        return label("value.numpy_array", shape=str(tuple(x.shape)))
    return label("value.object", name=qualified_type(x))


def instance_of(code: str) -> dict[str, Any]:
    """"a `code`" (an instance of a type named in code), in the run's language."""
    return label("value.an" if code[:1].lower() in "aeiou" or code.startswith("nn.") else "value.a", code=code)


def sealed(a: np.ndarray, _frombuffer: Any = np.frombuffer) -> np.ndarray:
    """A copy of ``a`` that no code can change in place: a read-only array over immutable ``bytes`` (numpy refuses
    to make it writeable again). What a probe keeps from before a student's call to compare with after it: the
    student's code can reach the probe's local variables through its frames (``sys._getframe(1).f_locals``), and
    rewrite a list, a dict or an array it finds there to agree with what it changed; not this (nor a tuple).

    Args:
        a: an array of any shape; an array of Python objects is copied as it is (it has no bytes of its own).

    Returns:
        An array equal to ``a``, same shape and dtype, read-only.
    """
    if a.dtype.hasobject:
        return a.copy()
    return _frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def _torch():
    import torch

    return torch


def torch_to_np(x: Any, call: str) -> np.ndarray:
    """A torch tensor (any device, any grad state) as a float/int numpy array."""
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise ProbeFail("WRONG_TYPE", call=call, got=type_name(x), expected=instance_of("torch.Tensor"))
    t = torch.Tensor.detach(x)
    t = torch.Tensor.cpu(t)
    if t.dtype == torch.bfloat16:
        t = torch.Tensor.float(t)
    return _np_array(torch.Tensor.numpy(t), copy=True)


# ``jax.jit(..., compiler_options=FAST_RUN)`` for the compute-heavy loops a probe jits itself
# (training on a dataset): on CPU the grader compiles at LLVM level 0 (autograder.workers.environment), these
# few programs run hundreds of times and want XLA's default level 2 back. Elsewhere a no-op.
FAST_RUN: dict[str, Any] = {"xla_backend_optimization_level": 2}


def jax_converter() -> Any:
    """``to_jax(x, dtype=None)``: numpy data as a JAX array without compiling anything.

    ``jnp.asarray`` lowers and compiles an identity (``jit(stage)``) per new
    shape (~15 ms each, hundreds per exercise); ``jax.device_put`` of a private
    copy gives the same array (same dtype canonicalisation, not weakly typed)
    without a compile. Other inputs (Python scalars, lists, arrays) go through
    ``jnp.asarray``. Call at probe import: the functions are bound then, before
    student code can patch them.
    """
    import jax
    import jax.numpy as jnp

    device_put, jnp_asarray = jax.device_put, jnp.asarray

    def to_jax(x: Any, dtype: Any = None) -> Any:
        if type(x) is np.ndarray or isinstance(x, np.generic):
            return device_put(_np_array(x, dtype=dtype, copy=True))
        return jnp_asarray(x, dtype=dtype)

    return to_jax


def jax_to_np(x: Any, call: str, allow_numpy: bool = False) -> np.ndarray:
    """A JAX array as a numpy array (numpy arrays only when ``allow_numpy``)."""
    import jax

    if isinstance(x, jax.Array):
        return _np_array(x, copy=True)
    if allow_numpy and type(x) is np.ndarray:
        return _np_array(x, copy=True)
    raise ProbeFail("WRONG_TYPE", call=call, got=type_name(x), expected=instance_of("jax.Array"))


def tree_to_np(tree: Any, call: str, allow_numpy: bool = False) -> Any:
    """Converts a pytree of dicts/lists/tuples of jax arrays to numpy; keeps structure."""
    if isinstance(tree, dict):
        out = {}
        for k, v in tree.items():
            if not isinstance(k, str):
                raise ProbeFail("WRONG_TYPE", call=call, got=label("value.dict_key", name=qualified_type(k)),
                                expected=label("value.str_keys"))
            out[k] = tree_to_np(v, call, allow_numpy)
        return out
    if type(tree) in (list, tuple):
        return type(tree)(tree_to_np(v, call, allow_numpy) for v in tree)
    return jax_to_np(tree, call, allow_numpy)


def to_float(x: Any, call: str, strict: bool = True) -> float:
    """A Python float from a student return value.

    Args:
        x: the value returned.
        call: the call, for messages.
        strict: only ``float``/``int`` accepted; otherwise also 0-d arrays/tensors.
    """
    if type(x) is float or (type(x) is int):
        return float(x)
    if not strict:
        if isinstance(x, np.floating):
            return float(x)
        try:
            import jax

            if isinstance(x, jax.Array) and x.shape == ():
                return float(_np_asarray(x))
        except ImportError:
            pass
        try:
            torch = _torch()
            if isinstance(x, torch.Tensor) and torch.Tensor.numel(x) == 1:
                return float(torch.Tensor.item(torch.Tensor.detach(x)))
        except ImportError:
            pass
    raise ProbeFail("WRONG_TYPE", call=call, got=type_name(x), expected=label("value.python_float"))


def subjaxprs(value: Any) -> list[Any]:
    """The jaxprs held in one equation parameter (ClosedJaxpr, Jaxpr, or tuples of them).

    Args:
        value: One value of a jaxpr equation's ``params`` (``eqn.params["jaxpr"]``, ``branches``, ...).

    Returns:
        The ``Jaxpr``/``ClosedJaxpr`` objects in it, in order (empty: none).
    """
    if hasattr(value, "eqns"):
        return [value]
    inner = getattr(value, "jaxpr", None)
    if inner is not None and hasattr(inner, "eqns"):
        return [inner]
    if isinstance(value, (tuple, list)):
        return [j for v in value for j in subjaxprs(v)]
    return []


def walk_jaxpr(jaxpr: Any) -> tuple[int, set[str]]:
    """(equations counted recursively, primitive names seen) of a jaxpr and all its sub-jaxprs
    (pjit, cond branches, scan/while bodies, custom_jvp, ...)."""
    count = 0
    prims: set[str] = set()
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.eqns:
            count += 1
            prims.add(str(eqn.primitive.name))
            for v in eqn.params.values():
                stack.extend(subjaxprs(v))
    return count, prims
