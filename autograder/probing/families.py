"""The optimizer families a signature accepts, as plain data the checks draw and send to probes.

Where the contract says "any optax optimizer" or "a ``torch.optim`` optimizer", a hidden check must
try that family, not only the reference's own choice: a step that calls ``optimizer.update(grads,
opt_state)`` without ``params`` is right for SGD and Adam and breaks every optimizer that needs the
parameters (decoupled weight decay, ``optax.adamw``, trust ratios); a training step that zeroes the
gradients after ``optimizer.step()`` is right only while nothing left gradients behind (issue 29).

A family's members are all tried on every run (never one drawn at random: a bug that only one member
shows would then be caught at some grading seeds only); only their hyperparameters are drawn.
Grader side only (no torch, no JAX): the probes build the optimizers from these specs with
:mod:`autograder.probing.optax_family` and :mod:`autograder.probing.torch_family`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# optax optimizers whose update needs the current params (optax raises without them).
OPTAX_NEEDS_PARAMS = ("adamw", "decayed_momentum", "lamb")
# torch.optim optimizers other than plain SGD (each keeps its own state and rule).
TORCH_OTHERS = ("adam", "adamw", "rmsprop")


def optax_needing_params(rng: np.random.Generator) -> list[dict[str, Any]]:
    """One spec per member of :data:`OPTAX_NEEDS_PARAMS`, hyperparameters drawn from ``rng``.

    Weight decays are large (0.05..0.2) and learning rates moderate, so that a step that drops the
    decay (or the params) differs from the right one by far more than any tolerance.
    """
    return [
        {"name": "adamw", "lr": float(rng.uniform(5e-3, 2e-2)), "weight_decay": float(rng.uniform(0.05, 0.2))},
        {"name": "decayed_momentum", "lr": float(rng.uniform(0.02, 0.1)), "weight_decay": float(rng.uniform(0.05, 0.2)),
         "clip": float(rng.uniform(5.0, 10.0))},
        {"name": "lamb", "lr": float(rng.uniform(5e-3, 2e-2)), "weight_decay": float(rng.uniform(0.05, 0.2))},
    ]


def optax_label(spec: dict[str, Any]) -> str:
    """How the optimizer of ``spec`` is written in optax (for messages; no expected value in it)."""
    name = spec["name"]
    if name == "sgd":
        return "optax.sgd(lr)"
    if name == "momentum":
        return "optax.sgd(lr, momentum=0.9)"
    if name == "adam":
        return "optax.adam(lr)"
    if name == "adamw":
        return "optax.adamw(lr, b2=0.95, weight_decay=...)"
    if name == "decayed_momentum":
        return "optax.chain(optax.clip_by_global_norm(...), optax.add_decayed_weights(...), optax.sgd(lr, momentum=0.9))"
    if name == "lamb":
        return "optax.lamb(lr, weight_decay=...)"
    raise ValueError(name)


# A step's gradients as the optimizer must get them: unclipped. The probes' losses (BCE, a tanh regression, an MSE)
# have gradients below 1, so a step that clips or rescales them (clip_grad_norm_, clip_grad_value_, jnp.clip,
# optax.clip_by_global_norm at any usual threshold) passes every usual case. The step checks end with a case
# whose gradients are this many times larger (the loss multiplied by it, or the targets of a squared error,
# whose gradient grows with them) and SGD's rate divided by as much, so the steps keep their usual size: only such a step differs.
LARGE_GRADIENTS = 1000.0


ADAPTIVE_EPS = 1e-3  # torch's adaptive optimizers in the families (see torch_optimizers)


def torch_optimizers(rng: np.random.Generator, names: tuple[str, ...] = TORCH_OTHERS) -> list[dict[str, Any]]:
    """One spec per name (``sgd_momentum``, ``adam``, ``adamw``, ``rmsprop``), hyperparameters drawn."""
    out = []
    for name in names:
        if name == "sgd_momentum":
            out.append({"name": name, "lr": float(rng.uniform(0.05, 0.2))})
        elif name in ("adam", "adamw", "rmsprop"):
            # eps well above float noise: a parameter whose true gradient is zero (a bias before a BatchNorm)
            # gets only rounding noise, which Adam and RMSprop would scale up to steps of size lr, so that
            # the bits of the machine (threads, device) and not the student's code decided the verdict
            spec: dict[str, Any] = {"name": name, "lr": float(rng.uniform(5e-3, 3e-2)), "eps": ADAPTIVE_EPS}
            if name == "adamw":
                spec["weight_decay"] = float(rng.uniform(0.05, 0.2))
            out.append(spec)
        else:
            raise ValueError(name)
    return out


def torch_label(spec: dict[str, Any]) -> str:
    """How the optimizer of ``spec`` is written with ``torch.optim`` (for messages)."""
    return {"sgd_momentum": "torch.optim.SGD(params, lr, momentum=0.9)", "adam": "torch.optim.Adam(params, lr, eps=1e-3)",
            "adamw": "torch.optim.AdamW(params, lr, betas=(0.9, 0.95), weight_decay=..., eps=1e-3)",
            "rmsprop": "torch.optim.RMSprop(params, lr, eps=1e-3)"}[spec["name"]]
