"""Lowers and runs the same programs with JAX's own MLIR contexts or with _jaxtune's reuse; prints a digest.

    python tests/scripts/mlir_reuse.py fresh|reuse

Prints one JSON line: the SHA-256 of every lowered module's text and of every result (eager ops at
new shapes, jitted functions, grads, in the main thread and in two threads at once), and how many
contexts were made. tests/test_speed.py compares the two modes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir

from autograder.workers import jaxtune as _jaxtune

made = [0]
_make = mlir.make_ir_context


def _counting():  # noqa: ANN202 - JAX's own context factory, counted
    made[0] += 1
    return _make()


mlir.make_ir_context = _counting
if sys.argv[1] == "reuse":
    assert _jaxtune.reuse_mlir_contexts(uses=4) and _jaxtune.reuse_mlir_contexts()
texts: dict[str, str] = {}
values: dict[str, bytes] = {}


def work(tag: str, sizes: range) -> None:
    for n in sizes:
        a = jnp.asarray(np.linspace(-1.0, 1.0, 3 * n, dtype=np.float32).reshape(n, 3))
        eager = (jnp.sin(a) * 2 + 1).sum(axis=0)  # eager ops at a new shape
        f = jax.jit(lambda a: jnp.tanh(a @ a.T).mean())
        g = jax.jit(jax.grad(lambda a: (jnp.exp(a) * a).sum()))
        texts[f"{tag}{n}"] = f.lower(a).as_text() + g.lower(a).as_text()
        values[f"{tag}{n}"] = b"".join(np.asarray(v).tobytes() for v in (eager, f(a), g(a)))


work("main", range(2, 14))
threads = [threading.Thread(target=work, args=(f"t{i}", range(20 + 10 * i, 26 + 10 * i))) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()


def digest(d: dict) -> str:
    return hashlib.sha256(b"".join(k.encode() + (v.encode() if isinstance(v, str) else v)
                                   for k, v in sorted(d.items()))).hexdigest()


print(json.dumps({"texts": digest(texts), "values": digest(values), "programs": len(texts),
                  "contexts": made[0]}))
