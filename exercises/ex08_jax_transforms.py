# Generated from solutions/ex08_jax_transforms.py by `tapetrace stubs`: edit the solution, not this file.
"""Exercise 08 — grad of grad, `lax.cond`, jaxprs and explicit keys (JAX: the trace).

PyTorch records a tape *while your code runs*: Python `if`s, loops and the
global random generator all just happen, and the tape remembers the
operations that ran. JAX instead *traces* your function once into a jaxpr
(a small program of primitive equations) and transforms or compiles that
program. Four consequences, one function each:

What to build:
    - `nth_derivative(f, n)`: `f` maps a scalar to a scalar; return the
      function computing its n-th derivative by nesting `jax.grad` n times
      (`n = 0` returns `f` itself). `jax.grad` returns a function, so the
      result composes: it must work under `jax.jit` too (no `float()`, no
      numpy inside).
    - `coin_net(x, key, w1, w2)`: draw `branch = jax.random.bernoulli(key)`
      (p = 0.5, from exactly the key you are given); return
      `relu(x @ w1)` if `branch` else `sigmoid(x @ w2)`, using
      `jax.lax.cond`. Under `jax.jit` the key is a tracer, so `branch` has
      no Python value: a Python `if branch:` raises
      TracerBoolConversionError. `jnp.where(branch, a, b)` runs but
      computes both branches; `lax.cond` puts a `cond` in the jaxpr.
      `x`: `(N, d)`; `w1`, `w2`: `(d, h)`; output `(N, h)`.
    - `count_ops(f, *args)`: the number of equations in the top-level
      jaxpr of `jax.make_jaxpr(f)(*args)` (its `.jaxpr.eqns`). A `cond`,
      a `scan` or a call to a jitted function is ONE equation, however
      big the sub-jaxpr inside it.
    - `dropout(x, rate, key)`: inverted dropout with an explicit key:
      each element is kept, on its own, with probability `1 - rate` and scaled by
      `1 / (1 - rate)`, otherwise set to 0 (`0 <= rate < 1`). Same key ->
      same output; `rate = 0` returns `x` unchanged. There is no global
      random state in JAX: do not use `np.random` (PyTorch's
      `nn.Dropout` uses torch's global generator; here the key is the state).

Example:
    >>> nth_derivative(jnp.sin, 2)(0.5)         # -sin(0.5)
    Array(-0.47942555, dtype=float32, weak_type=True)
    >>> count_ops(lambda x: jnp.sin(x) * 2.0, 1.0)
    2
    >>> dropout(jnp.ones(4), 0.5, jax.random.PRNGKey(0))   # entries are 0.0 or 2.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def nth_derivative(f: Callable[[jax.Array], jax.Array], n: int) -> Callable[[jax.Array], jax.Array]:
    """The n-th derivative of a scalar function, by nesting `jax.grad`.

    Args:
        f: a function from a scalar to a scalar.
        n: the order (n >= 0); 0 returns `f`.

    Returns:
        A function of one scalar, jit-able.
    """
    # YOUR CODE HERE
    raise NotImplementedError("ex08_jax_transforms: replace this line with your code")


def coin_net(x: jax.Array, key: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    """`relu(x @ w1)` if `jax.random.bernoulli(key)` else `sigmoid(x @ w2)`, with `jax.lax.cond`.

    Args:
        x: inputs, shape `(N, d)`.
        key: a PRNG key.
        w1: weights of the ReLU branch, shape `(d, h)`.
        w2: weights of the sigmoid branch, shape `(d, h)`.

    Returns:
        Shape `(N, h)`.
    """
    # YOUR CODE HERE
    raise NotImplementedError("ex08_jax_transforms: replace this line with your code")


def count_ops(f: Callable[..., Any], *args: Any) -> int:
    """Number of equations in the top-level jaxpr of `f` traced on `args`.

    Args:
        f: a JAX-traceable function.
        *args: example arguments.

    Returns:
        `len(jax.make_jaxpr(f)(*args).jaxpr.eqns)`, a Python int.
    """
    # YOUR CODE HERE
    raise NotImplementedError("ex08_jax_transforms: replace this line with your code")


def dropout(x: jax.Array, rate: float, key: jax.Array) -> jax.Array:
    """Inverted dropout with an explicit PRNG key.

    Args:
        x: any array (float32).
        rate: probability of dropping an element, `0 <= rate < 1`.
        key: a PRNG key.

    Returns:
        Same shape and dtype as `x`: kept elements scaled by `1 / (1 - rate)`, dropped ones 0.
    """
    # YOUR CODE HERE
    raise NotImplementedError("ex08_jax_transforms: replace this line with your code")
