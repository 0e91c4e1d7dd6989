"""Exercise __NN__ — __TITLE__.

Standardise the rows of an array: subtract each row's mean and divide by its
standard deviation, `(x - mean) / sqrt(var + 1e-5)`, with the mean and the
biased variance taken over the last axis. (This is the skeleton `tapetrace new`
wrote: replace it with the exercise's real instructions.)

What to build:
    - `__FUNC__(x)` takes a float32 `jax.Array` `x` of shape `(..., d)` and
      returns an array of the same shape.
    - The statistics are taken over the last axis only, whatever the number of
      leading axes.

Example:
    >>> __FUNC__(jnp.zeros((4, 3))).shape
    (4, 3)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def __FUNC__(x: jax.Array) -> jax.Array:
    """Standardises `x` over its last axis.

    Args:
        x: float32 array `(..., d)`.

    Returns:
        `(x - mean) / sqrt(var + 1e-5)` per row, shape `(..., d)`.
    """
    # BEGIN SOLUTION
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)
    # END SOLUTION
