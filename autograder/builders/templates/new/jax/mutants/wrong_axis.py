# MUTANT: standardises over the first axis (the columns) instead of the last
# FAILS: matches_reference, any_leading_axes
# CODE matches_reference: MISMATCH
# CODE any_leading_axes: __KEY___LEADING_AXES
import jax
import jax.numpy as jnp


def __FUNC__(x: jax.Array) -> jax.Array:
    mean = jnp.mean(x, axis=0, keepdims=True)
    var = jnp.var(x, axis=0, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5)
