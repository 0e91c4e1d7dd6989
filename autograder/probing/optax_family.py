"""Probe side of the optax family (:mod:`autograder.probing.families`): the optimizers handed to a student's step.

Runs in the worker beside student code; optax is bound at import, before any student code loads.
Optimizers that need the current params are wrapped so that an ``update`` called without them stops
the probe with :class:`UpdateWithoutParams` (a ``BaseException``: a student's ``except Exception``
does not swallow it), which the probe turns into a ``ProbeFail``
(an exercise's catalogued message, named by the probe) instead of optax's own ``ValueError``.
"""

from __future__ import annotations

from typing import Any

import jax
import optax

from autograder.probing.tools import ProbeFail

_sgd, _adam, _adamw, _lamb = optax.sgd, optax.adam, optax.adamw, optax.lamb
_chain, _clip, _decay = optax.chain, optax.clip_by_global_norm, optax.add_decayed_weights
_GT = optax.GradientTransformation
_jit = jax.jit


class UpdateWithoutParams(BaseException):  # noqa: N818 - not an Exception, see the module docstring
    """``optimizer.update(grads, opt_state)`` was called without ``params`` for an optimizer that needs them."""


def optax_optimizer(spec: dict[str, Any]) -> optax.GradientTransformation:
    """The optimizer a spec of :mod:`autograder.probing.families` describes.

    Args:
        spec: ``{"name": ..., "lr": float, ...}`` (``weight_decay``, ``clip`` where the name needs them).

    Returns:
        The optax optimizer; for a name in ``OPTAX_NEEDS_PARAMS``, its ``update`` raises
        :class:`UpdateWithoutParams` when ``params`` is missing.
    """
    name, lr = spec["name"], float(spec["lr"])
    if name == "sgd":
        return _sgd(lr)
    if name == "momentum":
        return _sgd(lr, momentum=0.9)
    if name == "adam":
        return _adam(lr)
    if name == "adamw":
        opt = _adamw(lr, b2=0.95, weight_decay=float(spec["weight_decay"]))
    elif name == "decayed_momentum":
        opt = _chain(_clip(float(spec["clip"])), _decay(float(spec["weight_decay"])), _sgd(lr, momentum=0.9))
    elif name == "lamb":
        opt = _lamb(lr, weight_decay=float(spec["weight_decay"]))
    else:
        raise ValueError(name)

    def update(updates: Any, state: Any, params: Any = None, **extra: Any) -> Any:
        if params is None:
            raise UpdateWithoutParams
        return opt.update(updates, state, params, **extra)

    return _GT(opt.init, update)


def run_without_params_check(fn: Any, *args: Any, key: str, **fields: Any) -> Any:
    """``fn(*args)``; an update without params becomes ``ProbeFail(key, **fields)`` (the exercise's message)."""
    try:
        return fn(*args)
    except UpdateWithoutParams:
        raise ProbeFail(key, **fields) from None


def init_state(optimizer: optax.GradientTransformation, params: Any, **jit_kwargs: Any) -> Any:
    """``optimizer.init(params)`` as one compiled program (not one eager op per leaf)."""
    return _jit(optimizer.init, **jit_kwargs)(params)
