# MUTANT: reduces over axis 1, which is the last axis of a 2-D input only
# FAILS: any_leading_axes
# CODE any_leading_axes: __KEY___LEADING_AXES
import jax
import jax.numpy as jnp


def __FUNC__(x: jax.Array) -> jax.Array:
    mean = jnp.mean(x, axis=1, keepdims=True)
    var = jnp.var(x, axis=1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)
